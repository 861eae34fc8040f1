"""The words of Sixes at the table, in English and Dutch, and its rules summary on `?` (with rule ids;
rules.md beside it is the full text). The registry (lanplay/games/__init__.py) adds them to
lanplay/ui/i18n.py, which holds the words every game shares."""

from __future__ import annotations

EN: dict[str, str] = {
    "your_turn_play_sixes": "your turn: play a card marked ▸",
    "your_turn_pass": "no card fits: pass and pay a chip (X-2.4)",
    "refuse_no_fit": "{card} does not fit on a column now ({rule})",
    "refuse_open_o6": "the round opens with O6 ({rule})",
    "pass_button": "Pass",
    "ev_sx_play": "{name} plays {card}",
    "ev_sx_pass": "{name} passes and pays a chip",
    "ev_sx_pass_free": "{name} passes (no chips left)",
    "ev_sx_out": "{name} goes out and wins the pot of {pot:chip|chips}",
    "ev_sx_result": "{name}: {total:chip|chips}",
    "pot_label": "Pot: {pot}",
    "cards_left": "cards",
    "turn_label": "Turn: {name}",
    "playable_mark": "▸ playable",
    "col_chips": "chips",
    "chips_n": "{chips:chip|chips}",
    "game_sixes": "Sixes",
    "form_opt_chips": "Chips",
    "suit_O": "Oros",
    "suit_C": "Copas",
    "suit_E": "Espadas",
    "suit_B": "Bastos",
}

NL: dict[str, str] = {
    "your_turn_play_sixes": "jouw beurt: speel een kaart met ▸",
    "your_turn_pass": "geen kaart past: pas en betaal een fiche (X-2.4)",
    "refuse_no_fit": "{card} past nu op geen enkele rij ({rule})",
    "refuse_open_o6": "de ronde begint met O6 ({rule})",
    "pass_button": "Passen",
    "ev_sx_play": "{name} speelt {card}",
    "ev_sx_pass": "{name} past en betaalt een fiche",
    "ev_sx_pass_free": "{name} past (geen fiches meer)",
    "ev_sx_out": "{name} is uit en wint de pot van {pot:fiche|fiches}",
    "ev_sx_result": "{name}: {total:fiche|fiches}",
    "pot_label": "Pot: {pot}",
    "cards_left": "kaarten",
    "turn_label": "Beurt: {name}",
    "playable_mark": "▸ speelbaar",
    "col_chips": "fiches",
    "chips_n": "{chips:fiche|fiches}",
    "game_sixes": "Zessen",
    "form_opt_chips": "Fiches",
    "suit_O": "Oros",
    "suit_C": "Copas",
    "suit_E": "Espadas",
    "suit_B": "Bastos",
}

RULES: dict[str, tuple[str, ...]] = {
    "en": (
        "X-1 40 Spanish cards: suits Oros Copas Espadas Bastos,",
        "    ranks A 2 3 4 5 6 7 J Q K (J follows 7).",
        "X-2.1 All cards are dealt.",
        "X-2.2 The holder of O6 opens with it.",
        "X-2.3 In turn play a 6 that opens a suit, or the card",
        "    directly below or above a column of its suit.",
        "X-2.4 Who can play must; who cannot pays a chip and passes.",
        "X-2.5 The first player out of cards wins the pot.",
        "X-3 When a player has no chips after a round, most chips wins.",
    ),
    "nl": (
        "X-1 40 Spaanse kaarten: kleuren Oros Copas Espadas Bastos,",
        "    rangen A 2 3 4 5 6 7 J Q K (J volgt op 7).",
        "X-2.1 Alle kaarten worden gedeeld.",
        "X-2.2 Wie O6 heeft, begint daarmee.",
        "X-2.3 Speel om de beurt een 6 die een kleur opent, of de kaart",
        "    direct onder of boven een rij van die kleur.",
        "X-2.4 Wie kan, moet spelen; wie niet kan, betaalt een fiche en past.",
        "X-2.5 Wie het eerst geen kaarten meer heeft, wint de pot.",
        "X-3 Heeft iemand na een ronde geen fiches meer: de meeste fiches wint.",
    ),
}

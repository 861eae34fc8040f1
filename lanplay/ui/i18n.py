"""Every word a player sees, in English and Dutch, keyed by message id: `t("your_turn", lang, name=...)`.
The words every game shares are here; each game's own words and rules summary are its bundle's texts.py,
added by the registry (`add_game_texts`, from lanplay/games/__init__.py).

The language comes from `--lang`, else the locale (LC_ALL, LC_MESSAGES, LANG starting with "nl" → Dutch),
else English. Card codes (R5, 45, O6) and rule ids (S-4.2) are the same in both languages.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

LANGUAGES = ("en", "nl")

# Parameters with these names hold a code that is itself translated (a 6th Sense colour, a Sixes suit).
_CODE_PARAMS = {"colour": "colour_", "suit": "suit_", "why": "why_"}

EN: dict[str, str] = {
    # --- common table words
    "nobody": "nobody",
    "and_list": "{first} and {last}",
    "round_n": "round {round}",
    "dealer": "dealer {name}",
    "scores": "Scores",
    "log": "Log",
    "log_scrolled": "Log (↑{n})",
    "your_hand": "Your hand",
    "no_cards": "(no cards)",
    "status_idle": "…",
    "keys_hint": "←→↑↓ or {digits}: select · Enter: confirm · ? rules · q leave",
    "keys_hint_question": "←→ or {digits}: select · Enter: confirm · Esc back · ? rules · q leave",
    "keys_hint_only": "{choice} is the only choice: Enter confirms it · ? rules · q leave",
    "keys_hint_wait": "? rules · q leave · PgUp/PgDn log",
    "digits_place": "1–{count}",
    "digits_one": "1",
    "digits_card": "a card's number",
    "typing": "number {typed}… (another digit, or Enter to confirm)",
    "nothing_selected": "nothing selected: choose with ←→ or a number first, then Enter",
    "window_too_small": "Window too small: the table needs at least {columns}×{rows} (now {now}).",
    "plain_intro": "Type the number of your choice and Enter; ? shows the rules, q stops.",
    "plain_prompt": "Your choice> ",
    "plain_stopped": "Stopped.",
    "plain_second_question": "how do you play {card}? (b: another card)",
    "plain_refused": "not allowed now: {items}",
    "plain_bad_number": "Type one of the numbers shown (or ? for the rules, q to stop).",
    "keys_hint_over": "q leave · PgUp/PgDn log",
    "keys_hint_over_again": "a play again · q leave · PgUp/PgDn log",
    "again_key": "Press a to play again with the same players and options (a new seat draw), q to leave.",
    "again_cannot_start": "not yet: the game needs more players, or the seat draw has begun",
    "ev_again": "— Play again: a new table with the same players and options, and a new seat draw —",
    "net_again": "play again: said yes: {yes}; not here yet: {not_here}",
    "net_again_host": "s: start with those here · said yes: {yes}; not here yet: {not_here}",
    # --- status and prompts
    "your_turn": "your turn, {name}",
    "second_question": "how do you play {card}? (Esc: another card)",
    "round_over_continue": "round over: press Enter for the next round",
    "waiting_for": "waiting for {names}",
    "waiting_reconnect": "waiting for {names}'s laptop to reconnect",
    "waiting_deal": "dealing…",
    "game_over_status": "game over: press q to leave",
    "game_over_status_again": "game over: press a to play again, q to leave",
    "not_your_turn": "not your turn yet",
    "no_such_choice": "there is no choice {number}: choose 1 to {count}",
    "no_such_card": "no card {number} to choose here",
    "not_allowed_now": "that is not allowed now",
    "backend_failed": "the table stopped: {reason}",
    "refused": "not allowed ({rule}): {reason}",
    # --- buttons and second questions
    "next_round": "Next round",
    "go_on_bot": "Go on with a bot in {names}'s seat",
    "end_here": "End the game here",
    "net_go_on": "{names} is gone: go on?",
    "ev_go_on_asked": (
        "— {names} is no longer at the table. Go on with a bot in that seat (scores carried; the first laptop "
        "that offers runs it and sees its cards), or end here? One 'end' ends it for everyone —"
    ),
    "ev_go_on": "— The game goes on at a new table: {names} played by a bot run by {host}'s laptop —",
    "net_go_on_wait": "Waiting for every seat still here to say whether to go on…",
    "split_no": "Keep one trick",
    "as_value": "as {value}",
    "plain_zero": "as a plain 0",
    "block_card": "block {name}'s {card}",
    "move_text": "{text}",
    # --- dialogs
    "quit_question": "Leave the game? The record of the rounds so far is saved.",
    "quit_question_net": "Leave the game? The others wait for your laptop, then stop the table. The record of "
    "the rounds so far is saved.",
    "quit_keys": "y: leave   n: stay",
    "help_title": "Rules of {game}",
    "help_keys": "?/Esc close · ↑↓ scroll · all the rules: lanplay rules {game}",
    "game_over": "Game over",
    "game_stopped": "Game stopped",
    "game_network_lost": "Lost the network: the game is not over",
    "game_network_resume": "No link to any other seat for the whole of the table's patience; nobody was blamed. Run "
    "lanplay again (r in the lobby) to resume where the game was.",
    "winner_is": "Winner: {names}",
    "winners_are": "Winners: {names}",
    "final_table": "Final table",
    "score_sheet": "Round by round",
    "sheet_total": "total",
    "scores_so_far": "Scores after {rounds} confirmed round(s), kept in the record (no winner: the game did not end)",
    "record_saved": "Record saved to {path}",
    "record_not_saved": "No record was saved",
    "leave_key": "Press q to leave.",
    "round_results": "Round {round} results",
    # --- log events
    "ev_round_start": "— Round {round}: {name} deals —",
    "ev_peek_result": "Peek (only you see this): after trick {trick}, {name} predicted {card}",
    "ev_totals": "Totals: {totals}",
    "ev_chosen": "{name} has chosen a card",
    "audit_ok": "Round {round} confirmed",  # audit_ok, audit_blame: for the networked table
    "audit_blame": "Round {round}: {name} broke rule {rule}: {why} ({reason})",
    "audit_stopped": "Round {round}: the round stopped and is void, nobody convicted ({reason})",
    "why_identity": "used a key that has no seat at this table",
    "why_order": "sent messages out of order, or replayed an old one",
    "why_equivocation": "told different seats different things (two signed messages for one place)",
    "why_desync": "played on a different table than everyone else (out of step)",
    "why_commit": "a hidden choice did not open to what was committed",
    "why_deck": "shuffled or dealt cards that do not match what they had committed to",
    "why_peek": "showed a false prediction card, or one that was not in their hand",
    "why_turn": "moved out of turn",
    "why_audit": "the audit found a false move in the round",
    "why_withhold": "stopped answering: the table waited for them too long",
    "why_rules": "made a move the rules do not allow",
    "why_other": "broke the table protocol",
    "ev_record_saved": "Record saved to {path}",
    # --- the networked table
    "net_seats": "waiting for players: {taken} of {total} seats taken",
    "net_seats_some": "waiting for players: {taken} seats taken",
    "net_seats_how": "The game starts by itself when every seat is taken. Until then q leaves the table.",
    "seats_title": "Seats",
    "seat_free": "free",
    "net_connecting": "connecting to the table…",
    "net_starting": "the game starts: drawing the first dealer…",
    "net_dealing": "shuffling and dealing…",
    "net_auditing": "checking the round (audit)…",
    "net_saving": "game over: saving the record…",
    "net_lost": "lost the network: no link to any other seat (blaming nobody; waiting for it to come back)",
    "ev_seats": "At the table: {names}",
    "ev_barred": "{name} ({fingerprint}) is barred from this table: {why}. "
    "The seat order is drawn again without them.",
    "ev_resumed": "— Resumed where this laptop stopped, in round {round} —",
    "ev_record_copied": "Copy saved to {path}",
    # --- the lobby
    "lobby_title": "lanplay lobby · tables on {interface}",
    "lobby_you": "You: {name} · fingerprint {fingerprint}",
    "lobby_you_hint": "Others see this fingerprint next to your name: read it aloud to tell who is who.",
    "lobby_tables": "Tables on the network",
    "lobby_none": "No tables yet. Press c to create one.",
    "lobby_col_game": "game",
    "lobby_col_options": "options",
    "lobby_col_seats": "seats",
    "lobby_col_host": "host",
    "lobby_col_fp": "fingerprint",
    "lobby_full": "full",
    "lobby_how": "Joining takes a seat (that is your \"ready\"); the game starts by itself when every seat is taken.",
    "lobby_keys": "↑↓ choose · Enter join · c create · ? help · q quit",
    "lobby_keys_resume": "↑↓ · Enter join/resume · x forget · c create · ? help · q quit",
    "lobby_resume": "This laptop stopped in the middle of a game of {game} ({names}): Enter or r resumes it, "
    "x forgets it.",
    "lobby_back": "{names}'s table of {game} went on without you: Enter or r takes your seat back (from the "
    "next round), x declines.",
    "ev_back": "— {name} is back from round {round} —",
    "net_back": "asking for your seat back: it is yours again from the next round…",
    "lobby_no_free_seat": "that table has no free seat",
    "lobby_no_table": "no table is selected",
    "journal_damaged": "journal of the last game damaged: a new game started (see the log)",
    "lobby_damaged": "The journal of an unfinished game is damaged, so that game cannot be resumed. It was set "
    "aside, nothing deleted: {path}",
    "ev_journal_damaged": "The journal of the unfinished game is damaged, so it cannot be resumed; a new game "
    "starts. The journal was set aside, nothing deleted: {path}",
    "lobby_failed": "could not take a seat: {reason}",
    "lobby_help_title": "The lobby",
    "lobby_help_keys": "?/Esc close",
    "lobby_help_1": "The list shows the tables people on this network have opened (found by mDNS).",
    "lobby_help_2": "↑↓ and Enter take a seat at a table. Taking a seat is being ready: the game starts by"
    " itself as soon as every seat is taken. Until then q leaves the table.",
    "lobby_help_3": "c opens a small form: game, players, bots for empty seats, options. You host that "
    "table; the others see it here and join it.",
    "lobby_help_4": "Every laptop has its own key; its fingerprint stands next to each name. Read yours "
    "aloud and check the host's, so nobody can pass for someone else.",
    "lobby_help_5": "After a game, q on the table screen brings you back here. r resumes a game this "
    "laptop stopped in the middle of.",
    "form_title": "Create a table",
    "form_game": "Game",
    "form_seats": "Players",
    "form_bots": "Bots in empty seats",
    "form_level": "Bot level",
    "form_patience": "Wait for a laptop",
    "patience_value": "{minutes}:{seconds:02d} min",
    "level_easy": "easy",
    "level_normal": "normal",
    "level_expert": "expert",
    "form_on": "yes",
    "form_off": "no",
    "form_none": "none",
    "form_summary": "You take seat 1; {bots} bot(s); {free} seat(s) wait for people on the network.",
    "form_keys": "↑↓ field · ←→ change · Enter create · Esc back",
    # --- words more than one game uses (each game's own: lanplay/games/GAME/texts.py)
    "col_total": "total",
    "row_n": "Row {row}",
    # --- network, join by address, bots' laptops, lanplay play's journal (game-night)
    "play_nothing_saved": "No round was finished, so there is no record to keep.",
    "no_move_nothing_saved": "No move was played, so there is no record to keep.",
    "play_kept": "The game is kept: run the same command again (or press r in the lobby) to carry on.",
    "play_resuming": "Resuming the unfinished game: {game} with {names}.",
    "ev_bot_runs_on": "{bot} runs on {host}'s laptop, which can see its cards.",
    "ev_bot_own": "{bot} runs on a laptop of its own: no seat here can see its cards.",
    "bots_legend": "Bots: {bots}",
    "bot_on": "{bots} on {host}'s laptop, which sees its cards",
    "bot_on_many": "{bots} on {host}'s laptop, which sees their cards",
    "bot_own": "{bots} on a laptop of its own",
    "bot_own_many": "{bots} each on a laptop of its own",
    "ev_hosting_at": "Friends join with: lanplay join {address} · table fingerprint {fingerprint}",
    "lobby_network": "Network: {label}",
    "lobby_keys_net": "↑↓ choose · Enter join · a address · c create · i network · ? help · q quit",
    "lobby_keys_resume_net": "↑↓ · Enter join/resume · x forget · a address · c create · i network · q quit",
    "lobby_nothing_to_resume": "There is no unfinished game to resume.",
    "lobby_selected": "Hosted by {host} at {address}.",
    "lobby_selected_bots": "{bots} bot(s) run on {host}'s laptop, which can see their cards.",
    "lobby_yours": "Your table: friends join with lanplay join {address}",
    "net_title": "Which network do you play on?",
    "net_hint": "Choose the network your friends' laptops are on (the Wi-Fi you share). \"This laptop only\" "
    "keeps to this laptop: bots and other windows here.",
    "net_keys": "↑↓ choose · Enter play on this network · Esc back",
    "net_saved": "Playing on {label}; remembered for next time.",
    "net_gone": "The network chosen before ({label}) is not on this laptop now: choose again.",
    "net_fixed": "The network is set by {source}; change it there.",
    "addr_title": "Join by address",
    "addr_hint": "Type the address the host's screen shows (lanplay join ...), e.g. 192.168.1.23:40123.",
    "addr_keys": "type the address · Enter join · Esc back",
    "addr_bad": "{reason}",
    "net_loopback": "this laptop only",
}

NL: dict[str, str] = {
    "nobody": "niemand",
    "and_list": "{first} en {last}",
    "round_n": "ronde {round}",
    "dealer": "deler {name}",
    "scores": "Stand",
    "log": "Verloop",
    "log_scrolled": "Verloop (↑{n})",
    "your_hand": "Jouw hand",
    "no_cards": "(geen kaarten)",
    "status_idle": "…",
    "keys_hint": "←→↑↓ of {digits}: kiezen · Enter: bevestigen · ? regels · q weg",
    "keys_hint_question": "←→ of {digits}: kiezen · Enter bevestigt · Esc terug · ? regels · q weg",
    "keys_hint_only": "{choice} is de enige keuze: Enter bevestigt · ? regels · q weg",
    "keys_hint_wait": "? regels · q weg · PgUp/PgDn verloop",
    "digits_place": "1–{count}",
    "digits_one": "1",
    "digits_card": "het kaartgetal",
    "typing": "getal {typed}… (nog een cijfer, of Enter om te bevestigen)",
    "nothing_selected": "nog niets gekozen: kies eerst met ←→ of een getal, dan Enter",
    "window_too_small": "Venster te klein: de tafel heeft minstens {columns}×{rows} nodig (nu {now}).",
    "plain_intro": "Typ het getal van je keuze en Enter; ? toont de regels, q stopt.",
    "plain_prompt": "Jouw keuze> ",
    "plain_stopped": "Gestopt.",
    "plain_second_question": "hoe speel je {card}? (b: andere kaart)",
    "plain_refused": "nu niet toegestaan: {items}",
    "plain_bad_number": "Typ een van de getoonde getallen (of ? voor de regels, q om te stoppen).",
    "keys_hint_over": "q weg · PgUp/PgDn verloop",
    "keys_hint_over_again": "a nog eens · q weg · PgUp/PgDn verloop",
    "again_key": "Druk op a: nog eens met dezelfde spelers en opties (nieuwe plaatsloting); q om weg te gaan.",
    "again_cannot_start": "nog niet: het spel heeft meer spelers nodig, of de plaatsloting is begonnen",
    "ev_again": "— Nog eens: een nieuwe tafel met dezelfde spelers en opties, en een nieuwe plaatsloting —",
    "net_again": "nog eens: ja gezegd: {yes}; nog niet hier: {not_here}",
    "net_again_host": "s: begin met wie er is · ja gezegd: {yes}; nog niet hier: {not_here}",
    "your_turn": "jouw beurt, {name}",
    "second_question": "hoe speel je {card}? (Esc: andere kaart)",
    "round_over_continue": "ronde voorbij: druk op Enter voor de volgende ronde",
    "waiting_for": "wachten op {names}",
    "waiting_reconnect": "wachten tot de laptop van {names} weer verbonden is",
    "waiting_deal": "er wordt gedeeld…",
    "game_over_status": "spel voorbij: druk op q om weg te gaan",
    "game_over_status_again": "spel voorbij: druk op a om nog eens te spelen, q om weg te gaan",
    "not_your_turn": "je bent nog niet aan de beurt",
    "no_such_choice": "keuze {number} bestaat niet: kies 1 tot {count}",
    "no_such_card": "hier is geen kaart {number} te kiezen",
    "not_allowed_now": "dat mag nu niet",
    "backend_failed": "de tafel is gestopt: {reason}",
    "refused": "niet toegestaan ({rule}): {reason}",
    "next_round": "Volgende ronde",
    "go_on_bot": "Verder met een bot op de plaats van {names}",
    "end_here": "Het spel hier beëindigen",
    "net_go_on": "{names} is weg: verder?",
    "ev_go_on_asked": (
        "— {names} zit niet meer aan tafel. Verder met een bot op die plaats (de stand blijft; de eerste laptop "
        "die het aanbiedt speelt hem en ziet zijn kaarten), of hier stoppen? Eén 'stoppen' stopt het voor "
        "iedereen —"
    ),
    "ev_go_on": "— Het spel gaat verder aan een nieuwe tafel: {names} gespeeld door een bot op de laptop van {host} —",
    "net_go_on_wait": "Wachten tot elke plaats die er nog is zegt of het verder gaat…",
    "split_no": "Eén slag houden",
    "as_value": "als {value}",
    "plain_zero": "als gewone 0",
    "block_card": "blokkeer {card} van {name}",
    "move_text": "{text}",
    "quit_question": "Het spel verlaten? Het verslag van de rondes tot nu toe wordt bewaard.",
    "quit_question_net": "Het spel verlaten? De anderen wachten op je laptop en stoppen dan de tafel. Het "
    "verslag van de rondes tot nu toe wordt bewaard.",
    "quit_keys": "j/y: weggaan   n: blijven",
    "help_title": "Regels van {game}",
    "help_keys": "?/Esc sluiten · ↑↓ scrollen · alle regels: lanplay rules {game}",
    "game_over": "Spel voorbij",
    "game_stopped": "Spel gestopt",
    "game_network_lost": "Netwerk kwijt: het spel is niet voorbij",
    "game_network_resume": "Geen verbinding met een andere plaats, de hele wachttijd lang; niemand is beschuldigd. "
    "Start lanplay opnieuw (r in de lobby) om verder te spelen waar het spel was.",
    "winner_is": "Winnaar: {names}",
    "winners_are": "Winnaars: {names}",
    "final_table": "Eindstand",
    "score_sheet": "Ronde na ronde",
    "sheet_total": "totaal",
    "scores_so_far": (
        "Stand na {rounds} bevestigde ronde(s), bewaard in het verslag (geen winnaar: het spel is niet uit)"
    ),
    "record_saved": "Verslag bewaard in {path}",
    "record_not_saved": "Er is geen verslag bewaard",
    "leave_key": "Druk op q om weg te gaan.",
    "round_results": "Uitslag ronde {round}",
    "ev_round_start": "— Ronde {round}: {name} deelt —",
    "ev_peek_result": "Gluren (alleen jij ziet dit): na slag {trick} voorspelde {name} {card}",
    "ev_totals": "Totaal: {totals}",
    "ev_chosen": "{name} heeft een kaart gekozen",
    "audit_ok": "Ronde {round} bevestigd",
    "audit_blame": "Ronde {round}: {name} overtrad regel {rule}: {why} ({reason})",
    "audit_stopped": "Ronde {round}: de ronde is gestopt en telt niet, niemand veroordeeld ({reason})",
    "why_identity": "gebruikte een sleutel zonder plaats aan deze tafel",
    "why_order": "stuurde berichten in de verkeerde volgorde, of een oud bericht opnieuw",
    "why_equivocation": "vertelde verschillende spelers verschillende dingen (twee ondertekende berichten op één plek)",
    "why_desync": "speelde op een andere tafel dan de rest (uit de pas)",
    "why_commit": "een verborgen keuze kwam niet overeen met wat was vastgelegd",
    "why_deck": "schudde of deelde kaarten die niet kloppen met wat was vastgelegd",
    "why_peek": "liet een valse voorspellingskaart zien, of een die niet in de hand zat",
    "why_turn": "speelde terwijl een ander aan de beurt was",
    "why_audit": "de controle vond een valse zet in de ronde",
    "why_withhold": "antwoordde niet meer: de tafel heeft te lang gewacht",
    "why_rules": "deed een zet die de regels niet toestaan",
    "why_other": "hield zich niet aan het tafelprotocol",
    "ev_record_saved": "Verslag bewaard in {path}",
    "net_seats": "wachten op spelers: {taken} van {total} plaatsen bezet",
    "net_seats_some": "wachten op spelers: {taken} plaatsen bezet",
    "net_seats_how": "Het spel begint vanzelf als elke plaats bezet is. Tot dan verlaat q de tafel.",
    "seats_title": "Plaatsen",
    "seat_free": "vrij",
    "net_connecting": "verbinden met de tafel…",
    "net_starting": "het spel begint: de eerste deler wordt geloot…",
    "net_dealing": "schudden en delen…",
    "net_auditing": "de ronde wordt gecontroleerd…",
    "net_saving": "spel voorbij: het verslag wordt bewaard…",
    "net_lost": "netwerk kwijt: geen verbinding met een andere plaats (niemand beschuldigd; wachten tot het terug is)",
    "ev_seats": "Aan tafel: {names}",
    "ev_barred": "{name} ({fingerprint}) mag niet meer aan deze tafel: {why}. "
    "De plaatsen worden opnieuw geloot zonder hen.",
    "ev_resumed": "— Hervat waar deze laptop stopte, in ronde {round} —",
    "ev_record_copied": "Kopie bewaard in {path}",
    "lobby_title": "lanplay lobby · tafels op {interface}",
    "lobby_you": "Jij: {name} · vingerafdruk {fingerprint}",
    "lobby_you_hint": "Anderen zien deze vingerafdruk naast je naam: lees hem voor, zo weet iedereen wie wie is.",
    "lobby_tables": "Tafels op het netwerk",
    "lobby_none": "Nog geen tafels. Druk op c om er een te openen.",
    "lobby_col_game": "spel",
    "lobby_col_options": "opties",
    "lobby_col_seats": "plaatsen",
    "lobby_col_host": "gastheer",
    "lobby_col_fp": "vingerafdruk",
    "lobby_full": "vol",
    "lobby_how": "Meedoen neemt een plaats in (dat is je \"klaar\"); het spel begint vanzelf als elke plaats bezet is.",
    "lobby_keys": "↑↓ kiezen · Enter meedoen · c openen · ? hulp · q weg",
    "lobby_keys_resume": "↑↓ · Enter meedoen/hervat · x vergeet · c openen · ? hulp · q weg",
    "lobby_resume": "Deze laptop stopte midden in een spel {game} ({names}): Enter of r hervat het, "
    "x vergeet het.",
    "lobby_back": "De tafel {game} van {names} ging zonder jou verder: Enter of r neemt je plaats terug (vanaf "
    "de volgende ronde), x slaat het af.",
    "ev_back": "— {name} is terug vanaf ronde {round} —",
    "net_back": "je vraagt je plaats terug: vanaf de volgende ronde is die weer van jou…",
    "lobby_no_free_seat": "aan die tafel is geen plaats meer vrij",
    "lobby_no_table": "er is geen tafel gekozen",
    "journal_damaged": "logboek van het vorige spel beschadigd: een nieuw spel begon (zie verloop)",
    "lobby_damaged": "Het logboek van een onafgemaakt spel is beschadigd, dus dat spel kan niet verder. Het is "
    "apart gezet, niets gewist: {path}",
    "ev_journal_damaged": "Het logboek van het onafgemaakte spel is beschadigd, dus het kan niet verder; een nieuw "
    "spel begint. Het logboek is apart gezet, niets gewist: {path}",
    "lobby_failed": "kon geen plaats nemen: {reason}",
    "lobby_help_title": "De lobby",
    "lobby_help_keys": "?/Esc sluiten",
    "lobby_help_1": "De lijst toont de tafels die mensen op dit netwerk hebben geopend (via mDNS).",
    "lobby_help_2": "↑↓ en Enter nemen een plaats aan een tafel. Een plaats nemen is klaar zijn: het spel "
    "begint vanzelf zodra elke plaats bezet is. Tot dan verlaat q de tafel.",
    "lobby_help_3": "c opent een klein formulier: spel, spelers, bots op lege plaatsen, opties. Jij bent "
    "gastheer van die tafel; de anderen zien hem hier en doen mee.",
    "lobby_help_4": "Elke laptop heeft een eigen sleutel; de vingerafdruk staat naast elke naam. Lees de "
    "jouwe voor en controleer die van de gastheer: zo kan niemand zich als een ander "
    "voordoen.",
    "lobby_help_5": "Na een spel brengt q op het tafelscherm je hier terug. r hervat een spel waarin deze "
    "laptop midden in stopte.",
    "form_title": "Een tafel openen",
    "form_game": "Spel",
    "form_seats": "Spelers",
    "form_bots": "Bots op lege plaatsen",
    "form_level": "Niveau van de bots",
    "form_patience": "Wachten op een laptop",
    "patience_value": "{minutes}:{seconds:02d} min",
    "level_easy": "makkelijk",
    "level_normal": "normaal",
    "level_expert": "expert",
    "form_on": "ja",
    "form_off": "nee",
    "form_none": "geen",
    "form_summary": "Jij neemt plaats 1; {bots} bot(s); {free} plaats(en) wachten op mensen op het netwerk.",
    "form_keys": "↑↓ veld · ←→ wijzigen · Enter openen · Esc terug",
    "col_total": "totaal",
    "row_n": "Rij {row}",
    # --- netwerk, meedoen via adres, laptops van bots, dagboek van lanplay play (game-night)
    "play_nothing_saved": "Er is geen ronde uitgespeeld, dus er is geen verslag om te bewaren.",
    "no_move_nothing_saved": "Er is geen zet gedaan, dus er is geen verslag om te bewaren.",
    "play_kept": "Het spel is bewaard: geef hetzelfde commando opnieuw (of druk r in de lobby) om verder te spelen.",
    "play_resuming": "Het onafgemaakte spel gaat verder: {game} met {names}.",
    "ev_bot_runs_on": "{bot} draait op de laptop van {host}, die zijn kaarten kan zien.",
    "ev_bot_own": "{bot} draait op een eigen laptop: geen plaats hier kan zijn kaarten zien.",
    "bots_legend": "Bots: {bots}",
    "bot_on": "{bots} op de laptop van {host}, die zijn kaarten ziet",
    "bot_on_many": "{bots} op de laptop van {host}, die hun kaarten ziet",
    "bot_own": "{bots} op een eigen laptop",
    "bot_own_many": "{bots} elk op een eigen laptop",
    "ev_hosting_at": "Vrienden doen mee met: lanplay join {address} · vingerafdruk van de tafel {fingerprint}",
    "lobby_network": "Netwerk: {label}",
    "lobby_keys_net": "↑↓ kiezen · Enter meedoen · a adres · c openen · i netwerk · ? hulp · q weg",
    "lobby_keys_resume_net": "↑↓ · Enter meedoen/hervat · x vergeet · a adres · c nieuw · i netwerk · q weg",
    "lobby_nothing_to_resume": "Er is geen onafgemaakt spel om te hervatten.",
    "lobby_selected": "Geopend door {host} op {address}.",
    "lobby_selected_bots": "{bots} bot(s) draaien op de laptop van {host}, die hun kaarten kan zien.",
    "lobby_yours": "Jouw tafel: vrienden doen mee met lanplay join {address}",
    "net_title": "Op welk netwerk speel je?",
    "net_hint": "Kies het netwerk waar de laptops van je vrienden op zitten (de gedeelde wifi). \"Alleen deze laptop\" "
    "blijft op deze laptop: bots en andere vensters hier.",
    "net_keys": "↑↓ kiezen · Enter op dit netwerk spelen · Esc terug",
    "net_saved": "Je speelt op {label}; onthouden voor de volgende keer.",
    "net_gone": "Het eerder gekozen netwerk ({label}) is niet meer op deze laptop: kies opnieuw.",
    "net_fixed": "Het netwerk is ingesteld door {source}; verander het daar.",
    "net_loopback": "alleen deze laptop",
    "addr_title": "Meedoen via adres",
    "addr_hint": "Typ het adres dat het scherm van de gastheer toont (lanplay join ...), bv. 192.168.1.23:40123.",
    "addr_keys": "typ het adres · Enter meedoen · Esc terug",
    "addr_bad": "{reason}",
}

MESSAGES: dict[str, dict[str, str]] = {"en": EN, "nl": NL}

# The rules on `?`: a short summary per game with rule ids (shared/rules/*.md are the full text).
RULES: dict[str, dict[str, tuple[str, ...]]] = {}  # game id -> language -> lines (each bundle's)


def add_game_texts(
    game_id: str, texts: Mapping[str, Mapping[str, str]], rules: Mapping[str, tuple[str, ...]]
) -> None:
    """A game's own words and rules summary (its bundle's texts.py), added to the shared ones once by the
    registry (lanplay/games/__init__.py). A game's word may not change a word another game or the table
    already uses: ValueError naming it."""
    if set(texts) != set(LANGUAGES) or set(rules) != set(LANGUAGES):
        raise ValueError(f"game {game_id}: words and rules are needed in {', '.join(LANGUAGES)}")
    if len({frozenset(words) for words in texts.values()}) != 1:
        raise ValueError(f"game {game_id}: its words differ between languages")
    for lang, words in texts.items():
        clash = sorted(key for key, text in words.items() if MESSAGES[lang].get(key, text) != text)
        if clash:
            raise ValueError(f"game {game_id}: its words {clash} already mean something else")
    for lang, words in texts.items():
        MESSAGES[lang].update(words)
    RULES[game_id] = dict(rules)


class _Count(int):
    """A number in a sentence: `{bulls:bullhead|bullheads}` gives "1 bullhead", "3 bullheads"."""

    def __format__(self, spec: str) -> str:
        if "|" in spec:
            one, many = spec.split("|", 1)
            return f"{int(self)} {one if self == 1 else many}"
        return int.__format__(self, spec)


class _Params(dict[str, object]):
    """Leaves an unknown {name} as it is instead of failing: a missing parameter shows, never crashes."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def t(key: str, lang: str = "en", **params: object) -> str:
    table = MESSAGES.get(lang, EN)
    template = table.get(key) or EN.get(key) or key
    if not params:
        return template
    values = _Params({k: _Count(v) if isinstance(v, int) and not isinstance(v, bool) else v for k, v in params.items()})
    for name, prefix in _CODE_PARAMS.items():
        value = values.get(name)
        if isinstance(value, str) and prefix + value in table:
            values[name] = table[prefix + value]
    try:
        return template.format_map(values)
    except (ValueError, TypeError):  # a format spec that does not fit the value: show the plain template
        return template


@dataclass(frozen=True, slots=True)
class Msg:
    """A message id and its parameters: words are chosen at render time, in the model's language."""

    key: str
    params: Mapping[str, object] = field(default_factory=dict)

    def text(self, lang: str) -> str:
        return t(self.key, lang, **self.params)


def rules_summary(game_id: str, lang: str) -> tuple[str, ...]:
    by_lang = RULES.get(game_id, {})
    return by_lang.get(lang) or by_lang.get("en", ())


def detect_lang(explicit: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """`--lang` if given, else the locale: LC_ALL, LC_MESSAGES or LANG starting with "nl" is Dutch."""
    if explicit:
        code = explicit.lower()[:2]
        return code if code in LANGUAGES else "en"
    env = os.environ if environ is None else environ
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(variable)
        if value:  # the first one set decides, as for gettext
            return "nl" if value.lower().startswith("nl") else "en"
    return "en"

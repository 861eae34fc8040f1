"""`lanplay replay` on the shipped examples and on faulty files, through the real CLI entry point."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from engine.games import all_games
from lanplay.cli.commands import main
from lanplay.games import OPTION_HELP, valid_option_keys

EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "examples").glob("*.json"))


def test_examples_cover_every_game_and_both_6th_sense_table_sizes() -> None:
    names = {p.name for p in EXAMPLES}
    assert any(n.startswith("sixth-sense-4p") for n in names)
    assert any(n.startswith("sixth-sense-2p") for n in names)
    assert any(n.startswith("take6-") for n in names)
    assert any(n.startswith("sixes-") for n in names)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_replays_complete_with_winners(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    record = json.loads(path.read_text())
    assert out["game"] == record["game"]
    assert out["complete"] is True
    assert len(out["rounds"]) == len(record["rounds"])
    assert out["winners"] and all(0 <= w < len(record["players"]) for w in out["winners"])


def test_human_replay_of_6th_sense_lists_tricks_and_winner(capsys: pytest.CaptureFixture[str]) -> None:
    path = next(p for p in EXAMPLES if p.name.startswith("sixth-sense-4p"))
    assert main(["replay", str(path)]) == 0
    text = capsys.readouterr().out
    assert "Trick 1:" in text and "Round 4:" in text  # S-2.2: four rounds with 4 players
    assert "Winner:" in text


def test_renege_is_refused_with_exit_2_and_the_error_object(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record = {
        "format": "lanplay-record/1",
        "game": "sixth-sense",
        "players": ["Ann", "Bob"],
        "options": {},
        "rounds": [
            {
                "deal": {
                    "dealer": 1,
                    "hands": [
                        ["R0", "R1", "R2", "R3", "R4", "R5", "R6", "R7", "R8", "R10", "R11", "R12", "R13", "R14", "Y0"],
                        ["Y1", "Y2", "Y3", "Y4", "Y5", "Y6", "Y7", "Y8", "Y10", "Y11", "Y12", "Y13", "Y14", "G0", "G1"],
                    ],
                    "trump": "B7",
                },
                "moves": [
                    {"seat": 0, "predict": "R14"},
                    {"seat": 1, "predict": "G1"},
                    {"seat": 0, "play": "Y0"},
                    {"seat": 1, "play": "G0"},
                ],
            }
        ],
    }
    path = tmp_path / "renege.json"
    path.write_text(json.dumps(record))
    assert main(["replay", str(path), "--json"]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["round"] == 0 and error["move"] == 3 and error["seat"] == 1
    assert error["rule"] == "S-4.2"
    assert "Y" in error["message"]


def test_broken_file_is_a_format_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"format": "lanplay-record/1", "game": ')
    assert main(["replay", str(path), "--json"]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["rule"] == "format" and error["round"] is None


def test_missing_file_is_reported_not_raised(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(tmp_path / "nope.json")]) == 2
    assert "cannot read" in capsys.readouterr().err


# --- records for people ------------------------------------------------------------------------------------


def human_replay(prefix: str, capsys: pytest.CaptureFixture[str]) -> str:
    path = next(p for p in EXAMPLES if p.name.startswith(prefix))
    assert main(["replay", str(path)]) == 0
    return capsys.readouterr().out


def test_human_replay_of_6_nimmt_labels_rows_groups_turns_and_totals(capsys: pytest.CaptureFixture[str]) -> None:
    text = human_replay("take6-4p", capsys)
    assert "Rows: row 1: " in text and " · row 4: " in text  # T-2.1: rows 1–4, never players' names
    assert re.search(r"  Turn 1: revealed \w+ \d+, \w+ \d+, \w+ \d+, \w+ \d+\n    \w+'s \d+ → row [1-4]", text)
    assert "Totals after round 1: Ann " in text
    assert "is the 6th card: takes row" in text  # T-3.4
    assert not re.search(r"(?<!\d)1 bullheads", text)
    assert "rows: Ann" not in text and "None" not in text
    three = human_replay("take6-3p", capsys)
    assert "Rows: row 1: " in three and "[" not in three  # no raw lists


def test_human_replay_of_sixes_names_the_winner_and_shows_the_columns(capsys: pytest.CaptureFixture[str]) -> None:
    text = human_replay("sixes-", capsys)
    record = json.loads(next(p for p in EXAMPLES if p.name.startswith("sixes-")).read_text())
    assert re.search(r"(Ann|Bob|Cas|Dee|Eva) is out of cards and wins the pot of \d+ chips?", text)
    assert "Columns at the end: Oros " in text and "winner: " not in text
    assert re.search(r"\nWinners?: (" + "|".join(record["players"]) + ")", text)


def test_human_replay_of_6th_sense_explains_tricks(capsys: pytest.CaptureFixture[str]) -> None:
    text = human_replay("sixth-sense-4p", capsys)
    assert "reverses: lowest wins" in text  # S-6.2
    assert "counts: " in text and "may count two tricks" in text  # S-6.5
    assert "6/9 as " in text and "R6 as" not in text  # S-1.1: one name for the 6/9 card
    assert re.search(r"\w+: predicted \S+, \d+ tricks?, [+-]\d+ points?", text)
    assert "None" not in text and "points: " not in text


def test_an_unfinished_round_says_so_instead_of_points_none(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record = json.loads(next(p for p in EXAMPLES if p.name.startswith("sixth-sense-4p")).read_text())
    record["rounds"] = record["rounds"][:1]
    record["rounds"][0]["moves"] = record["rounds"][0]["moves"][:10]
    path = tmp_path / "short.json"
    path.write_text(json.dumps(record))
    assert main(["replay", str(path)]) == 0
    text = capsys.readouterr().out
    assert "Round 1 is not finished" in text and "None" not in text
    assert "The record stops before the game ends." in text


def test_a_faulty_record_is_told_in_the_replays_numbering(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Human text: Round 1, move 4, the seat's name; `--json` keeps the spec's 0-based indexes (see above)."""
    record = json.loads(next(p for p in EXAMPLES if p.name.startswith("sixth-sense-2p")).read_text())
    moves = record["rounds"][0]["moves"]
    first_play = next(i for i, m in enumerate(moves) if "play" in m)
    moves[first_play + 1]["play"] = moves[first_play]["play"]  # the second card of trick 1: a card already played
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(record))
    assert main(["replay", str(path)]) == 2
    err = capsys.readouterr().err
    seat = moves[first_play + 1]["seat"]
    assert f"faulty record (Round 1, move {first_play + 2}, {record['players'][seat]}): S-4.1" in err
    assert main(["replay", str(path), "--json"]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert (error["round"], error["move"], error["seat"]) == (0, first_play + 1, seat)


# --- `lanplay play` on the command line -------------------------------------------------------------------


def test_play_help_gives_every_default_and_every_games_option_keys(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["play", "--help"])
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "(default: sixth-sense)" in text and "(default: 3)" in text and "(default: normal)" in text
    for game_id, keys in OPTION_HELP.items():
        assert f"{game_id} (" in text
        for key in keys:
            assert re.search(rf"\b{key} ", text), key


def test_the_option_descriptions_name_exactly_the_engines_keys() -> None:
    for game_id in all_games():
        assert tuple(OPTION_HELP[game_id]) == valid_option_keys(game_id)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--option", "foo=bar"], "sixth-sense has no option 'foo'; its options: beginner, target, late_trump"),
        (["--option", "beginner"], "--option wants KEY=VALUE"),
        (["--option", "target=-3"], "bad option"),
        (["--game", "take6", "--option", "chips=3"], "take6 has no option 'chips'; its options: tactic, logic, profi"),
        (["--bots", "9"], "use --bots 1 to 5"),
    ],
)
def test_each_bad_play_option_exits_2_with_one_clear_line(
    args: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["play", "--plain", *args]) == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1


def test_play_without_a_terminal_says_so_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["play"]) == 2
    err = capsys.readouterr().err
    assert "needs a terminal" in err and "--plain" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("argv", [[], ["lobby"]])
def test_the_lobby_without_a_terminal_says_so_in_one_line(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("LANPLAY_HOME", str(tmp_path / "data"))
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "the lobby needs a terminal" in err and "--plain" in err and len(err.strip().splitlines()) == 1


def test_join_does_not_offer_table_options(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["join", "--help"])
    assert "--option" not in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["host", "--help"])
    assert "--option" in capsys.readouterr().out


def test_name_before_any_command_is_the_lobbys_name(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[object, ...]] = []
    monkeypatch.setattr("lanplay.ui.lobby_screen.lobby_command", lambda *args: seen.append(args) or 0)
    assert main(["--name", "Ann", "--lang", "nl"]) == 0
    assert seen == [("Ann", "nl", None)]
    assert main(["--name", "Ann", "lobby"]) == 0
    assert seen[-1][0] == "Ann"


def test_plain_play_through_the_command(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("1\nq\n"))  # 6th Sense: 1 is the first card, as a prediction
    record = tmp_path / "r.json"
    args = ["play", "--plain", "--game", "sixth-sense", "--bots", "2", "--name", "Ann", "--record", str(record)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "Trump:" in out and "Your hand (14)" in out and f"Game record saved to {record}" in out


# --- bots in the record (issue 10, item 3: every seat is told which laptop runs a bot) ------------------------


def _with_bots(bots: object) -> dict[str, object]:
    record: dict[str, object] = json.loads(next(p for p in EXAMPLES if p.name.startswith("sixth-sense-4p")).read_text())
    record["players"] = ["Ann", "Ann's bot 1", "Bob", "Bot 3"]
    return {"format": record["format"], "game": record["game"], "players": record["players"], "bots": bots,
            "options": record["options"], "rounds": record["rounds"]}


def test_bots_round_trip_and_a_record_without_bots_is_written_as_before() -> None:
    from engine.record import BotSeat, parse_record

    raw = _with_bots([{"seat": 1, "host": 0}, {"seat": 3, "host": None}])
    record = parse_record(raw)
    assert record.bots == (BotSeat(1, 0), BotSeat(3, None))
    assert json.loads(record.dumps()) == raw
    assert list(json.loads(record.dumps())) == ["format", "game", "players", "bots", "options", "rounds"]
    for path in EXAMPLES:  # no bots: byte for byte what the file holds
        assert parse_record(json.loads(path.read_text())).dumps() == path.read_text()


def test_replay_text_says_which_laptop_runs_each_bot_and_json_output_is_the_specs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bots.json"
    path.write_text(json.dumps(_with_bots([{"seat": 1, "host": 0}, {"seat": 3, "host": None}])))
    assert main(["replay", str(path)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.endswith(
        "— Ann, Ann's bot 1 (a bot run by Ann's laptop), Bob, Bot 3 (a bot on a laptop of its own)"
    ), first
    assert main(["replay", str(path), "--json"]) == 0
    assert set(json.loads(capsys.readouterr().out)) == {"game", "complete", "rounds", "totals", "winners"}


@pytest.mark.parametrize(
    ("bots", "said"),
    [
        ({"seat": 1}, "'bots' must be a list"),
        ([{"seat": 1}], "'bots' entry 0: must be an object with exactly \"seat\" and \"host\""),
        ([{"seat": 1, "host": 0, "x": 1}], "'bots' entry 0: must be an object with exactly"),
        ([{"seat": 4, "host": 0}], "'bots' entry 0: 'seat' must be a seat of the table (0 to 3), got 4"),
        ([{"seat": True, "host": 0}], "'seat' must be a seat of the table (0 to 3), got True"),
        ([{"seat": 1, "host": 7}], "'bots' entry 0: 'host' must be a seat (0 to 3) or null, got 7"),
        ([{"seat": 1, "host": "Ann"}], "'host' must be a seat (0 to 3) or null, got 'Ann'"),
        ([{"seat": 1, "host": 1}], "a bot on a laptop of its own has 'host' null"),
        ([{"seat": 3, "host": 0}, {"seat": 1, "host": 0}], "'bots' entry 1: seat 1 comes after seat 3"),
        ([{"seat": 1, "host": 0}, {"seat": 1, "host": 0}], "'bots' entry 1: seat 1 comes after seat 1"),
    ],
)
def test_a_faulty_bots_entry_is_refused_naming_what_is_wrong(
    bots: object, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad-bots.json"
    path.write_text(json.dumps(_with_bots(bots)))
    assert main(["replay", str(path)]) == 2
    err = capsys.readouterr().err
    assert "faulty record" in err and "format" in err and said in err, err
    assert main(["replay", str(path), "--json"]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["rule"] == "format" and error["round"] is None and said in error["message"]


@pytest.mark.parametrize("game_id", ["sixth-sense", "take6", "sixes"])
def test_the_rules_ship_with_the_program_and_hold_every_id_the_help_screen_cites(
    game_id: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import re

    from lanplay.ui.i18n import RULES

    assert main(["rules", game_id]) == 0
    text = capsys.readouterr().out
    cited = {rule for line in RULES[game_id]["en"] for rule in re.findall(r"\b[STX]-\d+(?:\.\d+)?", line)}
    assert cited and all(f"{rule} " in text or f"## {rule}" in text for rule in cited), cited


@pytest.mark.parametrize("mode", ["--plain"])
def test_leaving_before_any_move_writes_no_record_into_the_current_folder(
    mode: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.stdin", io.StringIO("q\n"))
    assert main(["play", mode, "--game", "take6", "--bots", "2", "--name", "Ann"]) == 0
    assert "No move was played, so there is no record to keep." in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []


def test_late_trump_with_beginner_is_accepted_but_said_to_change_nothing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """S-8: options combine freely, so the table is not refused; but S-8.1 turns no trump, so late trump (S-8.3)
    changes nothing, and the command says so in one line instead of accepting it in silence."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.stdin", io.StringIO("q\n"))
    args = ["play", "--plain", "--game", "sixth-sense", "--bots", "2", "--option", "beginner=true"]
    assert main([*args, "--option", "late_trump=true"]) == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if "late_trump" in line]
    assert notes == ["lanplay play: note: late_trump=true changes nothing with beginner=true: a beginner game turns "
                     "no trump (S-8.1, S-8.3)"]
    assert main(args) == 0
    assert "late_trump" not in capsys.readouterr().err


def test_a_bad_target_says_what_a_target_is_in_words(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", "--plain", "--game", "sixth-sense", "--option", "target=abc"]) == 2
    err = capsys.readouterr().err
    assert "'target' (S-8.2: the total that ends the game) must be a whole number of points, 1 or more" in err
    assert "null" not in err and len(err.strip().splitlines()) == 1

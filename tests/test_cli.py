"""`lanplay replay` on the shipped examples and on faulty files, through the real CLI entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lanplay.cli import main

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

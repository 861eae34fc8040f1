"""Tests for lanplay.base.store: identity key file, journal, game records. Everything under tmp_path."""

from __future__ import annotations

import logging
import os
import stat
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

from lanplay.base import store
from lanplay.base.store import (
    IDENTITY_FILE,
    Journal,
    JournalCorrupt,
    StoreError,
    data_dir,
    journal_path,
    load_or_create_identity,
    record_label,
    remove_finished_journals,
    save_record,
)

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
TABLE = "00112233aabbccdd"


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# --- data directory ------------------------------------------------------------------------------


def test_data_dir_prefers_lanplay_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANPLAY_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert data_dir() == tmp_path / "home"
    assert (tmp_path / "home").is_dir()
    if os.name == "posix":
        assert mode_of(tmp_path / "home") == 0o700


def test_data_dir_xdg_then_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LANPLAY_HOME", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert data_dir() == tmp_path / "xdg" / "lanplay"
    # A relative XDG_DATA_HOME is invalid per the XDG spec and ignored.
    monkeypatch.setenv("XDG_DATA_HOME", "relative/dir")
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    assert data_dir() == tmp_path / "user" / ".local" / "share" / "lanplay"
    if os.name == "posix":
        assert mode_of(tmp_path / "user" / ".local" / "share" / "lanplay") == 0o700


# --- identity ------------------------------------------------------------------------------------


def test_identity_created_once_and_reloaded(tmp_path: Path) -> None:
    first = load_or_create_identity(tmp_path)
    key = tmp_path / IDENTITY_FILE
    assert key.read_bytes() == first.private_bytes()
    if os.name == "posix":
        assert mode_of(key) == 0o600
    again = load_or_create_identity(tmp_path)
    assert again.peer_id == first.peer_id
    assert again.private_bytes() == first.private_bytes()
    assert [p.name for p in tmp_path.iterdir()] == [IDENTITY_FILE]  # no temp file left behind


def test_identity_file_is_fsynced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = os.fsync

    def counting(fd: int) -> None:
        calls.append(fd)
        real(fd)

    monkeypatch.setattr(store.os, "fsync", counting)
    load_or_create_identity(tmp_path)
    assert len(calls) >= 1  # the key's content (and, on POSIX, its directory)


def test_identity_loads_pem(tmp_path: Path) -> None:
    private = Ed25519PrivateKey.generate()
    pem = private.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
    key = tmp_path / IDENTITY_FILE
    key.write_bytes(pem)
    key.chmod(0o600)
    identity = load_or_create_identity(tmp_path)
    assert identity.private_bytes() == private.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())


@posix_only
@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660])
def test_identity_refuses_readable_key(tmp_path: Path, mode: int) -> None:
    load_or_create_identity(tmp_path)
    key = tmp_path / IDENTITY_FILE
    key.chmod(mode)
    with pytest.raises(StoreError) as info:
        load_or_create_identity(tmp_path)
    text = str(info.value)
    assert str(key) in text and "chmod 600" in text and f"{mode:04o}" in text


@pytest.mark.parametrize(
    "content",
    [b"", b"short", os.urandom(31), os.urandom(33), b"x" * 100_000, b"-----BEGIN PRIVATE KEY-----\ngarbage\n"],
    ids=["empty", "text", "31-bytes", "33-bytes", "huge", "bad-pem"],
)
def test_identity_refuses_garbage_key(tmp_path: Path, content: bytes) -> None:
    key = tmp_path / IDENTITY_FILE
    key.write_bytes(content)
    key.chmod(0o600)
    with pytest.raises(StoreError) as info:
        load_or_create_identity(tmp_path)
    assert str(key) in str(info.value)
    assert key.read_bytes() == content  # never silently replaced


def test_identity_refuses_other_key_type(tmp_path: Path) -> None:
    from cryptography.hazmat.primitives.asymmetric.ec import SECP256R1, generate_private_key

    key = tmp_path / IDENTITY_FILE
    key.write_bytes(generate_private_key(SECP256R1()).private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()))
    key.chmod(0o600)
    with pytest.raises(StoreError, match="not an Ed25519 key"):
        load_or_create_identity(tmp_path)


def test_identity_refuses_directory(tmp_path: Path) -> None:
    (tmp_path / IDENTITY_FILE).mkdir()
    with pytest.raises(StoreError, match=IDENTITY_FILE):
        load_or_create_identity(tmp_path)


@pytest.mark.skipif(sys.platform == "win32", reason="hard links")
def test_identity_creation_race_keeps_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """If another process creates the key between our check and our publish, its key wins."""
    other = load_or_create_identity(tmp_path / "other")
    real_publish = store._publish_new

    def racing(tmp: Path, path: Path) -> bool:
        (tmp_path / "other" / IDENTITY_FILE).rename(path)
        return real_publish(tmp, path)

    monkeypatch.setattr(store, "_publish_new", racing)
    assert load_or_create_identity(tmp_path).peer_id == other.peer_id
    assert [p.name for p in tmp_path.iterdir() if p.is_file()] == [IDENTITY_FILE]


# --- journal -------------------------------------------------------------------------------------


def test_journal_path() -> None:
    assert journal_path(Path("/d"), TABLE, 2) == Path(f"/d/journals/{TABLE}-seat2.jsonl")
    for bad_table in ["../../etc", "ABCDEF0123456789", "ab"]:
        with pytest.raises(StoreError):
            journal_path(Path("/d"), bad_table, 0)
    for bad_seat in [-1, True, "1"]:
        with pytest.raises(StoreError):
            journal_path(Path("/d"), TABLE, bad_seat)  # type: ignore[arg-type]


RECORDS: list[dict[str, object]] = [
    {"kind": "hello", "seq": 0},
    {"kind": "move", "body": {"card": "R6", "nested": [1, 2, {"x": None}]}, "seq": 1},
    {"text": "ünïcödé ✓", "big": 2**62},
    {},
]


def test_journal_round_trip(tmp_path: Path) -> None:
    path = journal_path(tmp_path, TABLE, 1)
    journal = Journal(path)
    assert journal.read() == []
    for record in RECORDS:
        journal.append(record)
    assert journal.read() == RECORDS
    assert Journal(path).read() == RECORDS
    # A second Journal on the same file carries on the chain.
    more = Journal(path)
    more.append({"after": "reopen"})
    assert Journal(path).read() == [*RECORDS, {"after": "reopen"}]
    assert path.read_bytes().count(b"\n") == len(RECORDS) + 1
    if os.name == "posix":
        assert mode_of(path) == 0o600  # it holds this seat's secrets


def test_journal_refuses_non_canonical_records(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.jsonl")
    for bad in [{"x": 1.5}, {"x": float("nan")}, {1: "non-str key"}, {"x": b"bytes"}, ["not", "a", "dict"]]:
        with pytest.raises(StoreError):
            journal.append(bad)  # type: ignore[arg-type]
    assert not (tmp_path / "j.jsonl").exists()


def test_journal_append_fsyncs_every_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "j.jsonl"
    journal = Journal(path)
    journal.append({"n": 0})  # creates the file (and fsyncs the directory too)
    calls: list[int] = []
    real = os.fsync

    def counting(fd: int) -> None:
        calls.append(fd)
        real(fd)

    monkeypatch.setattr(store.os, "fsync", counting)
    for n in range(1, 6):
        before = len(calls)
        journal.append({"n": n})
        assert len(calls) == before + 1
    assert len(Journal(path).read()) == 6


def test_journal_torn_last_line_tolerated(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "j.jsonl"
    journal = Journal(path)
    for record in RECORDS:
        journal.append(record)
    intact = path.read_bytes()
    last_line_start = intact.rstrip(b"\n").rfind(b"\n") + 1
    # Every way a crash can cut the last line (any prefix of it, without its newline).
    for cut in range(last_line_start + 1, len(intact)):
        path.write_bytes(intact[:cut])
        reader = Journal(path)
        with caplog.at_level(logging.WARNING, logger="lanplay.base.store"):
            caplog.clear()
            assert reader.read() == RECORDS[:-1]
        assert reader.torn_bytes == cut - last_line_start
        assert "torn" in caplog.text
    # Appending after a tear cuts the torn bytes off first, so the chain stays valid.
    path.write_bytes(intact[: len(intact) - 3])
    writer = Journal(path)
    writer.append({"replaces": "the torn record"})
    assert Journal(path).read() == [*RECORDS[:-1], {"replaces": "the torn record"}]
    assert Journal(path).torn_bytes == 0


def test_journal_zero_filled_tail_is_a_tear(tmp_path: Path) -> None:
    # Some file systems extend the size before the data lands: the tail reads as NUL bytes.
    path = tmp_path / "j.jsonl"
    journal = Journal(path)
    journal.append({"a": 1})
    with open(path, "ab") as handle:
        handle.write(b"\x00" * 40)
    assert Journal(path).read() == [{"a": 1}]


def _journal_lines(tmp_path: Path, count: int = 5) -> tuple[Path, list[bytes]]:
    path = tmp_path / "j.jsonl"
    journal = Journal(path)
    for n in range(count):
        journal.append({"n": n, "secret": f"{n:064x}"})
    return path, path.read_bytes().split(b"\n")[:-1]


def test_journal_mid_file_corruption_detected(tmp_path: Path) -> None:
    path, lines = _journal_lines(tmp_path)
    cases = {
        "flipped byte": [*lines[:2], lines[2].replace(b'"n":2', b'"n":3', 1), *lines[3:]],
        "altered record": [*lines[:2], lines[2].replace(b"secret", b"sekret"), *lines[3:]],
        "garbage line": [*lines[:2], b"\x00\xff garbage", *lines[3:]],
        "blank line": [*lines[:2], b"", *lines[2:]],
        "line lost": [*lines[:2], *lines[3:]],
        "lines swapped": [*lines[:1], lines[2], lines[1], *lines[3:]],
        "first line lost": lines[1:],
        "torn line in the middle": [*lines[:2], lines[2][:10], *lines[3:]],
        "corrupt last complete line": [*lines[:-1], lines[-1][:-1] + b"X"],
    }
    for name, damaged in cases.items():
        path.write_bytes(b"\n".join(damaged) + b"\n")
        with pytest.raises(JournalCorrupt) as info:
            Journal(path).read()
        assert str(path) in str(info.value), name
        assert "line" in str(info.value), name
        # Appending to a corrupt journal is refused too, not chained onto damage.
        with pytest.raises(JournalCorrupt):
            Journal(path).append({"more": True})


def test_journal_rewritten_line_with_valid_json_detected(tmp_path: Path) -> None:
    """A line replaced by another well-formed entry (correct n and prev) still breaks the next link."""
    path, lines = _journal_lines(tmp_path)
    forged = lines[1].replace(b'"secret":"', b'"secret":"f', 1)
    path.write_bytes(b"\n".join([lines[0], forged, *lines[2:]]) + b"\n")
    with pytest.raises(JournalCorrupt, match=r"line 3 .*hash chain"):
        Journal(path).read()


def test_a_journal_set_aside_keeps_every_line_and_never_overwrites(tmp_path: Path) -> None:
    """I3: a journal that cannot be resumed is moved out of the way (``.broken``, then ``.broken-2``),
    whole; `set_aside_journals` lists them; a new journal may start at the old path."""
    path = store.journal_path(tmp_path, "ab" * 16, 0)
    assert store.set_aside_journals(tmp_path) == []
    moved = []
    for round_ in range(2):
        journal = Journal(path)
        journal.append({"t": "table", "round": round_})
        journal.append({"t": "start", "ms": 1})
        moved.append(journal.set_aside())
        assert not path.exists()
        assert Journal(moved[-1]).read() == [{"t": "table", "round": round_}, {"t": "start", "ms": 1}]
        journal.append({"t": "table", "round": 9})  # the same object writes a fresh journal at the old path
        assert Journal(path).read() == [{"t": "table", "round": 9}]
        path.unlink()
    assert [p.name for p in moved] == [path.name + ".broken", path.name + ".broken-2"]
    assert sorted(store.set_aside_journals(tmp_path)) == sorted(moved)


# --- records -------------------------------------------------------------------------------------


def test_save_record(tmp_path: Path) -> None:
    text = '{"format": "lanplay-record/1", "game": "take6"}\n'
    path = save_record(tmp_path, TABLE, text)
    assert path == tmp_path / "records" / f"{TABLE}.json"
    assert path.read_text(encoding="utf-8") == text
    assert save_record(tmp_path, TABLE, text) == path  # the same record again: same file
    other = save_record(tmp_path, TABLE, text.replace("take6", "sixes"))
    assert other == tmp_path / "records" / f"{TABLE}-2.json"
    assert path.read_text(encoding="utf-8") == text  # never overwritten
    assert sorted(p.name for p in (tmp_path / "records").iterdir()) == [f"{TABLE}-2.json", f"{TABLE}.json"]
    with pytest.raises(StoreError):
        save_record(tmp_path, "../escape", text)


def test_a_record_is_named_so_a_person_can_read_it_game_date_and_players(tmp_path: Path) -> None:
    """Issue 30: the record's place says the game, the date and the players, not a hash alone (the table
    id's first 8 hex digits keep two games of one minute apart); only letters, digits and hyphens."""
    label = record_label("sixth-sense", ["Ann", "Ann's bot 1", "Zoë/../Bob"], 0.0)
    assert label.endswith("-sixth-sense-ann-ann-s-bot-1-zo-bob") and label[:4].isdigit()
    assert all(c.isascii() and (c.isalnum() or c == "-") for c in label)
    path = save_record(tmp_path, TABLE, "{}\n", label)
    assert path == tmp_path / "records" / f"{label}-{TABLE[:8]}.json"
    assert len(record_label("take6", ["x" * 200] * 10)) <= 80


def test_journals_of_finished_games_are_removed_and_unfinished_ones_kept(tmp_path: Path) -> None:
    finished, unfinished, damaged = (journal_path(tmp_path, TABLE, seat) for seat in (0, 1, 2))
    for path in (finished, unfinished):
        journal = Journal(path)
        for record in RECORDS:
            journal.append(record)
    Journal(finished).append({"t": "done"})
    damaged.write_bytes(b"not a journal\n")
    assert remove_finished_journals(tmp_path) == [finished]
    assert not finished.exists() and Journal(unfinished).read() == RECORDS and damaged.exists()
    assert remove_finished_journals(tmp_path / "nothing here") == []

"""What a peer keeps on disk: its identity key (P-1.1), its per-table journal (P-5.4) and game records.

Layout under `data_dir()` (``$LANPLAY_HOME``, else the platform's user data directory from
`platformdirs`: ``~/.local/share/lanplay`` on Linux, ``~/Library/Application Support/lanplay`` on
macOS, ``%LOCALAPPDATA%\\lanplay`` on Windows)::

    identity.key                          the Ed25519 seed, 32 raw bytes, mode 0600
    journals/<table id>-seat<N>.jsonl     append-only journal of one seat at one table (0600); removed when
                                          lanplay next starts once its game is over (`remove_finished_journals`)
    journals/<...>.jsonl.broken           a journal set aside: it could not be resumed (I3)
    records/<date>-<game>-<players>-<id8>.json  finished game records (lanplay-record/1, 0600)
    bots/<fingerprint>/                   the same three for each bot seat this laptop runs
    network.json                          the network the player chose in the lobby

Every write that must survive a crash goes to disk (``os.fsync``) before the function returns, so the
caller may act on it afterwards: P-5.4 asks that the signed log and a peer's own secrets be journaled
*before* acting on them.

Journal format: one line per record, each the canonical JSON (`protocol.encoding.canonical`) of
``{"n": index, "prev": hex SHA-256 of the previous line, "record": {...}}`` followed by ``\\n``; the first
line's ``prev`` is `JOURNAL_GENESIS`. The hash chain turns a lost, altered or reordered line anywhere
but at the very end into a clear error rather than a silently different log. A last line without its
newline is what a crash in the middle of `Journal.append` leaves: it was never acknowledged to the
caller, so it is dropped (and reported), never treated as corruption.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import secrets
import stat
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import platformdirs
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import load_pem_private_key

from protocol.encoding import JSONObject, canonical, check_table_id, decode
from protocol.errors import ProtocolError
from protocol.identity import PRIVATE_KEY_BYTES, Identity

log = logging.getLogger(__name__)

ENV_HOME = "LANPLAY_HOME"
APP_NAME = "lanplay"
IDENTITY_FILE = "identity.key"
JOURNALS_DIR = "journals"
RECORDS_DIR = "records"
BOTS_DIR = "bots"
NETWORK_FILE = "network.json"
MAX_NETWORK_FILE = 4096
DIR_MODE = 0o700
KEY_MODE = 0o600
# A PEM Ed25519 key is about 120 bytes; anything much larger is not a key, and is not read whole.
MAX_KEY_FILE = 4096
# One journal line holds one signed message or one secret; a line this long is corruption, not data.
MAX_JOURNAL_LINE = 1 << 20
JOURNAL_GENESIS = "0" * 64
MAX_RECORDS_PER_TABLE = 1000
BROKEN_SUFFIX = ".broken"  # a journal set aside because it cannot be resumed (`Journal.set_aside`)
_JOURNAL_KEYS = frozenset({"n", "prev", "record"})
_PEM_PREFIX = b"-----BEGIN"


class StoreError(Exception):
    """A file of the data directory cannot be used; the message names the file and says why."""


class JournalCorrupt(StoreError):
    """A journal line before the last is damaged: the log is not what this peer wrote."""


class ResumeFailed(StoreError):
    """A journal whose game cannot be carried on (I3): damaged, a record not of the shape the runner
    writes, or a replay that does not go as it went. ``set_aside_as``: where the journal was moved
    (`Journal.set_aside`), so that nothing offers it again; None while it is still in place."""

    def __init__(self, path: Path, why: str, set_aside_as: Path | None = None) -> None:
        self.path, self.why, self.set_aside_as = path, why, set_aside_as
        text = f"cannot resume the game journaled in {path}: {why}"
        if set_aside_as is not None:
            text += f"; the journal was set aside as {set_aside_as.name} (nothing deleted); lanplay goes on without it"
        super().__init__(text)


# --- directories and atomic files --------------------------------------------------------------


def data_dir() -> Path:
    """The data directory: ``$LANPLAY_HOME``, else the platform's convention through `platformdirs`
    (XDG on Linux, Application Support on macOS, local app data on Windows). Created (mode 0700) if
    missing; an existing one is left as it is, since ``$LANPLAY_HOME`` may name a directory the user
    set up on purpose."""
    home = os.environ.get(ENV_HOME)
    if home:
        path = Path(home).expanduser()
    else:
        path = Path(platformdirs.user_data_dir(APP_NAME, appauthor=False, roaming=False))
        if not path.is_absolute():
            # A relative $XDG_DATA_HOME is invalid per the XDG spec and must be ignored; platformdirs uses it.
            path = Path.home() / ".local" / "share" / APP_NAME
    _make_private_dir(path)
    return path


def _make_private_dir(path: Path) -> None:
    if path.is_dir():
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.mkdir(mode=DIR_MODE)
    except FileExistsError:
        return  # another process made it first; fine
    except OSError as exc:
        raise StoreError(f"cannot create data directory {path}: {exc.strerror or exc}") from exc
    # mkdir's mode is filtered through the umask; set it exactly.
    os.chmod(path, DIR_MODE)


def _fsync_dir(path: Path) -> None:
    # A new or renamed file survives a crash only once its directory entry is on disk too.
    # Windows cannot open a directory; it has no such step to take.
    if os.name != "posix":
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_temp(directory: Path, data: bytes, mode: int) -> Path:
    """A fully written, fsynced temporary file in ``directory`` (same file system, so it can be
    renamed or linked into place atomically)."""
    tmp = directory / f".tmp-{secrets.token_hex(8)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return tmp


def _publish_new(tmp: Path, path: Path) -> bool:
    """Put the content of ``tmp`` at ``path`` only if ``path`` does not exist yet; False if it does.
    A hard link is an atomic "create if absent, with this content", so two processes starting
    together cannot both win; where the file system has no hard links, fall back to os.replace after
    an existence check (a much narrower race than none). ``tmp`` may be gone afterwards; the caller
    removes it if not."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        return False
    except OSError:
        if path.exists():
            return False
        os.replace(tmp, path)
    _fsync_dir(path.parent)
    return True


def _remove(tmp: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()


# --- identity key (P-1.1) ------------------------------------------------------------------------


def load_or_create_identity(directory: Path) -> Identity:
    """This installation's identity, from ``directory/identity.key``; created (owner-only, 0600) on
    first run. A key file that is readable by others, not owned by this user, or not a key is refused
    with a `StoreError` naming the file and the fix: silently replacing it would change the peer id
    everyone else knows this player by."""
    path = directory / IDENTITY_FILE
    if not path.exists() and not path.is_symlink():
        identity = Identity.generate()
        _make_private_dir(directory)
        tmp = _write_temp(directory, identity.private_bytes(), KEY_MODE)
        try:
            created = _publish_new(tmp, path)
        finally:
            _remove(tmp)
        if created:
            log.info("created a new identity in %s", path)
            return identity
        # Another process created the key between the check and the link: use theirs.
    return _load_identity(path)


def _load_identity(path: Path) -> Identity:
    try:
        with open(path, "rb") as handle:
            info = os.fstat(handle.fileno())
            _check_key_file(path, info)
            raw = handle.read(MAX_KEY_FILE + 1)
    except OSError as exc:
        raise StoreError(f"cannot read identity key {path}: {exc.strerror or exc}") from exc
    return _parse_key(path, raw)


def _check_key_file(path: Path, info: os.stat_result) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise StoreError(f"identity key {path} is not a regular file")
    # Windows has no POSIX mode bits to speak of; there the user profile's ACLs protect the file.
    if os.name != "posix":
        return
    if info.st_uid != os.getuid():
        raise StoreError(
            f"identity key {path} belongs to user id {info.st_uid}, not to you ({os.getuid()}); "
            f"refusing to use a key another account controls"
        )
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        raise StoreError(
            f"identity key {path} is readable or writable by other users (mode {mode:04o}); "
            f"anyone who can read it can play as you. Fix it with: chmod 600 {path}"
        )


def save_identity(directory: Path, identity: Identity) -> Path:
    """Keep ``identity`` as ``directory/identity.key`` (0600), e.g. for a bot seat this laptop runs,
    so that its game can be resumed after a crash. An existing key is never replaced."""
    _make_private_dir(directory.parent)
    _make_private_dir(directory)
    path = directory / IDENTITY_FILE
    tmp = _write_temp(directory, identity.private_bytes(), KEY_MODE)
    try:
        if not _publish_new(tmp, path):
            raise StoreError(f"identity key {path} exists already")
    finally:
        _remove(tmp)
    return path


def _parse_key(path: Path, raw: bytes) -> Identity:
    hint = f"move it away to create a new identity (other players will see a new fingerprint): mv {path} {path}.bad"
    if raw.lstrip().startswith(_PEM_PREFIX):
        try:
            key = load_pem_private_key(raw, password=None)
        except (ValueError, TypeError) as exc:
            raise StoreError(f"identity key {path} is not a readable unencrypted PEM key ({exc}); {hint}") from None
        if not isinstance(key, Ed25519PrivateKey):
            raise StoreError(f"identity key {path} is a {type(key).__name__}, not an Ed25519 key; {hint}")
        return Identity(key)
    if len(raw) != PRIVATE_KEY_BYTES:
        shown = f"more than {MAX_KEY_FILE}" if len(raw) > MAX_KEY_FILE else str(len(raw))
        raise StoreError(
            f"identity key {path} is {shown} bytes, not a {PRIVATE_KEY_BYTES}-byte Ed25519 seed or a PEM key; {hint}"
        )
    return Identity.from_private_bytes(raw)


# --- journal (P-5.4) -----------------------------------------------------------------------------


def journal_path(directory: Path, table_id: str, seat: int) -> Path:
    """Where the journal of ``seat`` at table ``table_id`` lives. The table id is checked (lowercase
    hex) so that a hostile one cannot name a path outside the directory."""
    try:
        check_table_id(table_id)
    except ProtocolError as exc:
        raise StoreError(f"bad table id for a journal: {exc.message}") from None
    if not isinstance(seat, int) or isinstance(seat, bool) or seat < 0:
        raise StoreError(f"seat must be a non-negative int, got {seat!r}")
    return directory / JOURNALS_DIR / f"{table_id}-seat{seat}.jsonl"


def _line_hash(line: bytes) -> str:
    return hashlib.sha256(line).hexdigest()


class Journal:
    """Append-only journal of JSON records in one file (format in the module docstring).

    `append` returns only once the record is on disk. `read` returns every record; a torn last line
    (a crash during `append`) is dropped, logged and counted in `torn_bytes`; damage before it raises
    `JournalCorrupt`. The first `append` after opening cuts a torn tail off the file, since writing
    after it would turn the tear into mid-file corruption. One writer per file: this class takes no
    lock, and a seat's journal belongs to that seat's one process."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.torn_bytes = 0
        self._unsynced = False
        # Where the next line goes: (index, prev hash, file offset); None until the file was read.
        self._tail: tuple[int, str, int] | None = None

    def read(self) -> list[JSONObject]:
        """All complete records, oldest first. Raises `JournalCorrupt` naming the line and the fault."""
        records, _ = self._scan()
        return records

    def append(self, record: JSONObject, sync: bool = True) -> None:
        """Write one record and fsync it (``sync=False``: leave the fsync to a later `append` or
        `sync`, for records that need not be on disk before anything is sent). `StoreError` if it
        is not canonical JSON (floats, non-str keys, ...): the journal holds exactly what peers sign
        and hash."""
        try:
            canonical(record)
            if not isinstance(record, dict):
                raise ProtocolError("P-2.1", f"a journal record is a JSON object, not a {type(record).__name__}")
        except ProtocolError as exc:
            raise StoreError(f"record cannot be journaled in {self.path}: {exc.message}") from None
        if self._tail is None:
            _, self._tail = self._scan()
            self._cut_torn_tail(self._tail[2])
        index, prev, offset = self._tail
        line = canonical({"n": index, "prev": prev, "record": record})
        if len(line) > MAX_JOURNAL_LINE:
            raise StoreError(f"record of {len(line)} bytes exceeds the journal line limit of {MAX_JOURNAL_LINE}")
        created = not self.path.exists()
        if created:
            _make_private_dir(self.path.parent)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, KEY_MODE)
        try:
            # One write call for the whole line keeps a crash from interleaving partial pieces.
            written = os.write(fd, line + b"\n")
            if written != len(line) + 1:
                raise StoreError(f"short write to {self.path}: {written} of {len(line) + 1} bytes")
            if sync:
                os.fsync(fd)
            self._unsynced = not sync
        finally:
            os.close(fd)
        if created:
            _fsync_dir(self.path.parent)
        self._tail = (index + 1, _line_hash(line), offset + len(line) + 1)

    def rewrite_first(self, record: JSONObject) -> None:
        """A journal of one record only is written anew with `record` in its place, atomically (a crash leaves
        the old one or the new one): a table record whose plan gained signatures before anything followed it."""
        if len(self.read()) != 1:
            raise StoreError(f"journal {self.path} holds more than its first record: it is not rewritten")
        fresh = self.path.with_name(self.path.name + ".new")
        _remove(fresh)
        Journal(fresh).append(record)
        try:
            os.replace(fresh, self.path)
        except OSError as exc:
            _remove(fresh)
            raise StoreError(f"cannot rewrite journal {self.path}: {exc.strerror or exc}") from exc
        _fsync_dir(self.path.parent)
        self._tail = None

    def set_aside(self) -> Path:
        """Move this journal out of the way (``<name>.broken``, or ``.broken-2``, …), so that no command
        offers to resume it again; nothing is deleted. Returns the new path."""
        for number in range(1, MAX_RECORDS_PER_TABLE + 1):
            suffix = BROKEN_SUFFIX if number == 1 else f"{BROKEN_SUFFIX}-{number}"
            target = self.path.with_name(self.path.name + suffix)
            if not target.exists():
                try:
                    os.replace(self.path, target)
                except OSError as exc:
                    raise StoreError(f"cannot set journal {self.path} aside: {exc.strerror or exc}") from exc
                _fsync_dir(self.path.parent)
                self._tail = None
                return target
        raise StoreError(f"journal {self.path} has been set aside {MAX_RECORDS_PER_TABLE} times already")

    def sync(self) -> None:
        """fsync records appended with ``sync=False`` (a no-op when there are none)."""
        if self._unsynced and self.path.exists():
            fd = os.open(self.path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            self._unsynced = False

    def _cut_torn_tail(self, good_size: int) -> None:
        if self.torn_bytes and self.path.exists() and self.path.stat().st_size > good_size:
            fd = os.open(self.path, os.O_WRONLY)
            try:
                os.ftruncate(fd, good_size)
                os.fsync(fd)
            finally:
                os.close(fd)
            log.warning("journal %s: cut the torn last line (%d bytes) before appending", self.path, self.torn_bytes)
            self.torn_bytes = 0

    def _scan(self) -> tuple[list[JSONObject], tuple[int, str, int]]:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return [], (0, JOURNAL_GENESIS, 0)
        except OSError as exc:
            raise StoreError(f"cannot read journal {self.path}: {exc.strerror or exc}") from exc
        lines = data.split(b"\n")
        torn = lines.pop()  # the piece after the last newline: b"" for an intact file
        self.torn_bytes = len(torn)
        if torn:
            log.warning(
                "journal %s: dropping a torn last line of %d bytes (a crash while writing it)", self.path, len(torn)
            )
        records: list[JSONObject] = []
        prev = JOURNAL_GENESIS
        for index, line in enumerate(lines):
            records.append(self._parse_line(index, line, prev))
            prev = _line_hash(line)
        return records, (len(lines), prev, len(data) - len(torn))

    def _parse_line(self, index: int, line: bytes, prev: str) -> JSONObject:
        where = f"journal {self.path}, line {index + 1}"
        try:
            entry = decode(line, MAX_JOURNAL_LINE)
        except ProtocolError as exc:
            raise JournalCorrupt(f"{where} is damaged: {exc.message}") from None
        if set(entry) != _JOURNAL_KEYS:
            raise JournalCorrupt(f"{where} is damaged: fields must be exactly {sorted(_JOURNAL_KEYS)}")
        if canonical(entry) != line:
            raise JournalCorrupt(f"{where} is damaged: not in the canonical form it was written in")
        if entry["n"] != index:
            raise JournalCorrupt(f"{where} says it is entry {entry['n']!r}: lines were lost or reordered")
        if entry["prev"] != prev:
            raise JournalCorrupt(
                f"{where} does not follow the line before it (hash chain broken): lines were lost, altered or reordered"
            )
        record = entry["record"]
        if not isinstance(record, dict):
            raise JournalCorrupt(f"{where} is damaged: its record is not a JSON object")
        return record


def remove_finished_journals(directory: Path) -> list[Path]:
    """Remove the journals whose last record is ``done`` (the game ended, was left on purpose, or was
    forgotten): nothing resumes them and the record is in ``records/``, so they would only pile up. Only the
    last line is read, raw: a journal another process is still writing is never touched (no torn-tail cut).
    Returns what was removed."""
    folder = directory / JOURNALS_DIR
    if not folder.is_dir():
        return []
    removed = []
    for path in folder.glob("*.jsonl"):
        try:
            with path.open("rb") as file:
                file.seek(max(0, path.stat().st_size - 4096))
                last = file.read().rstrip(b"\n").rsplit(b"\n", 1)[-1]
            record = json.loads(last).get("record")
        except (OSError, ValueError, AttributeError):
            continue  # unreadable or damaged: the look for an unfinished game deals with it (I3)
        if isinstance(record, dict) and record.get("t") == "done":
            with contextlib.suppress(OSError):
                path.unlink()
                removed.append(path)
    return removed


def newly_set_aside(directory: Path, before: Sequence[Path]) -> list[Path]:
    """The journals set aside since `before` (an earlier `set_aside_journals`): a look for an unfinished
    game that found one damaged, which the screens then name instead of silently starting afresh."""
    seen = set(before)
    return [path for path in set_aside_journals(directory) if path not in seen]


def set_aside_journals(directory: Path) -> list[Path]:
    """The journals under ``directory`` set aside because they could not be resumed, newest first."""
    folder = directory / JOURNALS_DIR
    if not folder.is_dir():
        return []
    found = [path for path in folder.iterdir() if BROKEN_SUFFIX in path.name]
    return sorted(found, key=lambda path: path.stat().st_mtime, reverse=True)


# --- game records ---------------------------------------------------------------------------------


def record_label(game: str, names: Sequence[str], when: float | None = None) -> str:
    """A file name a person can read for a game record: date and time, game, players
    (`2026-12-07-2014-sixes-ann-bob-cor`); only lowercase letters, digits and hyphens."""
    stamp = time.strftime("%Y-%m-%d-%H%M", time.localtime(when))
    words = [game, *(name[:12] for name in names)]
    slug = "-".join(w for w in ("".join(c if c.isascii() and c.isalnum() else "-" for c in word.lower()).strip("-")
                                for word in words) if w)  # fmt: skip
    while "--" in slug:
        slug = slug.replace("--", "-")
    return f"{stamp}-{slug}"[:80].rstrip("-")


def save_record(directory: Path, table_id: str, text: str, label: str | None = None) -> Path:
    """Write a finished game record to ``directory/records/<label>-<table id's first 8>.json`` (or
    ``<table id>.json`` with no `label`; `record_label` makes one) atomically and durably, and return its
    path. An existing record is never overwritten: the same text again returns the existing file, a
    different one (another game at the same table) gets ``...-2.json``, ..."""
    try:
        check_table_id(table_id)
    except ProtocolError as exc:
        raise StoreError(f"bad table id for a game record: {exc.message}") from None
    stem = f"{label}-{table_id[:8]}" if label else table_id
    data = text.encode("utf-8")
    records = directory / RECORDS_DIR
    _make_private_dir(records)
    tmp = _write_temp(records, data, KEY_MODE)  # a record shows every hand: owner-only, like the journal
    try:
        for number in range(1, MAX_RECORDS_PER_TABLE + 1):
            path = records / (f"{stem}.json" if number == 1 else f"{stem}-{number}.json")
            with contextlib.suppress(FileNotFoundError):
                if path.read_bytes() == data:
                    return path
                continue
            if _publish_new(tmp, path):
                return path
            # Lost a race for this name to another writer: look at what it wrote, then go on.
            with contextlib.suppress(FileNotFoundError):
                if path.read_bytes() == data:
                    return path
    finally:
        _remove(tmp)
    raise StoreError(f"more than {MAX_RECORDS_PER_TABLE} different records for table {table_id} in {records}")


# --- the network chosen in the lobby --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SavedNetwork:
    """The interface the player chose: its name (``wlan0``) and the IPv4 address it had then."""

    interface: str
    address: str


def network_path(directory: Path) -> Path:
    return directory / NETWORK_FILE


def load_network(directory: Path) -> SavedNetwork | None:
    """The saved choice, None if there is none. `StoreError` naming the file and the fix if it is
    unreadable: guessing another network would put the player at an empty table without a word."""
    path = network_path(directory)
    fix = f"choose again in the lobby after removing it (rm {path}), or pass --interface"
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_NETWORK_FILE + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreError(f"cannot read the saved network choice {path}: {exc.strerror or exc}; {fix}") from None
    try:
        if len(raw) > MAX_NETWORK_FILE:
            raise ValueError(f"longer than {MAX_NETWORK_FILE} bytes")
        value = json.loads(raw.decode("utf-8"))
        if not isinstance(value, dict):
            raise ValueError("not a JSON object")
        interface, address = value.get("interface"), value.get("address")
        if not isinstance(interface, str) or not isinstance(address, str) or not address:
            raise ValueError('needs "interface" and "address" strings')
    except (ValueError, UnicodeDecodeError) as exc:
        raise StoreError(f"the saved network choice {path} is damaged ({exc}); {fix}") from None
    return SavedNetwork(interface, address)


def save_network(directory: Path, choice: SavedNetwork) -> Path:
    """Remember the player's choice (atomically: a crash leaves the old choice or the new one)."""
    _make_private_dir(directory)
    path = network_path(directory)
    data = json.dumps({"interface": choice.interface, "address": choice.address}).encode() + b"\n"
    tmp = _write_temp(directory, data, KEY_MODE)
    try:
        os.replace(tmp, path)
    finally:
        _remove(tmp)
    _fsync_dir(directory)
    return path

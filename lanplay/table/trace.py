"""Timing lines for benchmarks: with ``$LANPLAY_TRACE`` set to a file, a runner appends one JSON object a
line there, with the wall-clock time ``t``, the CPU time ``cpu`` this process's event-loop thread
(where the session runs) has used so far, and its ``seat`` (read by scripts/bench_net.py):

- ``round``: this seat's deal of round ``round`` begins (the round's dealer is known here);
- ``dealt``: this seat holds its hand of round ``round``;
- ``submit``: this seat's player chose a move;
- ``applied``: a move was applied here;
- ``audited``: round ``round`` confirmed, with this process's ``rss_kib``.

A move is named by ``(round, mover, n)``: the n-th move of seat ``mover`` in that round, alike on every
seat. Off when the variable is unset; it reads the session's public queries and events only.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TextIO

from protocol.table import Dealt, Event, Moved, RoundConfirmed, TableSession

TRACE_ENV = "LANPLAY_TRACE"


class Trace:
    def __init__(self, path: Path, me: int) -> None:
        self.me = me
        self._file: TextIO | None = path.open("a", encoding="utf-8", buffering=1)
        self._round = -1  # the round of the last Dealt: the moves that follow belong to it
        self._started = -1  # the last round whose deal was seen begun
        self._moves: dict[int, int] = {}
        self._submitted = 0

    @classmethod
    def from_env(cls, me: int) -> Trace | None:
        path = os.environ.get(TRACE_ENV)
        return cls(Path(path), me) if path else None

    def _write(self, event: str, **fields: object) -> None:
        if self._file is not None:
            line = {"event": event, "seat": self.me, "t": time.time(), "cpu": time.thread_time(), **fields}
            self._file.write(json.dumps(line) + "\n")

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def _enter(self, round_: int) -> None:
        if round_ != self._round:
            self._round, self._moves, self._submitted = round_, {}, 0

    def submit(self) -> None:
        self._write("submit", round=self._round, mover=self.me, n=self._submitted)
        self._submitted += 1

    def phase(self, session: TableSession) -> None:
        if session.phase == "deal" and session.round_index != self._started:
            self._started = session.round_index
            self._write("round", round=session.round_index)

    def event(self, event: Event) -> None:
        if isinstance(event, Dealt):
            self._enter(event.round)
            self._write("dealt", round=event.round)
        elif isinstance(event, Moved):
            n = self._moves.get(event.seat, 0)
            self._moves[event.seat] = n + 1
            hidden = any(value is None for value in event.move.values())
            self._write("applied", round=self._round, mover=event.seat, n=n, hidden=hidden)
        elif isinstance(event, RoundConfirmed):
            self._write("audited", round=event.round, rss_kib=_rss_kib())


def _rss_kib() -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None

"""Small asyncio helpers shared by the parts of lanplay that run tasks of their own."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any


async def cancel_and_wait(tasks: Iterable[asyncio.Future[Any]]) -> None:
    """Cancel `tasks` and wait until each is done, then raise the first error one of them ended with
    (other than its cancellation). Not `suppress(CancelledError)` around each `await`: that would also
    swallow a cancellation of the calling task itself (a Ctrl-C while the lobby updated its advert
    kept `lanplay host` running)."""
    pending = list(tasks)
    for task in pending:
        task.cancel()
    if not pending:
        return
    await asyncio.wait(pending)
    for task in pending:
        if not task.cancelled():
            task.result()

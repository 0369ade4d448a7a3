"""A handler's answer that comes from elsewhere (a relay's child), answered by the peer in the
step that resolves it, with no task (specs/design.md, "The peer")."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Generator
from typing import Any

#: settle(result, error): exactly one of them is meaningful (error None means success).
Settle = Callable[[Any, BaseException | None], None]


class Deferred:
    __slots__ = ("_finished", "_outcome", "_settle", "cancelled", "on_cancel")

    def __init__(self) -> None:
        self._settle: Settle | None = None
        self._outcome: tuple[Any, BaseException | None] | None = None
        self._finished: asyncio.Future[None] | None = None
        #: Called once if the Deferred is cancelled before it is resolved.
        self.on_cancel: Callable[[], object] | None = None
        self.cancelled = False

    @property
    def done(self) -> bool:
        return self._outcome is not None or self.cancelled

    def resolve(self, result: Any) -> None:
        self._finish(result, None)

    def reject(self, error: BaseException) -> None:
        self._finish(None, error)

    def _finish(self, result: Any, error: BaseException | None) -> None:
        if self._outcome is not None or self.cancelled:  # `done`: later answers are dropped
            return
        self._outcome = (result, error)
        settle, self._settle, self.on_cancel = self._settle, None, None  # no cycles left
        if settle is not None:
            settle(result, error)
        if self._finished is not None:  # someone awaits it (a drain, an awaiting caller)
            self._wake()

    def cancel(self, msg: Any = None) -> bool:
        """Give up on the answer (the request was cancelled, or the connection closed)."""
        if self.done:
            return False
        self.cancelled = True
        self._wake()
        settle, self._settle = self._settle, None
        on_cancel, self.on_cancel = self.on_cancel, None
        if on_cancel is not None:
            on_cancel()
        if settle is not None:
            settle(None, asyncio.CancelledError(msg))
        return True

    def bind(self, settle: Settle) -> None:
        """Who answers the request: called once, with the outcome (at once if there is
        one), or with a CancelledError when it is cancelled."""
        if self._outcome is not None:
            settle(*self._outcome)
        elif self.cancelled:
            settle(None, asyncio.CancelledError())
        else:
            self._settle = settle

    def finished(self) -> asyncio.Future[None]:
        """A future done when this is resolved, rejected or cancelled (for draining)."""
        if self._finished is None:
            self._finished = asyncio.get_running_loop().create_future()
            if self.done:
                self._finished.set_result(None)
        return self._finished

    def _wake(self) -> None:
        if self._finished is not None and not self._finished.done():
            self._finished.set_result(None)

    def __await__(self) -> Generator[Any, None, Any]:
        if not self.done:
            try:
                yield from self.finished().__await__()
            except asyncio.CancelledError:
                self.cancel()
                raise
        if self.cancelled:
            raise asyncio.CancelledError
        assert self._outcome is not None
        result, error = self._outcome
        if error is not None:
            raise error
        return result


__all__ = ["Deferred", "Settle"]

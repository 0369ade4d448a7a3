"""Can this coroutine function ever suspend? (decision 11; specs/performance.md)"""

from __future__ import annotations

import dis
import inspect
from collections.abc import Callable
from typing import Any


def never_suspends(fn: Callable[..., Any]) -> bool:
    """True for a plain `async def` whose body has no suspension point at all."""
    target = fn if inspect.iscoroutinefunction(fn) else getattr(fn, "__call__", None)  # noqa: B004
    if target is None or not inspect.iscoroutinefunction(target):
        return False
    # The callable's own code, never an unwrapped inner function: a wrapper may await.
    code = getattr(target, "__code__", None)
    if code is None:
        return False
    return not any(
        instruction.opname == "YIELD_VALUE" for instruction in dis.get_instructions(code)
    )


def run_to_end(coroutine: Any) -> Any:
    """The result of a coroutine that cannot suspend, run in the calling frame."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    coroutine.close()
    raise RuntimeError("a coroutine judged unable to suspend suspended")

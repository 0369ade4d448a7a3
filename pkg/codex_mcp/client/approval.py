"""Approval callbacks, run once before the first attempt of a tool call (specs/client.md,
"Retries")."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from .errors import ApprovalDenied

Approval = Callable[..., Any]


def _arity(fn: Approval) -> int:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 3
    positional = 0
    for param in params:
        if param.kind is param.VAR_POSITIONAL:
            return 3
        if param.kind in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
            positional += 1
    return min(max(positional, 1), 3)


async def check_approval(
    approval: Approval | None, tool: str, arguments: dict[str, Any], context: dict[str, Any]
) -> None:
    """Raise ApprovalDenied unless `approval` approves the call."""
    if approval is None:
        return
    args = (tool, arguments, context)[: _arity(approval)]
    verdict = approval(*args)
    if inspect.isawaitable(verdict):
        verdict = await verdict
    if verdict is None or verdict is True:
        return
    if verdict is False or verdict == "deny":
        raise ApprovalDenied(tool, "denied")
    if isinstance(verdict, tuple) and len(verdict) == 2 and verdict[0] == "deny":
        raise ApprovalDenied(tool, verdict[1])
    if not verdict:
        raise ApprovalDenied(tool, "denied")

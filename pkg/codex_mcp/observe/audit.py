"""The audit log (`--audit-log FILE`): one JSON line per tool call and per refused request,
appended unbuffered (specs/observability.md, "Audit log")."""

from __future__ import annotations

import hashlib
import logging
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from ..core.log_names import printable
from ..session_logs import principal_of_fingerprint, session_label
from .dispatch import TOOLS_CALL, Call

log = logging.getLogger("codex_mcp.audit")


def principal_of_token(token: str) -> str:
    digest = hashlib.sha256(token.encode("utf-8", "surrogateescape")).hexdigest()
    return principal_of_fingerprint(digest) or ""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class AuditLog:
    def __init__(self, path: Path, with_arguments: bool = False) -> None:
        self.path = path
        self.with_arguments = with_arguments
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        except OSError as error:
            from ..launch import StartupError

            raise StartupError(f"cannot open --audit-log {path}: {error.strerror}") from None

    def write(self, record: dict[str, Any]) -> None:
        try:
            os.write(self._fd, orjson.dumps(record, default=str) + b"\n")
        except OSError as error:  # a full disk must not fail the call it records
            log.warning("cannot write the audit log %s: %s", self.path, error)

    def close(self) -> None:
        os.close(self._fd)

    # -- a sink of dispatch.py: tool calls -----------------------------------------
    def begin(self, call: Call) -> None:
        pass

    def end(self, call: Call, seconds: float) -> None:
        if call.method != TOOLS_CALL:
            return
        peer = call.peer
        session_id = getattr(peer, "session_id", None)
        outbound = getattr(peer, "outbound", None)
        fingerprint = getattr(peer, "principal", None) or getattr(outbound, "credential", None)
        arguments = call.params.get("arguments")
        record: dict[str, Any] = {
            "time": _now(),
            "event": "tool_call",
            "principal": principal_of_fingerprint(fingerprint),
            "session": session_label(session_id) if session_id else None,
            "tool": printable(call.tool),
            "child": call.child,
            "duration_ms": round(seconds * 1000, 3),
            "outcome": _outcome(call),
            "arguments_bytes": len(orjson.dumps(arguments)) if arguments is not None else 0,
            "result_bytes": len(orjson.dumps(call.result)) if call.result is not None else 0,
        }
        if call.error is not None:
            record["error"] = str(getattr(call.error, "message", None) or call.error)[:500]
        if self.with_arguments:
            record["arguments"] = arguments
            record["result"] = call.result
        self.write(record)

    # -- refused HTTP requests (refusals.py) -----------------------------------------
    def refused(
        self,
        status: int,
        reason: str,
        client: str | None,
        method: str,
        path: str,
        principal: str | None,
    ) -> None:
        self.write(
            {
                "time": _now(),
                "event": "refused",
                "principal": principal,
                "client": client,
                "method": method,
                "path": path,
                "status": status,
                "reason": reason,
            }
        )


def _outcome(call: Call) -> str:
    if call.error is not None:
        import asyncio

        return "cancelled" if isinstance(call.error, asyncio.CancelledError) else "error"
    return "tool_error" if call.failed else "ok"

"""What answers on a `--workers` port while no worker serves it: the supervisor itself,
with 503 and the reason (specs/scale.md, "--workers N")."""

from __future__ import annotations

import contextlib
import select
import socket
from typing import Final

import orjson

#: A client gets this long to send its request head before the answer goes out anyway.
_READ_TIMEOUT: Final = 0.2


class Standby:
    """Listens on the reserved port while no worker does; `close()` when one is back."""

    def __init__(self, holder: socket.socket) -> None:
        self.holder = holder
        holder.listen(64)
        holder.setblocking(False)

    def serve(self, reason: str, retry_after: float, wait: float) -> None:
        """Answer the connections waiting now, or within `wait` seconds."""
        ready, _, _ = select.select([self.holder], [], [], wait)
        if not ready:
            return
        while True:
            try:
                connection, _ = self.holder.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return
            with contextlib.closing(connection):
                _answer(connection, reason, retry_after)


def _answer(connection: socket.socket, reason: str, retry_after: float) -> None:
    body = orjson.dumps({"status": "no worker serving", "reason": reason})
    head = (
        "HTTP/1.1 503 Service Unavailable\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n"
        f"Retry-After: {max(1, round(retry_after))}\r\n"
        "Connection: close\r\n\r\n"
    ).encode("ascii")
    connection.settimeout(_READ_TIMEOUT)
    with contextlib.suppress(OSError):
        connection.recv(65536)  # the request head, best effort: every request gets this
        connection.sendall(head + body)


__all__ = ["Standby"]

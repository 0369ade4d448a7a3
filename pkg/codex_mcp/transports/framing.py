"""Stdio framing: newline-delimited JSON, or LSP-style Content-Length headers.

The framing is detected from the first bytes a peer sends and used for the
replies too. Oversized messages are skipped without buffering them whole, and
reported so the transport can answer them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

Mode = Literal["ndjson", "lsp"]

_HEADER_END = b"\r\n\r\n"
_CONTENT_LENGTH = re.compile(rb"content-length\s*:\s*(\d+)", re.IGNORECASE)
_ID_SNIFF = re.compile(rb'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.){0,256}")')


@dataclass(slots=True)
class Oversized:
    """A message over the size limit was dropped; `head` is its first bytes."""

    head: bytes
    limit: int


@dataclass(slots=True)
class BadFrame:
    detail: str


Frame = bytes | Oversized | BadFrame


class FrameDecoder:
    def __init__(self, max_message_bytes: int) -> None:
        self.max = max_message_bytes
        self.mode: Mode | None = None
        self._buffer = bytearray()
        self._scanned = 0  # bytes of _buffer already searched for a newline
        self._skipping = 0  # bytes of an oversized LSP body still to drop
        self._discarding_line = False  # dropping the rest of an oversized line

    def feed(self, data: bytes) -> Iterator[Frame]:
        if self.mode is None:
            self._buffer += data
            stripped = self._buffer.lstrip()
            if not stripped:
                return
            self.mode = "lsp" if stripped[:15].lower() == b"content-length:" else "ndjson"
            data = bytes(self._buffer)
            self._buffer.clear()
            self._scanned = 0
        if self.mode == "ndjson":
            if not self._buffer and not self._discarding_line:
                yield from self._whole_lines(data)  # the common case: no partial line pending
            else:
                self._buffer += data
                yield from self._lines()
        else:
            self._buffer += data
            yield from self._lsp()

    def _whole_lines(self, data: bytes) -> Iterator[Frame]:
        """Split a chunk that starts at a line boundary, copying each line once."""
        start = 0
        while (end := data.find(b"\n", start)) >= 0:
            if end - start > self.max:
                yield Oversized(data[start : start + 4096], self.max)
            elif end > start:
                line = data[start:end]
                if line.strip():  # empty lines are ignored
                    yield line
            start = end + 1
        if start < len(data):
            self._buffer += memoryview(data)[start:]
            yield from self._lines()

    def _lines(self) -> Iterator[Frame]:
        buffer = self._buffer
        start = 0
        search_from = self._scanned  # never rescan bytes already known to hold no newline
        while (end := buffer.find(b"\n", search_from)) >= 0:
            if self._discarding_line:
                self._discarding_line = False  # the tail of an oversized line ends here
            elif end - start > self.max:
                yield Oversized(bytes(buffer[start : start + 4096]), self.max)
            else:
                line = bytes(buffer[start:end])
                if line.strip():  # empty lines are ignored
                    yield line
            start = search_from = end + 1
        if start:
            del buffer[:start]
        if len(buffer) > self.max:
            if not self._discarding_line:
                yield Oversized(bytes(buffer[:4096]), self.max)
                self._discarding_line = True
            buffer.clear()
        self._scanned = len(buffer)

    def _lsp(self) -> Iterator[Frame]:
        buffer = self._buffer
        while buffer:
            if self._skipping:
                dropped = min(self._skipping, len(buffer))
                del buffer[:dropped]
                self._skipping -= dropped
                continue
            header_end = buffer.find(_HEADER_END)
            if header_end < 0:
                if len(buffer) > 8192:
                    buffer.clear()
                    yield BadFrame("header block too long or missing its blank line")
                return
            found = _CONTENT_LENGTH.search(buffer, 0, header_end)
            if found is None:
                del buffer[: header_end + 4]
                yield BadFrame("missing Content-Length header")
                continue
            length = int(found.group(1))
            body_start = header_end + 4
            if length > self.max:
                head = bytes(buffer[body_start : body_start + 4096])
                available = len(buffer) - body_start
                del buffer[: body_start + min(available, length)]
                self._skipping = max(0, length - available)
                yield Oversized(head, self.max)
                continue
            if len(buffer) - body_start < length:
                return
            body = bytes(buffer[body_start : body_start + length])
            del buffer[: body_start + length]
            yield body


def encode_frame(payload: bytes, mode: Mode | None) -> bytes:
    if mode == "lsp":
        return b"Content-Length: %d\r\n\r\n%s" % (len(payload), payload)
    return payload + b"\n"


def sniff_id(head: bytes) -> str | int | None:
    """Best effort: the id of a message we could not read whole, so its error can name it."""
    found = _ID_SNIFF.search(head)
    if found is None:
        return None
    raw = found.group(1)
    if raw.startswith(b'"'):
        import orjson

        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return None
        return value if isinstance(value, str) else None
    return int(raw)

"""Stdio framing: newline-delimited JSON, or LSP-style Content-Length headers.

The framing is detected from the first bytes a peer sends and used for the
replies too. Oversized messages are skipped without buffering them whole, and
reported so the transport can answer them. A frame the decoder cannot use (a
header with no usable Content-Length, a header block missing its blank line, a
message in the other framing) is reported once and skipped, and decoding goes
on with the next frame: one bad frame costs only itself.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from typing import Literal

import orjson

Mode = Literal["ndjson", "lsp"]

_HEADER_END = b"\r\n\r\n"
_CONTENT_LENGTH_NAME = b"content-length:"
#: A header block longer than this is garbage, not a header.
MAX_HEADER_BYTES = 8192
#: How much of a message we keep to name it in an error.
HEAD_BYTES = 4096
#: More digits than this is no size a peer could mean (and int() refuses 4,300).
_MAX_LENGTH_DIGITS = 18
_CONTENT_LENGTH = re.compile(rb"content-length[ \t]*:[ \t]*([^\r\n]*)", re.IGNORECASE)
_HEADER_LINE = re.compile(rb"[!-9;-~]+[ \t]*:[^\r\n]*")
_STARTS_WITH_HEADER = re.compile(rb"[ \t]*content-length[ \t]*:", re.IGNORECASE)
_STARTS_WITH_JSON = re.compile(rb"[ \t\r\n]*[\[{]")
_OPEN_BRACE = 0x7B  # b"{"


@dataclass(slots=True)
class Oversized:
    """A message over the size limit was dropped; `head` is its first bytes."""

    head: bytes
    limit: int


@dataclass(slots=True)
class BadFrame:
    """A frame that could not be read was dropped; `head` is its body's first bytes
    when it has a body we could see."""

    detail: str
    head: bytes = b""


Frame = bytes | Oversized | BadFrame


class FrameDecoder:
    def __init__(self, max_message_bytes: int) -> None:
        self.max = max_message_bytes
        self.mode: Mode | None = None
        self._buffer = bytearray()
        self._scanned = 0  # bytes of _buffer already searched for a newline
        self._skipping = 0  # bytes of a body still to drop
        self._discarding_line = False  # dropping the rest of an oversized line
        self._foreign_frame = False  # ndjson mode: a Content-Length frame starts the buffer
        self._resyncing = False  # lsp mode: after a bad header, junk until the next one

    def feed(self, data: bytes) -> Iterator[Frame]:
        if self.mode is None:
            self._buffer += data
            stripped = self._buffer.lstrip()
            if not stripped:
                return
            prefix = bytes(stripped[:15]).lower()
            if _CONTENT_LENGTH_NAME.startswith(prefix) and len(prefix) < 15:
                return  # could still be "Content-Length:": wait for more
            self.mode = "lsp" if prefix == _CONTENT_LENGTH_NAME else "ndjson"
            data = bytes(self._buffer)
            self._buffer.clear()
            self._scanned = 0
        if (
            self.mode == "ndjson"
            and not self._buffer
            and not self._discarding_line
            and not self._skipping
        ):
            yield from self._whole_lines(data)  # the common case: no partial line pending
        else:
            self._buffer += data
            yield from self._drain()

    def _whole_lines(self, data: bytes) -> Iterator[Frame]:
        """Split a chunk that starts at a line boundary, copying each line once."""
        start = 0
        while (end := data.find(b"\n", start)) >= 0:
            if end - start > self.max:
                yield Oversized(data[start : start + HEAD_BYTES], self.max)
            elif end > start:
                if data[start] != _OPEN_BRACE and _STARTS_WITH_HEADER.match(data, start, end):
                    break  # the peer switched to Content-Length framing: the slow path
                line = data[start:end]
                if line.strip():  # empty lines are ignored
                    yield line
            start = end + 1
        if start < len(data):
            self._buffer += memoryview(data)[start:]
            yield from self._drain()

    def _drain(self) -> Iterator[Frame]:
        """Decode what the buffer holds, one frame kind at a time, until it needs more."""
        buffer = self._buffer
        while buffer:
            if self._skipping:
                dropped = min(self._skipping, len(buffer))
                del buffer[:dropped]
                self._skipping -= dropped
                self._scanned = 0
                continue
            if self.mode == "lsp":
                more = yield from self._lsp_frame()
            elif self._foreign_frame:
                more = yield from self._foreign()
            else:
                more = yield from self._lines()
            if not more:
                return

    def _lines(self) -> Generator[Frame, None, bool]:
        buffer = self._buffer
        start = 0
        search_from = self._scanned  # never rescan bytes already known to hold no newline
        while (end := buffer.find(b"\n", search_from)) >= 0:
            if self._discarding_line:
                self._discarding_line = False  # the tail of an oversized line ends here
            elif end - start > self.max:
                yield Oversized(bytes(buffer[start : start + HEAD_BYTES]), self.max)
            elif (
                end > start
                and buffer[start] != _OPEN_BRACE
                and _STARTS_WITH_HEADER.match(buffer, start, end)
            ):
                del buffer[:start]
                self._scanned = 0
                self._foreign_frame = True
                return True
            else:
                line = bytes(buffer[start:end])
                if line.strip():  # empty lines are ignored
                    yield line
            start = search_from = end + 1
        if start:
            del buffer[:start]
        if len(buffer) > self.max:
            if not self._discarding_line:
                yield Oversized(bytes(buffer[:HEAD_BYTES]), self.max)
                self._discarding_line = True
            buffer.clear()
        self._scanned = len(buffer)
        return False

    def _foreign(self) -> Generator[Frame, None, bool]:
        """ndjson mode, a Content-Length header at a line start: report and skip that frame."""
        buffer = self._buffer
        position = 0  # the start of the first line not known to be a header line
        blank = -1
        while True:
            newline = buffer.find(b"\n", position)
            if newline < 0 or newline > MAX_HEADER_BYTES:
                if newline < 0 and len(buffer) <= MAX_HEADER_BYTES:
                    return False
                break
            line = bytes(buffer[position:newline]).rstrip(b"\r")
            if not line:
                blank = newline
                break
            if not _HEADER_LINE.fullmatch(line):
                break
            position = newline + 1
        self._foreign_frame = False
        self._scanned = 0
        if blank < 0:  # header lines with no blank line after them: drop just those
            del buffer[:position]
            yield BadFrame("a Content-Length header with no blank line after it")
            return True
        length, problem, _ = _read_header(bytes(buffer[:position]))
        body_start = blank + 1
        if length is None:
            del buffer[:body_start]
            yield BadFrame(problem)
            return True
        if len(buffer) - body_start < min(length, HEAD_BYTES):
            self._foreign_frame = True
            return False  # wait for the body's head, to name its id
        head = bytes(buffer[body_start : body_start + min(length, HEAD_BYTES)])
        del buffer[:body_start]
        self._skipping = length
        yield BadFrame(
            "Content-Length framing on a stream of newline-delimited JSON: send one JSON "
            "message per line",
            head,
        )
        return True

    def _lsp_frame(self) -> Generator[Frame, None, bool]:
        buffer = self._buffer
        header_end = buffer.find(_HEADER_END)
        if not self._resyncing and _STARTS_WITH_JSON.match(buffer):
            newline = buffer.find(b"\n")
            if newline >= 0 and (header_end < 0 or newline < header_end):
                head = bytes(buffer[: min(newline, HEAD_BYTES)])
                del buffer[: newline + 1]
                yield BadFrame(
                    "a line of JSON where a Content-Length header was expected: this "
                    "stream uses Content-Length framing",
                    head,
                )
                return True
        if header_end < 0:
            if len(buffer) > MAX_HEADER_BYTES:
                if not self._resyncing:
                    yield BadFrame(f"no Content-Length header in {MAX_HEADER_BYTES} bytes")
                    self._resyncing = True
                del buffer[: -len(_HEADER_END) - 64]  # keep what may start the next header
            return False
        # Only the last MAX_HEADER_BYTES before the blank line can be the header itself.
        window = max(0, header_end - MAX_HEADER_BYTES)
        block = bytes(buffer[window:header_end])
        length, problem, header_start = _read_header(block)
        if header_start == len(block):  # no Content-Length at all
            del buffer[: header_end + 4]
            if not self._resyncing:
                yield BadFrame(problem)
            self._resyncing = True
            return True
        stray = window + header_start
        if stray and bytes(buffer[:stray]).strip():
            del buffer[:stray]
            if not self._resyncing:
                yield BadFrame(
                    "bytes before a Content-Length header: a header block without its "
                    "blank line, or a body longer than its Content-Length"
                )
            return True
        if length is None:
            del buffer[: header_end + 4]
            yield BadFrame(problem)
            self._resyncing = True
            return True
        self._resyncing = False
        body_start = header_end + 4
        available = len(buffer) - body_start
        if length > self.max:
            if available < min(length, HEAD_BYTES):
                return False  # wait for the body's head, to name its id
            head = bytes(buffer[body_start : body_start + HEAD_BYTES])
            del buffer[: body_start + min(available, length)]
            self._skipping = max(0, length - available)
            yield Oversized(head, self.max)
            return True
        if available < length:
            return False
        body = bytes(buffer[body_start : body_start + length])
        del buffer[: body_start + length]
        yield body
        return True


def _read_header(block: bytes) -> tuple[int | None, str, int]:
    """The body length a header block announces (None if unusable), what is wrong with
    it, and where the header proper starts: bytes before that are not a header."""
    headers = list(_CONTENT_LENGTH.finditer(block))
    if not headers:
        return None, "missing Content-Length header", len(block)
    found = headers[-1]  # the last one: anything before it is junk or other headers
    value = found.group(1).strip()
    start = _header_start(block, found.start())
    if not value.isdigit() or len(value) > _MAX_LENGTH_DIGITS:
        shown = value[:40].decode("ascii", "replace")
        return None, f"Content-Length {shown!r} is not a size in bytes", start
    return int(value), "", start


def _header_start(block: bytes, at: int) -> int:
    """Where the header lines that end with the Content-Length line at `at` begin."""
    newline = block.rfind(b"\r\n", 0, at)
    line_start = newline + 2 if newline >= 0 else 0
    if block[line_start:at].strip():
        return at  # stray bytes before the name, on the same line
    while line_start:
        previous = block.rfind(b"\r\n", 0, line_start - 2)
        previous_start = previous + 2 if previous >= 0 else 0
        if not _HEADER_LINE.fullmatch(block, previous_start, line_start - 2):
            break
        line_start = previous_start
    return line_start


def encode_frame(payload: bytes, mode: Mode | None) -> bytes:
    if mode == "lsp":
        return b"Content-Length: %d\r\n\r\n%s" % (len(payload), payload)
    return payload + b"\n"


# -- naming a message we could not read whole -----------------------------------------------

_STRUCTURE = re.compile(rb'[\\"{}\[\]]')
_ID_VALUE = re.compile(rb'[ \t\r\n]*:[ \t\r\n]*(-?\d+(?=[ \t\r\n,}])|"(?:[^"\\]|\\.)*")')
#: The ids orjson can write back.
_MIN_ID, _MAX_ID = -(2**63), 2**64 - 1


def sniff_id(head: bytes) -> str | int | None:
    """Best effort: the top-level id of a message we could not read whole, so its error
    can name it. None when the head does not show it whole, or it could not be echoed."""
    depth = 0
    string_start = -1  # inside a string since this offset
    escaped_until = -1
    for found in _STRUCTURE.finditer(head):
        at = found.start()
        if at < escaped_until:
            continue
        char = head[at]
        if string_start >= 0:
            if char == 0x5C:  # a backslash: the next byte is escaped
                escaped_until = at + 2
            elif char == 0x22:
                if depth == 1 and head[string_start:at] == b"id":
                    value = _ID_VALUE.match(head, at + 1)
                    if value is not None:
                        return _id_from(value.group(1))
                string_start = -1
        elif char == 0x22:
            string_start = at + 1
        elif char in b"{[":
            depth += 1
        elif char in b"}]":
            depth -= 1
    return None


def _id_from(raw: bytes) -> str | int | None:
    if raw.startswith(b'"'):
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return None
        return value if isinstance(value, str) else None
    if len(raw) > 21:
        return None
    number = int(raw)
    return number if _MIN_ID <= number <= _MAX_ID else None

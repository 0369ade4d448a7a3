"""Stdio framing: newline-delimited JSON, or LSP-style Content-Length headers, detected from
the first message; pure bytes, so both ends' stdio share it (specs/design.md, "One
message, stdin to tool and back")."""

from __future__ import annotations

import re
from collections.abc import Generator, Iterable, Iterator
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
#: A header's name is an HTTP token: a line of JSON (`{"id":1}`) is never a header.
_HEADER_LINE = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+[ \t]*:[^\r\n]*")
_STARTS_WITH_HEADER = re.compile(rb"[ \t]*content-length[ \t]*:", re.IGNORECASE)
_STARTS_WITH_JSON = re.compile(rb"[ \t\r\n]*[\[{]")
_OPEN_BRACE = 0x7B  # b"{"


@dataclass(slots=True)
class Oversized:
    """A message over the size limit was dropped; `head` is its first bytes, `tail` its
    last (a newline-delimited one: some peers write the id last)."""

    head: bytes
    limit: int
    tail: bytes = b""

    def request_id(self) -> str | int | None:
        """Its top-level id, when its head or tail shows it whole."""
        found = sniff_id(self.head)
        return found if found is not None else sniff_tail_id(self.tail)

    def kind(self) -> Literal["request", "response"] | None:
        """What its head says it is (a request or notification has a method), if it says."""
        return top_level_kind(self.head)


@dataclass(slots=True)
class BadFrame:
    """A frame that could not be read was dropped; `head` is its body's first bytes
    when it has a body we could see."""

    detail: str
    head: bytes = b""


Frame = bytes | Oversized | BadFrame


_HEADER_ON_JSON_LINES = (
    "a Content-Length header on a stream of newline-delimited JSON: send one JSON message per line"
)
_LEADING_SPACE = re.compile(rb"[ \t\r\n]*")


class FrameDecoder:
    def __init__(self, max_message_bytes: int) -> None:
        self.max = max_message_bytes
        self.mode: Mode | None = None
        self._buffer = bytearray()
        self._scanned = 0  # bytes of _buffer already searched for a newline
        #: A newline-delimited line still open, as the chunks it came in (joined once when
        #: it ends: a 50 MB line costs one copy, not an append, a slice and a copy each).
        self._parts: list[bytes] = []
        self._parts_size = 0
        self._discarding_line = False  # dropping the rest of an oversized line
        self._discarded_head = b""  # that line's first bytes
        self._resyncing = False  # lsp mode: after a bad frame, junk until the next header

    def feed(self, data: bytes) -> Iterable[Frame]:
        """The frames `data` completes, in order (the rest is kept for the next call)."""
        if (
            self.mode == "ndjson"
            and not self._buffer
            and not self._parts
            and not self._discarding_line
        ):
            if data.find(b"\n") == len(data) - 1 and data[:1] == b"{" and len(data) <= self.max:
                return [data[:-1]]  # one whole JSON object: a call or answer made alone
            return self._whole_lines(data)  # the usual chunk: whole lines, and a list
        return self._feed(data)

    def _feed(self, data: bytes) -> Iterator[Frame]:
        if self.mode is None:
            self._buffer += data
            mode = self._detect()
            if mode is None:
                return
            self.mode = mode
            data = bytes(self._buffer)
            self._buffer.clear()
            self._scanned = 0
        if self.mode == "ndjson" and not self._buffer and not self._discarding_line:
            start = 0
            if self._parts:  # a line is open: does this chunk end it?
                end = data.find(b"\n")
                if end < 0:
                    self._open_line(data)
                    return
                self._parts.append(data[:end])
                line = b"".join(self._parts)
                self._parts, self._parts_size = [], 0
                closed = [frame for frame in (self._line_frame(line),) if frame is not None]
                del line
                start = end + 1
                if closed:
                    # Yielded off a list, so this generator holds no reference to a large
                    # line while suspended: the reader may drop it once it is parsed.
                    yield closed.pop()
            yield from self._whole_lines(data[start:] if start else data)
        else:
            self._buffer += data
            yield from self._drain()

    def _open_line(self, part: bytes) -> None:
        """Keep the start of a line that has not ended; past the limit, drop it (keeping
        its first and last bytes) the way `_lines` drops an oversized line."""
        self._parts.append(part)
        self._parts_size += len(part)
        if self._parts_size > self.max:
            joined = b"".join(self._parts)
            self._parts, self._parts_size = [], 0
            self._discarding_line = True
            self._discarded_head = joined[:HEAD_BYTES]
            self._buffer += joined[-HEAD_BYTES:]  # what may be the line's tail
            self._scanned = len(self._buffer)

    def _line_frame(self, line: bytes) -> Frame | None:
        """What one whole line (without its newline) is: a message, a bad frame, or
        nothing (an empty line)."""
        if len(line) > self.max:
            return Oversized(line[:HEAD_BYTES], self.max, line[-HEAD_BYTES:])
        if line and line[0] != _OPEN_BRACE and _STARTS_WITH_HEADER.match(line):
            return BadFrame(_HEADER_ON_JSON_LINES)
        return line if line.strip() else None

    def _detect(self) -> Mode | None:
        """The framing of the first message, or None until its first lines show it: a
        Content-Length line, any other header lines, then a blank line. A Content-Length
        line followed by a line that cannot be a header is a stray print on a stream of
        newline-delimited JSON."""
        buffer = self._buffer
        start = _LEADING_SPACE.match(buffer).end()  # type: ignore[union-attr]
        prefix = bytes(buffer[start : start + 15]).lower()
        if not prefix:
            return None
        if prefix != _CONTENT_LENGTH_NAME:
            return None if _CONTENT_LENGTH_NAME.startswith(prefix) else "ndjson"
        position = start
        while (newline := buffer.find(b"\n", position)) >= 0:
            line = bytes(buffer[position:newline]).rstrip(b"\r")
            if not line.strip():
                return "lsp"
            if not _HEADER_LINE.fullmatch(line):
                return "ndjson"
            position = newline + 1
        return "ndjson" if len(buffer) - start > MAX_HEADER_BYTES else None

    def _whole_lines(self, data: bytes) -> list[Frame]:
        """Split a chunk that starts at a line boundary, copying each line once (a list, not
        a generator: this runs for every read of a stdio peer)."""
        lines = data.split(b"\n")
        rest = lines.pop()  # after the last newline: a line still open (or nothing)
        frames: list[Frame] = []
        if len(data) <= self.max:  # no line can be over the limit
            for line in lines:
                if line and line[0] == _OPEN_BRACE:  # a JSON object: the usual line
                    frames.append(line)
                else:
                    frame = self._line_frame(line)
                    if frame is not None:
                        frames.append(frame)
        else:
            for line in lines:
                frame = self._line_frame(line)
                if frame is not None:
                    frames.append(frame)
        if rest:
            self._open_line(rest)
        return frames

    def _drain(self) -> Iterator[Frame]:
        """Decode what the buffer holds until it needs more."""
        buffer = self._buffer
        while buffer:
            if self.mode == "lsp":
                more = yield from self._lsp_frame()
            else:
                more = yield from self._lines()
            if not more:
                return

    def _lines(self) -> Generator[Frame, None, bool]:
        buffer = self._buffer
        start = 0
        search_from = self._scanned  # never rescan bytes already known to hold no newline
        while (end := buffer.find(b"\n", search_from)) >= 0:
            if self._discarding_line:  # the tail of an oversized line ends here
                self._discarding_line = False
                tail = bytes(buffer[max(0, end - HEAD_BYTES) : end])
                yield Oversized(self._discarded_head, self.max, tail)
                self._discarded_head = b""
            elif end - start > self.max:
                head = bytes(buffer[start : start + HEAD_BYTES])
                yield Oversized(head, self.max, bytes(buffer[max(start, end - HEAD_BYTES) : end]))
            elif (
                end > start
                and buffer[start] != _OPEN_BRACE
                and _STARTS_WITH_HEADER.match(buffer, start, end)
            ):
                yield BadFrame(_HEADER_ON_JSON_LINES)
            else:
                with memoryview(buffer) as view:  # one copy, not a slice and a copy
                    line = bytes(view[start:end])
                if line.strip():  # empty lines are ignored
                    yield line
            start = search_from = end + 1
        if start:
            del buffer[:start]
        if not self._discarding_line and len(buffer) > self.max:
            self._discarding_line = True
            self._discarded_head = bytes(buffer[:HEAD_BYTES])
        if self._discarding_line and len(buffer) > HEAD_BYTES:
            del buffer[:-HEAD_BYTES]  # keep only what may be the line's tail
        self._scanned = len(buffer)
        return False

    def _lsp_frame(self) -> Generator[Frame, None, bool]:
        buffer = self._buffer
        header_end = buffer.find(_HEADER_END)
        if not self._resyncing:
            if _STARTS_WITH_JSON.match(buffer):
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
            ended = self._end_of_header_lines(header_end)
            if ended is not None:
                del buffer[:ended]
                self._resyncing = True  # what follows is junk until the next header
                yield BadFrame(
                    "a line that cannot be a header where a Content-Length header block was "
                    "expected (a header with no blank line after it, or stray output)"
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
            # Refused at once, without waiting for any of the body (so its id is unknown),
            # and the length is not trusted to skip by (a lie would swallow everything
            # after it): the body is junk until the next header.
            del buffer[:body_start]
            self._resyncing = True
            yield Oversized(b"", self.max)
            return True
        if available < length:
            return False
        with memoryview(buffer) as view:  # one copy, not a slice and a copy
            body = bytes(view[body_start : body_start + length])
        del buffer[: body_start + length]
        yield body
        return True

    def _end_of_header_lines(self, header_end: int) -> int | None:
        """Where a header block that cannot be one ends: the first complete line (before
        the blank line, if one came) that is not a header, when header lines or nothing
        precede it. None while every line so far can be a header."""
        buffer = self._buffer
        limit = header_end if header_end >= 0 else min(len(buffer), MAX_HEADER_BYTES)
        position = 0
        while (newline := buffer.find(b"\n", position, limit + 1)) >= 0:
            line = bytes(buffer[position:newline]).rstrip(b"\r")
            if line.strip() and not _HEADER_LINE.fullmatch(line):
                return position or newline + 1  # a junk line alone is one bad frame too
            position = newline + 1
        return None


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
    for key, after in _top_level_keys(head):
        if key == b"id":
            value = _ID_VALUE.match(head, after)
            return _id_from(value.group(1)) if value is not None else None
    return None


def top_level_kind(head: bytes) -> Literal["request", "response"] | None:
    """What the first bytes of a message say it is: a request or notification (it has a
    method), a response (a result or an error), or None when they do not say."""
    for key, _ in _top_level_keys(head):
        if key == b"method":
            return "request"
        if key in (b"result", b"error"):
            return "response"
    return None


def _top_level_keys(head: bytes) -> Iterator[tuple[bytes, int]]:
    """The keys of the outermost object that `head` shows whole, with the offset after each."""
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
                if depth == 1 and _KEY_COLON.match(head, at + 1):
                    yield head[string_start:at], at + 1
                string_start = -1
        elif char == 0x22:
            string_start = at + 1
        elif char in b"{[":
            depth += 1
        elif char in b"}]":
            depth -= 1


_KEY_COLON = re.compile(rb"[ \t\r\n]*:")
#: `,"id": value }` at the very end: the top-level object's last member (JSON strings
#: cannot hold an unescaped quote, so this cannot match inside one).
_TAIL_ID = re.compile(
    rb',[ \t\r\n]*"id"[ \t\r\n]*:[ \t\r\n]*(-?\d+|"(?:[^"\\]|\\.)*")[ \t\r\n]*\}[ \t\r\n]*\Z'
)


def sniff_tail_id(tail: bytes) -> str | int | None:
    """The id of a message that ends with it (the TypeScript SDK writes the id last)."""
    found = _TAIL_ID.search(tail)
    return _id_from(found.group(1)) if found is not None else None


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

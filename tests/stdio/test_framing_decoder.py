"""The frame decoder gives the same frames however a pipe splits the bytes.

The subprocess tests cannot choose read boundaries; these feed the real decoder every
kind of split, with good and bad frames mixed, in both framings. (Byte by byte, the
framing used to be guessed from the first byte: "C" is not JSON-lines.)
"""

from __future__ import annotations

import functools
import random
from typing import Any

import orjson
import pytest
from codex_mcp.core.framing import BadFrame, FrameDecoder, Oversized, sniff_id

LIMIT = 4096


def ping(request_id: Any) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": request_id, "method": "ping"})


def framed(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


BIG = orjson.dumps({"jsonrpc": "2.0", "id": 77, "method": "x", "params": {"m": "y" * 6000}})

CONTENT_LENGTH_STREAM = b"".join(
    [
        framed(ping(1)),
        b"Content-Length: " + b"9" * 5000 + b"\r\n\r\n" + ping(2),
        framed(ping(3)),
        b"Content-Length: 5\r\n" + ping(4),  # no blank line
        framed(ping(5)),
        ping(6) + b"\n",  # a JSON line
        framed(BIG),
        framed(ping(7)),
        b"Content-Type: x\r\n\r\n" + ping(8),
        framed(ping(9)),
        b"Content-Length: -1\r\n\r\n",
        framed(ping(10)),
        b"Content-Length: 999999999999999999\r\n\r\n",  # refused; skips nothing
        framed(ping(11)),
        b"Content-Length: 12\n" + ping(12) + b"\n",  # header mode ends at the JSON line
        framed(ping(13)),
    ]
)
#: The TypeScript SDK writes a response's id last.
BIG_ID_LAST = b'{"result":{"m":"%s"},"jsonrpc":"2.0","id":"last"}' % (b"y" * 6000)
JSON_LINES_STREAM = b"".join(
    [
        ping(1) + b"\n",
        framed(ping(2)) + b"\n",  # the header line is one bad line; the body is a line
        ping(3) + b"\n",
        BIG + b"\n",
        ping(4) + b"\n",
        b"Content-Length: 5\nfoo\n",
        ping(5) + b"\n",
        b"Content-Length: 999999999999999999\r\n\r\n",  # skips nothing
        ping(6) + b"\n",
        framed(BIG) + b"\n",
        BIG_ID_LAST + b"\n",
        ping(7) + b"\n",
    ]
)


def decode(stream: bytes, sizes: Any) -> list[tuple[str, Any]]:
    decoder = FrameDecoder(LIMIT)
    frames: list[tuple[str, Any]] = []
    offset = 0
    while offset < len(stream):
        size = sizes()
        for frame in decoder.feed(stream[offset : offset + size]):
            if isinstance(frame, bytes):
                frames.append(("message", orjson.loads(frame)["id"] if frame != b"foo" else frame))
            elif isinstance(frame, Oversized):
                frames.append(("oversized", frame.request_id()))
            else:
                assert isinstance(frame, BadFrame)
                frames.append(("bad", sniff_id(frame.head)))
        offset += size
    return frames


@pytest.mark.parametrize(
    ("stream", "expected"),
    [
        (
            CONTENT_LENGTH_STREAM,
            [
                ("message", 1),
                ("bad", None),
                ("message", 3),
                ("bad", None),
                ("message", 5),
                ("bad", 6),
                ("oversized", None),  # refused before its body came
                ("message", 7),
                ("bad", None),
                ("message", 9),
                ("bad", None),
                ("message", 10),
                ("oversized", None),
                ("message", 11),
                ("bad", None),
                ("message", 13),
            ],
        ),
        (
            JSON_LINES_STREAM,
            [
                ("message", 1),
                ("bad", None),
                ("message", 2),
                ("message", 3),
                ("oversized", 77),
                ("message", 4),
                ("bad", None),
                ("message", b"foo"),
                ("message", 5),
                ("bad", None),
                ("message", 6),
                ("bad", None),
                ("oversized", 77),
                ("oversized", "last"),
                ("message", 7),
            ],
        ),
    ],
    ids=["content-length", "json-lines"],
)
def test_every_split_gives_the_same_frames(stream: bytes, expected: list[Any]) -> None:
    assert decode(stream, lambda: len(stream)) == expected
    assert decode(stream, lambda: 1) == expected
    for seed in range(200):
        sizes = functools.partial(random.Random(seed).choice, [1, 2, 3, 7, 50, 500, 5000])
        assert decode(stream, sizes) == expected


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (b'{"jsonrpc":"2.0","id":12,"method":"x"', 12),
        (b'{"params":{"id":3},"id":"top","method":"x"', "top"),
        (b'{"params":{"id":3,"m":"xxxx', None),  # the top-level id is past the head
        (b'{"id":18446744073709551616,"method":"x"', None),  # orjson cannot write it back
        (b'{"id":-9223372036854775808,"method":"x"', -(2**63)),
        (b'{"id":1.5,"method":"x"', None),
        (b'{"id":123', None),  # cut off: it might be 1234
        (b'{"id":"abc', None),
        (b'{"m":"a \\"id\\": 4 \\\\","id":5}', 5),
        (b'{"id" : "\\u00e9"}', "\u00e9"),
    ],
)
def test_sniff_id_finds_only_a_whole_top_level_id(head: bytes, expected: Any) -> None:
    assert sniff_id(head) == expected


@pytest.mark.parametrize(
    ("stream", "expected"),
    [
        # A debug print first: not a header block, so the stream is newline-delimited.
        (b"Content-Length: 12\n" + ping(1) + b"\n" + ping(2) + b"\n", ("ndjson", [1, 2])),
        (framed(ping(1)) + framed(ping(2)), ("lsp", [1, 2])),
        (b"Content-Length: 2\r\nContent-Type: x\r\n\r\n{}" + framed(ping(2)), ("lsp", [2])),
    ],
    ids=["stray-header-line", "content-length", "two-header-lines"],
)
def test_the_framing_is_detected_from_the_first_message(stream: bytes, expected: Any) -> None:
    for size in (1, 3, len(stream)):
        decoder = FrameDecoder(LIMIT)
        ids = []
        for offset in range(0, len(stream), size):
            for frame in decoder.feed(stream[offset : offset + size]):
                if isinstance(frame, bytes) and frame != b"{}":
                    ids.append(orjson.loads(frame)["id"])
        assert (decoder.mode, ids) == expected

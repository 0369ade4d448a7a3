"""Broken framing over real pipes: each bad frame gets one clear error and costs nothing else.

Content-Length (LSP-style) framing is detected from the first bytes; a header the server
cannot use must not stop it, and the messages after it must be served.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from .conftest import StdioServer


def ping(request_id: Any) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": request_id, "method": "ping"})


def framed(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def pong(request_id: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": {}}


def assert_bad_frame(reply: Any, *words: str, request_id: Any = None) -> None:
    assert reply["id"] == request_id, reply
    assert reply["error"]["code"] == -32600, reply
    for word in words:
        assert word.lower() in reply["error"]["message"].lower(), reply


def test_a_content_length_of_5000_digits_costs_only_its_frame(spawn: Any) -> None:
    """It used to stay in the buffer and fail every later read: the server was deaf for good."""
    peer: StdioServer = spawn()
    peer.write(framed(ping(1)) + b"Content-Length: " + b"9" * 5000 + b"\r\n\r\n" + ping(2))
    peer.write(framed(ping(3)))
    assert peer.read_frame() == pong(1)
    assert_bad_frame(peer.read_frame(), "Content-Length")
    assert peer.read_frame() == pong(3)
    peer.write(framed(ping(4)))  # a later read is served too
    assert peer.read_frame() == pong(4)


@pytest.mark.parametrize(
    ("header", "words"),
    [
        (b"Content-Length: -5", ["Content-Length", "-5"]),
        (b"Content-Length: 99999999999999999999", ["Content-Length", "99999999999999999999"]),
        (b"Content-Length: twelve", ["Content-Length", "twelve"]),
        (b"Content-Type: application/json", ["Content-Length"]),
    ],
    ids=["negative", "absurd", "not-a-number", "missing"],
)
def test_an_unusable_content_length_costs_only_its_frame(
    spawn: Any, header: bytes, words: list[str]
) -> None:
    """An absurd length used to be skipped byte by byte forever, swallowing everything after."""
    peer: StdioServer = spawn()
    peer.write(framed(ping(1)) + header + b"\r\n\r\n" + ping(2) + framed(ping(3)))
    assert peer.read_frame() == pong(1)
    assert_bad_frame(peer.read_frame(), *words)
    assert peer.read_frame() == pong(3)
    peer.write(framed(ping(4)))
    assert peer.read_frame() == pong(4)


def test_a_header_without_its_blank_line_is_reported(spawn: Any) -> None:
    """The frame and the header after it merged into one block: message 2 vanished unanswered."""
    peer: StdioServer = spawn()
    body = ping(2)
    peer.write(framed(ping(1)) + b"Content-Length: %d\r\n%s" % (len(body), body) + framed(ping(3)))
    assert peer.read_frame() == pong(1)
    assert_bad_frame(peer.read_frame(), "Content-Length")
    assert peer.read_frame() == pong(3)


def test_a_json_line_on_a_content_length_stream_is_answered(spawn: Any) -> None:
    """A peer that switches to newline-delimited JSON mid-stream used to wait forever."""
    peer: StdioServer = spawn()
    peer.write(framed(ping(1)) + ping(2) + b"\n")
    assert peer.read_frame() == pong(1)
    assert_bad_frame(peer.read_frame(), "Content-Length", request_id=2)
    peer.write(framed(ping(3)))
    assert peer.read_frame() == pong(3)


def test_a_content_length_frame_on_a_json_lines_stream_costs_only_its_header_line(
    server: StdioServer,
) -> None:
    """A header line is one bad message; the line after it is read as usual."""
    server.write(framed(ping(2)) + b"\n" + ping(3) + b"\n")
    assert_bad_frame(server.read(), "Content-Length")
    assert server.read() == pong(2)
    assert server.read() == pong(3)
    server.assert_alive()


@pytest.mark.parametrize(
    "header",
    [b"Content-Length: 999999999999999999", b"Content-Length: 12", b"content-length: abc"],
)
def test_a_header_line_on_a_json_lines_stream_skips_nothing(
    server: StdioServer, header: bytes
) -> None:
    """It used to skip the next N bytes, newlines included: 0 of 2,000 pings answered."""
    server.write(header + b"\n" + b"".join(ping(n) + b"\n" for n in range(2000)))
    assert_bad_frame(server.read(), "Content-Length")
    for n in range(2000):
        assert server.read() == pong(n)


def test_a_length_over_the_cap_is_refused_without_waiting_for_its_body(spawn: Any) -> None:
    """Refused at once, and the next frame is read: the length is not skipped."""
    peer: StdioServer = spawn("--max-message-bytes", "4096")
    peer.write(framed(ping(1)) + b"Content-Length: 999999999999999999\r\n\r\n")
    assert peer.read_frame() == pong(1)
    assert_bad_frame(peer.read_frame(), "too large")
    peer.write(framed(ping(2)))
    assert peer.read_frame() == pong(2)


# -- oversized messages: the error names the id when it can be echoed ----------------------


def oversized(request_id: Any, *, nested_id_first: bool = False) -> dict[str, Any]:
    arguments: dict[str, Any] = {"message": "x" * 5000}
    if nested_id_first:
        return {
            "jsonrpc": "2.0",
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"id": 3, **arguments}},
            "id": request_id,
        }
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"id": 3, **arguments}},
    }


def test_an_oversized_message_with_a_65_bit_id_is_answered(spawn: Any) -> None:
    """orjson cannot encode that id: the error reply raised, and the next message was lost."""
    peer: StdioServer = spawn("--max-message-bytes", "4096")
    peer.initialize()
    line = orjson.dumps(oversized(0)).replace(b'"id":0', b'"id":%d' % 2**64, 1)
    peer.write(line + b"\n" + ping("after") + b"\n")
    assert_bad_frame(peer.read(), "too large", request_id=None)
    assert peer.read() == pong("after")


def test_an_oversized_framed_message_with_a_65_bit_id_is_answered(spawn: Any) -> None:
    peer: StdioServer = spawn("--max-message-bytes", "4096")
    body = orjson.dumps(oversized(0)).replace(b'"id":0', b'"id":-%d' % 2**64, 1)
    peer.write(framed(body) + framed(ping("after")))
    assert_bad_frame(peer.read_frame(), "too large", request_id=None)
    assert peer.read_frame() == pong("after")


@pytest.mark.parametrize(
    ("request_id", "expected"),
    [(12, 12), ("s" * 300, "s" * 300), ("s" * 6000, None), (2**63 - 1, 2**63 - 1)],
    ids=["int", "long-string", "string-past-the-head", "int64-max"],
)
def test_an_oversized_message_is_answered_with_its_own_id(
    spawn: Any, request_id: Any, expected: Any
) -> None:
    """Never with an id found inside its params (a string id over 256 bytes used to
    make the sniffer pick the nested "id": 3)."""
    peer: StdioServer = spawn("--max-message-bytes", "4096")
    peer.initialize()
    peer.send(oversized(request_id))
    peer.send({"jsonrpc": "2.0", "id": "after", "method": "ping"})
    assert_bad_frame(peer.read(), "too large", request_id=expected)
    assert peer.read() == pong("after")


def test_an_oversized_message_whose_id_comes_last_is_answered_with_it(spawn: Any) -> None:
    """Its last bytes name it (the TypeScript SDK writes the id last), never the nested id."""
    peer: StdioServer = spawn("--max-message-bytes", "4096")
    peer.initialize()
    peer.send(oversized(12, nested_id_first=True))
    assert_bad_frame(peer.read(), "too large", request_id=12)
    peer.assert_alive()

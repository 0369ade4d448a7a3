"""Bad input over real pipes: each gets the right answer and the server keeps serving."""

from __future__ import annotations

import signal
import time
from typing import Any

import orjson
import pytest

from .conftest import SERVERS, StdioServer

ECHO = {"name": "echo", "arguments": {"message": "hi"}}


def test_malformed_json_is_a_parse_error(server: StdioServer) -> None:
    server.write(b'{"jsonrpc": "2.0", "id": 1, "method": \n')
    reply = server.read()
    assert reply["id"] is None
    assert reply["error"]["code"] == -32700
    server.assert_alive()


def test_binary_garbage_is_a_parse_error(server: StdioServer) -> None:
    server.write(bytes(range(256)).replace(b"\n", b"") + b"\n")
    assert server.read()["error"]["code"] == -32700
    server.assert_alive()


def test_wrong_jsonrpc_version(server: StdioServer) -> None:
    server.send({"jsonrpc": "1.0", "id": 7, "method": "ping"})
    reply = server.read()
    assert reply["id"] == 7
    assert reply["error"]["code"] == -32600
    server.assert_alive()


def test_non_object_params(server: StdioServer) -> None:
    reply = server.call(8, "tools/call", ["echo"])
    assert reply["id"] == 8
    assert reply["error"]["code"] == -32602
    server.assert_alive()


def test_unknown_method_and_unknown_tool(server: StdioServer) -> None:
    assert server.call(9, "no/such/method")["error"]["code"] == -32601
    reply = server.call(10, "tools/call", {"name": "nope", "arguments": {}})
    assert reply["error"]["code"] == -32602
    assert "nope" in reply["error"]["message"]
    server.assert_alive()


def test_invalid_arguments_name_the_field(server: StdioServer) -> None:
    reply = server.call(11, "tools/call", {"name": "echo", "arguments": {"message": 5}})
    assert reply["result"]["isError"] is True
    assert "message" in reply["result"]["content"][0]["text"]


def test_oversized_message_is_answered_and_skipped(spawn: Any) -> None:
    peer: StdioServer = spawn("--max-message-bytes", "100000")
    peer.initialize()
    huge = {
        "jsonrpc": "2.0",
        "id": 12,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"message": "x" * 300_000}},
    }
    peer.send(huge)
    reply = peer.read()
    assert reply["id"] == 12
    assert reply["error"]["code"] == -32600
    assert "too large" in reply["error"]["message"]
    peer.assert_alive()


def test_a_64_mib_message_is_accepted(server: StdioServer) -> None:
    message = "y" * (64 * 1024 * 1024)
    server.request(13, "tools/call", {"name": "echo", "arguments": {"message": message}})
    reply = server.read(timeout=60)
    assert reply["id"] == 13
    assert len(reply["result"]["content"][0]["text"]) == len(message)
    server.assert_alive()


def test_a_tool_that_raises_is_an_error_result(spawn: Any) -> None:
    peer: StdioServer = spawn("--serve", str(SERVERS / "misbehaving.py"))
    peer.initialize()
    reply = peer.call(14, "tools/call", {"name": "explode", "arguments": {}})
    assert reply["result"]["isError"] is True
    assert "kaboom" in reply["result"]["content"][0]["text"]
    peer.assert_alive()


def test_a_tool_printing_to_stdout_does_not_corrupt_the_stream(spawn: Any) -> None:
    peer: StdioServer = spawn("--serve", str(SERVERS / "misbehaving.py"))
    peer.initialize()
    reply = peer.call(15, "tools/call", {"name": "chatty", "arguments": {"message": "clean"}})
    assert reply["result"]["content"][0]["text"] == "clean"
    peer.assert_alive()
    peer.close_stdin()
    assert peer.read_line() is None  # nothing but protocol messages ever came out
    assert peer.process.wait(10) == 0
    assert peer.process.stderr is not None
    assert b"must not reach the protocol stream" in peer.process.stderr.read()


def test_empty_lines_are_ignored(server: StdioServer) -> None:
    server.write(b"\n\n   \n")
    server.assert_alive()


def test_eof_in_the_middle_of_a_message_exits_cleanly(server: StdioServer) -> None:
    server.write(b'{"jsonrpc":"2.0","id":16,"meth')
    server.close_stdin()
    assert server.read_line() is None
    assert server.process.wait(10) == 0


def test_eof_finishes_in_flight_work_then_exits_zero(server: StdioServer) -> None:
    server.request(17, "tools/call", {"name": "sleep", "arguments": {"seconds": 1}})
    server.close_stdin()
    reply = server.read(timeout=15)
    assert reply["id"] == 17
    assert reply["result"]["content"][0]["text"] == "slept 1 s"
    assert server.process.wait(10) == 0


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_signals_finish_in_flight_work_then_exit_zero(spawn: Any, signum: int) -> None:
    peer: StdioServer = spawn("--serve", str(SERVERS / "slow.py"))
    peer.initialize()
    peer.request(18, "tools/call", {"name": "slow", "arguments": {"seconds": 1}})
    started = peer.read()  # the call is running
    assert started["params"]["data"] == "slow call started", started
    peer.process.send_signal(signum)
    reply = peer.read(timeout=15)
    assert reply["id"] == 18
    assert reply["result"]["content"][0]["text"] == "slept 1 s"
    assert peer.process.wait(10) == 0


def test_cancelled_call_gets_no_answer(server: StdioServer) -> None:
    server.request(19, "tools/call", {"name": "sleep", "arguments": {"seconds": 30}})
    server.send(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 19}}
    )
    server.send(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 999}}
    )
    assert server.call(20, "ping") == {"jsonrpc": "2.0", "id": 20, "result": {}}
    server.close_stdin()
    assert server.read_line() is None  # 19 was never answered
    assert server.process.wait(10) == 0


def test_slow_call_does_not_block_ping(server: StdioServer) -> None:
    server.request(21, "tools/call", {"name": "sleep", "arguments": {"seconds": 1}})
    started = time.monotonic()
    assert server.call(22, "ping")["id"] == 22  # answered first: out of order
    assert time.monotonic() - started < 0.9
    assert server.read(timeout=10)["id"] == 21


def test_content_length_framing_is_answered_in_kind(spawn: Any) -> None:
    peer: StdioServer = spawn()
    body = orjson.dumps({"jsonrpc": "2.0", "id": 23, "method": "ping"})
    peer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    header = peer.read_line()
    assert header is not None and header.lower().startswith(b"content-length:")
    assert peer.read_line() == b"\r"
    assert peer.process.stdout is not None
    expected = b'{"jsonrpc":"2.0","id":23,"result":{}}'
    assert int(header.split(b":")[1]) == len(expected)


def test_batches_rejected_for_2025_06_18(server: StdioServer) -> None:
    server.send([{"jsonrpc": "2.0", "id": 24, "method": "ping"}])
    reply = server.read()
    assert reply["error"]["code"] == -32600
    assert "batch" in reply["error"]["message"].lower()
    server.assert_alive()


def test_batches_handled_for_2025_03_26(spawn: Any) -> None:
    peer: StdioServer = spawn()
    peer.initialize("2025-03-26")
    peer.send(
        [
            {"jsonrpc": "2.0", "id": 25, "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 26, "method": "tools/call", "params": ECHO},
        ]
    )
    replies = peer.read()
    assert isinstance(replies, list)
    assert sorted(r["id"] for r in replies) == [25, 26]


def test_ids_echoed_exactly_and_notifications_never_answered(server: StdioServer) -> None:
    ids: list[Any] = ["abc", 0, -1, 2**53 + 1, "", "1"]
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    for request_id in ids:
        server.request(request_id, "ping")
    answered = [server.read()["id"] for _ in ids]
    assert answered == ids
    for bad_id in (1.5, True, {"a": 1}, [1]):  # "id": null is a notification: see below
        server.send({"jsonrpc": "2.0", "id": bad_id, "method": "ping"})
        reply = server.read()
        assert reply["id"] is None and reply["error"]["code"] == -32600
    # Seed 003's callers send notifications as requests with "id": null: never answered.
    server.send({"jsonrpc": "2.0", "id": None, "method": "notifications/initialized"})
    server.send({"jsonrpc": "2.0", "id": None, "method": "ping"})
    server.request(99, "ping")
    assert server.read()["id"] == 99  # the next answer is the ping's: nothing came before
    server.close_stdin()
    assert server.read_line() is None
    assert server.process.wait(10) == 0


def test_every_request_is_answered_exactly_once(server: StdioServer) -> None:
    for i in range(200):
        server.request(i + 1000, "tools/call", ECHO if i % 3 else {"name": "nope"})
        if i % 7 == 0:
            server.send({"jsonrpc": "2.0", "method": "notifications/progress", "params": {}})
    seen = [server.read()["id"] for _ in range(200)]
    assert sorted(seen) == list(range(1000, 1200))
    server.close_stdin()
    assert server.read_line() is None


def test_notifications_sent_with_a_null_id_are_handled_and_never_answered(
    server: StdioServer,
) -> None:
    server.request(30, "tools/call", {"name": "sleep", "arguments": {"seconds": 30}})
    for method, params in [
        ("notifications/initialized", None),
        ("notifications/progress", {"progressToken": "t", "progress": 1}),
        ("notifications/cancelled", {"requestId": 30, "reason": "seed 003 style"}),
    ]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": None, "method": method}
        if params is not None:
            message["params"] = params
        server.send(message)
    assert server.call("after", "ping") == {"jsonrpc": "2.0", "id": "after", "result": {}}
    server.close_stdin()
    assert server.read_line() is None  # nothing else, and 30 was cancelled: no answer
    assert server.process.wait(10) == 0

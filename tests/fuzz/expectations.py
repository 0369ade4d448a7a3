"""What a JSON-RPC message must get back, by JSON-RPC 2.0, MCP and seed 003.

Decided on the value the bytes parse to, so any mutation that still parses is judged
correctly: the ids that must be answered (and how many times), the ids that may be
(where the spec or the transports differ), and how many replies with a null id.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import orjson


@dataclass
class Expect:
    must: Counter[Any] = field(default_factory=Counter)
    may: Counter[Any] = field(default_factory=Counter)
    null_min: int = 0
    null_max: int = 0

    def add(self, other: Expect) -> None:
        self.must.update(other.must)
        self.may.update(other.may)
        self.null_min += other.null_min
        self.null_max += other.null_max


def dumps(value: Any) -> bytes:
    """Compact JSON; unlike orjson, writes integers past 64 bits."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def is_valid_id(value: Any) -> bool:
    return type(value) is str or type(value) is int


def expect_value(value: Any, batches: bool) -> Expect:
    """What one decoded JSON text must get back (JSON-RPC 2.0, MCP, seed 003)."""
    if type(value) is list:
        if not value or not batches:
            return Expect(null_min=1, null_max=1)  # empty, or batches not negotiated
        total = Expect()
        for entry in value:
            total.add(_expect_entry(entry))
        return total
    return _expect_entry(value)


def _expect_entry(message: Any) -> Expect:
    if type(message) is not dict:
        return Expect(null_min=1, null_max=1)
    has_id = "id" in message
    request_id = message.get("id")
    method = message.get("method")
    answerable = has_id and is_valid_id(request_id)
    if "method" not in message or method is None:
        if has_id and ("result" in message or "error" in message):
            # A response to nobody (the fuzz server asks nothing): dropped. "method": null
            # beside it is odd enough for an HTTP transport to refuse it.
            return Expect(null_max=1 if "method" in message else 0)
        if answerable:  # a request missing its method: its id, or null over HTTP
            return Expect(may=Counter([request_id]), null_max=1)
        return Expect(null_min=1, null_max=1)
    if not has_id:
        if type(method) is str:
            return Expect()  # a notification, however odd: never answered
        return Expect(null_min=1, null_max=1)
    if request_id is None and type(method) is str:
        return Expect()  # seed 003: a notification sent as a request with a null id
    if not answerable:
        return Expect(null_min=1, null_max=1)
    if type(method) is not str:  # echoed on stdio; an HTTP transport may not see a request
        return Expect(may=Counter([request_id]), null_max=1)
    return Expect(must=Counter([request_id]))


def expect_bytes(body: bytes, batches: bool) -> Expect:
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        return Expect(null_min=1, null_max=1)
    return expect_value(value, batches)

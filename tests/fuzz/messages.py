"""Seeded generator of odd and malformed JSON-RPC messages, each with what it must get back.

`Fuzzer(seed, ...).case()` returns one message (the bytes of one line, or one HTTP body)
and its `Expect`: the ids that must be answered, how many times; the ids that may be
answered (where the transports differ, or the spec allows either); and how many replies
with `"id": null` it may cause (see expectations.py).

Every valid id is fresh, so a reply is matched to its request by id alone.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from typing import Any

import orjson

from .expectations import Expect, dumps, expect_bytes, is_valid_id

#: Kinds of message every profile sends; each name is a method of Fuzzer.
MAIN_KINDS = {
    "request": 24,
    "odd_request": 12,
    "notification": 12,
    "invalid_id": 8,
    "broken_json": 8,
    "random_bytes": 4,
    "not_an_object": 4,
    "no_method": 5,
    "response": 6,
    "deep": 2,
    "batch": 12,
    "oversized": 1,
    "slow": 2,
    "unhashable_id_response": 1,  # harmless only while the server awaits no reply
}
#: Kinds with a profile of their own.
NULL_ID_NOTIFICATION = "null_id_notification"
ODD_BATCH = "odd_batch"
#: A tool call that makes the server ask us something (the examples server's tools).
ASK = "ask"
UNHASHABLE_ID_RESPONSE = "unhashable_id_response"

SLOW_SECONDS = 0.02
NOTIFICATIONS = [
    "notifications/initialized",
    "notifications/progress",
    "notifications/cancelled",
    "notifications/roots/list_changed",
    "notifications/message",
    "notifications/no-such-thing",
    "ping",
    "tools/call",
    "no/such/method",
]
INVALID_IDS: list[Any] = [1.5, 1.0, -0.0, 1e300, True, False, 2**64, -(2**63) - 1]
UNHASHABLE_IDS: list[Any] = [[], [1], {}, {"id": 1}, [[1]]]


@dataclass
class Case:
    kind: str
    body: bytes
    expect: Expect
    slow: bool = False  # answered after a while: do not wait for it before the next write


class Fuzzer:
    def __init__(
        self,
        seed: int,
        *,
        batches: bool,
        kinds: dict[str, int],
        max_message_bytes: int,
        http: bool = False,
        clean_batches: bool = False,
    ) -> None:
        self.random = random.Random(seed)
        self.batches = batches
        self.max_message_bytes = max_message_bytes
        self.http = http
        #: Batches of requests, notifications and responses only (what HTTP takes today).
        self.clean_batches = clean_batches
        self._kinds = list(kinds)
        self._weights = list(kinds.values())
        self._next = 0

    def case(self) -> Case:
        kind = self.random.choices(self._kinds, self._weights)[0]
        case: Case = getattr(self, kind)()
        return case

    # -- building blocks ----------------------------------------------------------------
    def fresh_id(self) -> str | int:
        self._next += 1
        n = self._next
        return self.random.choice(
            [
                n,
                -n,
                f"s{n}",
                f"\u00fc-{n}-\U0001f642",
                f"{n} with spaces",
                2**63 - n,
                -(2**63) + n,
                2**64 - n,
                f"{'x' * 2000}{n}",
            ]
        )

    def _judged(self, kind: str, value: Any) -> Case:
        body = dumps(value)
        return Case(kind, body, expect_bytes(body, self.batches))

    def _request(self, request_id: Any) -> dict[str, Any]:
        method, params = self.random.choice(
            [
                ("ping", None),
                ("tools/list", None),
                ("tools/call", {"name": "echo", "arguments": {"message": "fuzz"}}),
                ("tools/call", {"name": "echo", "arguments": {"message": 5}}),
                ("tools/call", {"name": "nope", "arguments": {}}),
                ("tools/call", {"name": "echo"}),
                ("resources/list", {}),
                ("prompts/list", {"cursor": "junk"}),
                ("resources/read", {"uri": "x://nowhere"}),
                ("completion/complete", {"ref": 5}),
                ("logging/setLevel", {"level": self.random.choice(["debug", "loud", 7])}),
                ("no/such/method", {}),
                ("", None),
                ("\u00e9\u00e8/\U0001f642", {}),
            ]
        )
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        return message

    def _notification(self) -> dict[str, Any]:
        method = self.random.choice(NOTIFICATIONS)
        params = self.random.choice(
            [
                None,
                {},
                {"progressToken": "t", "progress": 1},
                {"requestId": f"ghost-{self.random.random()}"},  # never one of ours
                {"requestId": [1]},
                [1, 2],
                "text",
            ]
        )
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        return message

    def _odd_value(self) -> Any:
        return self.random.choice(
            [None, True, 0, -1, 1.5, "", "x", [], [1], {}, {"a": {"b": []}}, "\u0000"]
        )

    # -- kinds --------------------------------------------------------------------------
    def request(self) -> Case:
        return self._judged("request", self._request(self.fresh_id()))

    def odd_request(self) -> Case:
        """A valid id, with every other field wrong in turn."""
        message = self._request(self.fresh_id())
        field_name = self.random.choice(["jsonrpc", "method", "params", "extra"])
        if field_name == "jsonrpc":
            wrong = self.random.choice(["1.0", 2.0, None, "2.0 ", [], "DELETE"])
            if wrong == "DELETE":
                del message["jsonrpc"]
            else:
                message["jsonrpc"] = wrong
        elif field_name == "method":
            message["method"] = self.random.choice([5, [], {}, True, ["ping"]])
        elif field_name == "params":
            message["params"] = self.random.choice([[], [1], "x", 5, True])
        else:
            message[self.random.choice(["_meta", "Id", "result", "\u00fc"])] = self._odd_value()
        return self._judged("odd_request", message)

    def notification(self) -> Case:
        return self._judged("notification", self._notification())

    def invalid_id(self) -> Case:
        message = self._request(0)
        message["id"] = self.random.choice(INVALID_IDS)
        return self._judged("invalid_id", message)

    def broken_json(self) -> Case:
        valid = orjson.dumps(self._request(self.fresh_id()))
        while True:
            how = self.random.randrange(4)
            cut = self.random.randrange(1, len(valid))
            if how == 0:
                body = valid[:cut]
            elif how == 1:
                junk = self.random.choice([b"}", b",", b'"', b"\\", b"\x00", b"NaN", b"\xff"])
                body = valid[:cut] + junk + valid[cut:]
            elif how == 2:
                body = valid.replace(b'"', b"'", 1)
            else:
                body = self.random.choice(
                    [b'{"id": Infinity}', b"[1,]", b'{"a":1}}', b'"\\ud800"', b"tru", b"{" * 3]
                )
            if body.strip():
                case = Case("broken_json", body, expect_bytes(body, self.batches))
                if not case.expect.must and not case.expect.may:
                    return case  # still-valid mutations could reuse an id: try another

    def random_bytes(self) -> Case:
        size = self.random.randrange(1, 300)
        body = bytes(self.random.randrange(256) for _ in range(size)).replace(b"\n", b"")
        body = b"\x01" + body  # never JSON, never a header, never blank
        return Case("random_bytes", body, Expect(null_min=1, null_max=1))

    def not_an_object(self) -> Case:
        value = self.random.choice([0, -5, 1.5, "ping", None, True, False, "", 2**64])
        return self._judged("not_an_object", value)

    def no_method(self) -> Case:
        message: dict[str, Any] = self.random.choice(
            [{}, {"jsonrpc": "2.0"}, {"jsonrpc": "2.0", "params": {}}, {"result": {}}]
        )
        if self.random.random() < 0.5:
            message = {**message, "id": self.fresh_id()}
        return self._judged("no_method", message)

    def response(self) -> Case:
        message: dict[str, Any] = {
            "jsonrpc": "2.0",
            "id": self.random.choice([f"ghost-{self.random.random()}", *INVALID_IDS, None]),
        }
        if self.random.random() < 0.5:
            message["result"] = self._odd_value()
        else:
            message["error"] = self.random.choice(
                [
                    {"code": -32000, "message": "no"},
                    {"code": "abc", "message": "no"},
                    {"code": None},
                    {"code": []},
                    "oops",
                    None,
                ]
            )
        return self._judged("response", message)

    def deep(self) -> Case:
        depth = self.random.choice([10, 200, 1000, 1100, 5000])
        request_id = orjson.dumps(self.fresh_id())
        body = b'{"jsonrpc":"2.0","id":%s,"method":"ping","params":{"a":%s%s}}' % (
            request_id,
            b"[" * depth,
            b"]" * depth,
        )
        return Case("deep", body, expect_bytes(body, self.batches))

    def batch(self) -> Case:
        if self.random.random() < 0.1 and not self.clean_batches:
            return self._judged("batch", [])
        entries: list[Any] = []
        for _ in range(self.random.randrange(1, 8)):
            roll = self.random.random()
            if roll < 0.45:
                entries.append(self._request(self.fresh_id()))
            elif roll < 0.7:
                entries.append(self._notification())
            elif roll < 0.8 or self.clean_batches:
                entries.append({"jsonrpc": "2.0", "id": f"ghost-{roll}", "result": {}})
            else:
                entries.append(self._odd_batch_entry(entries))
        return self._judged("batch", entries)

    def _odd_batch_entry(self, entries: list[Any]) -> Any:
        roll = self.random.randrange(5)
        if roll == 0:
            return self._odd_value()  # not an object
        if roll == 1:
            return [self._request(self.fresh_id())]  # nested: one error, no answer inside
        if roll == 2:
            earlier = [e for e in entries if type(e) is dict and is_valid_id(e.get("id"))]
            if earlier:  # a duplicate id: each request is still answered once
                return self._request(earlier[-1]["id"])
        if roll == 3:
            return {**self._request(0), "id": self.random.choice(INVALID_IDS)}
        return {"jsonrpc": "2.0", "id": self.fresh_id()}  # no method

    def odd_batch(self) -> Case:
        entries = [self._request(self.fresh_id())]
        entries += [self._odd_batch_entry(entries) for _ in range(self.random.randrange(1, 4))]
        self.random.shuffle(entries)
        if self.random.random() < 0.2:
            entries = self.random.choice([[], [1, 2, 3], [[]]])
        return self._judged(ODD_BATCH, entries)

    def oversized(self) -> Case:
        size = self.max_message_bytes + self.random.randrange(1, 20_000)
        padding = "y" * size
        choice = self.random.randrange(5)
        if choice == 0:  # its id first: the error names it (an HTTP 413 cannot)
            request_id = self.fresh_id()
            body = orjson.dumps(
                {"jsonrpc": "2.0", "id": request_id, "method": "ping", "params": {"p": padding}}
            )
            if not self.http:
                return Case("oversized", body, Expect(must=Counter([request_id])))
        if choice == 1:  # its id last: stdio reads it from the message's last bytes
            request_id = self.fresh_id()
            body = orjson.dumps(
                {"jsonrpc": "2.0", "method": "ping", "params": {"p": padding}, "id": request_id}
            )
            if not self.http:
                return Case("oversized", body, Expect(must=Counter([request_id])))
        elif choice == 2:
            body = b'{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"p":"%s"}}' % (
                2**64 + self.random.randrange(10**6),
                padding.encode(),
            )
        elif choice == 3:  # a notification: we cannot tell, so it is answered with null
            body = orjson.dumps({"jsonrpc": "2.0", "method": "x", "params": {"p": padding}})
        else:
            body = orjson.dumps([{"jsonrpc": "2.0", "id": 9, "method": "ping", "p": padding}])
        return Case("oversized", body, Expect(null_min=1, null_max=1))

    def slow(self) -> Case:
        request_id = self.fresh_id()
        message: dict[str, Any] = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": "sleep", "arguments": {"seconds": SLOW_SECONDS}},
        }
        if self.random.random() < 0.5:
            message["params"]["_meta"] = {"progressToken": f"p{self._next}"}
        return Case("slow", orjson.dumps(message), Expect(must=Counter([request_id])), slow=True)

    def null_id_notification(self) -> Case:
        message = {**self._notification(), "id": None}
        return Case(NULL_ID_NOTIFICATION, orjson.dumps(message), Expect())

    def unhashable_id_response(self) -> Case:
        message = {"jsonrpc": "2.0", "id": self.random.choice(UNHASHABLE_IDS)}
        message["result" if self.random.random() < 0.5 else "error"] = {"code": 1, "message": ""}
        return Case(UNHASHABLE_ID_RESPONSE, orjson.dumps(message), Expect())

    def ask(self) -> Case:
        """A call of a tool that asks the client for something, then waits for our reply."""
        request_id = self.fresh_id()
        params = self.random.choice(
            [
                {"name": "test_sampling", "arguments": {"prompt": "p"}},
                {"name": "test_elicitation", "arguments": {"message": "m"}},
            ]
        )
        message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
        return Case(ASK, orjson.dumps(message), Expect(must=Counter([request_id])), slow=True)

    def replies_to(self, question: dict[str, Any], bad: bool) -> list[bytes]:
        """Our answer to the server's request: what a good client sends, or (`bad`) any of
        the malformed replies a broken one might. A reply that names another id is
        followed by the right one, so the waiting tool can always finish."""
        asked = question["id"]
        good = (
            {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "fuzz"}
            if question["method"] == "sampling/createMessage"
            else {"action": "accept", "content": {"username": "fuzz", "email": "f@z"}}
        )
        choices: list[tuple[Any, str, Any]] = [
            (asked, "result", good),
            (asked, "error", {"code": -32000, "message": "refused"}),
            (asked, "error", {"code": 5, "message": "", "data": [1]}),
            (f"{asked}", "result", {"action": "decline"}),  # "1" is not 1
            (asked + 10**6, "result", {"action": "decline"}),
        ]
        if bad:
            choices += [
                (asked, "error", {"code": "abc", "message": "x"}),
                (asked, "error", {"code": None, "message": "x"}),
                (asked, "error", {"code": [], "message": "x"}),
                (asked, "error", {"code": 1.5}),
                (asked, "error", "oops"),
                ([asked], "result", {"action": "decline"}),
                ({"id": asked}, "result", {"action": "decline"}),
                (True, "result", {"action": "decline"}),
                (float(asked), "result", {"action": "decline"}),
            ]
        request_id, key, value = self.random.choice(choices)
        replies = [dumps({"jsonrpc": "2.0", "id": request_id, key: value})]
        if type(request_id) is not int or request_id != asked:
            replies.append(dumps({"jsonrpc": "2.0", "id": asked, "result": good}))
        return replies

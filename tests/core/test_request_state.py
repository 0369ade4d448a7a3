"""The signed `requestState` of input-required rounds: round trip, and each way to refuse one."""

from __future__ import annotations

import base64
import subprocess
import sys
from typing import Any

import orjson
import pytest
from codex_mcp.core.jsonrpc import INVALID_PARAMS
from codex_mcp.core.request_state import (
    ExpiredRequestState,
    ReplayCache,
    ReplayedRequestState,
    RequestStateCodec,
    RequestStateError,
    TamperedRequestState,
    WrongRequestState,
    generate_key,
)

KEY = b"k" * 32
OTHER_KEY = b"o" * 32
CALL = {"name": "deploy", "arguments": {"env": "prod", "replicas": 3}}


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def codec(*keys: bytes, clock: Clock | None = None, ttl: float = 60) -> RequestStateCodec:
    return RequestStateCodec(list(keys) or [KEY], ttl_seconds=ttl, clock=clock or Clock())


def issue(c: RequestStateCodec, params: dict[str, Any] = CALL, **kwargs: Any) -> str:
    kwargs.setdefault("round", 1)
    kwargs.setdefault("pending", ["confirm"])
    return c.issue("tools/call", params, **kwargs)


def test_round_trip_carries_round_pending_and_data() -> None:
    c = codec()
    data = {"answers": {"name": {"action": "accept", "content": {"name": "Ada"}}}, "n": 1.5}
    state = issue(c, round=2, pending=["confirm", "roots"], data=data)
    # The retry carries the original params plus the answers; only the request's identity binds.
    retry = {**CALL, "inputResponses": {"confirm": {}}, "requestState": state, "_meta": {"x": 1}}
    verified = c.verify(state, "tools/call", retry)
    assert (verified.method, verified.name, verified.round) == ("tools/call", "deploy", 2)
    assert verified.pending == ("confirm", "roots")
    assert verified.data == data
    assert verified.missing(retry["inputResponses"]) == ("roots",)
    assert verified.missing(None) == ("confirm", "roots")
    assert verified.expires_at == 1_000_060


def test_argument_order_does_not_matter() -> None:
    c = codec()
    state = issue(c)
    reordered = {"arguments": {"replicas": 3, "env": "prod"}, "name": "deploy"}
    assert c.verify(state, "tools/call", reordered).name == "deploy"


def test_state_is_a_compact_url_safe_string() -> None:
    state = issue(codec())
    assert isinstance(state, str)
    assert set(state) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.")
    assert len(state) < 300


@pytest.mark.parametrize(
    "mangle",
    [
        lambda s: s + "-TAMPERED",  # what the conformance suite sends
        lambda s: s[:-1] + ("A" if s[-1] != "A" else "B"),
        lambda s: s.replace(".", ""),
        lambda s: "",
        lambda s: "not-a-state",
        lambda s: s.split(".")[0] + ".!!!!",
        lambda s: s + "é",
        # The base64 decoder skips stray characters: the same MAC, spelled differently.
        lambda s: s[:-4] + "!!!!" + s[-4:],
        lambda s: s[:-4] + "\n\n\n\n" + s[-4:],
    ],
)
def test_any_change_is_refused_as_tampered(mangle: Any) -> None:
    c = codec()
    with pytest.raises(TamperedRequestState) as caught:
        c.verify(mangle(issue(c)), "tools/call", CALL)
    assert caught.value.code == INVALID_PARAMS
    assert caught.value.to_error()["data"] == {"reason": "tampered"}


def test_a_rewritten_payload_is_refused_even_when_well_formed() -> None:
    c = codec()
    body, mac = issue(c, round=1).split(".")
    payload = orjson.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    payload["p"] = []  # claim nothing is pending
    forged = base64.urlsafe_b64encode(orjson.dumps(payload)).rstrip(b"=").decode()
    with pytest.raises(TamperedRequestState, match="signature"):
        c.verify(f"{forged}.{mac}", "tools/call", CALL)


@pytest.mark.parametrize("value", [None, 42, ["a.b"], {"s": "a.b"}, "x" * (2 << 20)])
def test_non_strings_and_oversized_states_are_refused(value: object) -> None:
    with pytest.raises(TamperedRequestState):
        codec().verify(value, "tools/call", CALL)


def test_a_state_signed_with_an_unknown_key_is_tampered() -> None:
    with pytest.raises(TamperedRequestState):
        codec(KEY).verify(issue(codec(OTHER_KEY)), "tools/call", CALL)


def test_rotation_first_key_signs_every_key_verifies() -> None:
    old = issue(codec(OTHER_KEY))
    rotated = codec(KEY, OTHER_KEY)
    assert rotated.verify(old, "tools/call", CALL).name == "deploy"
    new = issue(rotated)
    assert codec(KEY).verify(new, "tools/call", CALL).name == "deploy"
    with pytest.raises(TamperedRequestState):
        codec(OTHER_KEY).verify(new, "tools/call", CALL)


def test_expired_state_is_refused() -> None:
    clock = Clock()
    c = codec(clock=clock, ttl=60)
    state = issue(c)
    clock.now += 59.9
    c.verify(state, "tools/call", CALL, consume=False)
    clock.now += 0.2
    with pytest.raises(ExpiredRequestState) as caught:
        c.verify(state, "tools/call", CALL)
    assert caught.value.to_error()["data"] == {"reason": "expired"}


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tools/call", {"name": "destroy", "arguments": CALL["arguments"]}),
        ("tools/call", {"name": "deploy", "arguments": {"env": "dev", "replicas": 3}}),
        ("tools/call", {"name": "deploy"}),
        ("prompts/get", CALL),
        ("resources/read", {"uri": "deploy"}),
    ],
)
def test_a_state_presented_on_another_request_is_refused(
    method: str, params: dict[str, Any]
) -> None:
    c = codec()
    with pytest.raises(WrongRequestState) as caught:
        c.verify(issue(c), method, params)
    assert caught.value.to_error()["data"] == {"reason": "wrong_request"}


def test_a_state_is_bound_to_its_caller() -> None:
    c = codec()
    state = issue(c, principal="alice")
    with pytest.raises(WrongRequestState, match="caller"):
        c.verify(state, "tools/call", CALL, principal="mallory")
    with pytest.raises(WrongRequestState):
        c.verify(state, "tools/call", CALL)
    assert c.verify(state, "tools/call", CALL, principal="alice").name == "deploy"


def test_resources_and_prompts_bind_their_own_identity() -> None:
    c = codec()
    read = c.issue("resources/read", {"uri": "file:///a"}, round=1, pending=["k"])
    assert c.verify(read, "resources/read", {"uri": "file:///a"}).name == "file:///a"
    prompt = c.issue("prompts/get", {"name": "p", "arguments": {"x": "1"}}, round=1, pending=[])
    with pytest.raises(WrongRequestState):
        c.verify(prompt, "prompts/get", {"name": "p", "arguments": {"x": "2"}})


def test_a_state_is_accepted_once() -> None:
    c = codec()
    state = issue(c)
    c.verify(state, "tools/call", CALL)
    with pytest.raises(ReplayedRequestState) as caught:
        c.verify(state, "tools/call", CALL)
    assert caught.value.to_error()["data"] == {"reason": "replayed"}
    assert "already used" in caught.value.message


def test_verifying_without_consuming_leaves_it_usable() -> None:
    c = codec()
    state = issue(c)
    c.verify(state, "tools/call", CALL, consume=False)
    c.verify(state, "tools/call", CALL)


def test_a_refused_state_is_not_consumed() -> None:
    c = codec()
    state = issue(c)
    with pytest.raises(WrongRequestState):
        c.verify(state, "tools/call", {"name": "other"})
    c.verify(state, "tools/call", CALL)


def test_every_refusal_is_a_jsonrpc_invalid_params_error() -> None:
    for error in (TamperedRequestState, ExpiredRequestState, WrongRequestState):
        assert issubclass(error, RequestStateError)
    with pytest.raises(RequestStateError) as caught:
        codec().verify("x.y", "tools/call", CALL)
    error = caught.value.to_error()
    assert error["code"] == -32602
    assert error["message"].startswith("Invalid requestState: ")


def test_replay_cache_forgets_expired_nonces_and_stays_bounded() -> None:
    cache = ReplayCache(max_entries=3)
    assert cache.add("a", expires_at=10, now=0)
    assert not cache.add("a", expires_at=10, now=1)
    assert cache.add("b", expires_at=20, now=1)
    assert len(cache) == 2
    assert cache.add("c", expires_at=30, now=15)  # "a" expired and is gone
    assert len(cache) == 2
    assert cache.add("d", expires_at=40, now=16)
    assert cache.add("e", expires_at=50, now=16)  # full: the oldest ("b") goes
    assert len(cache) == 3
    assert cache.add("b", expires_at=60, now=17)


@pytest.mark.parametrize(
    ("keys", "problem"),
    [([], "at least one"), ([b"short"], "32 bytes"), (KEY, "sequence"), ("k" * 32, "sequence")],
)
def test_bad_keys_are_refused_up_front(keys: Any, problem: str) -> None:
    with pytest.raises((ValueError, TypeError), match=problem):
        RequestStateCodec(keys)


def test_str_keys_and_generated_keys_work() -> None:
    c = RequestStateCodec(["s" * 32, generate_key()])
    assert c.verify(issue(c), "tools/call", CALL).round == 1
    assert generate_key() != generate_key()


ISSUE = """
import sys
from codex_mcp.core.request_state import RequestStateCodec
codec = RequestStateCodec([sys.argv[1].encode()])
print(codec.issue("tools/call", {"name": "deploy", "arguments": {"env": "prod"}},
                  round=1, pending=["confirm"], data={"seen": [1]}))
"""
VERIFY = """
import sys
from codex_mcp.core.request_state import RequestStateCodec, RequestStateError
codec = RequestStateCodec([sys.argv[1].encode()])
try:
    state = codec.verify(sys.stdin.read().strip(), "tools/call",
                         {"name": "deploy", "arguments": {"env": "prod"}})
    print(state.pending, state.data)
except RequestStateError as error:
    print(error.to_error()["data"]["reason"])
"""


def run(code: str, key: str, stdin: str = "") -> str:
    done = subprocess.run(
        [sys.executable, "-c", code, key], input=stdin, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_round_started_in_one_process_finishes_in_another() -> None:
    key = "shared-secret-for-two-replicas-0123456789"
    state = run(ISSUE, key)
    assert run(VERIFY, key, state) == "('confirm',) {'seen': [1]}"
    assert run(VERIFY, "a-different-key-for-another-deployment", state) == "tampered"

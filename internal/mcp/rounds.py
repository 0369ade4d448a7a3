"""Input-required rounds (2026-07-28, SEP-2322): a stateless handler's questions end the
request and the retry re-runs it with the answers (decision 16; specs/mcp-2026-07-28.md, 1.7)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, Final

import orjson

from .jsonrpc import JsonObject, invalid_params
from .request_meta import RESULT_INPUT_REQUIRED, RequestMeta, missing_capability_error
from .request_state import RequestStateCodec

#: The methods a stateless server may answer with an input-required result.
ROUND_METHODS: Final = frozenset({"tools/call", "prompts/get", "resources/read"})
#: The client capability each kind of input request needs (a ClientCapabilities object).
_NEEDS: Final[dict[str, dict[str, Any]]] = {
    "elicitation/create": {"elicitation": {}},
    "sampling/createMessage": {"sampling": {}},
    "roots/list": {"roots": {}},
}
_AUTO_PREFIX: Final = {
    "elicitation/create": "elicit",
    "sampling/createMessage": "sample",
    "roots/list": "roots",
}
_ELICIT_ACTIONS: Final = frozenset({"accept", "decline", "cancel"})


class InputRequired(BaseException):
    """Raised by a question without an answer yet; ends the handler's run.

    A BaseException, so a handler's `except Exception` cannot swallow it.
    """


def digest(value: Any) -> str:
    """A short stable digest of a JSON value: what an input request asked."""
    encoded = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(encoded).hexdigest()[:22]


def check_capability(meta: RequestMeta, method: str, params: Mapping[str, Any]) -> None:
    """-32021 unless the client declared what `method` needs (a MUST: mrtr.mdx, Server
    Requirements; elicitation modes and sampling with tools included)."""
    if method == "elicitation/create":
        mode = params.get("mode", "form")
        if not meta.supports_elicitation(mode if isinstance(mode, str) else "form"):
            raise missing_capability_error(
                {"elicitation": {} if mode == "form" else {str(mode): {}}}
            )
    elif method == "sampling/createMessage":
        if not meta.supports_sampling(tools="tools" in params):
            raise missing_capability_error({"sampling": {"tools": {}} if "tools" in params else {}})
    else:
        meta.require(_NEEDS.get(method, {}))


def checked_answer(key: str, method: str, answer: Any) -> JsonObject:
    """The client's answer to the input request `key`, or -32602 when it is not the
    result that request asks for (an ElicitResult, CreateMessageResult or
    ListRootsResult)."""
    problem = None
    if type(answer) is not dict:
        problem = "must be an object"
    elif method == "elicitation/create":
        if answer.get("action") not in _ELICIT_ACTIONS:
            problem = "must be an ElicitResult with action accept, decline or cancel"
        elif "content" in answer and type(answer["content"]) is not dict:
            problem = "its content must be an object"
    elif method == "sampling/createMessage":
        if not isinstance(answer.get("role"), str) or not isinstance(
            answer.get("content"), dict | list
        ):
            problem = "must be a CreateMessageResult with role and content"
    elif method == "roots/list" and type(answer.get("roots")) is not list:
        problem = "must be a ListRootsResult with a roots list"
    if problem is not None:
        raise invalid_params(
            f"Invalid params: inputResponses[{key!r}] {problem}", {"inputResponse": key}
        )
    checked: JsonObject = answer
    return checked


class Rounds:
    """The input-required state of one run of a stateless request's handler."""

    __slots__ = (
        "_answers",
        "_asked",
        "_memo",
        "_next_auto",
        "_pending",
        "_used",
        "round",
        "unclaimed",
    )

    def __init__(
        self,
        answers: dict[str, Any],
        asked: dict[str, str],
        memo: dict[str, Any],
        round: int,
    ) -> None:
        #: Answers available to this run: from the state, and from this retry.
        self._answers = answers
        #: Digests of what each key asked when it was asked (from the state).
        self._asked = asked
        #: ctx.once values.
        self._memo = memo
        self.round = round
        #: Input requests of this run still without an answer, in the order asked.
        self._pending: dict[str, JsonObject] = {}
        #: Answers this run used, and the digests of their questions: the next state's.
        self._used: dict[str, tuple[Any, str]] = {}
        self._next_auto = 0
        #: (nonce, expiry) of the state this retry echoed, when it still has to be claimed
        #: in a replay cache shared by replicas (see `start(consume=False)`).
        self.unclaimed: tuple[str, float] | None = None

    @classmethod
    def start(
        cls,
        method: str,
        params: JsonObject,
        codec: RequestStateCodec,
        principal: str | None,
        consume: bool = True,
    ) -> Rounds:
        """The rounds of a request as it arrives: round 1, or a retry whose
        `requestState` checks out (else -32602: tampered, expired, replayed, or made for
        another request) with its `inputResponses` added to the earlier answers.
        `consume=False` leaves the replay check to the caller (`unclaimed`)."""
        responses = params.get("inputResponses")
        if "inputResponses" in params and type(responses) is not dict:
            raise invalid_params("Invalid params: inputResponses must be an object")
        raw_state = params.get("requestState")
        if raw_state is None:
            # Answers without a state were not asked by us (we always issue one), but a
            # client may answer a question it knows we ask: the key decides.
            return cls(dict(responses or {}), {}, {}, 1)
        state = codec.verify(raw_state, method, params, principal=principal, consume=consume)
        data = state.data if type(state.data) is dict else {}
        answers = dict(data.get("answers") or {})
        answers.update(responses or {})
        rounds = cls(
            answers, dict(data.get("asked") or {}), dict(data.get("memo") or {}), state.round + 1
        )
        if not consume:
            rounds.unclaimed = (state.nonce, state.expires_at)
        return rounds

    def key_for(self, method: str, key: str | None) -> str:
        if key is not None:
            return key
        self._next_auto += 1
        return f"{_AUTO_PREFIX.get(method, 'input')}-{self._next_auto}"

    def answer(self, key: str, method: str, params: JsonObject) -> JsonObject | None:
        """The answer to this question if the client gave one (for this very question:
        one recorded for a different question under the same key is stale)."""
        if key not in self._answers:
            return None
        asked = digest({"method": method, "params": params})
        if self._asked.get(key, asked) != asked:
            return None
        answer = checked_answer(key, method, self._answers[key])
        self._used[key] = (answer, asked)
        return answer

    def ask(self, key: str, method: str, params: JsonObject) -> None:
        """Register a question for this run's input-required result."""
        self._pending[key] = {"method": method, "params": params}

    def memo(self, name: str) -> tuple[bool, Any]:
        return (name in self._memo, self._memo.get(name))

    def remember(self, name: str, value: Any) -> None:
        self._memo[name] = value

    def result(
        self, method: str, params: JsonObject, codec: RequestStateCodec, principal: str | None
    ) -> JsonObject:
        """The input-required result asking this run's questions, with the state that
        carries what the next run needs."""
        asked = {key: digest(request) for key, request in self._pending.items()}
        asked.update({key: used[1] for key, used in self._used.items()})
        state = codec.issue(
            method,
            params,
            round=self.round,
            pending=self._pending,
            data={
                "answers": {key: used[0] for key, used in self._used.items()},
                "asked": asked,
                "memo": self._memo,
            },
            principal=principal,
        )
        return {
            "resultType": RESULT_INPUT_REQUIRED,
            "inputRequests": dict(self._pending),
            "requestState": state,
        }


__all__ = [
    "ROUND_METHODS",
    "InputRequired",
    "Rounds",
    "check_capability",
    "checked_answer",
    "digest",
]

"""Matching what a server answered against what each message must get back."""

from __future__ import annotations

from collections import Counter
from typing import Any

from .expectations import Expect


class Ledger:
    """Every answer, checked as it arrives: ids must be ours and answered at most as often as
    allowed; replies with a null id are counted per window (a write, or one HTTP exchange)."""

    def __init__(self, context: str) -> None:
        self.context = context  # seed and profile, for a failure that can be reproduced
        self.must: Counter[Any] = Counter()
        self.may: Counter[Any] = Counter()
        self.answered: Counter[Any] = Counter()
        self.nulls = 0
        self.replies = 0
        self.notifications = 0

    def expect(self, expect: Expect) -> None:
        self.must.update(expect.must)
        self.may.update(expect.may)

    def take(self, message: Any, where: str) -> None:
        """One decoded message from the server (a batch answer is taken entry by entry)."""
        if type(message) is list:
            assert message, f"{self.context}: an empty batch answer ({where})"
            for entry in message:
                self.take(entry, where)
            return
        assert type(message) is dict, f"{self.context}: not a message: {message!r} ({where})"
        if "method" in message:
            self.notifications += 1  # progress or log from the server: not an answer
            assert "id" not in message, f"{self.context}: the server asked {message} ({where})"
            return
        assert message.get("jsonrpc") == "2.0", f"{self.context}: {message} ({where})"
        assert ("result" in message) != ("error" in message), f"{self.context}: {message}"
        if "error" in message:
            error = message["error"]
            assert type(error.get("code")) is int and type(error.get("message")) is str, message
        self.replies += 1
        request_id = message.get("id", "<missing>")
        if request_id is None:
            self.nulls += 1
            return
        assert type(request_id) in (str, int), (
            f"{self.context}: answered with id {request_id!r} ({where})"
        )
        self.answered[request_id] += 1
        allowed = self.must[request_id] + self.may[request_id]
        assert self.answered[request_id] <= allowed, (
            f"{self.context}: id {request_id!r} answered {self.answered[request_id]} times, "
            f"expected {allowed} ({where}): {message}"
        )

    def missing(self, ids: Counter[Any] | None = None) -> list[Any]:
        """Ids that must be answered and are not yet (of `ids`, or of everything sent)."""
        wanted = self.must if ids is None else ids
        return [i for i, count in wanted.items() if self.answered[i] < count]

    def check_nulls(self, expect: Expect, nulls: int, where: str) -> None:
        assert expect.null_min <= nulls <= expect.null_max, (
            f"{self.context}: {nulls} replies with a null id, expected "
            f"{expect.null_min}..{expect.null_max} ({where})"
        )

"""How the HTTP transport behaves: every option of `codex-mcp-http` (declared in
codex_mcp.settings) and the bearer tokens, checked when made (codex_mcp/exposure.py)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from ...exposure import refuse_unsafe
from ...settings import HttpOptions


class HttpConfig(HttpOptions):
    """The transport's options (a frozen record, as the settings are) and what only a
    running server knows."""

    #: Accepted bearer tokens; empty means no authentication.
    bearer_tokens: Sequence[str] = dataclasses.field(default=(), repr=False)
    #: Listen with SO_REUSEPORT (a worker of `codex-mcp-http --workers N`).
    reuse_port: bool = False
    #: A worker's latest word from its supervisor (how many workers serve, and why not
    #: all), shown by /readyz; None outside `--workers`.
    #: The secret the operator's login cookies are signed from: the --workers supervisor's
    #: key, so every worker takes every worker's cookie; None: one made at start.
    operator_cookie_secret: bytes | None = dataclasses.field(default=None, repr=False)
    workers_status: Callable[[], dict[str, Any] | None] | None = None

    def __post_init__(self) -> None:
        refuse_unsafe(self, self.bearer_tokens)

    @property
    def prefix(self) -> str:
        return "/" + self.base_path.strip("/") if self.base_path.strip("/") else ""

"""Side by side (#32): every capability a client can use of two real children, directly and
through the gateway, compared field for field.

The children: server-everything (npm, the TypeScript SDK's reference server) and our
examples/everything_server.py (the conformance suite's everything server; the official
Python SDK ships no everything server in its package). Each path is (transport: `codex-mcp`
over stdio or `codex-mcp-http`, sharing: a shared child or `"per_session": true`, front:
a 2025-11-25 session or a 2026-07-28 stateless client, both our `codex_mcp.client`). For
each, the client builds a capability report (side_by_side_report.py) of each child and it is
compared with the report of a 2025-11-25 client speaking to the child directly, names and
URIs mapped through the gateway's naming. A difference passes only when DOCUMENTED names it,
with its reason and where specs/gateway.md says so ("Side by side"); any other fails.

Bounded: the two HTTP gateways (one per sharing) are started once per module and serve both
fronts; a stdio gateway has one client, so each stdio path starts one."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from codex_mcp.client import Client

from .gateway_helpers import (
    EVERYTHING,
    EXAMPLES,
    MISSING_NPM,
    gateway,
    gateway_env,
    launch_http_gateway,
    stdio,
    stop,
    write_config,
)
from .side_by_side_report import (
    V2025,
    V2026,
    Child,
    JsonObject,
    Naming,
    Seen,
    capability_report,
    client_options,
)

pytestmark = [
    pytest.mark.interop,
    pytest.mark.slow,
    pytest.mark.skipif(not EVERYTHING.exists(), reason=MISSING_NPM),
]

CHILDREN = (
    Child(
        key="everything",
        command=[str(EVERYTHING)],
        text=("echo", {"message": "side by side"}),
        structured=("get-structured-content", {"location": "Chicago"}),
        image=("get-tiny-image", {}),
        resource=("get-resource-reference", {"resourceType": "Text", "resourceId": 1}),
        progress=("trigger-long-running-operation", {"duration": 1, "steps": 2}),
        log=None,  # it logs only on a timer, outside calls (toggle-simulated-logging)
        elicit=("trigger-elicitation-request", {}),
        sample=("trigger-sampling-request", {"prompt": "hello", "maxTokens": 10}),
        roots=("get-roots-list", {}),
        prompt=("args-prompt", {"city": "Oslo"}),
        completion=({"type": "ref/prompt", "name": "completable-prompt"}, "department", "E"),
        read="demo://resource/static/document/features.md",
        subscribe=("demo://resource/dynamic/text/1", ("toggle-subscriber-updates", {})),
        task=("simulate-research-query", {"topic": "gateways"}),
    ),
    Child(
        key="examples",
        command=EXAMPLES,
        text=("test_simple_text", {}),
        structured=("weather", {"city": "Oslo"}),
        image=("test_image_content", {}),
        resource=("test_multiple_content_types", {}),
        progress=("test_tool_with_progress", {}),
        log=("test_tool_with_logging", {}),
        elicit=("test_elicitation", {"message": "Who are you?"}),
        sample=("test_sampling", {"prompt": "hello"}),
        roots=("list_client_roots", {}),
        prompt=("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"}),
        completion=({"type": "ref/prompt", "name": "test_prompt_with_arguments"}, "arg1", "par"),
        read="test://static-text",
        subscribe=("test://watched-resource", ("touch_watched_resource", {})),
    ),
)


@dataclass(frozen=True)
class Path_:
    transport: str  # "stdio" | "http"
    sharing: str  # "shared" | "per_session"
    front: str  # V2025 | V2026

    def __str__(self) -> str:
        return f"{self.transport}-{self.sharing}-{self.front}"


PATHS = [
    Path_(transport, sharing, front)
    for transport in ("stdio", "http")
    for sharing in ("shared", "per_session")
    for front in (V2025, V2026)
]


@dataclass(frozen=True)
class Difference:
    """A documented difference: `field` of `child` (None: any) on the paths `applies` to."""

    field: str
    child: str | None
    applies: Callable[[Path_], bool]
    reason: str
    spec: str  # the section of specs/gateway.md that says so


def _shared_http_modern(path: Path_) -> bool:
    return path.transport == "http" and path.sharing == "shared" and path.front == V2026


def _any(_path: Path_) -> bool:
    return True


def _front_2025(path: Path_) -> bool:
    return path.front == V2025


def _no_2025_tasks(path: Path_) -> bool:
    return path.front == V2026 or path.sharing == "per_session"


def _http_per_session_modern(path: Path_) -> bool:
    return path.transport == "http" and path.sharing == "per_session" and path.front == V2026


UNROUTED = "a shared child several sessions (or any 2026-07-28 caller) used cannot have its "
UNROUTED += "questions and logs during a call tied to that call over its stdio pipe: refused, "
UNROUTED += 'naming `"per_session": true` (by design, decision 66)'
ASKS = ("call with elicitation", "call with sampling", "call with roots")
ASKED = ("elicitations", "samplings", "logs")
DOCUMENTED: tuple[Difference, ...] = (
    Difference(
        "capabilities", "examples", _front_2025,
        "the gateway declares what its children offer together: `tasks` for a 2025-11-25 "
        "front because server-everything declares it, or because a per-session server may "
        "(its child starts after `initialize`)",
        "Relaying: Tasks of 2025-11-25",
    ),
    Difference(
        "capabilities", "everything", _no_2025_tasks,
        "`tasks` (2025-11-25) is declared to 2025-11-25 fronts only, and for a per-session "
        "server only once one of its children was seen with it",
        "Relaying: Tasks of 2025-11-25",
    ),
    Difference(
        "task", "everything", _no_2025_tasks,
        "where `tasks` is not declared the required-task tool is a plain call: the gateway "
        "makes the child's task and answers the call with its result",
        "Relaying: Tasks of 2025-11-25 (Fronts that make no such tasks)",
    ),
    *(
        Difference(field, None, _shared_http_modern, UNROUTED, "Relaying: Which call")
        for field in (*ASKS, *ASKED)
    ),
    Difference(
        "tool json_schema_2020_12_tool", "examples", _any,
        "a member of anyOf/allOf without a type gets the type of the schema it constrains, so "
        "Codex lowers nothing of the schema (the gateway's repair, decision 84)",
        "Repairs",
    ),
    Difference(
        "progress", "everything", _http_per_session_modern,
        "KNOWN GAP: the progress server-everything (a 2025-11-25-only child) sends during a "
        "2026-07-28 caller's call does not reach it when the child is the caller's "
        "per-session child over HTTP (3 runs of 3); cause not found yet",
        "Side by side",
    ),
)  # fmt: skip


def _explained(field: str, child: str, path: Path_) -> Difference | None:
    for documented in DOCUMENTED:
        if (
            documented.field == field
            and documented.child in (None, child)
            and documented.applies(path)
        ):
            return documented
    return None


# -- the direct reports (once per module) --------------------------------------------------
_DIRECT: dict[str, JsonObject] = {}


async def _direct(child: Child) -> JsonObject:
    if child.key not in _DIRECT:
        seen = Seen()
        client = Client.stdio(
            child.command, env=gateway_env(None), protocol_version=V2025, **client_options(seen)
        )
        async with client:
            _DIRECT[child.key] = await capability_report(client, child, Naming(None), seen)
    return _DIRECT[child.key]


# -- the gateways ----------------------------------------------------------------------------
RELAYED = {"sampling": {}, "elicitation": {}, "roots": {}}


def _config(directory: Path, sharing: str) -> Path:
    # What a shared child, and a 2026-07-28 caller's per-session child, is told its client
    # can do (a 2025-11-25 session's own child is told what that client declared).
    extra: JsonObject = {"client_capabilities": RELAYED}
    if sharing == "per_session":
        extra["per_session"] = True
    return write_config(directory, {c.key: stdio(c.command, **extra) for c in CHILDREN})


@pytest.fixture(scope="module")
def http_gateways(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """One `codex-mcp-http` gateway per sharing, serving every front of this module."""
    started = []
    urls = {}
    try:
        for sharing in ("shared", "per_session"):
            process, url = launch_http_gateway(_config(tmp_path_factory.mktemp(sharing), sharing))
            started.append(process)
            urls[sharing] = url
        yield urls
    finally:
        for process in started:
            stop(process)


@asynccontextmanager
async def _front(
    path: Path_, tmp_path: Path, urls: dict[str, str], seen: Seen
) -> AsyncIterator[Client]:
    era: JsonObject = {"mode": V2026} if path.front == V2026 else {"protocol_version": V2025}
    options = {**client_options(seen), **era}
    if path.transport == "stdio":
        options.pop("timeout")  # gateway() bounds the handshake itself
        client = gateway(_config(tmp_path, path.sharing), **options)
    else:
        client = Client.http(urls[path.sharing], **options)
    async with client:
        assert client.is_stateless == (path.front == V2026)
        yield client


def _differences(direct: JsonObject, through: JsonObject) -> dict[str, tuple[Any, Any]]:
    return {
        key: (direct.get(key), through.get(key))
        for key in sorted(set(direct) | set(through))
        if direct.get(key) != through.get(key)
    }


@pytest.mark.parametrize("path", PATHS, ids=str)
async def test_side_by_side(path: Path_, tmp_path: Path, http_gateways: dict[str, str]) -> None:
    unexplained = []
    directs = [await _direct(child) for child in CHILDREN]
    seen = Seen()
    async with _front(path, tmp_path, http_gateways, seen) as client:
        for child, direct in zip(CHILDREN, directs, strict=True):
            started = time.monotonic()
            report = await capability_report(client, child, Naming(child.key), seen)
            print(f"{child.key} {path}: {time.monotonic() - started:.1f} s")
            for field, (was, now) in _differences(direct, report).items():
                documented = _explained(field, child.key, path)
                note = f"{child.key} {path} {field}: direct {was!r} / gateway {now!r}"
                print(("documented: " if documented else "UNEXPLAINED: ") + note[:600])
                if documented is None:
                    unexplained.append(note[:2000])
    assert not unexplained, "\n".join(unexplained)

"""The real children of the matrix, what each is asked to exercise every capability it has,
and what the matrix's policies hide of it.

| the cell's child | children (config names) | what they are |
|---|---|---|
| older | `everything` | server-everything (npm, the TypeScript SDK's reference server): 2025-11-25 and older |
| modern | `modern` | our examples server with `initialize` refused (servers/stateless_only.py): 2026-07-28 only |
| both | `sdk`, `ours` | the official Python SDK's server (servers/sdk_matrix.py) and our examples server |

Our server has no option to speak fewer revisions; stateless_only.py refuses `initialize`
exactly as a 2026-07-28-only server does (-32022 with the versions it speaks), and serves
the rest with the examples server unchanged. Each child runs over stdio (the gateway
starts it) or Streamable HTTP (the test starts it, once per module, on a fixed port so that
a `restarted` cell can start it again where the gateway looks for it)."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from typing import Any

from support.processes import HttpProcess, free_port, wait_for_port

from ..gateway_helpers import CMD_HTTP, EVERYTHING, PY, ROOT, SERVERS, stop

JsonObject = dict[str, Any]
Call = tuple[str, JsonObject]

EXAMPLES = str(ROOT / "examples/everything_server.py")
STATELESS_ONLY = str(SERVERS / "stateless_only.py")
SDK = str(SERVERS / "sdk_matrix.py")


@dataclass(frozen=True)
class Hidden:
    """What the matrix's policies hide of a child (its own names), none of it exercised by
    the capability report, so the report compares with the child's minus these."""

    tool: str
    prompt: str | None = None
    resource: str | None = None
    skill: str | None = None  # a skill's SKILL.md URI
    skill_file: str | None = None  # another file of that skill


@dataclass(frozen=True)
class Child:
    """One real child and the calls that exercise each capability it has (None: it has
    not that capability)."""

    key: str
    text: Call
    structured: Call | None = None
    image: Call | None = None
    resource: Call | None = None
    progress: Call | None = None
    log: Call | None = None
    elicit: Call | None = None
    sample: Call | None = None
    roots: Call | None = None
    prompt: tuple[str, dict[str, str]] | None = None
    completion: tuple[JsonObject, str, str] | None = None
    read: str | None = None
    subscribe: tuple[str, Call] | None = None  # a URI, and the call that updates it
    task_2025: Call | None = None  # a tool with taskSupport "required" (2025-11-25 tasks)
    task_2026: Call | None = None  # a tool that may run as a 2026-07-28 task
    long_2026: Call | None = None  # a 2026-07-28 task tool that runs until cancelled
    cancel: Call | None = None  # a call that runs long enough to be cancelled
    skill: tuple[str, str, str] | None = None  # SKILL.md URI, another file, a folder
    hidden: Hidden = field(default_factory=lambda: Hidden("add"))


_OURS = {
    "text": ("test_simple_text", {}),
    "structured": ("weather", {"city": "Oslo"}),
    "image": ("test_image_content", {}),
    "resource": ("test_multiple_content_types", {}),
    "progress": ("test_tool_with_progress", {}),
    "log": ("test_tool_with_logging", {}),
    "elicit": ("test_elicitation", {"message": "Who are you?"}),
    "sample": ("test_sampling", {"prompt": "hello"}),
    "roots": ("list_client_roots", {}),
    "prompt": ("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"}),
    "completion": ({"type": "ref/prompt", "name": "test_prompt_with_arguments"}, "arg1", "par"),
    "read": "test://static-text",
    "subscribe": ("test://watched-resource", ("touch_watched_resource", {})),
    "task_2026": ("slow_compute", {"seconds": 0.2, "label": "matrix"}),
    "long_2026": ("slow_compute", {"seconds": 60, "label": "cancelled"}),
    "cancel": ("slow_compute", {"seconds": 60, "label": "abandoned"}),
    "skill": (
        "skill://acme/docs/release-notes/SKILL.md",
        "skill://acme/docs/release-notes/examples/entry.md",
        "skill://acme/docs/release-notes",
    ),
    "hidden": Hidden(
        tool="add",
        prompt="test_simple_prompt",
        resource="test://static-binary",
        skill="skill://pdf-processing/SKILL.md",
        skill_file="skill://pdf-processing/references/FORMS.md",
    ),
}

CHILDREN: dict[str, Child] = {
    "everything": Child(
        key="everything",
        text=("echo", {"message": "matrix"}),
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
        task_2025=("simulate-research-query", {"topic": "gateways"}),
        cancel=("trigger-long-running-operation", {"duration": 60, "steps": 60}),
        hidden=Hidden(
            tool="get-sum",
            prompt="simple-prompt",
            resource="demo://resource/static/document/architecture.md",
        ),
    ),
    "ours": Child(key="ours", **_OURS),  # type: ignore[arg-type]
    "modern": Child(key="modern", **_OURS),  # type: ignore[arg-type]
    "sdk": Child(
        key="sdk",
        text=("test_simple_text", {}),
        structured=("weather", {"city": "Oslo"}),
        progress=("with_progress", {}),
        log=("with_logging", {}),
        elicit=("ask_name", {}),
        sample=("sample", {"prompt": "hello"}),
        roots=("roots", {}),
        prompt=("summarize", {"text": "it"}),
        completion=({"type": "ref/prompt", "name": "summarize"}, "text", "al"),
        read="sdk://greeting",
        cancel=("slow", {"seconds": 60}),
        hidden=Hidden(tool="add", prompt="hidden_prompt", resource="sdk://secret"),
    ),
}

#: The cell's `child` -> the config names of its children.
KINDS: dict[str, tuple[str, ...]] = {
    "older": ("everything",),
    "modern": ("modern",),
    "both": ("sdk", "ours"),
}


def stdio_command(key: str) -> list[str]:
    return {
        "everything": [str(EVERYTHING)],
        "sdk": [PY, SDK],
        "ours": [PY, str(ROOT / "cmd/mcp"), "--serve", EXAMPLES],
        "modern": [PY, STATELESS_ONLY],
    }[key]


class HttpChild:
    """One child served over Streamable HTTP on a port of its own, started by the test;
    `restart()` stops it and starts it again on the same port (what the gateway sees of a
    remote server that restarted)."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.process: subprocess.Popen[str] | None = None
        self.start()

    def _command(self) -> list[str]:
        port = str(self.port)
        return {
            "everything": [str(EVERYTHING), "streamableHttp"],
            "sdk": [PY, SDK, "streamable-http", port],
            "ours": [PY, CMD_HTTP, "--port", port, "--serve", EXAMPLES],
            "modern": [PY, STATELESS_ONLY, "--http", f"--port={port}"],
        }[self.key]

    def start(self) -> None:
        if self.key in ("ours", "modern"):  # ours say where they listen
            self.process = HttpProcess(command=self._command()).process
            return
        self.process = subprocess.Popen(
            self._command(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "PORT": str(self.port)},
        )
        wait_for_port(self.port, self.process, self.key)

    def restart(self) -> None:
        self.stop()
        self.start()

    def stop(self) -> None:
        if self.process is not None:
            stop(self.process)
            self.process = None


def config_entry(key: str, transport: str, http: dict[str, HttpChild]) -> JsonObject:
    if transport == "http":
        return {"url": http[key].url}
    command = stdio_command(key)
    return {"command": command[0], "args": command[1:]}

"""Doctor's report: per server, what Codex will show the model and what it will lose and why,
each finding with its fix, a finding that repeats over tools as one line naming them.

The per-tool judgement is the lint model's (`lint_servers`); this adds what only Codex's own
config can tell: how the server starts (command, PATH, timeout, login), its name, the entry's
`enabled_tools`/`disabled_tools`, and a gateway entry's `.mcp.json`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from codex_mcp.codex_compat.check import (
    SRC_STARTUP,
    Finding,
    Listing,
    ToolReport,
    lint_servers,
    repeated_findings,
)
from codex_mcp.codex_compat.policy import APPROVAL_ADVICE

from .codex_config import CodexServer, HttpEntry
from .startup import Started

SCHEMA = "codex-mcp-doctor/1"
Severity = Literal["lost", "warn", "info"]
ServerStatus = Literal[
    "ok", "disabled", "not startable", "exited", "too slow", "no answer", "needs login", "failed"
]

#: codex-rs/codex-mcp/src/rmcp_client.rs, `validate_mcp_server_name`.
SERVER_NAME = re.compile(r"^[a-zA-Z0-9_-]+$")
SRC_NAME = "codex-rs/codex-mcp/src/rmcp_client.rs: validate_mcp_server_name"
SRC_LAUNCH = "codex-rs/rmcp-client/src/utils.rs: create_env_for_mcp_server, DEFAULT_ENV_VARS"
SRC_FILTER = "codex-rs/codex-mcp/src/tools.rs: ToolFilter (enabled_tools, disabled_tools)"
SRC_LOGIN = "codex-rs/codex-mcp/src/rmcp_client.rs: make_rmcp_client (OAuth, bearer_token_env_var)"
SRC_GATEWAY = "codex-mcp gateway: specs/gateway.md (the config file)"
#: Past this, `codex exec` starts its first turn without the server's tools.
FIRST_TURN_SEC = 1.0

_GATEWAY_FIX = "serve it through the codex-mcp gateway, which repairs it (`codex-mcp lint --fix` writes the entry), or fix the server"
#: The fix for each kind of tool finding of the lint model.
FIXES: dict[str, str | None] = {
    "dropped": _GATEWAY_FIX,
    "server-lost": _GATEWAY_FIX,
    "duplicate": "the server lists the name twice: fix the server",
    "compacted": "`codex-mcp lint --fix` proposes a gateway entry that shrinks the schema",
    "lowered": "give the schema the types Codex needs, or serve it through the gateway",
    "needs-approval": APPROVAL_ADVICE,
    "hashed": "rename the tool or the server so their names differ after sanitizing",
    "renamed": None,
    "structured-only": None,
    "per-session": None,
}


@dataclass(frozen=True, slots=True)
class DoctorFinding:
    severity: Severity
    rule: str
    message: str
    source: str
    fix: str | None = None
    #: The tools it applies to (none: the whole server).
    tools: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "severity": self.severity,
            "rule": self.rule,
            "message": self.message,
            "fix": self.fix,
            "tools": list(self.tools),
            "source": self.source,
        }


@dataclass
class ToolView:
    tool: str
    #: The name the model sees (None: the model does not see it).
    codex_name: str | None
    #: kept | changed | dropped | lost with its server | filtered
    status: str

    @property
    def lost(self) -> bool:
        return self.status in ("dropped", "lost with its server")

    def to_json(self) -> dict[str, Any]:
        return {"tool": self.tool, "codexName": self.codex_name, "status": self.status}


@dataclass
class ServerView:
    name: str
    transport: Literal["stdio", "http"]
    target: str
    status: ServerStatus
    startup_timeout_sec: float
    tool_timeout_sec: float
    seconds: float | None = None
    findings: list[DoctorFinding] = field(default_factory=list)
    tools: list[ToolView] = field(default_factory=list)
    #: The paths of the skills it serves (specs/skills.md).
    skills: list[str] = field(default_factory=list)

    @property
    def loses(self) -> bool:
        """Something Codex would not show: the server, a tool, a gateway child."""
        if self.status not in ("ok", "disabled"):
            return True
        return any(t.lost for t in self.tools) or any(f.severity == "lost" for f in self.findings)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "transport": self.transport,
            "target": self.target,
            "status": self.status,
            "startupTimeoutSec": self.startup_timeout_sec,
            "toolTimeoutSec": self.tool_timeout_sec,
            "seconds": None if self.seconds is None else round(self.seconds, 3),
            "findings": [f.to_json() for f in self.findings],
            "tools": [t.to_json() for t in self.tools],
            "skills": list(self.skills),
        }


@dataclass
class DoctorReport:
    config: str
    path: str
    path_origin: str
    servers: list[ServerView]

    @property
    def exit_code(self) -> int:
        return 1 if any(s.loses for s in self.servers) else 0

    def summary(self) -> dict[str, int]:
        tools = [t for s in self.servers for t in s.tools]
        return {
            "servers": len(self.servers),
            "started": sum(s.status == "ok" for s in self.servers),
            "disabled": sum(s.status == "disabled" for s in self.servers),
            "tools": len(tools),
            "kept": sum(t.status == "kept" for t in tools),
            "changed": sum(t.status == "changed" for t in tools),
            "filtered": sum(t.status == "filtered" for t in tools),
            "lost": sum(t.lost for t in tools),
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "config": self.config,
            "path": {"value": self.path, "origin": self.path_origin},
            "exitCode": self.exit_code,
            "summary": self.summary(),
            "servers": [s.to_json() for s in self.servers],
        }


def name_problem(name: str) -> DoctorFinding | None:
    if SERVER_NAME.match(name):
        return None
    message = f"Codex refuses the server name {name!r}: it must match [a-zA-Z0-9_-]+"
    fix = "rename the [mcp_servers.NAME] table with letters, digits, _ and - only"
    return DoctorFinding("lost", "not-startable", message, SRC_NAME, fix)


def build_report(
    config: str,
    path: str,
    path_origin: str,
    servers: Sequence[CodexServer],
    started: dict[str, Started],
    extra: dict[str, list[DoctorFinding]],
) -> DoctorReport:
    """`started`: by name, each enabled server whose start was tried; `extra`: findings
    found before starting (its name, its gateway's .mcp.json)."""
    views = {s.name: _view(s, started.get(s.name), extra.get(s.name, [])) for s in servers}
    shown = [s for s in servers if views[s.name].status == "ok"]
    listings = [
        Listing(s.name, _allowed(s, started[s.name].tools), target=views[s.name].target)
        for s in shown
    ]
    linted = {r.server: r for r in lint_servers(listings).servers}
    for server in servers:
        view = views[server.name]
        result = started.get(server.name)
        if result is None or result.outcome != "listed":
            continue
        report = linted.get(server.name)
        lint_tools = {t.tool: t for t in report.tools} if report is not None else {}
        view.tools = _tools(server, result.tools, lint_tools, lost=view.status != "ok")
        view.skills = result.skills
        if report is not None:
            view.findings += [_from_lint(f, ()) for f in report.findings]
            view.findings += _grouped(report.tools)
        view.findings += _filter_findings(server, result.tools)
    return DoctorReport(config, path, path_origin, list(views.values()))


def _view(server: CodexServer, result: Started | None, extra: list[DoctorFinding]) -> ServerView:
    transport: Literal["stdio", "http"] = (
        "http" if isinstance(server.transport, HttpEntry) else "stdio"
    )
    timeout = server.startup_timeout
    target = result.target if result else ""
    view = ServerView(server.name, transport, target, "ok", timeout, server.tool_timeout)
    view.findings = list(extra)
    if not server.enabled:
        view.status = "disabled"
        message = "enabled = false: Codex does not start it"
        view.findings.append(DoctorFinding("info", "disabled", message, SRC_FILTER))
        return view
    if result is None:  # refused before starting (its name)
        view.status = "not startable"
        return view
    view.seconds = result.seconds
    if result.outcome != "listed":
        view.status = result.outcome
        message = (result.error or result.outcome) + _required(server)
        rule = result.outcome.replace(" ", "-")
        view.findings.append(DoctorFinding("lost", rule, message, _source(result), result.fix))
        return view
    slowest = max(result.initialize_seconds or 0.0, result.list_seconds or 0.0)
    if slowest > timeout:
        view.status = "too slow"
        step = "initialize" if (result.initialize_seconds or 0.0) >= slowest else "list its tools"
        message = (
            f"took {slowest:.1f} s to {step}, over its startup_timeout_sec ({timeout:g} s): "
            "Codex gives up on it and shows none of its tools"
        ) + _required(server)
        fix = f"set startup_timeout_sec = {math.ceil(slowest * 1.5 + 1)} in [mcp_servers.{server.name}]"
        view.findings.append(DoctorFinding("lost", "too-slow", message, SRC_STARTUP, fix))
    elif (result.seconds or 0.0) > FIRST_TURN_SEC and not server.required:
        message = (
            f"took {result.seconds or 0.0:.1f} s to start and list its tools: `codex exec` starts "
            "its first turn without the tools of servers still starting"
        )
        fix = f"set required = true in [mcp_servers.{server.name}] to make it wait"
        view.findings.append(DoctorFinding("info", "slow-start", message, SRC_STARTUP, fix))
    return view


def _required(server: CodexServer) -> str:
    return "; required = true: `codex exec` stops with an error" if server.required else ""


def _source(result: Started) -> str:
    if result.outcome == "needs login":
        return SRC_LOGIN
    return SRC_LAUNCH if result.outcome == "not startable" else SRC_STARTUP


def _names(tools: Sequence[Any]) -> list[str]:
    return [t["name"] for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)]


def _allows(server: CodexServer, name: str) -> bool:
    """Codex's ToolFilter: in `enabled_tools` (when given) and not in `disabled_tools`."""
    if server.enabled_tools is not None and name not in server.enabled_tools:
        return False
    return name not in server.disabled_tools


def _allowed(server: CodexServer, tools: Sequence[Any]) -> list[Any]:
    """What passes the filter, which Codex applies before it names the tools."""
    return [
        t
        for t in tools
        if not (isinstance(t, dict) and isinstance(t.get("name"), str))
        or _allows(server, t["name"])
    ]


def _tools(
    server: CodexServer, tools: Sequence[Any], linted: dict[str, ToolReport], *, lost: bool
) -> list[ToolView]:
    views = []
    for name in dict.fromkeys(_names(tools)):
        if not _allows(server, name):
            views.append(ToolView(name, None, "filtered"))
        elif lost:
            views.append(ToolView(name, None, "lost with its server"))
        elif name in linted:
            report = linted[name]
            views.append(ToolView(name, report.codex_name, report.status))
    return views


def _from_lint(finding: Finding, tools: tuple[str, ...]) -> DoctorFinding:
    severity: Severity = finding.severity
    return DoctorFinding(
        severity, finding.rule, finding.message, finding.source, FIXES.get(finding.rule), tools
    )


def _grouped(tools: Sequence[ToolReport]) -> list[DoctorFinding]:
    """One line per kind of finding (rule and message), naming every tool it applies to."""
    return [_from_lint(finding, names) for finding, names in repeated_findings(tools)]


def _filter_findings(server: CodexServer, tools: Sequence[Any]) -> list[DoctorFinding]:
    listed = set(_names(tools))
    findings = []
    hidden = tuple(n for n in dict.fromkeys(_names(tools)) if not _allows(server, n))
    if hidden:
        message = "hidden by the entry's enabled_tools/disabled_tools (as asked)"
        findings.append(DoctorFinding("info", "filtered", message, SRC_FILTER, None, hidden))
    for key, names in (
        ("enabled_tools", server.enabled_tools or ()),
        ("disabled_tools", server.disabled_tools),
    ):
        unknown = tuple(n for n in names if n not in listed)
        if unknown:
            message = f"{key} names tools the server does not list"
            fix = f"use the server's own tool names in {key} (they are listed above)"
            findings.append(
                DoctorFinding("warn", "unknown-tool", message, SRC_FILTER, fix, unknown)
            )
    return findings

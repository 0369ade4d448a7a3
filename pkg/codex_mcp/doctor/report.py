"""Doctor's report: per server, what Codex will show the model and what it will lose and why,
each finding with its fix, a finding that repeats over tools as one line naming them.

The per-tool judgement is the Codex model's (`codex_compat.check.lint_servers`), run under the
config's sandbox and approval policy; this adds what only Codex's own config can tell: how the
server starts (command, PATH, timeout, login, the 2026-07-28 opt-in), its name, the entry's
`enabled_tools`/`disabled_tools`, a gateway entry's `.mcp.json` and children, and a fix that
fits the entry (fixes.py).
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
from codex_mcp.codex_compat.policy import CODEX_DEFAULTS, Permissions

from .codex_config import CodexServer, HttpEntry
from .fixes import Entry, fix_for
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
SRC_GATEWAY_STATUS = "codex-mcp gateway: its gateway_status tool (specs/gateway.md, Supervision)"
#: Past this, `codex exec` starts its first turn without the server's tools.
FIRST_TURN_SEC = 1.0
#: A gateway child in one of these states serves (or will serve) its tools.
CHILD_SERVING = frozenset({"ready", "starting", "idle", "not started", "stopped"})
SRC_TRUST = "codex-mcp gateway: pinning (specs/trust.md), as its gateway_status says"
#: What Codex makes of one tool (ToolView.status); `withheld`: the gateway does not serve it,
#: its definition changed since it was trusted (specs/trust.md).
ToolStatus = Literal["kept", "changed", "dropped", "lost with its server", "filtered", "withheld"]


@dataclass(frozen=True, slots=True)
class DoctorFinding:
    severity: Severity
    rule: str
    message: str
    source: str
    fix: str | None = None
    #: The tools it applies to (none: the whole server).
    tools: tuple[str, ...] = ()
    #: For a gateway entry: the children it is about (not in --json: the message names them).
    children: tuple[str, ...] = ()

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
    status: ToolStatus

    @property
    def lost(self) -> bool:
        return self.status in ("dropped", "lost with its server", "withheld")

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
    def lost_children(self) -> set[str]:
        """The gateway children whose tools Codex will not get (a gateway entry)."""
        return {child for f in self.findings if f.severity == "lost" for child in f.children}

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
    #: The MCP skills Codex lists from its skills folder: (its name, `server/path`).
    mcp_skills: list[tuple[str, str]] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """1 when the summary counts a loss: a tool, a server Codex cannot use, a gateway
        child whose tools it will not get. Every `lost` finding is one of the three."""
        n = self.summary()
        unusable = n["servers"] - n["started"] - n["disabled"]
        return 1 if n["lost"] or unusable or n["gatewayChildrenLost"] else 0

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
            "gatewayChildrenLost": sum(len(s.lost_children) for s in self.servers),
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "config": self.config,
            "path": {"value": self.path, "origin": self.path_origin},
            "exitCode": self.exit_code,
            "summary": self.summary(),
            "servers": [s.to_json() for s in self.servers],
            "mcpSkills": [{"name": name, "from": where} for name, where in self.mcp_skills],
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
    *,
    permissions: Permissions = CODEX_DEFAULTS,
    gateways: frozenset[str] = frozenset(),
) -> DoctorReport:
    """`started`: by name, each enabled server whose start was tried; `extra`: findings
    found before starting (its name, its gateway's .mcp.json); `gateways`: the entries that
    are our gateway."""
    views = {s.name: _view(s, started.get(s.name), extra.get(s.name, [])) for s in servers}
    shown = [s for s in servers if views[s.name].status == "ok"]
    listings = [
        Listing(
            s.name,
            _allowed(s, started[s.name].tools),
            target=views[s.name].target,
            skill_descriptions=started[s.name].skills,
        )
        for s in shown
    ]
    linted = {r.server: r for r in lint_servers(listings, permissions).servers}
    for server in servers:
        view = views[server.name]
        result = started.get(server.name)
        if result is None or result.outcome != "listed":
            continue
        entry = Entry(server.name, server.name in gateways)
        report = linted.get(server.name)
        first: dict[str, ToolReport] = {}
        for tool in report.tools if report is not None else ():
            first.setdefault(tool.tool, tool)  # a name listed twice: Codex shows the first
        view.tools = _tools(server, result.tools, first, lost=view.status != "ok")
        view.skills = list(result.skills)
        if report is not None:
            view.findings += [_from_lint(f, (), entry) for f in report.findings]
            view.findings += _grouped(report.tools, entry)
        view.findings += _filter_findings(server, result.tools)
        view.findings += _children_down(result, view)
        view.findings += _withheld(result, view)
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
        elif name in linted:  # its first definition: never a "duplicate"
            report = linted[name]
            status: ToolStatus = "kept" if report.status == "duplicate" else report.status
            views.append(ToolView(name, report.codex_name, status))
    return views


def _from_lint(finding: Finding, tools: Sequence[ToolReport], entry: Entry) -> DoctorFinding:
    severity: Severity = finding.severity
    fix = fix_for(finding.rule, severity, tools, entry)
    names = tuple(dict.fromkeys(t.tool for t in tools))
    return DoctorFinding(severity, finding.rule, finding.message, finding.source, fix, names)


def _grouped(tools: Sequence[ToolReport], entry: Entry) -> list[DoctorFinding]:
    """One line per kind of finding (rule and message), naming every tool it applies to."""
    by_name = {t.tool: t for t in reversed(tools)}  # the first definition of a name
    return [
        _from_lint(finding, [by_name[name] for name in names], entry)
        for finding, names in repeated_findings(tools)
    ]


def _children_down(result: Started, view: ServerView) -> list[DoctorFinding]:
    """The gateway's children that cannot serve, as its `gateway_status` says (one that
    Codex's PATH does not find is already a finding of its own)."""
    known = view.lost_children
    findings = []
    for child in result.children:
        name, state = str(child.get("name")), str(child.get("state"))
        if state in CHILD_SERVING or name in known:
            continue
        error = child.get("last_error")
        said = f"; last error: {error}" if error else ""
        message = f"child {name!r}: {state}{said}; the gateway serves none of its tools"
        fix = (
            "log in to it with `codex-mcp-client login URL` (gateway_status names it)"
            if state == "needs login"
            else "start its command by hand to see why (its entry in the gateway's .mcp.json)"
        )
        down = DoctorFinding(
            "lost", "gateway-child-down", message, SRC_GATEWAY_STATUS, fix, children=(name,)
        )
        findings.append(down)
    return findings


def _withheld(result: Started, view: ServerView) -> list[DoctorFinding]:
    """The gateway's tools it does not serve because they changed since they were trusted
    (its `gateway_status` says which, and why): Codex will not see them until accepted."""
    named = []
    for child in result.children:
        for item in child.get("withheld") or ():
            if isinstance(item, dict) and item.get("kind") == "tool":
                named.append(f"{child.get('name')}/{item.get('name')}")
                view.tools.append(ToolView(named[-1], None, "withheld"))
    if not named:
        return []
    from codex_mcp.trust.report import FIX  # pinning's words (a deferred use)

    message = "changed since it was trusted (or new where pinning is locked): not served"
    return [DoctorFinding("lost", "withheld", message, SRC_TRUST, FIX, tuple(named))]


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

"""What Codex would do to each tool a server listed (raw JSON), each finding citing its
Codex source. Pure: connecting to servers is cli.py's job."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from codex_mcp.core.log_names import printable

from . import poisoning
from .config import CODEX_SCHEMA_MAX_BYTES
from .definition import definition_problems
from .names import CodexName, codex_names
from .policy import (
    CODEX_DEFAULTS,
    Permissions,
    approval_says,
    model_sees_only_structured_content,
    runs_without_approval,
)
from .schema import codex_parameters

Severity = Literal["lost", "warn", "info"]
#: "duplicate": a second definition of a name, which Codex skips (the first is shown).
Status = Literal["kept", "changed", "duplicate", "dropped", "lost with its server", "withheld"]

SRC_DEFINITION = "codex-rs/codex-mcp/src/rmcp_client.rs (rmcp Tool deserialization)"
SRC_SCHEMA = "codex-rs/tools/src/json_schema.rs: parse_tool_input_schema, sanitize_json_schema"
SRC_SKIP = "codex-rs/core/src/mcp_tool_exposure.rs (Skipping MCP tool)"
SRC_COMPACTION = "codex-rs/tools/src/json_schema/compaction.rs: compact_large_tool_schema"
SRC_NAMES = "codex-rs/codex-mcp/src/tools.rs: normalize_tools_for_model_with_prefix"
SRC_SANITIZE = "codex-rs/codex-mcp/src/mcp/mod.rs: sanitize_responses_api_tool_name"
SRC_APPROVAL = "codex-rs/core/src/mcp_tool_call.rs: requires_mcp_tool_approval"
SRC_RESULT = "codex-rs/protocol/src/models.rs: CallToolResult::as_function_call_output_payload"
SRC_GATEWAY_ROUTING = "codex-mcp gateway, not Codex: specs/gateway.md, Relaying (Which call)"
SRC_PINNING = "codex-mcp gateway, not Codex: specs/trust.md, Pinning"
SRC_STARTUP = "codex-rs/codex-mcp/src/rmcp_client.rs (timed out handshaking; startup_timeout_sec)"
SRC_POISONING = (
    "codex-rs/tools/src/mcp_tool.rs: parse_mcp_tool (the description, whole, to the model)"
)
#: At most this many poisoning findings per tool (then one saying how many more).
MAX_POISONING = 8

#: Why Codex hashed a name (CodexName.changes) -> what the finding says.
#: The name the model sees is in the table (and `codexName`), not in the message, so one
#: line names every tool a reason holds for.
_HASHED = {
    "namespace collision": "another server's name sanitizes to the same namespace: Codex hashes both",
    "collision": "another tool's name sanitizes to the same: Codex hashes both",
    "too long": "namespace + name is over 128 characters: Codex cuts it and adds a hash",
}
_RENAMED = "characters outside [A-Za-z0-9_] become _ (the name the model sees is beside it)"
#: Observed with the CLI 0.169: "timed out handshaking with MCP server after 29.99999955s".
STARTUP_TIMEOUT_SEC = 30.0
FIRST_TURN_SEC = 1.0


@dataclass(frozen=True, slots=True)
class Finding:
    rule: str
    severity: Severity
    message: str
    source: str

    def to_json(self) -> dict[str, str]:
        return asdict(self)


@dataclass
class ToolReport:
    tool: str
    #: What the model sees: `mcp__<server>__<name>` (None when the tool does not reach it).
    codex_name: str | None
    status: Status
    findings: list[Finding] = field(default_factory=list)
    definition: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def lost(self) -> bool:
        return self.status in ("dropped", "lost with its server", "withheld")

    def to_json(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "codexName": self.codex_name,
            "status": self.status,
            "findings": [f.to_json() for f in self.findings],
        }


@dataclass(frozen=True, slots=True)
class Listing:
    """What one server listed, as collected by cli.py (or given by a test)."""

    server: str
    tools: Sequence[Any] = ()
    #: Seconds from spawn/connect to the end of tools/list.
    seconds: float | None = None
    #: Why nothing could be listed (spawn failure, timeout, ...).
    error: str | None = None
    target: str = ""
    schema_max_bytes: int = CODEX_SCHEMA_MAX_BYTES
    #: A shared stdio server that may send messages outside any call (it declares
    #: `logging`, or sent a log message): why, else None.
    speaks_outside_calls: str | None = None
    #: What a gateway sharing it saw it send during calls and could not tie to one
    #: (gateway/asked_record.py): its questions' methods, "logging".
    asked_in_calls: Sequence[str] = ()
    #: The paths of the skills it serves (SEP-2640; specs/skills.md), each with its
    #: description (what Codex would show the model).
    skill_descriptions: Mapping[str, str] = field(default_factory=dict)
    #: The tools a gateway serving it would withhold, changed since they were trusted
    #: (specs/trust.md): the tool's name -> why.
    withheld: Mapping[str, str] = field(default_factory=dict)


@dataclass
class ServerReport:
    server: str
    target: str
    tools: list[ToolReport] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    error: str | None = None
    seconds: float | None = None
    skills: list[str] = field(default_factory=list)

    @property
    def lost(self) -> int:
        return sum(t.lost for t in self.tools)

    def to_json(self) -> dict[str, Any]:
        return {
            "server": self.server,
            "target": self.target,
            "error": self.error,
            "seconds": self.seconds,
            "findings": [f.to_json() for f in self.findings],
            "tools": [t.to_json() for t in self.tools],
            "skills": list(self.skills),
        }


@dataclass
class LintReport:
    servers: list[ServerReport]

    @property
    def tools(self) -> list[ToolReport]:
        return [t for s in self.servers for t in s.tools]

    @property
    def lost(self) -> int:
        return sum(s.lost for s in self.servers)

    @property
    def unreachable(self) -> list[ServerReport]:
        return [s for s in self.servers if s.error is not None]

    @property
    def exit_code(self) -> int:
        """1 when a tool would be lost or a server could not be listed; else 0."""
        return 1 if self.lost or self.unreachable else 0

    def summary(self) -> dict[str, int]:
        tools = self.tools
        return {
            "servers": len(self.servers),
            "unreachable": len(self.unreachable),
            "tools": len(tools),
            "kept": sum(t.status == "kept" for t in tools),
            "changed": sum(t.status == "changed" for t in tools),
            "lost": self.lost,
        }

    def to_json(self) -> dict[str, Any]:
        return {"summary": self.summary(), "servers": [s.to_json() for s in self.servers]}


def lint_servers(
    listings: Sequence[Listing], permissions: Permissions = CODEX_DEFAULTS
) -> LintReport:
    """Every server as Codex would see them configured side by side (namespaces can collide),
    run under `permissions` (Codex's defaults unless its config says otherwise)."""
    readable = [listing for listing in listings if listing.error is None]
    names = _names(readable)
    reports = []
    for listing in listings:
        if listing.error is not None:
            reports.append(ServerReport(listing.server, listing.target, error=listing.error))
        else:
            reports.append(_lint_server(listing, names, permissions))
    return LintReport(reports)


def repeated_findings(tools: Sequence[ToolReport]) -> list[tuple[Finding, tuple[str, ...]]]:
    """Each kind of finding (severity, rule and message) once, with every tool it applies
    to, worst first: a finding that holds for many tools is one line, not one per tool."""
    groups: dict[tuple[str, str, str], tuple[Finding, list[str]]] = {}
    for tool in tools:
        for finding in tool.findings:
            key = (finding.severity, finding.rule, finding.message)
            groups.setdefault(key, (finding, []))[1].append(tool.tool)
    order = {"lost": 0, "warn": 1, "info": 2}
    ranked = sorted(groups.values(), key=lambda group: order.get(group[0].severity, 3))
    return [(finding, tuple(dict.fromkeys(names))) for finding, names in ranked]


def _names(listings: Sequence[Listing]) -> dict[tuple[str, str], CodexName]:
    servers = []
    for listing in listings:
        tools = [t.get("name") for t in listing.tools if isinstance(t, dict)]
        servers.append((listing.server, [name for name in tools if isinstance(name, str)]))
    named: dict[tuple[str, str], CodexName] = {}
    for name in codex_names(servers):
        named.setdefault((name.server, name.tool), name)  # a duplicate keeps the first's name
    return named


def _lint_server(
    listing: Listing, names: dict[tuple[str, str], CodexName], permissions: Permissions
) -> ServerReport:
    report = ServerReport(listing.server, listing.target, seconds=listing.seconds)
    report.skills = list(listing.skill_descriptions)
    _startup(listing, report)
    for path, description in listing.skill_descriptions.items():
        report.findings += [
            Finding("poisoning", "warn", f"skill `{path}` description: {sign}", SRC_POISONING)
            for sign in poisoning.signs(description, poisoning.LONG_SKILL)
        ]
    if listing.asked_in_calls:
        message = (
            f"the gateway saw it send {', '.join(listing.asked_in_calls)} during calls while "
            "several client sessions used it as a shared stdio child: its pipe does not say "
            "which call they are for, so they were refused (its tools failed) or dropped. "
            'Set "per_session": true in its entry to give each session a child of its own'
        )
        report.findings.append(Finding("per-session", "warn", message, SRC_GATEWAY_ROUTING))
    elif listing.speaks_outside_calls is not None:
        message = (
            f"it {listing.speaks_outside_calls}: shared by the gateway over HTTP, a stdio "
            "child's log messages and questions to the client (elicitation, sampling, roots) "
            "carry nothing that says which call they are for (the official SDKs' servers mark "
            "none). The gateway gives them to a call only while one client session has used "
            "the child; once several have, those sent during calls are refused, and those "
            "outside calls always are. If its tools log or ask during calls and several "
            'sessions will use it, or it keeps per-client state, set "per_session": true in '
            "its entry"
        )
        report.findings.append(Finding("per-session", "info", message, SRC_GATEWAY_ROUTING))
    broken = [(i, tool, definition_problems(tool)) for i, tool in enumerate(listing.tools)]
    broken = [(i, tool, problems) for i, tool, problems in broken if problems]
    if broken:
        i, tool, problems = broken[0]
        label = tool.get("name") if isinstance(tool, dict) else None
        which = f"tool {label!r}" if isinstance(label, str) else f"tool #{i + 1}"
        more = f" (and {len(broken) - 1} more tool(s))" if len(broken) > 1 else ""
        message = (
            f"Codex cannot read this server's tools/list: {which}: {'; '.join(problems)}{more}. "
            "Its startup fails and every tool of the server is lost"
        )
        report.findings.append(Finding("server-lost", "lost", message, SRC_DEFINITION))
    seen: set[str] = set()
    for tool in listing.tools:
        if not isinstance(tool, dict):
            continue
        name = tool["name"] if isinstance(tool.get("name"), str) else "?"
        duplicate = name in seen
        seen.add(name)
        linted = _lint_tool(
            tool,
            names.get((listing.server, name)),
            duplicate,
            listing.schema_max_bytes,
            permissions,
        )
        if broken:  # what else Codex would do, once the server is readable (for --fix)
            linted.status, linted.codex_name = "lost with its server", None
        elif name in listing.withheld:
            linted.status, linted.codex_name = "withheld", None
            message = f"{listing.withheld[name]}: the gateway does not serve it"
            linted.findings.append(Finding("withheld", "lost", message, SRC_PINNING))
        report.tools.append(linted)
    return report


def _startup(listing: Listing, report: ServerReport) -> None:
    seconds = listing.seconds
    if seconds is None or seconds <= FIRST_TURN_SEC:
        return
    over = seconds > STARTUP_TIMEOUT_SEC
    message = f"took {seconds:.1f} s to start and list its tools: " + (
        f"over Codex's default startup_timeout_sec ({STARTUP_TIMEOUT_SEC:g} s), Codex gives up on it"
        if over
        else "`codex exec` starts its first turn without the tools of servers still starting "
        "(set `required = true` in config.toml to make it wait)"
    )
    report.findings.append(Finding("slow-start", "warn" if over else "info", message, SRC_STARTUP))


def _lint_tool(
    tool: dict[str, Any],
    name: CodexName | None,
    duplicate: bool,
    budget: int,
    permissions: Permissions,
) -> ToolReport:
    raw_name = str(tool.get("name"))
    qualified = name.qualified if name is not None else None
    if duplicate:  # the model sees the name, and calls the first definition by it
        message = "listed twice: Codex shows and calls the first definition, and skips this one"
        finding = Finding("duplicate", "warn", message, SRC_NAMES)
        return ToolReport(raw_name, qualified, "duplicate", [finding], tool)
    seen = codex_parameters(tool.get("inputSchema"), budget)
    if seen.rejected is not None:
        message = f"Codex skips this tool: its input schema is invalid for Codex ({seen.rejected})"
        finding = Finding("dropped", "lost", message, f"{SRC_SCHEMA}; {SRC_SKIP}")
        return ToolReport(raw_name, None, "dropped", [finding], tool)
    findings = _name_findings(raw_name, name)
    if seen.compacted:
        what = {
            "descriptions": "every parameter description",
            "definitions": "the $defs/definitions (their $refs become {})",
            "deep objects": "objects nested 3 levels deep (become {})",
            "compositions": "anyOf/oneOf/allOf (become {})",
        }
        lost = ", ".join(what[p] for p in seen.compacted)
        message = f"input schema is {seen.size} bytes as Codex measures it (over {budget}): Codex drops {lost}"
        findings.append(Finding("compacted", "warn", message, SRC_COMPACTION))
    findings += [
        Finding("lowered", "warn" if "lost" in c else "info", f"input schema: {c}", SRC_SCHEMA)
        for c in seen.lowered
    ]
    if not runs_without_approval(tool.get("annotations")):
        refused, message = approval_says(permissions)
        severity: Severity = "warn" if refused else "info"
        findings.append(Finding("needs-approval", severity, message, SRC_APPROVAL))
    if model_sees_only_structured_content(tool):
        message = "declares an outputSchema, so its results carry structuredContent: Codex shows the model only that JSON, never the text content"
        findings.append(Finding("structured-only", "info", message, SRC_RESULT))
    findings += _poisoning(tool, seen.parameters)
    changed = any(f.rule in ("renamed", "hashed", "compacted", "lowered") for f in findings)
    return ToolReport(raw_name, qualified, "changed" if changed else "kept", findings, tool)


def _poisoning(tool: dict[str, Any], parameters: dict[str, Any] | None) -> list[Finding]:
    """What the model reads of the tool that a reviewer does not see: in its description, and
    in the parameters as Codex gives them (names, descriptions, enum values), per place."""
    found = [
        Finding("poisoning", "warn", f"{where}: {sign}", SRC_POISONING)
        for where, sign in _hiding_places(tool.get("description"), parameters or {})
    ]
    if len(found) > MAX_POISONING:
        more = f"and {len(found) - MAX_POISONING} more places with hidden text"
        found = [*found[:MAX_POISONING], Finding("poisoning", "warn", more, SRC_POISONING)]
    return found


def _hiding_places(description: Any, schema: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for sign in poisoning.signs(description):
        yield "description", sign
    yield from _schema_places(schema, "")


def _schema_places(schema: Any, at: str) -> Iterator[tuple[str, str]]:
    if not isinstance(schema, dict):
        return
    if at:
        for sign in poisoning.signs(schema.get("description"), poisoning.LONG_PARAMETER):
            yield f"parameter `{at}` description", sign
        for value in schema.get("enum") or ():
            for sign in poisoning.name_signs(value):
                yield f"parameter `{at}` enum value '{printable(value, 40)}'", sign
    for table, prefix in (("properties", ""), ("$defs", "$defs."), ("definitions", "$defs.")):
        for key, child in (schema.get(table) or {}).items():
            inner = f"{at}.{prefix}{key}" if at else f"{prefix}{key}"
            for sign in poisoning.name_signs(key):
                yield f"parameter name `{printable(inner, 60)}`", sign
            yield from _schema_places(child, inner)
    for key in ("items", "additionalProperties"):
        yield from _schema_places(schema.get(key), f"{at}[]" if key == "items" else at)
    for key in ("anyOf", "oneOf", "allOf"):
        for branch in schema.get(key) or ():
            yield from _schema_places(branch, at)


def _name_findings(raw: str, name: CodexName | None) -> list[Finding]:
    if name is None or name.name is None:
        return []
    findings = [
        Finding("hashed", "warn", why, SRC_NAMES)
        for change, why in _HASHED.items()
        if change in name.changes
    ]
    if not findings and "sanitized" in name.changes and name.name != raw:
        findings.append(Finding("renamed", "info", _RENAMED, SRC_SANITIZE))
    return findings

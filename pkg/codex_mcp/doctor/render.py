"""The report as text: a block per server (a line per tool, then a line per kind of finding
with its fix), and a summary line. What a server wrote (tool names, its stderr in an error)
is shown with control characters escaped: it cannot move the cursor or clear the terminal."""

from __future__ import annotations

from typing import TextIO

from codex_mcp.core.log_names import printable as escaped
from codex_mcp.lint.cli import named

from .report import DoctorFinding, DoctorReport, ServerView, ToolView


def printable(text: str) -> str:
    """`text` with every non-printable character as its escape (`\\x1b`, `\\n`), whole."""
    return escaped(text, len(text))


def render(report: DoctorReport, out: TextIO) -> None:
    print(f"Codex config: {report.config}", file=out)
    print(f"PATH for stdio servers ({report.path_origin}): {report.path or '(empty)'}\n", file=out)
    for server in report.servers:
        _server(server, out)
    summary = report.summary()
    line = (
        f"{summary['servers']} server(s), {summary['started']} started; {summary['tools']} tool(s): "
        f"{summary['kept']} shown as they are, {summary['changed']} changed by Codex, "
        f"{summary['lost']} lost"
    )
    if summary["filtered"]:
        line += f", {summary['filtered']} hidden by enabled_tools/disabled_tools"
    not_started = summary["servers"] - summary["started"] - summary["disabled"]
    if not_started:
        line += f"; {not_started} server(s) Codex cannot use"
    if summary["gatewayChildrenLost"]:
        line += f"; {summary['gatewayChildrenLost']} gateway child server(s) Codex will not get"
    if report.mcp_skills:
        shown = ", ".join(printable(f"{name} ({where})") for name, where in report.mcp_skills)
        print(f"MCP skills Codex lists (codex-mcp skills sync): {shown}", file=out)
    print(line, file=out)


def _server(server: ServerView, out: TextIO) -> None:
    head = printable(f"{server.name}  ({server.transport}: {server.target or '-'})")
    if server.status == "ok":
        took = f" in {server.seconds:.2f} s" if server.seconds is not None else ""
        print(f"{head}: {len(server.tools)} tool(s) listed{took}", file=out)
    else:
        print(f"{head}: {server.status.upper()}", file=out)
    if server.skills:
        print(f"  skills: {named([printable(path) for path in server.skills])}", file=out)
    names = [printable(t.tool) for t in server.tools]
    width = max(map(len, names), default=0)
    for tool, name in zip(server.tools, names, strict=True):
        print(f"  {_mark(tool):<8} {name:<{width}}  {tool.codex_name or '-'}", file=out)
    for finding in server.findings:
        _finding(finding, out)
    print(file=out)


def _mark(tool: ToolView) -> str:
    if tool.status == "withheld":
        return "WITHHELD"
    if tool.lost:
        return "LOST"
    return {"kept": "ok", "changed": "changed", "filtered": "hidden"}.get(tool.status, tool.status)


def _finding(finding: DoctorFinding, out: TextIO) -> None:
    tools = f" [{named(finding.tools)}]" if finding.tools else ""
    line = f"  {finding.severity:<5} {finding.rule}{tools}: {finding.message}"
    print(printable(line), file=out)
    if finding.fix:
        print(printable(f"        fix: {finding.fix}"), file=out)

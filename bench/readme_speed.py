"""The README's "## Speed" figures, from one run's report (bench/run.py --readme).

Each table and each "Also in the run" figure is its own `<!-- bench:NAME -->` block, written
only when its case ran (`--only X --readme` leaves the others as they were). Today's rows
only: a `--baseline` row (`codex-mcp @REF`) stays in bench/results/latest.json.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gateway_cases import ONE_CORE
from harness import stamp
from observation_case import LABEL as OBSERVATION
from session_cases import ECHO_LABEL, TM_LABEL

Rows = dict[str, dict[str, Any]]

#: How each server is named in the README (a name not here is shown as the run names it);
#: {mcp}, {fastmcp} and {ts} take the peer's version from the report, when it has one.
STDIO_NAMES = {
    "codex-mcp": "**codex-mcp**",
    "floor": "asyncio + orjson floor",
    "official SDK": "official SDK (`mcp`{mcp})",
    "fastmcp": "fastmcp{fastmcp}",
}
HTTP_NAMES = {
    "codex-mcp": "**codex-mcp**",
    "floor": "bare aiohttp floor",
    "official SDK": "official SDK{mcp}, defaults",
    "official SDK json": "official SDK{mcp}, json_response",
    "fastmcp": "fastmcp{fastmcp}",
    "official TS SDK": "official TypeScript SDK{ts}",
    "official TS SDK json": "official TypeScript SDK{ts}, JSON responses",
}
GATEWAY_NAMES = {
    "relay floor": "relay floor (copies bytes, parses nothing)",
    "codex-mcp gateway": "**codex-mcp gateway**",
    "fastmcp proxy": "fastmcp{fastmcp} `create_proxy`",
}


def _named(names: dict[str, str], name: str, report: dict[str, Any]) -> str:
    versions = report.get("versions", {})
    return names.get(name, name).format(
        **{key: f" {versions[key]}" if key in versions else "" for key in ("mcp", "fastmcp", "ts")}
    )


def _today(rows: Rows) -> Rows:
    return {name: figures for name, figures in rows.items() if " @" not in name}


def _cell(value: Any, spec: str, unit: str = "") -> str:
    return "-" if not isinstance(value, int | float) else f"{value:{spec}}{unit}"


def _share(value: Any) -> str:
    """A ratio: two decimals, or one significant digit below 0.05 (0.004, not 0.00)."""
    if not isinstance(value, int | float):
        return "-"
    return f"{value:.2f}" if value >= 0.05 else f"{value:.1g}"


def stdio_table(report: dict[str, Any]) -> str | None:
    rows = report["cases"].get("stdio echo")
    if rows is None:
        return None
    rows = _today(rows)
    in_flight = next((f["in_flight"] for f in rows.values() if f.get("in_flight")), 32)
    lines = [
        stamp(report),
        f"| stdio, echo tool | p50 | calls/s ({in_flight} in flight) | cold start | RSS |",
        "|---|---|---|---|---|",
    ]
    for name, f in rows.items():
        lines.append(
            f"| {_named(STDIO_NAMES, name, report)} | {_cell(f.get('p50_ms'), '.2f', ' ms')} "
            f"| {_cell(f.get('throughput_per_s'), ',.0f')} "
            f"| {_cell(f.get('cold_start_ms'), '.0f', ' ms')} | {_cell(f.get('rss_mb'), '.0f', ' MB')} |"
        )
    return "\n".join(lines)


def _sessions_case(report: dict[str, Any]) -> tuple[str, Rows] | None:
    for label, rows in report["cases"].items():
        if label.startswith("HTTP ") and label.endswith(" concurrent sessions"):
            return label.split()[1], rows
    return None


def http_table(report: dict[str, Any]) -> str | None:
    echo = report["cases"].get("HTTP echo")
    many = _sessions_case(report)
    if echo is None and many is None:
        return None
    echo = _today(echo or {})
    count, sessions = many if many else ("1000", {})
    sessions = _today(sessions)
    concurrency = next((f["concurrency"] for f in echo.values() if f.get("concurrency")), 32)
    lines = [
        stamp(report),
        f"| HTTP, echo tool | p50 | calls/s ({concurrency} clients) | idle session "
        f"| {int(count):,} sessions: calls/s |",
        "|---|---|---|---|---|",
    ]
    for name in [*echo, *(name for name in sessions if name not in echo)]:
        e, s = echo.get(name, {}), sessions.get(name, {})
        lines.append(
            f"| {_named(HTTP_NAMES, name, report)} | {_cell(e.get('p50_ms'), '.2f', ' ms')} "
            f"| {_cell(e.get('throughput_per_s'), ',.0f')} "
            f"| {_cell(s.get('rss_kb_per_idle_session'), '.1f', ' KB')} "
            f"| {_cell(s.get('calls_per_s'), ',.0f')} |"
        )
    return "\n".join(lines)


def gateway_table(report: dict[str, Any]) -> str | None:
    rows = report["cases"].get("stdio gateway echo")
    if rows is None:
        return None
    lines = [
        stamp(report),
        "| stdio, through a proxy to our echo server | p50 | added p50 | calls/s | of direct |",
        "|---|---|---|---|---|",
    ]
    for name, f in _today(rows).items():
        added = None if name == "direct" else f.get("added_p50_us")
        lines.append(
            f"| {_named(GATEWAY_NAMES, name, report)} | {_cell(f.get('p50_ms'), '.2f', ' ms')} "
            f"| {_cell(added, '+,.0f', ' µs')} | {_cell(f.get('throughput_per_s'), ',.0f')} "
            f"| {_share(f.get('x_direct_throughput'))} |"
        )
    return "\n".join(lines)


def _ms(rows: Rows, name: str) -> str:
    return _cell(rows.get(name, {}).get("p50_ms"), ".2f", " ms")


def _blob(rows: Rows) -> str:
    return f"{_ms(rows, 'codex-mcp')} p50, the official SDK {_ms(rows, 'official SDK')}"


def _http_list(rows: Rows) -> str:
    ours = rows.get("codex-mcp", {})
    return (
        f"{_ms(rows, 'codex-mcp')} p50, the aiohttp floor {_ms(rows, 'floor')} "
        f"({_cell(ours.get('x_floor_p50'), '.2f', 'x')})"
    )


def _progress(rows: Rows) -> str:
    rate = rows.get("codex-mcp", {}).get("notifications_per_s")
    return f"{_cell(rate, ',.0f')} per second"


def _large(rows: Rows) -> str:
    f = rows.get("codex-mcp gateway", {})
    largest = max((int(k[3:-2]) for k in f if k.startswith("ms_") and k.endswith("mb")), default=0)
    return (
        f"{largest} MB through the gateway took {_cell(f.get('x_per_mb_largest'), '.2f', 'x')} "
        f"the time per MB of 1 MB ({_cell(f.get('x_cpu_per_mb_largest'), '.2f', 'x')} by CPU "
        "against 10 MB; about 1 is linear)"
    )


def _one_core(rows: Rows) -> str:
    f = rows.get("codex-mcp gateway", {})
    return (
        f"{_cell(f.get('x_relay_floor'), '.2f')} of the relay floor's throughput "
        f"({_cell(f.get('x_relay_floor_cpu'), '.2f')} by the CPU the three processes spend per "
        "call)"
    )


def _added_us(rows: Rows, name: str, key: str) -> str:
    """A row's added cost, in signed microseconds (`+55 µs`)."""
    return _cell(rows.get(name, {}).get(key), "+,.0f", " µs")


def _observation(rows: Rows) -> str:
    metrics = _added_us(rows, "metrics (default)", "added_cpu_us_per_call")
    tracing = _added_us(rows, "metrics, tracing exported", "added_cpu_us_per_call")
    return (
        f"metrics {metrics}, metrics and exported tracing {tracing} of server CPU per call "
        "over `--no-metrics`"
    )


def _gateway_added(rows: Rows) -> str:
    ours = _added_us(rows, "codex-mcp gateway", "added_p50_us")
    fastmcp = _added_us(rows, "fastmcp proxy", "added_p50_us")
    return f"adds {ours} at p50 to a direct call (fastmcp's proxy adds {fastmcp})"


def _session_per_call(rows: Rows) -> str:
    def rate(name: str) -> str:
        return _cell(rows.get(name, {}).get("requests_per_s"), ",.0f")

    return (
        f"codex-mcp {rate('codex-mcp')} requests/s ({rate('codex-mcp, Redis')} with its "
        f"sessions on Redis), the official SDK {rate('official SDK')}"
    )


#: The figures quoted in running text (the "Also in the run" list, and the gateway's overhead in
#: the README's gateway section): block name, case, and the words from that case's rows.
ALSO: list[tuple[str, str, Callable[[Rows], str]]] = [
    ("also-stdio-1mb", "stdio 1 MB result", _blob),
    ("also-stdio-list", "stdio tools/list, 500 tools", _blob),
    ("also-http-list", "HTTP tools/list, 1,000 tools", _http_list),
    ("also-progress", "progress over SSE", _progress),
    ("also-gateway-large", "stdio gateway large results", _large),
    ("also-gateway-one-core", ONE_CORE, _one_core),
    ("gateway-added", "stdio gateway echo", _gateway_added),
    ("also-observation", OBSERVATION, _observation),
    ("also-session-per-call", ECHO_LABEL, _session_per_call),
]


def speed_blocks(report: dict[str, Any]) -> list[tuple[str, str]]:
    """(block name, text) for every README block whose case ran in this report's run."""
    blocks = [
        (name, text)
        for name, text in (
            ("speed-stdio", stdio_table(report)),
            ("speed-http", http_table(report)),
            ("speed-gateway", gateway_table(report)),
        )
        if text is not None
    ]
    cases = report["cases"]
    blocks += [(name, words(cases[case])) for name, case, words in ALSO if case in cases]
    if blocks or TM_LABEL in cases:  # the TM table is written beside these (run.py)
        blocks.append(
            (
                "speed-run",
                f"{report['date']} on {report['machine']}, {report['machine_note']}",
            )
        )
    return blocks

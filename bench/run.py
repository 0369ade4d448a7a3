"""The benchmark suite: our servers beside the peers and the floors, in one run.

    python bench/run.py [--quick] [--skip-install] [--baseline REF] [--only CASES] [--servers NAMES]

Every figure is measured on this machine in this run, so ratios are what count.
`--baseline REF` adds codex-mcp as it was at git REF (a commit, a branch, or a checkout's
path) beside today's: the before and after of a change, in the same run.
Peers are installed by the suite itself into bench/.venv-sdk, bench/.venv-fastmcp and
(the TypeScript SDK, when npm is there) bench/.node-sdk. The scale cases start their own
redis-server (skipped when it is not installed).
Results: a table on stdout and bench/results/latest.json. Targets are printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from codex_mcp.bench import http_load, stdio_load
from codex_mcp.bench.cli import format_table
from gateway_cases import ONE_CORE, large_results, one_core
from harness import (
    BENCH,
    ECHO,
    PY,
    ROOT,
    cold_starts,
    compiled,
    http_server,
    median_of,
    stamp,
    write_block,
)
from observation_case import LABEL as OBSERVATION
from observation_case import observation_case
from readme_speed import speed_blocks
from scale_cases import scale_cases, scale_markdown
from session_cases import ECHO_LABEL, TM_LABEL, install_tm_peer, session_cases
from soak_case import LABEL as SOAK
from soak_case import soak_case

SDK_PY = str(BENCH / ".venv-sdk/bin/python")
FASTMCP_PY = str(BENCH / ".venv-fastmcp/bin/python")
NODE_SDK = BENCH / ".node-sdk"
EXAMPLES = str(ROOT / "examples/everything_server.py")
BLOB = {"name": "blob", "arguments": {"size": 1_000_000}}


@dataclass
class Server:
    name: str
    stdio: list[str] | None = None
    #: Command for HTTP with "{port}" to fill in; serves POST /mcp.
    http: list[str] | None = None
    sessions: bool = True
    #: Extra environment (the baseline's PYTHONPATH).
    env: dict[str, str] = field(default_factory=dict)


SERVERS = [
    Server(
        "codex-mcp", [PY, str(ROOT / "cmd/mcp")], [PY, str(ROOT / "cmd/http"), "--port", "{port}"]
    ),
    Server(
        "floor",
        [PY, str(BENCH / "floors/stdio_floor.py")],
        [PY, str(BENCH / "floors/http_floor.py"), "{port}"],
        sessions=False,
    ),
    Server(
        "official SDK",
        [SDK_PY, str(BENCH / "peers/sdk_echo.py"), "stdio"],
        [SDK_PY, str(BENCH / "peers/sdk_echo.py"), "http", "{port}"],
    ),
    Server(
        "official SDK json", None, [SDK_PY, str(BENCH / "peers/sdk_echo.py"), "http-json", "{port}"]
    ),
    Server(
        "fastmcp",
        [FASTMCP_PY, str(BENCH / "peers/fastmcp_echo.py"), "stdio"],
        [FASTMCP_PY, str(BENCH / "peers/fastmcp_echo.py"), "http", "{port}"],
    ),
    Server("official TS SDK", None, ["node", str(NODE_SDK / "ts_echo.mjs"), "{port}"]),
    Server("official TS SDK json", None, ["node", str(NODE_SDK / "ts_echo.mjs"), "{port}", "json"]),
]

# The gateway case: the same child (our echo server) called directly, through the relay floor
# (a proxy that only copies bytes: what any relay costs, a third process and its pipe hops),
# through codex-mcp as a gateway (`codex-mcp -- <child>`, passthrough: the tool keeps its
# name), and through fastmcp's proxy (`create_proxy`), each a stdio server driven the same way.
GATEWAY_CHILD = [PY, str(ROOT / "cmd/mcp")]
GATEWAY_SERVERS = [
    Server("direct", GATEWAY_CHILD),
    Server("relay floor", [PY, str(BENCH / "floors/stdio_relay_floor.py"), *GATEWAY_CHILD]),
    Server("codex-mcp gateway", [PY, str(ROOT / "cmd/mcp"), "--", *GATEWAY_CHILD]),
    Server("fastmcp proxy", [FASTMCP_PY, str(BENCH / "peers/fastmcp_proxy.py"), *GATEWAY_CHILD]),
]


#: Every case's name (`--only` takes a name exactly, or a word of several names).
CASE_NAMES = frozenset(
    {
        "stdio echo",
        "stdio 1 MB result",
        "stdio tools/list, 500 tools",
        "HTTP echo",
        "HTTP tools/list, 1,000 tools",
        "HTTP echo, observation on and off",
        "HTTP 200 concurrent sessions",
        "HTTP 1000 concurrent sessions",
        "progress over SSE",
        "stdio gateway echo",
        ONE_CORE,
        "stdio gateway large results",
        "HTTP echo, workers and Redis",
        "Redis round trip",
        "Redis topologies",
        ECHO_LABEL,
        TM_LABEL,
        SOAK,
    }
)


#: The cases whose servers' cold starts are taken again, in turn (harness.cold_starts).
COLD_START_CASES = frozenset({"stdio echo", "HTTP echo", "stdio gateway echo"})


def interleaved_cold_starts(
    rows: list[tuple[str, dict[str, Any]]], servers: list[Server], http: bool, quick: bool
) -> None:
    """Each row's cold start, taken again with the case's servers started in turn (3 rounds,
    7 without --quick), so the ratio to the floor's is of one moment's load."""
    measured = dict(rows)
    started = [
        (s.name, (s.http if http else s.stdio) or [], env_with(s))
        for s in servers
        if s.name in measured
    ]
    for name, (ms, cpu) in cold_starts(started, 3 if quick else 7, http).items():
        measured[name]["cold_start_ms"] = ms
        if cpu is not None:
            measured[name]["cold_start_cpu_ms"] = cpu


def gateway_figures(rows: list[tuple[str, dict[str, Any]]]) -> None:
    """Each row's cost over the direct call: added p50 (us), share of direct throughput, and
    share of the relay floor's."""
    direct = dict(rows).get("direct")
    floor = dict(rows).get("relay floor")
    if not direct:
        return
    for _, figures in rows:
        if floor and floor.get("throughput_per_s") and figures.get("throughput_per_s"):
            figures["x_relay_floor"] = figures["throughput_per_s"] / floor["throughput_per_s"]
        if figures.get("p50_ms") is not None and direct.get("p50_ms") is not None:
            figures["added_p50_us"] = (figures["p50_ms"] - direct["p50_ms"]) * 1000
        if figures.get("throughput_per_s") and direct.get("throughput_per_s"):
            figures["x_direct_throughput"] = (
                figures["throughput_per_s"] / direct["throughput_per_s"]
            )


def baseline_gateway(baseline: Server) -> Server:
    """The gateway as it was at the baseline, relaying to today's child (the same child as
    every other row: the baseline's PYTHONPATH is not passed on to it)."""
    assert baseline.stdio is not None
    child = ["/usr/bin/env", "-u", "PYTHONPATH", *GATEWAY_CHILD]
    name = baseline.name.replace("codex-mcp", "codex-mcp gateway", 1)
    return Server(name, [*baseline.stdio, "--", *child], env=baseline.env)


def install_peers() -> None:
    for venv, packages in (
        (BENCH / ".venv-sdk", ["mcp", "uvicorn"]),
        (BENCH / ".venv-fastmcp", ["fastmcp"]),
    ):
        if not (venv / "bin/python").exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            subprocess.run([str(venv / "bin/pip"), "install", "-q", *packages], check=True)
    if shutil.which("npm") is None:
        print("  npm not found: the TypeScript SDK peer is skipped", file=sys.stderr)
        return
    NODE_SDK.mkdir(exist_ok=True)
    if not (NODE_SDK / "node_modules/@modelcontextprotocol/sdk").exists():
        (NODE_SDK / "package.json").write_text('{"name":"codex-mcp-bench-peers","private":true}')
        subprocess.run(
            [
                "npm",
                "install",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                "@modelcontextprotocol/sdk",
            ],
            cwd=NODE_SDK,
            check=True,
        )
    # Node resolves the SDK from the script's own directory.
    shutil.copy(BENCH / "peers/ts_echo.mjs", NODE_SDK / "ts_echo.mjs")


def peer_versions() -> dict[str, str]:
    """The installed peers' versions (major.minor), for the README's names of them."""
    found = {}
    for key, python in (("mcp", SDK_PY), ("fastmcp", FASTMCP_PY)):
        if Path(python).exists():
            code = f"import importlib.metadata as m; print(m.version({key!r}))"
            done = subprocess.run([python, "-c", code], capture_output=True, text=True)
            if done.returncode == 0:
                found[key] = ".".join(done.stdout.strip().split(".")[:2])
    package = NODE_SDK / "node_modules/@modelcontextprotocol/sdk/package.json"
    if package.exists():
        found["ts"] = ".".join(json.loads(package.read_text())["version"].split(".")[:2])
    return found


def env_with(server: Server | None = None, **extra: str) -> dict[str, str]:
    return {**os.environ, **(server.env if server else {}), **extra}


def baseline_server(ref: str) -> Server:
    """codex-mcp at `ref`: a checkout's path, or a detached git worktree of that commit."""
    path = Path(ref)
    if not path.is_dir():
        path = Path(tempfile.mkdtemp(prefix="codex-mcp-baseline-")) / "tree"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--quiet", "--detach", str(path), ref],
            check=True,
        )
        # Gone with the run: each run used to leave its baseline worktree registered.
        atexit.register(
            subprocess.run,
            ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(path)],
            check=False,
        )
    compiled(path)
    label = f"codex-mcp @{ref if len(ref) < 12 else ref[:10]}"
    return Server(
        label,
        [PY, str(path / "cmd/mcp")],
        [PY, str(path / "cmd/http"), "--port", "{port}"],
        env={"PYTHONPATH": str(path / "pkg")},
    )


def run_case(
    label: str, servers: list[Server], fn: Callable[[Server], dict[str, Any] | None]
) -> list[tuple[str, dict[str, Any]]]:
    rows = []
    for server in servers:
        print(f"  {label}: {server.name} ...", file=sys.stderr, flush=True)
        try:
            figures = fn(server)
        except Exception as exc:  # a peer that fails is reported, not fatal
            print(f"    skipped {server.name}: {exc}", file=sys.stderr)
            continue
        if figures is not None:
            rows.append((server.name, figures))
    return rows


def ratios(rows: list[tuple[str, dict[str, Any]]], floor: str = "floor") -> None:
    base = dict(rows).get(floor)
    if not base:
        return
    for _, figures in rows:
        if base.get("throughput_per_s") and figures.get("throughput_per_s"):
            figures["x_floor_throughput"] = figures["throughput_per_s"] / base["throughput_per_s"]
        if base.get("p50_ms") and figures.get("p50_ms"):
            figures["x_floor_p50"] = figures["p50_ms"] / base["p50_ms"]
        for key in ("cold_start_ms", "cold_start_cpu_ms"):
            if base.get(key) and figures.get(key):
                ratio = "x_floor_" + key.removesuffix("_ms")
                figures[ratio] = figures[key] / base[key]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="one run per case, fewer calls (~5 min)"
    )
    parser.add_argument("--skip-install", action="store_true", help="don't install the peers")
    parser.add_argument(
        "--readme",
        action="store_true",
        help="write the generated figures of the cases run: the README's Speed tables and "
        "figures (TM Dev Lab v2 rows included) and specs/scale.md's workers and Redis figures",
    )
    parser.add_argument(
        "--baseline", metavar="REF", help="also run codex-mcp as it was at this git ref or path"
    )
    parser.add_argument(
        "--only",
        metavar="CASES",
        help="run only the cases whose names contain one of these comma-separated words "
        "(e.g. 'stdio echo,HTTP echo', 'workers,round trip')",
    )
    parser.add_argument(
        "--servers",
        metavar="NAMES",
        help="run only the servers whose names contain one of these comma-separated words",
    )
    parser.add_argument(
        "--soak-seconds",
        type=float,
        metavar="S",
        help="how long the soak case runs (default: 60 with --quick, else 120; 600 for the "
        "ten-minute form)",
    )
    options = parser.parse_args()
    wanted = [w.strip() for w in (options.only or "").split(",") if w.strip()]
    named = [w.strip() for w in (options.servers or "").split(",") if w.strip()]

    def chosen(label: str) -> bool:
        """A word names the case it equals, else every case whose name contains it."""
        return not wanted or any(
            word == label or (word not in CASE_NAMES and word in label) for word in wanted
        )

    if not options.skip_install:
        install_peers()
        if chosen(TM_LABEL):
            install_tm_peer()
    compiled(ROOT)
    runs = 1 if options.quick else 3
    calls = 5000 if options.quick else 20000
    cap = 8.0 if options.quick else 20.0
    sessions = 200 if options.quick else 1000
    report: dict[str, Any] = {
        "date": date.today().isoformat(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "machine_note": f"medians of {runs} runs" if runs > 1 else "single runs, --quick",
        "versions": peer_versions(),
        "cases": {},
    }
    servers = list(SERVERS)
    gateway_servers = list(GATEWAY_SERVERS)
    baseline = baseline_server(options.baseline) if options.baseline else None
    if baseline is not None:
        servers.insert(1, baseline)
        gateway_servers.insert(3, baseline_gateway(baseline))
    if named:
        servers = [s for s in servers if any(word in s.name for word in named)]
    stdio_servers = [s for s in servers if s.stdio]
    http_servers = [s for s in servers if s.http]

    def stdio_echo(s: Server) -> dict[str, Any]:
        return median_of(
            runs,
            lambda: asyncio.run(
                stdio_load.measure(
                    s.stdio or [], params=ECHO, calls=calls, max_seconds=cap, env=env_with(s)
                )
            ),
        )

    def stdio_blob(s: Server) -> dict[str, Any]:
        env = env_with(s, CODEX_MCP_BENCH_TOOLS="1")
        return asyncio.run(
            stdio_load.measure(
                s.stdio or [],
                params=BLOB,
                sequential=30,
                calls=100,
                in_flight=4,
                max_seconds=cap,
                env=env,
            )
        )

    def stdio_list(s: Server) -> dict[str, Any]:
        env = env_with(s, CODEX_MCP_BENCH_TOOLS="500")
        return asyncio.run(
            stdio_load.measure(
                s.stdio or [],
                method="tools/list",
                sequential=100,
                calls=200,
                in_flight=4,
                max_seconds=cap,
                env=env,
            )
        )

    def http_echo(s: Server) -> dict[str, Any]:
        def once() -> dict[str, Any]:
            with http_server(s.http or [], env_with(s)) as (url, pid, cold):
                figures = asyncio.run(
                    http_load.measure(url, params=ECHO, calls=calls, max_seconds=cap, pid=pid)
                )
                return {"cold_start_ms": cold * 1000, **figures}

        return median_of(runs, once)

    def http_list(s: Server) -> dict[str, Any]:
        env = env_with(s, CODEX_MCP_BENCH_TOOLS="1000")
        with http_server(s.http or [], env) as (url, pid, _):
            return asyncio.run(
                http_load.measure(
                    url,
                    method="tools/list",
                    sequential=100,
                    calls=400 if options.quick else 2000,
                    concurrency=4,
                    max_seconds=cap,
                    pid=pid,
                )
            )

    def http_sessions(s: Server) -> dict[str, Any] | None:
        if not s.sessions:
            return None
        with http_server(s.http or [], env_with(s)) as (url, pid, _):
            return asyncio.run(http_load.many_sessions(url, sessions=sessions, pid=pid))

    cases = {  # the names are in CASE_NAMES too
        "stdio echo": (stdio_servers, stdio_echo),
        "stdio 1 MB result": (stdio_servers, stdio_blob),
        "stdio tools/list, 500 tools": (stdio_servers, stdio_list),
        "HTTP echo": (http_servers, http_echo),
        "HTTP tools/list, 1,000 tools": (http_servers, http_list),
        f"HTTP {sessions} concurrent sessions": (http_servers, http_sessions),
        "stdio gateway echo": (gateway_servers, stdio_echo),
    }
    for label, (case_servers, fn) in cases.items():
        if not chosen(label):
            continue
        rows = run_case(label, case_servers, fn)
        if label in COLD_START_CASES:
            interleaved_cold_starts(
                rows, case_servers, http=label.startswith("HTTP"), quick=options.quick
            )
        ratios(rows, "floor")
        if label == "stdio gateway echo":
            gateway_figures(rows)
        report["cases"][label] = dict(rows)
        print(f"\n## {label}\n{format_table(rows)}", flush=True)

    if chosen(ONE_CORE):
        pinned = [(s.name, s.stdio or [], env_with(s)) for s in gateway_servers]
        rows = one_core(
            [p for p in pinned if "fastmcp" not in p[0]], rounds=5 if options.quick else 9
        )
        report["cases"][ONE_CORE] = dict(rows)
        print(f"\n## {ONE_CORE}\n{format_table(rows)}", flush=True)

    if chosen("stdio gateway large results"):
        label = "stdio gateway large results"
        large = [(s.name, s.stdio or [], s.env) for s in gateway_servers if "fastmcp" not in s.name]
        rows = large_results(large, quick=options.quick)
        report["cases"][label] = dict(rows)
        print(f"\n## {label}\n{format_table(rows)}", flush=True)

    if chosen("progress over SSE"):
        ours_progress = Server(
            "codex-mcp (examples)",
            http=[PY, str(ROOT / "cmd/http"), "--port", "{port}", "--serve", EXAMPLES],
        )
        with http_server(ours_progress.http or [], env_with()) as (url, _, _):
            progress = asyncio.run(http_load.progress_rate(url, 2000 if options.quick else 10000))
        report["cases"]["progress over SSE"] = {"codex-mcp": progress}
        print(f"\n## progress notifications over SSE\n{format_table([('codex-mcp', progress)])}")

    if chosen(SOAK):
        soak_seconds = options.soak_seconds or (60.0 if options.quick else 120.0)
        soaked = [
            (s.name, s.http or [], env_with(s))
            for s in servers
            if s.name.startswith("codex-mcp") and s.http
        ]
        rows = soak_case(soak_seconds, soaked)
        report["cases"][SOAK] = dict(rows)
        print(f"\n## {SOAK}\n{format_table(rows)}", flush=True)

    if chosen(OBSERVATION):
        rows = observation_case(runs, calls, cap)
        report["cases"][OBSERVATION] = dict(rows)
        print(f"\n## {OBSERVATION}\n{format_table(rows)}", flush=True)

    before = next((s for s in servers if s.name.startswith("codex-mcp @") and s.http), None)
    scale_baseline = (
        (before.name.removeprefix("codex-mcp "), before.http or [], before.env) if before else None
    )
    for label, rows in scale_cases(
        chosen, runs=runs, calls=calls, cap=cap, baseline=scale_baseline
    ):
        report["cases"][label] = dict(rows)
        print(f"\n## {label}\n{format_table(rows)}", flush=True)
        block, table = scale_markdown(label, rows, report)
        if options.readme:  # specs/scale.md holds the scale figures; the README points there
            write_block(ROOT / "specs/scale.md", block, table)

    if chosen("Redis topologies"):  # one Redis, Sentinel, a Cluster (the tests' servers)
        from topology_case import LABEL, topology_case, topology_markdown

        rows = topology_case(runs, calls, cap)
        report["cases"][LABEL] = dict(rows)
        print(f"\n## {LABEL}\n{format_table(rows)}", flush=True)
        if options.readme and rows:
            table = topology_markdown(rows, stamp(report))
            write_block(ROOT / "specs/scale.md", "scale-topologies", table)

    with_sessions = [s for s in http_servers if s.sessions]
    for label, rows in session_cases(
        chosen, runs=runs, quick=options.quick, echo_servers=with_sessions
    ):
        report["cases"][label] = dict(rows)
        print(f"\n## {label}\n{format_table(rows)}", flush=True)
        if label == TM_LABEL:
            table = tm_markdown(rows, report)
            print(f"\nREADME rows ({'written' if options.readme else '--readme writes them'}):")
            print(table)
            if options.readme:
                write_block(ROOT / "README.md", "tm-v2", table)

    print("\n## targets (ratios measured in this run)")
    ours_stdio = report["cases"].get("stdio echo", {}).get("codex-mcp", {})
    ours_http = report["cases"].get("HTTP echo", {}).get("codex-mcp", {})
    gateway = report["cases"].get("stdio gateway echo", {}).get("codex-mcp gateway", {})
    checks = [
        (
            "stdio throughput >= 2/3 of floor",
            ours_stdio.get("x_floor_throughput"),
            lambda v: v >= 2 / 3,
        ),
        ("stdio p50 <= 1.5x floor", ours_stdio.get("x_floor_p50"), lambda v: v <= 1.5),
        (
            "HTTP throughput >= 2/3 of aiohttp floor",
            ours_http.get("x_floor_throughput"),
            lambda v: v >= 2 / 3,
        ),
        ("cold start < 200 ms (stdio)", ours_stdio.get("cold_start_ms"), lambda v: v < 200),
        (
            "HTTP cold start <= 1.3x aiohttp floor",
            ours_http.get("x_floor_cold_start"),
            lambda v: v <= 1.3,
        ),
        (
            "  (its CPU to the first answer, x the floor's)",
            ours_http.get("x_floor_cold_start_cpu"),
            lambda v: v <= 1.3,
        ),
        ("RSS < 35 MB (stdio, after the run)", ours_stdio.get("rss_mb"), lambda v: v < 35),
        ("gateway: added p50 < 250 us", gateway.get("added_p50_us"), lambda v: v < 250),
        (
            "gateway: throughput >= 1/2 of direct",
            gateway.get("x_direct_throughput"),
            lambda v: v >= 0.5,
        ),
        (
            "gateway on one core: throughput >= 0.9 of the relay floor's",
            report["cases"].get(ONE_CORE, {}).get("codex-mcp gateway", {}).get("x_relay_floor"),
            lambda v: v >= 0.9,
        ),
        (
            "  (by the CPU of all three per call)",
            report["cases"].get(ONE_CORE, {}).get("codex-mcp gateway", {}).get("x_relay_floor_cpu"),
            lambda v: v >= 0.9,
        ),
        (
            "  (by the CPU of the relay and its child alone)",
            report["cases"]
            .get(ONE_CORE, {})
            .get("codex-mcp gateway", {})
            .get("x_relay_floor_server_cpu"),
            lambda v: v >= 0.9,
        ),
        (
            "  (the relay floor's share of direct, for scale)",
            report["cases"]
            .get("stdio gateway echo", {})
            .get("relay floor", {})
            .get("x_direct_throughput"),
            lambda v: True,
        ),
    ]
    for name, value, ok in checks:
        if value is None and options.only:
            continue  # a case not run
        verdict = "n/a" if value is None else ("met" if ok(value) else "MISSED")
        shown = "-" if value is None else f"{value:.2f}"
        print(f"  {name:45s} {shown:>10s}  {verdict}")
    if baseline is not None:  # named here: --servers may have left it out of `servers`
        print_before_after(report, baseline.name)
    if options.readme:  # each of the README's Speed blocks whose case ran
        for block, text in speed_blocks(report):
            write_block(ROOT / "README.md", block, text)
    out = BENCH / "results"
    out.mkdir(exist_ok=True)
    (out / "latest.json").write_text(json.dumps(report, indent=2))
    print(
        f"\n{report['machine']}, {report['date']}, {report['machine_note']}; JSON in {out / 'latest.json'}"
    )
    return 0


def print_before_after(report: dict[str, Any], before: str) -> None:
    """Each case's figures for the baseline and for today's codex-mcp (or its gateway), side
    by side."""
    print(f"\n## before ({before}) and after (codex-mcp), same run")
    keys = (
        "throughput_per_s", "requests_per_s", "sessions_per_s", "p50_ms", "p99_ms",
        "x_floor_throughput", "x_floor_p50", "cpu_us_per_call", "cpu_us_per_request",
        "added_p50_us", "x_relay_floor", "x_relay_floor_cpu", "x_relay_floor_server_cpu", "core_cpu_us_per_call", "ms_1mb", "ms_10mb", "ms_50mb", "x_per_mb_largest",
        "cold_start_ms", "x_floor_cold_start", "cold_start_cpu_ms", "x_floor_cold_start_cpu", "rss_mb", "rss_kb_per_idle_session",
    )  # fmt: skip
    gateway_before = before.replace("codex-mcp", "codex-mcp gateway", 1)
    for case, rows in report["cases"].items():
        old, new = rows.get(before), rows.get("codex-mcp")
        if not old or not new:
            old, new = rows.get(gateway_before), rows.get("codex-mcp gateway")
        if not old or not new:
            continue
        shown = [
            f"{key} {old[key]:.3g} -> {new[key]:.3g}"
            for key in keys
            if isinstance(old.get(key), int | float) and isinstance(new.get(key), int | float)
        ]
        print(f"  {case}: " + "; ".join(shown))


def tm_markdown(rows: list[tuple[str, dict[str, Any]]], report: dict[str, Any]) -> str:
    """The README's TM Dev Lab v2 table, from this run's figures."""
    lines = [
        stamp(report),
        "| TM Dev Lab v2 workload, session per call, 50 users | requests/s | tool call p50 | p99 "
        "| CPU per request | RSS | of the SDK's |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, f in rows:
        shown = f"**{name}**" if name.startswith("codex-mcp") else name
        ratio = f.get("x_official_sdk")
        lines.append(
            f"| {shown} | {f['requests_per_s']:,.0f} | {f['p50_ms']:.1f} ms | {f['p99_ms']:.1f} ms "
            f"| {f['cpu_us_per_request']:,.0f} µs | {f['rss_mb']:.0f} MB "
            f"| {'-' if ratio is None else f'{ratio:.2f}'} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())

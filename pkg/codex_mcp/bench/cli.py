"""`codex-mcp-bench`: point a neutral load generator at any MCP server.

codex-mcp-bench stdio [options] -- COMMAND ARGS...
codex-mcp-bench http [options] URL
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

import orjson

from . import http_load, stdio_load


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="codex-mcp-bench", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="transport", required=True)
    for name in ("stdio", "http"):
        p = sub.add_parser(name)
        p.add_argument("--tool", default="echo", help="tool to call (default echo)")
        p.add_argument("--args", default='{"message":"hello"}', help="tool arguments as JSON")
        p.add_argument("--method", default="tools/call", help="or tools/list, ping")
        p.add_argument("--sequential", type=int, default=1000, help="sequential calls for latency")
        p.add_argument("--calls", type=int, default=10000, help="calls for throughput")
        p.add_argument("--concurrency", type=int, default=32, help="in flight / concurrent clients")
        p.add_argument("--max-seconds", type=float, default=30.0, help="time cap per phase")
        p.add_argument("--json", dest="json_out", help="also write the figures to this file")
        p.add_argument("--pid", type=int, help="(http) server pid, for CPU and RSS figures")
        if name == "stdio":
            p.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND ARGS...")
        else:
            p.add_argument("url")
    return parser


def _progress(done: int, total: int) -> None:
    if sys.stderr.isatty():
        print(f"\r  {done}/{total} calls", end="", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    options = _parser().parse_args(argv)
    params: dict[str, Any] | None = None
    if options.method == "tools/call":
        params = {"name": options.tool, "arguments": orjson.loads(options.args)}
    try:
        if options.transport == "stdio":
            command = [c for c in options.command if c != "--"] if options.command else []
            if not command:
                print("codex-mcp-bench: give the server command after --", file=sys.stderr)
                return 2
            figures = asyncio.run(
                stdio_load.measure(
                    command,
                    method=options.method,
                    params=params,
                    sequential=options.sequential,
                    calls=options.calls,
                    in_flight=options.concurrency,
                    max_seconds=options.max_seconds,
                    progress=_progress,
                )
            )
        else:
            figures = asyncio.run(
                http_load.measure(
                    options.url,
                    method=options.method,
                    params=params,
                    sequential=options.sequential,
                    calls=options.calls,
                    concurrency=options.concurrency,
                    max_seconds=options.max_seconds,
                    pid=options.pid,
                )
            )
    except (OSError, ConnectionError, RuntimeError, TimeoutError) as exc:
        print(f"codex-mcp-bench: {exc}", file=sys.stderr)
        return 1
    if sys.stderr.isatty():
        print(file=sys.stderr)
    print(format_table([(options.transport, figures)]))
    if options.json_out:
        with open(options.json_out, "w", encoding="utf-8") as out:
            json.dump(figures, out, indent=2)
    return 0


def format_table(rows: list[tuple[str, dict[str, Any]]]) -> str:
    """A plain table: one row per (label, figures), one column per figure."""
    keys: list[str] = []
    for _, figures in rows:
        keys.extend(k for k in figures if k not in keys)
    header = ["", *keys]
    body = [[label, *(_fmt(figures.get(k)) for k in keys)] for label, figures in rows]
    widths = [max(len(str(row[i])) for row in [header, *body]) for i in range(len(header))]
    lines = [
        "  ".join(str(cell).rjust(w) for cell, w in zip(row, widths, strict=True))
        for row in [header, *body]
    ]
    return "\n".join(lines)


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.0f}" if value >= 100 else f"{value:.2f}"
    return str(value)

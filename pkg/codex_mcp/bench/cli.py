"""`codex-mcp-bench`: point a neutral load generator at any MCP server (stdio or HTTP)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

import orjson

from ..launch import add_version_flag
from . import http_load, stdio_load

#: Both transports' options: flag, default, argparse type, metavar, help.
_OPTIONS: tuple[tuple[str, object, type, str, str], ...] = (
    ("--tool", "echo", str, "NAME", "Tool to call. Default: echo."),
    (
        "--args",
        '{"message":"hello"}',
        str,
        "JSON",
        'Its arguments, a JSON object. Default: {"message":"hello"}.',
    ),
    (
        "--method",
        "tools/call",
        str,
        "METHOD",
        "What to time: tools/call, or a method without params such as tools/list or ping. "
        "Default: tools/call.",
    ),
    ("--sequential", 1000, int, "N", "Calls made one at a time, for latency. Default: 1000."),
    ("--calls", 10000, int, "N", "Calls for throughput. Default: 10000."),
    (
        "--concurrency",
        32,
        int,
        "N",
        "Calls in flight (stdio) or concurrent clients (http). Default: 32.",
    ),
    ("--max-seconds", 30.0, float, "SECONDS", "Time cap per phase. Default: 30."),
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="codex-mcp-bench",
        description="Measure an MCP server's latency and throughput with a neutral load "
        "generator (no MCP SDK on the client side).",
        epilog="Examples: codex-mcp-bench stdio -- codex-mcp; "
        "codex-mcp-bench http http://127.0.0.1:8000/mcp --concurrency 64",
    )
    sub = parser.add_subparsers(dest="transport", required=True, metavar="{stdio,http}")
    for name, summary in (
        ("stdio", "Start a server command and drive it over its stdin and stdout."),
        ("http", "Drive a running Streamable HTTP server at URL."),
    ):
        p = sub.add_parser(name, help=summary, description=summary)
        for flag, default, kind, metavar, text in _OPTIONS:
            p.add_argument(flag, default=default, type=kind, metavar=metavar, help=text)
        p.add_argument(
            "--json", dest="json_out", metavar="PATH", help="Also write the figures here, as JSON."
        )
        if name == "stdio":
            p.add_argument(
                "command", nargs=argparse.REMAINDER, help="The server to start, after --."
            )
        else:
            p.add_argument(
                "--pid", type=int, help="The server's process id, for its CPU and memory figures."
            )
            p.add_argument("url", help="The server's /mcp endpoint.")
    add_version_flag(parser)
    return parser


def _progress(done: int, total: int) -> None:
    if sys.stderr.isatty():
        print(f"\r  {done}/{total} calls", end="", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    options = _parser().parse_args(argv)
    params: dict[str, Any] | None = None
    if options.method == "tools/call":
        params = {"name": options.tool, "arguments": orjson.loads(options.args)}
    phases: dict[str, Any] = {
        "method": options.method,
        "params": params,
        "sequential": options.sequential,
        "calls": options.calls,
        "max_seconds": options.max_seconds,
    }
    try:
        if options.transport == "stdio":
            command = list(options.command or [])
            if command[:1] == ["--"]:  # only the separator: the command may have its own `--`
                command = command[1:]
            if not command:
                print("codex-mcp-bench: give the server command after --", file=sys.stderr)
                return 2
            load = stdio_load.measure(
                command, in_flight=options.concurrency, progress=_progress, **phases
            )
        else:
            load = http_load.measure(
                options.url, concurrency=options.concurrency, pid=options.pid, **phases
            )
        figures = asyncio.run(load)
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
    keys = list(dict.fromkeys(key for _, figures in rows for key in figures))
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

"""The cost of observation on HTTP echo, in one run: codex-mcp with `--no-metrics`, with
its default metrics, and with spans exported over OTLP/HTTP to a local receiver
(`otlp_sink.py`, on 127.0.0.1). Each row adds its server CPU per call over the first."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import aiohttp
from codex_mcp.bench import http_load
from harness import BENCH, ECHO, PY, ROOT, free_port, http_server, median_of

LABEL = "HTTP echo, observation on and off"
HTTP = [PY, str(ROOT / "cmd/http"), "--port", "{port}"]
Rows = list[tuple[str, dict[str, Any]]]


@contextlib.contextmanager
def otlp_sink() -> Iterator[str]:
    """A local OTLP/HTTP receiver; yields its base URL."""
    port = free_port()
    process = subprocess.Popen(
        [PY, str(BENCH / "otlp_sink.py"), str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        asyncio.run(_wait(url))
        yield url
    finally:
        process.terminate()
        process.wait(10)


async def _wait(url: str) -> None:
    async with aiohttp.ClientSession() as http:
        for _ in range(300):
            with contextlib.suppress(aiohttp.ClientError, OSError):
                async with http.get(f"{url}/stats") as response:
                    if response.status == 200:
                        return
            await asyncio.sleep(0.05)
    raise RuntimeError("the OTLP receiver did not start")


async def _spans(url: str) -> int:
    async with aiohttp.ClientSession() as http, http.get(f"{url}/stats") as response:
        return int((await response.json())["spans"])


def observation_case(runs: int, calls: int, cap: float) -> Rows:
    base = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    rows: Rows = []
    with otlp_sink() as sink:
        variants = [
            ("no metrics", [*HTTP, "--no-metrics"], {}),
            ("metrics (default)", HTTP, {}),
            ("metrics, tracing exported", HTTP, {"OTEL_EXPORTER_OTLP_ENDPOINT": sink}),
        ]
        for name, command, extra in variants:

            def once(command: list[str] = command, extra: dict[str, str] = extra) -> dict[str, Any]:
                before = asyncio.run(_spans(sink))
                with http_server(command, {**base, **extra}) as (url, pid, _):
                    figures = asyncio.run(
                        http_load.measure(url, params=ECHO, calls=calls, max_seconds=cap, pid=pid)
                    )
                # The exporter sends what it holds at exit (BatchSpanProcessor's shutdown).
                deadline = time.monotonic() + 10
                spans = asyncio.run(_spans(sink)) - before
                while extra and spans < figures["concurrent_calls"] and time.monotonic() < deadline:
                    time.sleep(0.1)
                    spans = asyncio.run(_spans(sink)) - before
                return {**figures, "spans_exported": spans}

            print(f"  {LABEL}: {name} ...", flush=True, file=sys.stderr)
            rows.append((name, median_of(runs, once)))
    first = rows[0][1].get("cpu_us_per_call")
    for _, figures in rows:
        cpu = figures.get("cpu_us_per_call")
        if first and cpu:
            figures["added_cpu_us_per_call"] = cpu - first
            figures["x_cpu_of_no_metrics"] = cpu / first
    return rows

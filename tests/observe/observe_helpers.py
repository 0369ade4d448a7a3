"""Helpers for the observation tests: scraping /metrics and reading it with
prometheus_client's own parser, and a gateway config with a child that is up and one
that never starts."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def parse(text: str) -> Samples:
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


async def scrape(url: str, headers: dict[str, str] | None = None) -> Samples:
    """GET url on a fresh connection (under --workers, the kernel picks the worker)."""
    connector = aiohttp.TCPConnector(force_close=True)
    async with (
        aiohttp.ClientSession(connector=connector) as http,
        http.get(url, headers=headers or {}) as response,
    ):
        assert response.status == 200, await response.text()
        assert response.headers["Content-Type"].startswith("text/plain")
        return parse(await response.text())


def gateway_config(tmp_path: Path) -> Path:
    """`up`: the built-in tools over stdio; `down`: a command that does not exist."""
    config = {
        "mcpServers": {
            "up": {"command": sys.executable, "args": [str(ROOT / "cmd/mcp")]},
            "down": {"command": "/nonexistent/codex-mcp-test-server", "args": []},
        }
    }
    path = tmp_path / ".mcp.json"
    path.write_text(json.dumps(config))
    return path


def rpc(request_id: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}}

"""The README's Speed figures as `bench/run.py --readme` writes them: a run's report in, the
README's blocks out (pure formatting, so a made-up report and a copy of the README)."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))  # bench/run.py's own modules, as it imports them

from harness import write_block  # noqa: E402
from readme_speed import speed_blocks  # noqa: E402


def _report(cases: dict[str, Any]) -> dict[str, Any]:
    return {
        "date": "2031-02-03",
        "machine": "x86_64, 2 cores, Python 3.11.7",
        "machine_note": "medians of 3 runs",
        "versions": {"mcp": "2.3", "fastmcp": "4.1"},
        "cases": cases,
    }


ECHO = {"p50_ms": 0.0912, "throughput_per_s": 123456.7, "cold_start_ms": 91.6, "rss_mb": 31.8}
FULL = {
    "stdio echo": {
        "codex-mcp": {**ECHO, "in_flight": 32},
        "codex-mcp @main": {**ECHO, "p50_ms": 9.99},
        "floor": {**ECHO, "p50_ms": 0.07},
        "fastmcp": {**ECHO, "p50_ms": 0.95},
    },
    "HTTP echo": {
        "codex-mcp": {"p50_ms": 0.321, "throughput_per_s": 13208.4, "concurrency": 32},
        "floor": {"p50_ms": 0.25, "throughput_per_s": 11774.0},
    },
    "HTTP 1000 concurrent sessions": {
        "codex-mcp": {"rss_kb_per_idle_session": 3.14, "calls_per_s": 11991.2},
        "official SDK": {"rss_kb_per_idle_session": 42.0, "calls_per_s": 373.0},
    },
    "stdio gateway echo": {
        "direct": {"p50_ms": 0.09, "throughput_per_s": 156742, "x_direct_throughput": 1.0},
        "codex-mcp gateway": {
            "p50_ms": 0.2,
            "throughput_per_s": 44619,
            "added_p50_us": 107.2,
            "x_direct_throughput": 0.2846,
        },
        "fastmcp proxy": {
            "p50_ms": 1.81,
            "throughput_per_s": 587,
            "added_p50_us": 1716.0,
            "x_direct_throughput": 0.0037,
        },
    },
    "stdio 1 MB result": {"codex-mcp": {"p50_ms": 2.1}, "official SDK": {"p50_ms": 3.5}},
    "stdio tools/list, 500 tools": {"codex-mcp": {"p50_ms": 0.7}},
    "HTTP tools/list, 1,000 tools": {
        "codex-mcp": {"p50_ms": 1.3, "x_floor_p50": 1.18},
        "floor": {"p50_ms": 1.1},
    },
    "progress over SSE": {"codex-mcp": {"notifications_per_s": 70712.3}},
    "stdio gateway large results": {
        "codex-mcp gateway": {
            "ms_1mb": 5.0,
            "ms_10mb": 48.0,
            "ms_50mb": 250.0,
            "x_per_mb_largest": 1.0,
            "x_cpu_per_mb_largest": 0.97,
        }
    },
    "HTTP echo, observation on and off": {
        "no metrics": {"cpu_us_per_call": 100.0},
        "metrics (default)": {"added_cpu_us_per_call": 6.4},
        "metrics, tracing exported": {"added_cpu_us_per_call": 41.0},
    },
    "HTTP session per call": {
        "codex-mcp": {"requests_per_s": 2500.4},
        "codex-mcp, Redis": {"requests_per_s": 1200.0},
        "official SDK": {"requests_per_s": 300.0},
    },
}


@pytest.fixture
def readme(tmp_path: Path) -> Path:
    copy = tmp_path / "README.md"
    shutil.copy(ROOT / "README.md", copy)
    return copy


def _write(readme: Path, report: dict[str, Any]) -> list[str]:
    blocks = speed_blocks(report)
    for name, text in blocks:
        write_block(readme, name, text)
    return [name for name, _ in blocks]


def _block(text: str, name: str) -> str:
    return text.split(f"<!-- bench:{name} -->", 1)[1].split(f"<!-- /bench:{name} -->", 1)[0]


def test_a_full_run_writes_every_figure_of_the_speed_section(readme: Path) -> None:
    names = _write(readme, _report(FULL))
    text = readme.read_text()
    for name in names:  # every block the bench writes has its markers in the README
        assert f"<!-- bench:{name} -->" in text and f"<!-- /bench:{name} -->" in text, name

    stdio = _block(text, "speed-stdio")
    assert "(2031-02-03, x86_64, 2 cores, Python 3.11.7, medians of 3 runs)" in stdio
    assert "| **codex-mcp** | 0.09 ms | 123,457 | 92 ms | 32 MB |" in stdio
    assert "| asyncio + orjson floor | 0.07 ms |" in stdio
    assert "| fastmcp 4.1 | 0.95 ms |" in stdio
    assert "9.99" not in stdio  # a --baseline row stays out of the README

    http = _block(text, "speed-http")
    assert "| 1,000 sessions: calls/s |" in http
    assert "| **codex-mcp** | 0.32 ms | 13,208 | 3.1 KB | 11,991 |" in http
    assert "| bare aiohttp floor | 0.25 ms | 11,774 | - | - |" in http
    # in the sessions case only: its echo columns are "-"
    assert "| official SDK 2.3, defaults | - | - | 42.0 KB | 373 |" in http

    gateway = _block(text, "speed-gateway")
    assert "| direct | 0.09 ms | - | 156,742 | 1.00 |" in gateway
    assert "| **codex-mcp gateway** | 0.20 ms | +107 µs | 44,619 | 0.28 |" in gateway
    assert "| fastmcp 4.1 `create_proxy` | 1.81 ms | +1,716 µs | 587 | 0.004 |" in gateway

    assert _block(text, "also-stdio-1mb") == "2.10 ms p50, the official SDK 3.50 ms"
    assert _block(text, "also-stdio-list") == "0.70 ms p50, the official SDK -"
    assert _block(text, "also-http-list") == "1.30 ms p50, the aiohttp floor 1.10 ms (1.18x)"
    assert _block(text, "also-progress") == "70,712 per second"
    assert _block(text, "also-gateway-large").startswith(
        "50 MB through the gateway took 1.00x the time per MB of 1 MB (0.97x by CPU"
    )
    assert "metrics +6 µs, metrics and exported tracing +41 µs" in _block(text, "also-observation")
    assert _block(text, "also-session-per-call").startswith(
        "codex-mcp 2,500 requests/s (1,200 with its sessions on Redis), the official SDK 300"
    )
    assert _block(text, "gateway-added") == (
        "adds +107 µs at p50 to a direct call (fastmcp's proxy adds +1,716 µs)"
    )
    assert _block(text, "speed-run") == (
        "2031-02-03 on x86_64, 2 cores, Python 3.11.7, medians of 3 runs"
    )

    # One source of figures: outside the generated blocks, the section quotes no measurement.
    section = text.split("\n## Speed\n", 1)[1].split("\n## ", 1)[0]
    hand = re.sub(r"<!-- bench:([\w-]+) -->.*?<!-- /bench:\1 -->", "", section, flags=re.S)
    assert not re.findall(r"\d[\d,.]*\s*(?:ms|µs|KB|calls/s|per second)\b", hand)


def test_the_readme_writes_no_per_call_figure_by_hand() -> None:
    """A per-call cost (µs) in the README is always a bench block: a figure written by hand
    outlives the run it came from (the gateway's overhead once read three ways)."""
    text = (ROOT / "README.md").read_text()
    hand = re.sub(r"<!-- bench:([\w-]+) -->.*?<!-- /bench:\1 -->", "", text, flags=re.S)
    assert [line for line in hand.splitlines() if "µs" in line] == []


def test_a_partial_run_rewrites_only_the_blocks_of_its_cases(readme: Path) -> None:
    before = readme.read_text()
    names = _write(readme, _report({"stdio echo": FULL["stdio echo"]}))
    after = readme.read_text()
    assert names == ["speed-stdio", "speed-run"]
    assert _block(after, "speed-stdio") != _block(before, "speed-stdio")
    for name in ("speed-http", "speed-gateway", "tm-v2", "also-progress", "also-http-list"):
        assert _block(after, name) == _block(before, name), name
    # a one-line figure stays inline, inside its list item
    _write(readme, _report({"progress over SSE": FULL["progress over SSE"]}))
    line = next(x for x in readme.read_text().splitlines() if "bench:also-progress" in x)
    assert line == (
        "- progress notifications over SSE: <!-- bench:also-progress -->70,712 per second"
        "<!-- /bench:also-progress -->"
    )


def test_a_run_of_no_speed_case_writes_nothing() -> None:
    assert speed_blocks(_report({"Redis round trip": {"codex-mcp": {}}})) == []

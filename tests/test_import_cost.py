"""Each command imports only what it needs (issue 23, "Start-up"): checked on real processes
started the way users start them, serving a real call, from the `-X importtime` log of
every module they imported during their whole life (lazy imports included).

- the core imports no transport, no service library and no gateway;
- `codex-mcp` (stdio) imports no aiohttp, Redis client, Prometheus, OpenTelemetry, JWT
  library, pydantic-settings or gateway (it looks for a `.mcp.json`, which takes the
  gateway's small config finder only), no policy without one and no Mcp-Param header
  checks (HTTP's);
- no command runs ctypes.util (its find_library runs `ldconfig -p` in a subprocess);
- a stdio gateway of stdio children imports no aiohttp, Redis client, Prometheus or
  OpenTelemetry;
- both commands import and set up with the garbage collector paused, and serve with it
  running again and what they set up frozen (gc.freeze); importing either's module loads
  none of the core, the transports or the settings (its `main` does, paused);
- `codex-mcp-http` without --redis-url, OAuth or a gateway config imports no Redis client,
  no gateway, no OpenTelemetry, no JWT library and, with only flags given, no
  pydantic-settings; until /metrics is first scraped, no prometheus_client (its counters
  are plain numbers until then); without --policy, --oauth-tool-scope or --server-card,
  neither the policy nor the server card.

Written as package-prefix rules (support.imports), with the entry modules read from the
installed console scripts and the config finder from the gateway's public names, so moving a
file inside its package breaks none of them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from support.imports import entry_module, imported_modules, loaded, modules_after
from support.processes import HttpProcess

ROOT = Path(__file__).resolve().parents[1]
ECHO = {"name": "echo", "arguments": {"message": "hi"}}
INITIALIZE = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "import-cost", "version": "1"},
}


@pytest.fixture(scope="module")
def gateway_finder() -> set[str]:
    """The gateway's config finder (what `find_config` loads): every `codex-mcp`
    looks for a .mcp.json at start, and may load that much of the gateway and no more."""
    return modules_after(
        "from codex_mcp.gateway.config.load import find_config", "codex_mcp.gateway"
    )


#: What no server needs unless asked for it.
SERVICES = ("aiohttp", "redis", "prometheus_client", "opentelemetry")
#: What no command needs to start: find_library's subprocess; the policy, with no rules.
NEVER_AT_START = ("ctypes.util", "codex_mcp.policy")
NO_AUTH = ("jwt", "cryptography")
NO_SETTINGS_MODEL = ("pydantic_settings",)


def _clean_environment(home: Path) -> dict[str, str]:
    """No CODEX_MCP_* settings, no tracing variables, no .mcp.json to find."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.upper().startswith(("CODEX_MCP_", "OTEL_", "MCP_WRAPPER_"))
    }
    env["HOME"] = str(home)
    return env


def _stdio_run(command: list[str], cwd: Path, request: dict[str, object] | None = None) -> set[str]:
    """Start a stdio server with -X importtime, initialize it and send `request` (a call
    of echo by default), close its stdin; the modules it imported."""
    request = request or {"method": "tools/call", "params": ECHO}
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, **request},
    ]
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *command],
        input="".join(json.dumps(m) + "\n" for m in messages),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=_clean_environment(cwd),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    answer = next(a for a in answers if a.get("id") == 2 and "method" not in a)
    assert "result" in answer, answer
    if request["method"] == "tools/call":
        assert answer["result"]["content"][0]["text"].endswith("hi"), answer
    return imported_modules(done.stderr.splitlines())


def _post(url: str, body: dict[str, object], session: str | None = None) -> tuple[str, Any]:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if session is not None:
        headers["Mcp-Session-Id"] = session
    request = urllib.request.Request(url, json.dumps(body).encode(), headers)
    with urllib.request.urlopen(request, timeout=30) as response:
        text = response.read().decode()
        if not text:  # a notification's 202
            return session or "", None
        if text.startswith(("event:", "data:", "id:")):  # one SSE event
            text = next(line[5:] for line in text.splitlines() if line.startswith("data:"))
        return response.headers.get("Mcp-Session-Id", session or ""), json.loads(text)


def _http_run(args: list[str], cwd: Path) -> set[str]:
    """Start `codex-mcp-http --port 0 ARGS` with -X importtime, initialize and call echo,
    stop it; the modules it imported."""
    server = HttpProcess(*args, python=["-X", "importtime"], cwd=cwd, env=_clean_environment(cwd))
    try:
        session, _ = _post(
            server.url, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE}
        )
        _post(server.url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
        _, answer = _post(
            server.url, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": ECHO}, session
        )
        assert answer["result"]["content"][0]["text"].endswith("hi"), answer
    finally:
        server.stop()
    return imported_modules(server.logged())


def test_the_core_imports_no_transport_service_library_or_gateway(tmp_path: Path) -> None:
    program = (
        "import importlib, pkgutil, sys\n"
        "import codex_mcp.core as core\n"
        "for each in pkgutil.walk_packages(core.__path__, 'codex_mcp.core.'):\n"
        "    importlib.import_module(each.name)\n"
        "print('\\n'.join(sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env=_clean_environment(tmp_path),
    )
    assert done.returncode == 0, done.stderr
    imported = set(done.stdout.split())
    assert len(loaded(imported, ["codex_mcp.core"])) > 1  # the walk imported the core
    forbidden = (
        *SERVICES,
        *NO_AUTH,
        *NO_SETTINGS_MODEL,
        "codex_mcp.gateway",
        "codex_mcp.transports",
        "codex_mcp.client",
    )
    assert loaded(imported, forbidden, set()) == []


@pytest.mark.parametrize(
    ("args", "request_"),
    [([], None), (["--serve", "codex"], {"method": "tools/list"})],  # listing starts no Codex
    ids=["builtin", "codex"],
)
def test_the_stdio_server_imports_no_service_library_or_gateway(
    args: list[str], request_: dict[str, object] | None, tmp_path: Path, gateway_finder: set[str]
) -> None:
    imported = _stdio_run([str(ROOT / "cmd/mcp"), *args], tmp_path, request_)
    assert entry_module("codex-mcp") in imported
    forbidden = (
        *SERVICES,
        *NO_AUTH,
        *NO_SETTINGS_MODEL,
        *NEVER_AT_START,
        "codex_mcp.gateway",
        "codex_mcp.transports.http",
        "codex_mcp.core.routing_headers",
        "codex_mcp.scale",
    )
    assert loaded(imported, forbidden, gateway_finder) == []


def test_a_stdio_gateway_of_stdio_children_imports_no_service_library(
    tmp_path: Path, gateway_finder: set[str]
) -> None:
    child = [sys.executable, str(ROOT / "cmd/mcp")]
    imported = _stdio_run([str(ROOT / "cmd/mcp"), "--", *child], tmp_path)
    assert loaded(imported, ["codex_mcp.gateway"], gateway_finder)  # it is a gateway
    assert loaded(imported, (*SERVICES, *NO_SETTINGS_MODEL, "ctypes.util"), set()) == []


def test_a_plain_http_server_imports_no_redis_gateway_tracing_auth_or_prometheus(
    tmp_path: Path, gateway_finder: set[str]
) -> None:
    imported = _http_run([], tmp_path)
    assert loaded(imported, ["codex_mcp.transports.http"])
    assert loaded(imported, ["codex_mcp.observe"])  # it counts, all the same
    forbidden = (
        "redis",
        "codex_mcp.scale",
        "codex_mcp.gateway",
        "opentelemetry",
        "prometheus_client",  # and so no Prometheus-backed metrics module of ours
        *NO_AUTH,
        *NO_SETTINGS_MODEL,
        *NEVER_AT_START,
        "codex_mcp.core.server_card",
    )
    assert loaded(imported, forbidden, gateway_finder) == []


@pytest.mark.parametrize("script", ["codex-mcp-http", "codex-mcp"])
def test_a_console_scripts_module_leaves_the_imports_to_its_main(
    script: str, tmp_path: Path
) -> None:
    """Importing the entry point's module loads neither the core, the transports nor the
    settings: `main` imports them, with the collector paused (a module imported before,
    the whole core through session_logs once, made ~20 collections of its own)."""
    module = entry_module(script)
    program = f"import sys, {module}\nprint('\\n'.join(sys.modules))\n"
    done = subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env=_clean_environment(tmp_path),
    )
    assert done.returncode == 0, done.stderr
    imported = set(done.stdout.split())
    assert module in imported
    forbidden = ("codex_mcp.core", "codex_mcp.transports", "codex_mcp.settings", "aiohttp")
    assert loaded(imported, forbidden, set()) == []


GC_SERVER = """
import gc
from codex_mcp import Server

server = Server("gc-state")


@server.tool()
def gc_state() -> str:
    \"\"\"How the collector runs while serving.\"\"\"
    return f"enabled={gc.isenabled()} frozen={gc.get_freeze_count() > 0}"
"""


def test_start_up_runs_with_the_collector_paused_and_serving_with_it_on(tmp_path: Path) -> None:
    """The imports and set-up make dozens of collections that free nothing; the server
    must serve with the collector on again (never left paused), its set-up frozen."""
    (tmp_path / "gc_server.py").write_text(GC_SERVER)
    request = {"method": "tools/call", "params": {"name": "gc_state", "arguments": {}}}
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, **request},
    ]
    done = subprocess.run(
        [sys.executable, str(ROOT / "cmd/mcp"), "--serve", str(tmp_path / "gc_server.py")],
        input="".join(json.dumps(m) + "\n" for m in messages),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=_clean_environment(tmp_path),
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    answer = next(a for a in answers if a.get("id") == 2)
    assert answer["result"]["content"][0]["text"] == "enabled=True frozen=True", answer

    server = HttpProcess("--serve", "gc_server.py", cwd=tmp_path, env=_clean_environment(tmp_path))
    try:
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE}
        session, _ = _post(server.url, initialize)
        _post(server.url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
        _, answer = _post(server.url, {"jsonrpc": "2.0", "id": 2, **request}, session)
        assert answer["result"]["content"][0]["text"] == "enabled=True frozen=True", answer
    finally:
        server.stop()

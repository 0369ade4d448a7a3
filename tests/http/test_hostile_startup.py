"""Start-up configurations that would leave the server open or do nothing they promise:
each stops the start with exactly one line on stderr saying what to do (issue 28).

Hostile-input classes (/work/shared/hostile-input.md): "who can reach it" (a network
listen with no credential; a setting ignored because another is missing) over the real
console script, its environment variables, `--workers`, and the library's
`server.run("http", ...)`. Nothing here listens off loopback: a configuration that
passes the checks is shown by the next mistake it meets (an address not of this machine).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from codex_mcp.launch import StartupError
from codex_mcp.transports.http import HttpConfig

BIN = Path(sys.executable).parent
#: TEST-NET-1 (RFC 5737): never an address of this machine, so binding it fails at once.
FOREIGN = "192.0.2.1"


def _start(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the console script until it exits, or until it says it listens (then stop it:
    the start was not refused)."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("CODEX_MCP_")}
    command = [str(BIN / "codex-mcp-http"), "--port", "0", *args]
    with subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**environment, **(env or {})},
        cwd=cwd,
    ) as process:
        assert process.stderr is not None
        said = []
        stuck = threading.Timer(30, process.kill)  # a start that neither serves nor stops
        stuck.start()
        try:
            for line in process.stderr:  # ends when it exits
                said.append(line)
                if "listening on" in line:
                    process.terminate()
            status = process.wait(30)
        finally:
            stuck.cancel()
        assert status != -signal.SIGKILL, "it neither served nor stopped:\n" + "".join(said)
    return subprocess.CompletedProcess(command, status, "", "".join(said))


def _one_line(done: subprocess.CompletedProcess[str]) -> str:
    """The refusal: a non-zero exit, exactly one line on stderr, no traceback."""
    assert done.returncode != 0, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "listening on" not in done.stderr
    return lines[0]


@pytest.mark.parametrize(
    "args",
    [
        ("--oauth-scope", "mcp"),
        ("--oauth-resource", "https://mcp.example.com/mcp"),
        ("--oauth-tool-scope", "echo=echo.use"),
        ("--oauth-operator-scope", "ops"),  # set by the operator, not its default
        ("--oauth-scope", "mcp", "--bearer-token", "t"),  # the static token is no issuer
    ],
)
def test_an_oauth_setting_without_an_issuer_stops_the_start(args: tuple[str, ...]) -> None:
    line = _one_line(_start(*args, cwd=None))
    assert args[0] in line and "--oauth-issuer" in line, line


def test_an_oauth_setting_from_the_environment_without_an_issuer_stops_the_start(
    tmp_path: Path,
) -> None:
    line = _one_line(_start(env={"CODEX_MCP_OAUTH_SCOPE": "mcp"}, cwd=tmp_path))
    assert "--oauth-scope" in line and "--oauth-issuer" in line, line


@pytest.mark.parametrize("flag", ["--public-readyz", "--public-metrics"])
def test_opening_a_route_that_needs_no_credential_anyway_stops_the_start(flag: str) -> None:
    line = _one_line(_start(flag))
    assert flag in line and "--bearer-token" in line, line


def test_an_empty_bearer_token_or_token_file_stops_the_start(tmp_path: Path) -> None:
    empty = tmp_path / "tokens"
    empty.write_text("\n  \n")
    line = _one_line(_start("--bearer-token-file", str(empty)))
    assert "--bearer-token-file" in line and "no token" in line, line
    line = _one_line(_start("--bearer-token", ""))
    assert "--bearer-token" in line and "empty" in line, line


@pytest.mark.parametrize("host", ["0.0.0.0", "::", FOREIGN, "mcp.example.com"])
def test_a_network_listen_without_a_credential_stops_the_start(host: str) -> None:
    line = _one_line(_start("--host", host))
    assert "--bearer-token" in line and "--oauth-issuer" in line, line
    assert "--allow-unauthenticated-network" in line, line


def test_a_network_listen_from_the_environment_without_a_credential_stops_the_start(
    tmp_path: Path,
) -> None:
    line = _one_line(_start(env={"CODEX_MCP_HOST": "0.0.0.0"}, cwd=tmp_path))
    assert "--allow-unauthenticated-network" in line, line


def test_workers_on_the_network_without_a_credential_stop_before_any_worker_starts() -> None:
    line = _one_line(
        _start("--host", "0.0.0.0", "--workers", "2", "--redis-url", "redis://127.0.0.1:1/0")
    )
    assert "--allow-unauthenticated-network" in line, line


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--oauth-issuer", "https://auth.example.com", "--oauth-tool-scope", "echo"), "TOOL="),
        (("--oauth-issuer", "http://auth.example.com"), "use https"),
    ],
)
def test_oauth_mistakes_under_workers_stop_before_any_worker_starts(
    args: tuple[str, ...], said: str
) -> None:
    """Found by the supervisor, once: its workers would each say it, and be restarted."""
    line = _one_line(_start("--workers", "2", "--redis-url", "redis://127.0.0.1:1/0", *args))
    assert said in line, line


def test_a_workers_start_up_mistake_stops_the_supervisor_not_restarts_the_worker(
    tmp_path: Path,
) -> None:
    """A mistake only a worker finds (the module to serve) is EX_CONFIG: the supervisor
    stops with it instead of restarting workers that would say it again."""
    done = _start(
        "--workers", "2", "--redis-url", "redis://127.0.0.1:1/0", "--serve", "no_such_module_here",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 78, done.stderr
    assert "no module named 'no_such_module_here'" in done.stderr
    assert "restarting" not in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (("--bearer-token", "t"), {}),
        (("--allow-unauthenticated-network",), {}),
        ((), {"CODEX_MCP_ALLOW_UNAUTHENTICATED_NETWORK": "true"}),
    ],
)
def test_a_credential_or_the_opt_out_passes_the_check(
    args: tuple[str, ...], env: dict[str, str], tmp_path: Path
) -> None:
    """Past the check, the start meets the next mistake: the address is not this machine's."""
    line = _one_line(_start("--host", FOREIGN, *args, env=env, cwd=tmp_path))
    assert "not an address of this machine" in line, line


@pytest.mark.parametrize(
    ("origin", "said"),
    [
        ("null", "sandboxed"),
        ("*", "every"),
        ("https://app.example.com/page", "scheme://host[:port]"),
        ("app.example.com", "scheme://host[:port]"),
    ],
)
def test_a_cors_origin_that_is_no_single_origin_stops_the_start(origin: str, said: str) -> None:
    line = _one_line(_start("--bearer-token", "t", "--cors-origin", origin))
    assert "--cors-origin" in line and said in line, line


@pytest.mark.parametrize(
    ("args", "env", "said"),
    [
        (("--trusted-proxies", "nginx.internal"), {}, "'nginx.internal' is not an address"),
        (("--trusted-proxies", "127.0.0.1,10.0.0.0/33"), {}, "'10.0.0.0/33' is not an address"),
        (("--trusted-proxies", "0.0.0.0/0"), {}, "every address"),
        (("--trusted-proxies", "*"), {}, "every address"),
        ((), {"CODEX_MCP_TRUSTED_PROXIES": "127.0.0.1,::/0"}, "every address"),
    ],
)
def test_a_trusted_proxy_that_is_no_address_or_every_address_stops_the_start(
    args: tuple[str, ...], env: dict[str, str], said: str, tmp_path: Path
) -> None:
    """Believing every address's X-Forwarded-For would let each client choose its own
    (its guessing bound, its name in the logs): name the proxies."""
    line = _one_line(_start("--bearer-token", "t", *args, env=env, cwd=tmp_path))
    assert "--trusted-proxies" in line and said in line, line


def test_a_forwarded_host_that_is_no_host_stops_the_start() -> None:
    line = _one_line(_start("--forwarded-hosts", "bad host!"))
    assert "--forwarded-hosts" in line and "'bad host!'" in line, line


@pytest.mark.slow
def test_the_library_refuses_what_the_console_script_refuses(tmp_path: Path) -> None:
    """`server.run("http", ...)` and HttpConfig take the same checks: one line, no traceback."""
    program = (
        "from codex_mcp import Server\n"
        "server = Server('open')\n"
        "@server.tool()\n"
        "def echo(message: str) -> str:\n"
        "    return message\n"
        "server.run('http', host='0.0.0.0', port=0)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    line = _one_line(done)
    assert "allow_unauthenticated_network" in line or "--allow-unauthenticated" in line, line
    with pytest.raises(StartupError, match="--oauth-issuer"):
        HttpConfig(oauth_scope=("mcp",))
    with pytest.raises(StartupError, match="--cors-origin"):
        HttpConfig(cors_origin=("null",), bearer_tokens=("t",))
    HttpConfig(host="0.0.0.0", allow_unauthenticated_network=True)  # said out loud: allowed
    HttpConfig(host="::", bearer_tokens=("t",))

"""Start-up mistakes: one line saying what to do, a non-zero exit, no traceback; and
`--version` on every console script."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from codex_mcp import __version__

BIN = Path(sys.executable).parent
SCRIPTS = ["codex-mcp", "codex-mcp-http", "codex-mcp-client", "codex-mcp-bench"]


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "codex-mcp-http"), *args],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
    )


def _the_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode != 0
    assert "Traceback" not in done.stderr, done.stderr
    return done.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_console_script_answers_version(script: str) -> None:
    done = subprocess.run(
        [str(BIN / script), "--version"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"{script} {__version__}"


def test_a_port_in_use_says_to_pick_another() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        line = _the_line(_run("--port", str(port)))
    assert f"port {port} on 127.0.0.1 is already in use" in line
    assert "--port" in line


def test_an_unresolvable_host_says_what_to_give() -> None:
    # (with a credential: a name off loopback without one is refused before it is resolved)
    line = _the_line(_run("--host", "no-such-host.invalid", "--port", "0", "--bearer-token", "t"))
    assert "cannot resolve --host 'no-such-host.invalid'" in line and "127.0.0.1" in line


def test_a_bad_flag_value_is_one_line_naming_the_flag() -> None:
    done = _run("--port", "eighty")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "codex-mcp-http: argument --port: invalid int value: 'eighty' (see codex-mcp-http --help)"
    ]
    done = _run("--max-sessions", "0")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "--max-sessions / CODEX_MCP_MAX_SESSIONS" in done.stderr


def test_serve_naming_a_missing_file_module_or_attribute(tmp_path: Path) -> None:
    line = _the_line(_run("--serve", "missing_server.py", cwd=tmp_path))
    assert f"there is no file {tmp_path / 'missing_server.py'}" in line
    line = _the_line(_run("--serve", "no_such_module_here", cwd=tmp_path))
    assert "no module named 'no_such_module_here'" in line
    line = _the_line(_run("--serve", "json:no_such_attr", cwd=tmp_path))
    assert "json has no attribute 'no_such_attr'" in line
    line = _the_line(_run("--serve", "json", cwd=tmp_path))
    assert "no server found in json" in line


def test_a_broken_import_inside_the_served_file_keeps_its_traceback(tmp_path: Path) -> None:
    (tmp_path / "mine.py").write_text("import no_such_dependency_of_mine\n")
    done = _run("--serve", "mine.py", cwd=tmp_path)
    assert done.returncode != 0
    assert "ModuleNotFoundError: No module named 'no_such_dependency_of_mine'" in done.stderr


def test_server_run_http_prints_the_url_it_listens_on(tmp_path: Path) -> None:
    script = tmp_path / "mine.py"
    script.write_text(
        "from codex_mcp import Server\nserver = Server('mine')\nserver.run('http', port=0)\n"
    )
    process = subprocess.Popen(
        [sys.executable, str(script)], stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL
    )
    try:
        assert process.stderr is not None
        for _ in range(20):
            line = process.stderr.readline()
            if "listening on" in line:
                break
        assert line.startswith("mine.py listening on http://127.0.0.1:"), line
        assert line.rstrip().endswith("/mcp")
    finally:
        process.terminate()
        process.wait(15)


def test_curls_form_post_gets_415_saying_what_to_send(launch_http: object) -> None:
    url = launch_http()  # type: ignore[operator]
    body = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    # Exactly what `curl -d BODY URL` sends (curl itself is not installed everywhere the
    # tests run): a form-encoded POST accepting anything.
    form_post = urllib.request.Request(
        url,
        data=body,
        headers={
            "Content-Type": "application/x-www-form-urlencoded",
            "Accept": "*/*",
            "User-Agent": "curl/8.5.0",
        },
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(form_post, timeout=30)
    with refused.value as answer:
        status, text = answer.code, answer.read()
    assert status == 415
    message = json.loads(text)["error"]["message"]
    assert (
        "application/x-www-form-urlencoded" in message
        and "Content-Type: application/json" in message
    )
    assert "--json" in message

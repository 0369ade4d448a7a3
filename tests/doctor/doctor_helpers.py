"""Running `codex-mcp doctor` as a real process against a Codex config.toml written by a test,
with a HOME of its own so nothing on the machine is read by accident."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
CMD_MCP = str(ROOT / "cmd/mcp")
BROKEN_SERVER = str(ROOT / "tests/gateway/servers/broken_server.py")
#: The console script, as Codex would find it: a gateway entry's command.
CODEX_MCP = str(Path(PY).parent / "codex-mcp")


@dataclass
class Ran:
    code: int
    out: str
    err: str

    def json(self) -> dict[str, Any]:
        document: dict[str, Any] = json.loads(self.out)
        return document


def toml_string(value: str) -> str:
    return json.dumps(value)  # a TOML basic string is a JSON string for what tests write


def toml_list(values: list[str]) -> str:
    return "[" + ", ".join(toml_string(v) for v in values) + "]"


def bare_env(home: Path, **extra: str) -> dict[str, str]:
    """Our environment without what selects a gateway config, with HOME (and so the default
    CODEX_HOME) under the test's directory."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("WRAPPER_", "MCP_WRAPPER_", "CODEX_MCP_", "CODEX_HOME"))
    }
    env.pop("VIRTUAL_ENV", None)
    return {**env, "HOME": str(home), **extra}


def doctor(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 90
) -> Ran:
    done = subprocess.run(
        [PY, CMD_MCP, "doctor", *args],
        env=env if env is not None else bare_env(tmp_path / "home"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return Ran(done.returncode, done.stdout, done.stderr)


def write_codex_config(directory: Path, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "config.toml"
    path.write_text(text)
    return path


def broken_entry(name: str, *args: str, **keys: str) -> str:
    """A `[mcp_servers.NAME]` table starting the broken test server (absolute paths)."""
    lines = [
        f"[mcp_servers.{name}]",
        f"command = {toml_string(PY)}",
        f"args = {toml_list([BROKEN_SERVER, *args])}",
    ]
    lines += [f"{key} = {value}" for key, value in keys.items()]
    return "\n".join(lines) + "\n"

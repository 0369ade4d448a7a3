"""Scripted servers in a .mcp.json, and what a folder tree holds, for the trust tests."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

SCRIPTED = Path(__file__).with_name("servers") / "scripted_server.py"
ROOT = Path(__file__).resolve().parents[2]


def skill(
    uri: str, name: str, description: str, files: dict[str, Any] | None = None, **extra: Any
) -> dict[str, Any]:
    """A skill of the scripted server: its SKILL.md (with this frontmatter) and `files`."""
    text = f"---\nname: {name}\ndescription: {json.dumps(description)}\n---\n\n# {name}\n\nUse it well.\n"
    return {
        "uri": uri,
        "frontmatter": {"name": name, "description": description},
        "files": {uri: text, **(files or {})},
        **extra,
    }


def write_script(
    path: Path,
    *,
    tools: list[dict[str, Any]] | None = None,
    skills: list[dict[str, Any]] | None = None,
) -> Path:
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps({"tools": tools or [], "skills": skills or []}))
    os.replace(temporary, path)
    return path


def scripted_config(
    folder: Path,
    scripts: dict[str, Path],
    *,
    watch: bool = False,
    env: dict[str, str] | None = None,
    entry: dict[str, Any] | None = None,
    **gateway: Any,
) -> Path:
    """A .mcp.json serving one scripted server per script, named by its key (`watch`: each
    tells list_changed when its script changes), each recording the calls it runs in
    `runs_of(script)`; `env` for each, `entry`: more of each entry (per_session, lazy...)."""
    told = {"SCRIPTED_SERVER_WATCH": "1"} if watch else {}
    servers = {
        name: {
            "command": sys.executable,
            "args": [str(SCRIPTED)],
            "env": {
                "SCRIPTED_SERVER_FILE": str(script),
                "SCRIPTED_SERVER_RUNS": str(runs_of(script)),
                **told,
                **(env or {}),
            },
            **(entry or {}),
        }
        for name, script in scripts.items()
    }
    document: dict[str, Any] = {"mcpServers": servers}
    if gateway:
        document["gateway"] = gateway
    config = folder / ".mcp.json"
    config.write_text(json.dumps(document))
    return config


def runs_of(script: Path) -> Path:
    """Where the scripted server serving `script` records the calls it runs."""
    return script.with_suffix(".runs")


def runs(script: Path) -> list[dict[str, Any]]:
    """The calls the scripted server serving `script` ran (each a JSON line)."""
    path = runs_of(script)
    text = path.read_text() if path.exists() else ""
    return [json.loads(line) for line in text.splitlines()]


def tree(root: Path, *, skip: tuple[Path, ...] = ()) -> dict[str, str]:
    """Every path below `root` (links as links) -> what it is: a file's digest, a link's target."""
    found: dict[str, str] = {}
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        dirs[:] = [d for d in dirs if here / d not in skip]
        for name in [*dirs, *files]:
            path = here / name
            if path.is_symlink():
                found[str(path)] = "-> " + os.readlink(path)
            elif path.is_file():
                found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                found[str(path)] = "folder"
    return found


def env_with(**extra: str) -> dict[str, str]:
    """This test's environment (its XDG_STATE_HOME, CODEX_HOME) for a subprocess."""
    return {**os.environ, "PYTHONPATH": str(ROOT / "tests"), **extra}

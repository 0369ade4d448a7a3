"""How Codex starts a stdio MCP server: which environment it gets and where its command
is looked for. From codex-rs/rmcp-client/src/utils.rs (`create_env_for_mcp_server`,
`DEFAULT_ENV_VARS`) and stdio_server_launcher.rs: the child's environment is cleared, then
given the default variables and the entry's `env_vars` as Codex's own process has them, then
the entry's `env`; on Unix the command is looked up by the OS in that environment's PATH.

So a command found in a shell (an activated virtualenv, a PATH set in .bashrc for
interactive shells only) may not be found by Codex: its PATH is the one Codex was started
with. `codex-mcp --print-codex-config` checks a gateway's children with the same rule.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

#: codex-rs/rmcp-client/src/utils.rs, `DEFAULT_ENV_VARS` (Unix), and the CA bundle variables
#: the CLI 0.171 passes on too (seen in a server's environment, and not others such as
#: SSL_CERT_DIR: tests/doctor/test_doctor_against_codex.py).
DEFAULT_ENV_VARS = (
    "HOME", "LOGNAME", "PATH", "SHELL", "USER", "__CF_USER_TEXT_ENCODING",
    "LANG", "LC_ALL", "TERM", "TMPDIR", "TZ",
    "CURL_CA_BUNDLE", "GIT_SSL_CAINFO", "NODE_EXTRA_CA_CERTS", "PIP_CERT",
    "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class CodexPath:
    """The PATH Codex is taken to run with, and why that one."""

    value: str
    #: How it was chosen, for the report ("given with --path", "this shell's, without ...").
    origin: str


def codex_path(environ: Mapping[str, str], given: str | None = None) -> CodexPath:
    """`given` (the PATH Codex is started with, when the user knows it), else this process's
    PATH without an activated virtualenv's bin directory: activation is the shell's doing,
    and Codex started from an editor, a launcher or another terminal has not got it."""
    if given is not None:
        return CodexPath(given, "given with --path")
    path = environ.get("PATH", os.defpath)
    venv = environ.get("VIRTUAL_ENV", "").strip()
    if venv:
        bin_dir = str(Path(venv) / ("Scripts" if os.name == "nt" else "bin"))
        kept = [d for d in path.split(os.pathsep) if d and os.path.normpath(d) != bin_dir]
        if len(kept) != len(path.split(os.pathsep)):
            return CodexPath(
                os.pathsep.join(kept), f"this shell's, without the active virtualenv's {bin_dir}"
            )
    return CodexPath(path, "this shell's")


def server_environment(
    environ: Mapping[str, str],
    path: str,
    env_vars: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The whole environment of a stdio server Codex starts (nothing else is inherited)."""
    own = {**environ, "PATH": path}
    passed = {name: own[name] for name in (*DEFAULT_ENV_VARS, *env_vars) if name in own}
    return passed | dict(env or {})


def find_command(command: str, path: str | None, cwd: str | os.PathLike[str] | None) -> str | None:
    """Where the OS finds `command` for a child started in `cwd` with this PATH: a command
    with a slash is a path (relative to `cwd`), any other is looked for in PATH. None when
    there is no executable file there."""
    if os.sep in command or (os.altsep and os.altsep in command):
        candidate = Path(cwd or ".") / os.path.expanduser(command)
        runnable = candidate.is_file() and os.access(candidate, os.X_OK)
        return str(candidate) if runnable else None
    if not path:
        return None
    return shutil.which(command, path=path)


@dataclass(frozen=True, slots=True)
class NotFound:
    """A command the OS will not find for Codex: what is wrong, and what to do."""

    problem: str
    fix: str

    def line(self) -> str:
        return f"{self.problem}: {self.fix}"


def not_found(
    command: str, path: str, cwd: str | None = None, near: Sequence[str] = ()
) -> NotFound:
    """`mcp-server-time` is not on Codex's PATH (...), with where it is when this shell's PATH
    or one of the `near` directories (the gateway's own, say: a venv's bin) has it."""
    if os.sep in command:
        where = f" (relative to {cwd})" if cwd and not os.path.isabs(command) else ""
        return NotFound(f"`{command}`{where} is not an executable file", "give its absolute path")
    here = shutil.which(command) or (
        shutil.which(command, path=os.pathsep.join(near)) if near else None
    )
    fix = f'give its absolute path: command = "{here}"'
    return NotFound(
        f"`{command}` is not on Codex's PATH ({path or 'empty'})",
        fix if here else "give its absolute path in `command`",
    )

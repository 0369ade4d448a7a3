"""Finding the Codex CLI to drive, and checking that it is new enough (specs/codex-tools.md,
"Versions")."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from .errors import CodexUnavailable

CODEX_BIN_ENV: Final = "CODEX_BIN"
#: The oldest Codex whose `app-server` passes tests/codex in full (0.99.0, 0.100.0, 0.130.0,
#: 0.153.4 and 0.169.0 were run; older ones fail: see specs/codex-tools.md, "Versions").
MIN_VERSION: Final = (0, 99, 0)
UPGRADE_HINT: Final = "npm install -g @openai/codex@latest"
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")
_versions: dict[tuple[str, int, int], tuple[int, int, int]] = {}

Version = tuple[int, int, int]


def format_version(version: Version) -> str:
    return ".".join(map(str, version))


@dataclass(frozen=True, slots=True)
class CodexBinary:
    path: str
    version: Version
    #: How it was found, for messages: "CODEX_BIN" or "PATH".
    source: str

    @property
    def version_text(self) -> str:
        return format_version(self.version)


def locate(env: Mapping[str, str] | None = None) -> tuple[str, str]:
    """(path, source) of the executable to run; raises CodexUnavailable naming what was tried."""
    env = os.environ if env is None else env
    configured = env.get(CODEX_BIN_ENV)
    if configured:
        path = os.path.expanduser(configured)
        if not os.path.isfile(path):
            raise CodexUnavailable(
                f"Codex CLI not found: {CODEX_BIN_ENV}={configured} does not exist "
                f"(point {CODEX_BIN_ENV} at the codex executable, or unset it to use `codex` "
                f"on PATH)"
            )
        if not os.access(path, os.X_OK):
            raise CodexUnavailable(
                f"Codex CLI not runnable: {CODEX_BIN_ENV}={configured} is not executable"
            )
        return path, CODEX_BIN_ENV
    found = shutil.which("codex", path=env.get("PATH"))
    if found is None:
        raise CodexUnavailable(
            f"Codex CLI not found: {CODEX_BIN_ENV} is not set and there is no `codex` on PATH "
            f"(PATH={env.get('PATH', '')}). Install it ({UPGRADE_HINT}; "
            f"{format_version(MIN_VERSION)} or newer) or set {CODEX_BIN_ENV}."
        )
    return found, "PATH"


def parse_version(text: str) -> Version | None:
    """`codex-cli 0.169.0` (or a pre-release like `0.170.0-alpha.2`) -> (0, 169, 0)."""
    match = _VERSION.search(text)
    if match is None:
        return None
    major, minor, patch = (int(part) for part in match.groups())
    return major, minor, patch


async def read_version(
    path: str, env: Mapping[str, str] | None = None, timeout: float = 30
) -> Version:
    key = _cache_key(path)
    cached = _versions.get(key)
    if cached is not None:
        return cached
    try:
        process = await asyncio.create_subprocess_exec(
            path,
            "--version",
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=dict(os.environ if env is None else env),
        )
    except OSError as exc:
        raise CodexUnavailable(f"Codex CLI at {path} cannot be started: {exc}") from None
    try:
        out, err = await asyncio.wait_for(process.communicate(), timeout)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise CodexUnavailable(
            f"Codex CLI at {path}: `--version` did not answer within {timeout:g} s"
        ) from None
    text = out.decode(errors="replace").strip()
    version = parse_version(text) if process.returncode == 0 else None
    if version is None:
        detail = text or err.decode(errors="replace").strip()
        raise CodexUnavailable(
            f"Codex CLI at {path}: `--version` exited with code {process.returncode} and "
            f"printed {detail[:200]!r}; expected `codex-cli X.Y.Z`"
        )
    _versions[key] = version
    return version


def _cache_key(path: str) -> tuple[str, int, int]:
    # A stat is cheap enough for the loop; re-reading the version would not be.
    stat = os.stat(path)
    return os.path.realpath(path), stat.st_size, stat.st_mtime_ns


async def find_codex(
    env: Mapping[str, str] | None = None, minimum: Version = MIN_VERSION
) -> CodexBinary:
    """The Codex CLI to drive, checked to be at least `minimum`; raises CodexUnavailable."""
    path, source = locate(env)
    version = await read_version(path, env)
    if version < minimum:
        raise CodexUnavailable(
            f"Codex CLI at {path} (from {source}) is version {format_version(version)}; "
            f"serving the codex tools needs {format_version(minimum)} or newer, for "
            f"`codex app-server`. Upgrade it ({UPGRADE_HINT}) or point {CODEX_BIN_ENV} at a "
            f"newer one."
        )
    return CodexBinary(path, version, source)

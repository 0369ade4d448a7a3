"""The stdio children started first thing, while the gateway imports the rest of itself,
and adopted by their connections (specs/gateway.md, "The command line"). Only what the
gateway starts at once, and only where a pidfd can hand the process to the event loop."""

from __future__ import annotations

import contextlib
import os
import subprocess
from typing import TYPE_CHECKING

from ..children.lifetime import adopt_orphans, die_with_parent
from .load import CHILD_ENV, child_environment

if TYPE_CHECKING:
    from .model import GatewayConfig, StdioTarget

#: server name -> (how it was started, the running process)
_started: dict[str, tuple[tuple[object, ...], subprocess.Popen[bytes]]] = {}


def _identity(target: StdioTarget, env: dict[str, str]) -> tuple[object, ...]:
    """How it is started, but for its tag (each start has its own)."""
    variables = tuple(sorted((k, v) for k, v in env.items() if k != CHILD_ENV))
    return (target.command, target.args, target.cwd, variables)


def _pidfds_work() -> bool:
    """Whether this process may open pidfds: Linux 5.3+, and not refused by a seccomp
    profile or a tracer (then children start the ordinary way, after the imports)."""
    if not hasattr(os, "pidfd_open"):
        return False
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError:
        return False
    return True


def start_children(config: GatewayConfig) -> None:
    """Start the children the gateway would start at once (see the module's docstring)."""
    from .model import StdioTarget

    adopt_orphans()  # first: an orphan of a child started now comes to us too
    if not _pidfds_work():  # the transport waits on a pidfd for an adopted child
        return
    for server in config.enabled_servers:
        target = server.target
        if server.per_session or server.lazy or not isinstance(target, StdioTarget):
            continue
        env = child_environment(target.env)
        try:
            process = subprocess.Popen(
                [target.command, *target.args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                cwd=target.cwd,
                start_new_session=True,  # as StdioTransport starts it
                preexec_fn=die_with_parent(),
            )
        except (OSError, ValueError):  # the usual start says what is wrong, in the usual words
            continue
        _started[server.name] = (_identity(target, env), process)


def take(name: str, target: StdioTarget, env: dict[str, str]) -> subprocess.Popen[bytes] | None:
    """The child `name` started early with exactly this command, arguments, directory and
    environment, once; None when there is none (then it is started the usual way)."""
    found = _started.pop(name, None)
    if found is None:
        return None
    identity, process = found
    if identity != _identity(target, env) or process.poll() is not None:
        with contextlib.suppress(OSError):  # its entry changed, or it is gone: start afresh
            process.kill()
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            process.wait(1)
        return None
    return process

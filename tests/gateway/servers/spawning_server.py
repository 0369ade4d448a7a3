"""A child server that starts processes which leave its process group, then becomes the broken
server (`exec`, same pid), so the gateway sees an ordinary child.

    spawning_server.py PIDS_FILE [broken server args...]

Before it serves it writes PIDS_FILE: one JSON object naming each process it left behind,
and the tag the gateway gave it in its environment:

- `setsid`: `setsid sleep 300`, its own session, still its child;
- `daemon`: a double-forked `sleep 300` (fork, setsid, fork, the middle one exits): no
  longer anybody's child but whoever adopts orphans;
- `bare`: `setsid sleep 300` started with an environment of its own (no gateway tag in it);
- `orphan`: `sleep 300 &` of a shell that then exits: in its session, nobody's child.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SERVERS = Path(__file__).parent
SLEEP = ["sleep", "300"]


def _daemon() -> int:
    """A `sleep` two forks away, in a session of its own, its parent gone: its pid."""
    read, write = os.pipe()
    middle = os.fork()
    if middle == 0:
        os.close(read)
        os.setsid()
        pid = os.fork()
        if pid == 0:
            os.close(write)
            os.execvp(SLEEP[0], SLEEP)
        os.write(write, str(pid).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        pid = int(pipe.read())
    os.waitpid(middle, 0)
    return pid


def main() -> None:
    pids_file, *server_args = sys.argv[1:]
    quiet = {
        "stdin": subprocess.DEVNULL,
        "stdout": subprocess.DEVNULL,
        "stderr": subprocess.DEVNULL,
    }
    left = {
        "setsid": subprocess.Popen(["setsid", *SLEEP], **quiet).pid,  # type: ignore[call-overload]
        "daemon": _daemon(),
        "bare": subprocess.Popen(  # type: ignore[call-overload]
            ["setsid", *SLEEP], env={"PATH": os.environ.get("PATH", os.defpath)}, **quiet
        ).pid,
        "orphan": int(
            subprocess.run(
                ["sh", "-c", "sleep 300 >/dev/null 2>&1 & echo $!"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        ),
        "tag": os.environ.get("CODEX_MCP_GATEWAY_CHILD"),
    }
    Path(pids_file).write_text(json.dumps(left))
    broken = str(SERVERS / "broken_server.py")
    os.execv(sys.executable, [sys.executable, broken, *server_args])


if __name__ == "__main__":
    main()

"""A second process writing the trust lock: records `count` tools of server `name`, one
change of the file each, as a gateway does when it meets new tools (test_lock_race.py)."""

from __future__ import annotations

import sys
from pathlib import Path

from codex_mcp.trust.lock import LockFile, tool_pin


def main() -> None:
    path, name, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    lock = LockFile(path)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    sys.stdin.readline()  # go: every writer starts at the same moment
    for number in range(count):
        pin = tool_pin(f"t{number}", {"description": f"{name} {number}"})
        lock.change(
            lambda state, n=number, p=pin: state.put(state.trusted, name, "tools", f"t{n}", p)
        )


if __name__ == "__main__":
    main()

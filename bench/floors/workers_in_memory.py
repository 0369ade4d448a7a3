"""The floor of `--workers N` on Redis: the same supervisor and N workers on one port, each
keeping its sessions in memory (no Redis at all).

    python bench/floors/workers_in_memory.py N PORT [codex-mcp-http options...]

`codex-mcp-http` refuses `--workers N` without Redis, since a session's requests may reach
any worker; the bench's load keeps each session on its own connection, so each session
stays on the worker that made it and this runs correctly. It is the same processes as
`--workers N --redis-url ...` (the supervisor, N workers, SO_REUSEPORT, the batched
metrics): what the Redis rows cost beyond it is what Redis costs, and what this costs
beyond one process is what more processes than cores cost on this machine.
"""

from __future__ import annotations

import sys

from codex_mcp.scale.workers import Supervisor


def main() -> None:
    workers, port, *options = sys.argv[1:]
    supervisor = Supervisor(
        [*options, "--log-level", "warning"], int(workers), "127.0.0.1", int(port), 5.0
    )
    raise SystemExit(supervisor.run())


if __name__ == "__main__":
    main()

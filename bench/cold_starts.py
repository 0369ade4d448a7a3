"""Cold starts alone: codex-mcp beside a baseline and the floors, started in turn, many rounds.

    python bench/cold_starts.py [--baseline REF] [--rounds 15] [--only stdio,http,gateway]

The same servers and commands as bench/run.py's cold starts (stdio to its initialize answer;
HTTP to initialize and initialized; the gateway `codex-mcp -- <echo server>` to its initialize
answer, its child's start included), without the load cases around them, so a change to
start-up is compared in minutes: each kind's servers are started one after another, round
after round, and the medians of wall time and of the process's own CPU (the steadier of the
two on a shared machine) are printed with their ratios to the floor and to the baseline.
"""

from __future__ import annotations

import argparse
import os

from harness import ROOT, cold_starts, compiled
from run import GATEWAY_SERVERS, SERVERS, Server, baseline_gateway, baseline_server, env_with


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", metavar="REF", help="codex-mcp at this git ref or path")
    parser.add_argument("--rounds", type=int, default=15, help="starts of each server")
    parser.add_argument("--only", default="stdio,http,gateway", help="kinds to start")
    options = parser.parse_args()
    compiled(ROOT)  # as run.py does: otherwise each start compiles what it imports
    kinds = {word.strip() for word in options.only.split(",")}
    baseline = baseline_server(options.baseline) if options.baseline else None
    ours = [s for s in SERVERS if s.name in ("codex-mcp", "floor")]
    gateway: list[Server] = [
        s for s in GATEWAY_SERVERS if s.name in ("direct", "codex-mcp gateway")
    ]
    if baseline is not None:
        ours.insert(1, baseline)
        gateway.append(baseline_gateway(baseline))
    for kind in ("stdio", "http", "gateway"):
        if kind not in kinds:
            continue
        servers = gateway if kind == "gateway" else ours
        started = [
            (s.name, (s.http if kind == "http" else s.stdio) or [], env_with(s)) for s in servers
        ]
        figures = cold_starts(started, options.rounds, kind == "http")
        floor = figures.get("floor") or figures.get("direct")
        before = next((f for name, f in figures.items() if " @" in name), None)
        print(
            f"\n## {kind} cold start, medians of {options.rounds} (load {os.getloadavg()[0]:.1f})"
        )
        for name, (wall, cpu) in figures.items():
            shown = f"  {name:32s} wall {wall:6.1f} ms  CPU {cpu or 0:6.1f} ms"
            for other, word in ((floor, "floor"), (before, "baseline")):
                if other and other is not figures[name]:
                    shown += f"  x{word} {wall / other[0]:.2f} / {(cpu or 0) / (other[1] or 1):.2f}"
            print(shown, flush=True)


if __name__ == "__main__":
    main()

"""`codex-mcp trust`: what is pending in the trust lock of the configuration the gateway
serves, as a readable diff; `--accept NAME`, `--accept-all`, `--reject [NAME]`
(specs/trust.md, "`codex-mcp trust`")."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from codex_mcp.gateway.config.json_file import ConfigError
from codex_mcp.gateway.config.load import display_path, load_config, passthrough_config, read_config
from codex_mcp.gateway.config.model import GatewayConfig

from .lock import LockError, LockFile, LockState, existing_locks
from .pinning import accepting, matching, rejecting
from .review import pending_report

ALL = "\0all"
REJECT_MEANS = (
    "--reject keeps the trusted definition: the changed item stays withheld while its server "
    "serves it, and is pending again when a gateway next sees it"
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="codex-mcp trust",
        description="Show what changed in the tools and skills of the gateway's servers since "
        "they were trusted (pinned in the trust lock), and accept or reject it. The "
        "configuration is found as the gateway finds it (CODEX_MCP_WRAPPER_CONFIG, the nearest "
        ".mcp.json, ~/.codex/.mcp.json), or give --config FILE, or -- CMD for a wrapped server.",
        epilog="Exit status: 0 nothing pending, 1 something pending, 2 an unusable config or lock.",
    )
    parser.add_argument("command", nargs="*", help="after --: the wrapped server's command")
    parser.add_argument(
        "--config", type=Path, help="the .mcp.json (default: found as the gateway finds it)"
    )
    parser.add_argument(
        "--accept", action="append", default=[], metavar="NAME",
        help="trust what is pending for NAME: a server, server/name, or a tool's or skill's name (repeatable)",
    )  # fmt: skip
    parser.add_argument("--accept-all", action="store_true", help="trust everything pending")
    parser.add_argument(
        "--reject", action="append", nargs="?", const=ALL, default=[], metavar="NAME",
        help="forget what is pending for NAME (all, without NAME); the trusted definition stays",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print what is pending as JSON")
    return parser


def config_for(command: list[str], path: Path | None) -> GatewayConfig:
    """The configuration as the gateway would find it; ConfigError when there is none."""
    if command:
        return passthrough_config(command)
    config = read_config(path) if path is not None else load_config()
    if config is None:
        raise ConfigError("no .mcp.json found: give --config FILE, or -- CMD for a wrapped server")
    return config


def main(argv: list[str]) -> int:
    options = _parser().parse_args(argv)
    try:
        config = config_for(options.command, options.config)
    except ConfigError as error:
        print(f"codex-mcp trust: {error}", file=sys.stderr)
        return 2
    # The shell's lock and the one a gateway Codex starts uses, when they differ and both
    # exist: each is shown, and an accept or reject applies to each that has it pending.
    locks = existing_locks(config)
    try:
        states = [lock.read() for lock, _whose in locks]
        unknown = _unknown(states, options)
        if unknown:
            return 2
        said: list[str] = []
        for index, (lock, _whose) in enumerate(locks):
            done = _decide(lock, states[index], options)
            states[index] = lock.read() if done else states[index]
            said += done
    except LockError as error:
        print(f"codex-mcp trust: {error}", file=sys.stderr)
        print(
            "codex-mcp trust: fix it or remove it (everything is then trusted anew on first use)",
            file=sys.stderr,
        )
        return 2
    for line in said:
        print(line)
    if options.json:
        return _json(locks, states)
    source = display_path(config.path) if config.path else f"the wrapped {config.servers[0].name}"
    shown = [
        _show(lock, whose, source, state)
        for (lock, whose), state in zip(locks, states, strict=True)
    ]
    if any(shown):
        print(
            "Trust one with `codex-mcp trust --accept NAME` (a server, server/name, or name), all "
            f"with --accept-all; {REJECT_MEANS}."
        )
    return 1 if any(shown) else 0


def _unknown(states: list[LockState], options: argparse.Namespace) -> bool:
    """Whether a NAME given names nothing pending in any lock (said on stderr)."""
    names = [*options.accept, *(n for n in options.reject if n != ALL)]
    unknown = [name for name in names if not any(matching(state, [name]) for state in states)]
    if not unknown:
        return False
    pending = ", ".join(f"{s}/{n}" for state in states for s, _, n, _ in state.items(state.pending))
    print(
        f"codex-mcp trust: nothing pending is named {', '.join(unknown)} (pending: {pending or 'none'})",
        file=sys.stderr,
    )
    return True


def _decide(lock: LockFile, state: LockState, options: argparse.Namespace) -> list[str]:
    """Accept and reject what the options name in this lock; the lines that say so."""
    said: list[str] = []
    for names, everything, edit, verb in (
        (options.accept, options.accept_all, accepting, "accepted"),
        ([n for n in options.reject if n != ALL], ALL in options.reject, rejecting, "rejected"),
    ):
        if not names and not everything:
            continue
        chosen = matching(state, [] if everything else names)
        if everything:
            chosen = [(s, k, n) for s, k, n, _ in state.items(state.pending)]
        if chosen:
            state = lock.change(edit(chosen))
        said += [f"{verb}: {server}/{name} ({kind[:-1]})" for server, kind, name in chosen]
        if verb == "rejected" and chosen:
            said.append(f"  ({REJECT_MEANS})")
    return said


def _json(locks: list[tuple[LockFile, str]], states: list[LockState]) -> int:
    documents = []
    for (lock, whose), state in zip(locks, states, strict=True):
        documents.append({
            "lock": str(lock.path),
            "whose": whose or None,
            "trusted": len(list(state.items(state.trusted))),
            "pending": [
                {
                    "server": server, "kind": kind, "name": name,
                    "trusted": (old.definition if (old := state.get(state.trusted, server, kind, name)) else None),
                    "served": pin.definition,
                }
                for server, kind, name, pin in state.items(state.pending)
            ],
        })  # fmt: skip
    print(json.dumps({"locks": documents}, indent=2))
    return 1 if any(document["pending"] for document in documents) else 0


def _show(lock: LockFile, whose: str, source: str, state: LockState) -> bool:
    """What one lock holds pending (whether anything is)."""
    pending = list(state.items(state.pending))
    print(f"Trust lock: {lock.shown} (for {source}{'; ' + whose if whose else ''})")
    if not pending:
        trusted = len(list(state.items(state.trusted)))
        print(f"Nothing pending; {trusted} tool(s) and skill(s) trusted.")
        return False
    print(f"{len(pending)} pending, withheld from Codex until accepted:")
    for line in pending_report(state):
        print(line)
    return True

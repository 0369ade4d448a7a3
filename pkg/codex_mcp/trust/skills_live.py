"""The gateway keeping Codex's skills folder in sync while it runs (`"gateway": {"skills_sync":
true}`, off by default; specs/trust.md, "Skills into Codex"): after what its children offer
changes, and after the lock changes, the skills of the children that are up are written as
`codex-mcp skills sync` writes them, decided by the gateway's policy for the local user and
pinned in the same lock.

The children are read as their own client (each child's session), not through a session of
the gateway: a second front session would make a shared child's messages nobody's
(relay/attribution.py: with two callers, a question it asks during a call cannot be tied to
that call)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from codex_mcp.client.session import ClientSession
from codex_mcp.client.skills import SkillFeatures
from codex_mcp.core.errors import McpError
from codex_mcp.gateway.routing.catalog import outer_uri
from codex_mcp.policy.point import PolicyPoint
from codex_mcp.policy.rules import Caller, Target

from .codex_skills import DestinationError, SkillsFolder
from .lock import LockError, run_apart
from .skills_sync import Allowed, Locate, Source, gather, skill_path

if TYPE_CHECKING:
    from codex_mcp.gateway.children.child import Child

    from .point import TrustPoint

log = logging.getLogger("codex_mcp.gateway")

#: A burst of changes (children coming up one after another) is one sync.
SETTLE_SECONDS = 0.5


class ChildSkills(SkillFeatures):
    """The Skills extension's client methods on one child's own session."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session


class LiveSync:
    def __init__(self, point: TrustPoint, home: Path) -> None:
        self.point = point
        self.folder = SkillsFolder(home)
        self._running: asyncio.Task[None] | None = None
        self._again = False
        self._said: set[str] = set()

    def poke(self) -> None:
        """Something changed: sync soon (once more after a sync already running)."""
        if self._running is not None and not self._running.done():
            self._again = True
            return
        self._running = asyncio.ensure_future(self._run())
        self.point.keep(self._running)

    async def _run(self) -> None:
        while True:
            self._again = False
            await asyncio.sleep(SETTLE_SECONDS)
            try:
                await self.once()
            except (DestinationError, LockError, McpError, OSError) as error:
                self._say(logging.WARNING, f"skills not synced into Codex: {error}")
            if not self._again:
                return

    async def once(self) -> None:
        provider = self.point.provider
        config = provider.config
        up = [child for child in provider.shared if child.connection is not None]
        sources = [
            Source(ChildSkills(child.connection.session), _locate(child), self._allowed(child))
            for child in up
            if child.connection is not None
        ]
        gathered = await gather(sources, config, self.point.state)
        self.point.record(gathered.judged)
        down = {server.name for server in config.servers} - {child.name for child in up}
        report = await run_apart(
            lambda: self.folder.sync(
                gathered.bundles, gathered.keep, keep_servers=down, dry_run=False
            )
        )
        for line in report.lines + gathered.skipped:
            problem = line.startswith(("skipped", "withheld", "left"))
            self._say(logging.WARNING if problem else logging.INFO, f"skills sync: {line}")

    def _allowed(self, child: Child) -> Allowed | None:
        point = self.point.core.extension(PolicyPoint)
        if point is None:
            return None
        passthrough = self.point.provider.passthrough

        async def allowed(uri: str) -> bool:
            target = Target("resource", outer_uri(child.name, uri, passthrough), child.name, uri)
            verdict = await point.policy.decide(Caller(), target, "list", point.targets.rules())
            return verdict.allowed

        return allowed

    def _say(self, level: int, line: str) -> None:
        if line not in self._said:  # each thing once, not at every sync
            self._said.add(line)
            log.log(level, "%s", line)


def _locate(child: Child) -> Locate:
    name = child.name
    return lambda uri: (name, skill_path(uri))

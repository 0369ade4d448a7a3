"""A server for the policy's skills and listen tests: two skills defined in code (one the
policy hides), each with a supporting file in a subfolder, and two resources that change
together every 0.2 s (one the policy hides), each change announced to its subscribers.
(The changes come from the server itself, not from a call: behind a gateway a 2026-07-28
front's calls may reach another process of the child than its subscriptions.)"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from codex_mcp import Server

version = 0


@asynccontextmanager
async def changing(server: Server) -> AsyncIterator[None]:
    async def tick() -> None:
        global version
        while True:
            await asyncio.sleep(0.2)
            version += 1
            server.notify_resource_updated("mem://hidden")
            server.notify_resource_updated("mem://watched")

    ticking: asyncio.Task[Any] = asyncio.create_task(tick())
    try:
        yield
    finally:
        ticking.cancel()


server = Server("policy-skilled", lifespan=changing)

for skill in ("open-skill", "secret-skill"):
    server.add_skill(
        skill,
        f"The {skill}",
        f"# {skill}\n\nthe {skill} instructions",
        files={"notes/extra.md": f"the {skill} notes"},
    )


@server.resource("mem://watched", name="watched")
def watched() -> str:
    return f"watched version {version}"


@server.resource("mem://hidden", name="hidden")
def hidden() -> str:
    return f"hidden version {version}"


if __name__ == "__main__":
    server.run()

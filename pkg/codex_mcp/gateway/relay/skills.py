"""The children's skills through the gateway (SEP-2640; specs/skills.md, "Through the
gateway"): listed together, each skill's URIs (its own, its files', its folders') in its
server's namespace as every resource URI is (`skill://<server>/<skill-path>/...`: routing's
outer_uri, handed in), and skills/get and resources/directory/read relayed to the child that
owns the URI. A child's entries are its own: the gateway rewrites URIs only, so the
digests still verify what the child serves; an entry a host may not load (the client's
checks) is left out, a skill listed twice is listed once, and a child failing to list is logged and
listed as empty."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from codex_mcp.client.skills import Skill, SkillVerificationError
from codex_mcp.core.context import RequestContext
from codex_mcp.core.errors import McpError
from codex_mcp.core.jsonrpc import INTERNAL_ERROR, JsonObject
from codex_mcp.core.skills import SKILLS_EXTENSION, NotADirectory, UnknownSkill

from ..children.child import Child
from . import calls as relay

#: A child's URI as the gateway serves it: (the child's name, its URI) -> ours (routing's
#: outer_uri, with the gateway's passthrough setting).
Outer = Callable[[str, str], str]
#: The child owning one of our URIs, and the URI as the child knows it (routing's catalog).
Route = tuple[Child, str] | None

log = logging.getLogger("codex_mcp.gateway")

#: Pages of one child's listing followed at most (a child repeating cursors ends sooner).
MAX_PAGES = 100


def skills_settings(child: Child) -> JsonObject | None:
    """The Skills extension settings a child that is up declares, or None."""
    connection = child.connection
    return _settings(connection.capabilities) if connection is not None else None


def _settings(capabilities: JsonObject) -> JsonObject | None:
    extensions = capabilities.get("extensions")
    settings = extensions.get(SKILLS_EXTENSION) if isinstance(extensions, dict) else None
    return settings if isinstance(settings, dict) else None


#: What a gateway declares while a child may still offer skills (not known yet): all of it.
ALL_FEATURES = ("skills", "directories")


def features(offers: Sequence[JsonObject]) -> tuple[str, ...]:
    """ "skills" when a child (by what it declares) serves skills, "directories" when one
    reads them."""
    declared = [settings for offer in offers if (settings := _settings(offer)) is not None]
    found: tuple[str, ...] = ("skills",) if declared else ()
    if any(settings.get("directoryRead") is True for settings in declared):
        found += ("directories",)
    return found


async def list_skills(
    children: Sequence[Child], ctx: RequestContext, outer: Outer
) -> list[JsonObject]:
    found: list[JsonObject] = []
    seen: set[str] = set()
    for child in children:
        if skills_settings(child) is None:
            continue
        try:
            entries = await _every_page(child, ctx)
        except McpError as error:
            log.warning("%s: skills/list failed: %s", child.name, error.message)
            continue
        for raw in entries:
            entry = _outer_entry(child.name, raw, outer)
            if entry is not None and entry["uri"] not in seen:  # a page repeated: once
                if not _loadable(entry):
                    continue
                seen.add(entry["uri"])
                found.append(entry)
    return found


async def skill_uris(child: Child, ctx: RequestContext, outer: Outer) -> set[str]:
    """The SKILL.md URIs (as served) of `child`'s skills, listed live (its error raised: the
    policy decides a skill's files by them, and refuses when they cannot be known)."""
    if skills_settings(child) is None:
        return set()
    entries = (_outer_entry(child.name, raw, outer) for raw in await _every_page(child, ctx))
    return {entry["uri"] for entry in entries if entry is not None}


async def get_skill(route: Route, uri: str, ctx: RequestContext, outer: Outer) -> JsonObject:
    if route is None or skills_settings(route[0]) is None:
        raise UnknownSkill(uri)
    child, inner = route
    result = await relay.request(child, "skills/get", {"uri": inner}, ctx)
    entry = _outer_entry(child.name, result.get("skill"), outer)
    if entry is None or entry["uri"] != uri or not _loadable(entry):
        raise McpError(
            INTERNAL_ERROR, f"{child.name}: skills/get answered with no entry of {inner}"
        )
    return entry


async def read_directory(
    route: Route, uri: str, ctx: RequestContext, outer: Outer
) -> list[JsonObject]:
    settings = skills_settings(route[0]) if route is not None else None
    if route is None or settings is None or settings.get("directoryRead") is not True:
        raise NotADirectory(uri)
    child, inner = route
    children: list[JsonObject] = []
    cursor: Any = None
    for _page in range(MAX_PAGES):
        params: JsonObject = {"uri": inner, **({"cursor": cursor} if cursor else {})}
        result = await relay.request(child, "resources/directory/read", params, ctx)
        items = result.get("resources")
        for item in items if isinstance(items, list) else ():
            if isinstance(item, dict) and isinstance(item.get("uri"), str):
                children.append({**item, "uri": outer(child.name, item["uri"])})
        cursor = result.get("nextCursor")
        if not isinstance(cursor, str) or not cursor:
            break
    return children


async def _every_page(child: Child, ctx: RequestContext) -> list[Any]:
    entries: list[Any] = []
    seen: set[str] = set()
    cursor: str | None = None
    for _page in range(MAX_PAGES):
        params: JsonObject = {"cursor": cursor} if cursor else {}
        result = await relay.request(child, "skills/list", params, ctx)
        skills = result.get("skills")
        entries.extend(skills if isinstance(skills, list) else ())
        next_cursor = result.get("nextCursor")
        if not isinstance(next_cursor, str) or not next_cursor or next_cursor in seen:
            break
        seen.add(next_cursor)
        cursor = next_cursor
    return entries


def _loadable(entry: JsonObject) -> bool:
    """Whether an entry is one a host may load (the client's checks): others are not
    relayed, so an invalid entry cannot hide a valid one of the same URI."""
    try:
        Skill.from_json(entry)
    except SkillVerificationError:
        return False
    return True


def _outer_entry(server: str, entry: Any, outer: Outer) -> JsonObject | None:
    """A child's entry with its URIs in the child's namespace; None if it is no entry."""
    if not isinstance(entry, dict) or not isinstance(entry.get("uri"), str):
        return None
    outer_entry = {**entry, "uri": outer(server, entry["uri"])}
    resources = entry.get("resources")
    if isinstance(resources, list):
        outer_entry["resources"] = [
            {**item, "uri": outer(server, item["uri"])}
            for item in resources
            if isinstance(item, dict) and isinstance(item.get("uri"), str)
        ]
    return outer_entry

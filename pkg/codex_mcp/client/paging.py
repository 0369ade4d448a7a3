"""Listings page by page: one page of a `*/list` result, and every page of a listing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codex_mcp.core.jsonrpc import JsonObject

from .types import Page

if TYPE_CHECKING:
    from .session import ClientSession


async def every_page(
    session: ClientSession,
    method: str,
    key: str,
    cursor: str | None = None,
    timeout: float | None = None,
    max_pages: int | None = None,
) -> Page[JsonObject]:
    """Every page of a listing from `cursor` (a cursor seen twice ends it, as would
    `max_pages`); the last page's raw result comes along."""
    items: list[JsonObject] = []
    seen: set[str] = set()
    raw: JsonObject = {}
    pages = 0
    while True:
        raw = await session.request(method, {"cursor": cursor} if cursor else None, timeout=timeout)
        page = page_of(raw, key)
        items.extend(page)
        cursor = page.next_cursor
        pages += 1
        # A server repeating a cursor would loop forever.
        if not cursor or cursor in seen or (max_pages is not None and pages >= max_pages):
            return Page(items, None, raw)
        seen.add(cursor)


def page_of(raw: JsonObject, key: str) -> Page[JsonObject]:
    items = raw.get(key)
    cursor = raw.get("nextCursor")
    return Page(
        [i for i in items if isinstance(i, dict)] if isinstance(items, list) else [],
        cursor if isinstance(cursor, str) and cursor else None,
        raw,
    )

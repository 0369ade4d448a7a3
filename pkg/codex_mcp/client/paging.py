"""Listings page by page: one page of a `*/list` result, and every page of a listing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codex_mcp.core.jsonrpc import JsonObject

from .types import Page

if TYPE_CHECKING:
    from .session import ClientSession


#: The pages one listing follows at most: a server handing out a new cursor with every
#: page would otherwise grow the listing, and keep us asking, without end.
MAX_PAGES = 1000


async def every_page(
    session: ClientSession,
    method: str,
    key: str,
    cursor: str | None = None,
    timeout: float | None = None,
    max_pages: int = MAX_PAGES,
) -> Page[JsonObject]:
    """Every page of a listing from `cursor`, with the last page's raw result. A cursor
    seen before ends it (next_cursor None); so does the `max_pages`th page, with the
    cursor to go on from as next_cursor."""
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
        if not cursor or cursor in seen:  # a server repeating a cursor would loop forever
            return Page(items, None, raw)
        if pages >= max_pages:
            return Page(items, cursor, raw)
        seen.add(cursor)


def page_of(raw: JsonObject, key: str) -> Page[JsonObject]:
    items = raw.get(key)
    cursor = raw.get("nextCursor")
    return Page(
        [i for i in items if isinstance(i, dict)] if isinstance(items, list) else [],
        cursor if isinstance(cursor, str) and cursor else None,
        raw,
    )

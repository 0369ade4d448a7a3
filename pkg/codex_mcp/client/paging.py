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
    *,
    params: JsonObject | None = None,
) -> Page[JsonObject]:
    """Every page of a listing from `cursor` (`params`: the request's others), with the last
    page's raw result. A cursor seen before ends it (next_cursor None); so does the
    `max_pages`th page, with the cursor to go on from as next_cursor."""
    items: list[JsonObject] = []
    seen: set[str] = set()
    while True:
        page = await listing(session, method, key, cursor, timeout, params)
        items.extend(page)
        cursor = page.next_cursor
        if not cursor or cursor in seen:  # a server repeating a cursor would loop forever
            return Page(items, None, page.raw)
        seen.add(cursor)
        if len(seen) >= max_pages:
            return Page(items, cursor, page.raw)


async def listing(
    session: ClientSession,
    method: str,
    key: str,
    cursor: str | None,
    timeout: float | None,
    params: JsonObject | None = None,
    *,
    all_pages: bool = False,
) -> Page[JsonObject]:
    """One page of a listing from `cursor`, or every page from there with `all_pages`."""
    if all_pages:
        return await every_page(session, method, key, cursor, timeout, params=params)
    asked = {**(params or {}), "cursor": cursor} if cursor else params
    return page_of(await session.request(method, asked, timeout=timeout), key)


def page_of(raw: JsonObject, key: str) -> Page[JsonObject]:
    items = raw.get(key)
    cursor = raw.get("nextCursor")
    return Page(
        [i for i in items if isinstance(i, dict)] if isinstance(items, list) else [],
        cursor if isinstance(cursor, str) and cursor else None,
        raw,
    )

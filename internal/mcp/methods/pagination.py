"""Opaque cursors for list methods: the cursor is the base64 of the next offset."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any, Final

import orjson

from ..jsonrpc import JsonObject, invalid_params

#: Pages kept encoded at once (listings of several providers, sessions or page offsets).
ENCODED_PAGES: Final = 16


class EncodedPages:
    """Pages of listings, each encoded once and sent as it is (an `orjson.Fragment`) for
    as long as the provider hands back the same listing: providers keep a listing until it
    changes (FunctionProvider does), and a change they announce (list_changed) empties
    this, so a listing changed in place is encoded afresh too. A provider that builds a
    new listing per call gets no hits, and pays one encoding per page as before."""

    def __init__(self) -> None:
        self._pages: dict[tuple[int, int, int], tuple[Sequence[JsonObject], int, Any]] = {}

    def page(self, items: Sequence[JsonObject], offset: int, page_size: int) -> Any:
        key = (id(items), offset, page_size)
        hit = self._pages.get(key)
        # The listing is held, so its id names no other object while it is here.
        if hit is not None and hit[0] is items and hit[1] == len(items):
            return hit[2]
        fragment = orjson.Fragment(orjson.dumps(list(items[offset : offset + page_size])))
        if len(self._pages) >= ENCODED_PAGES:
            self._pages.clear()
        self._pages[key] = (items, len(items), fragment)
        return fragment

    def clear(self) -> None:
        self._pages.clear()


def paginate(
    items: Sequence[JsonObject],
    params: JsonObject,
    page_size: int,
    key: str,
    encoded: EncodedPages | None = None,
) -> JsonObject:
    """One page of `items` (encoded once and kept, with `encoded`)."""
    cursor = params.get("cursor")
    offset = 0 if cursor is None else _decode(cursor)
    if encoded is not None:
        page: Any = encoded.page(items, offset, page_size)
    else:
        page = list(items[offset : offset + page_size])
    result: JsonObject = {key: page}
    if offset + page_size < len(items):
        result["nextCursor"] = base64.urlsafe_b64encode(str(offset + page_size).encode()).decode()
    return result


def _decode(cursor: Any) -> int:
    try:
        offset = int(base64.urlsafe_b64decode(str(cursor).encode()).decode())
    except (ValueError, UnicodeDecodeError):
        raise invalid_params(f"Invalid cursor: {cursor!r}") from None
    if offset < 0:
        raise invalid_params(f"Invalid cursor: {cursor!r}")
    return offset

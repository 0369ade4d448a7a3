"""Opaque cursors for list methods: the cursor is the base64 of the next offset."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

from ..jsonrpc import JsonObject, invalid_params


def paginate(
    items: Sequence[JsonObject], params: JsonObject, page_size: int, key: str
) -> JsonObject:
    cursor = params.get("cursor")
    offset = 0 if cursor is None else _decode(cursor)
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

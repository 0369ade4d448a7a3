"""Freed memory handed back to the operating system (glibc's `malloc_trim`; elsewhere a
no-op): around a large message (decision 45), and after HTTP sessions end (decision 86)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import cache

#: Messages from this size up are followed by a trim (a few hundred µs against the tens of
#: milliseconds such a message costs to parse).
LARGE_MESSAGE = 4 * 1024 * 1024


@cache
def _trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim, looked up at the first trim: ctypes and its search were ~5 ms
    of every start (ctypes.util.find_library runs `ldconfig -p` in a subprocess), for a
    trim most processes never make. The interpreter's own symbols hold libc's."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        trim: Callable[[int], int] = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
    return trim


def release_free_memory() -> None:
    """Return the heap's free pages to the OS (glibc), or nothing."""
    trim = _trim()
    if trim is not None:
        trim(0)

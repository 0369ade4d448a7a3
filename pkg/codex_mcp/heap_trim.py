"""Freed memory handed back to the operating system (glibc's `malloc_trim`; elsewhere a
no-op): around a large message (decision 45), and after HTTP sessions end (decision 86)."""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from collections.abc import Callable

#: Messages from this size up are followed by a trim (a few hundred µs against the tens of
#: milliseconds such a message costs to parse).
LARGE_MESSAGE = 4 * 1024 * 1024


def _load_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
        trim: Callable[[int], int] = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
    return trim


_trim = _load_trim()


def release_free_memory() -> None:
    """Return the heap's free pages to the OS (glibc), or nothing."""
    if _trim is not None:
        _trim(0)

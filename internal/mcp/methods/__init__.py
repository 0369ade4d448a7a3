"""The canonical MCP methods, one module per feature, merged into one table."""

from __future__ import annotations

from . import completion, direct, lifecycle, logging_, prompts, resources, skills, tools
from .table import MethodEntry, MethodTable

DEFAULT_METHODS: MethodTable = {
    **lifecycle.METHODS,
    **tools.METHODS,
    **resources.METHODS,
    **prompts.METHODS,
    **logging_.METHODS,
    **completion.METHODS,
    **direct.METHODS,
    **skills.METHODS,
}

__all__ = ["DEFAULT_METHODS", "MethodEntry", "MethodTable", "direct"]

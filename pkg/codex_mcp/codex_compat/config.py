"""What the model is configured with: the Codex schema budget, which repairs to apply, and a
tool's own settings (a gateway child's `"repair"` and `"tools"`: specs/gateway.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Codex compacts an input schema above this many bytes (tool_input_schema_max_bytes).
CODEX_SCHEMA_MAX_BYTES = 5000


@dataclass(frozen=True, slots=True)
class RepairConfig:
    """Which schema repairs `repair.repair_tool` applies to this child's tool definitions."""

    #: The repairs that keep Codex from dropping a tool, or a whole server (always safe).
    fix_shapes: bool = True
    #: Infer a missing `type` (the TypeScript wrapper's rule: enum, properties, items, string).
    infer_types: bool = True
    #: `input_schema` -> `inputSchema` and friends, from Rust servers that serialize snake_case.
    camel_case: bool = True
    #: `integer` -> `number` (older Codex rejected `integer`; 0.169 on keep it).
    integer_to_number: bool = False
    #: Replace local `$ref`s by what they point to (cycles are cut), drop the definitions.
    inline_refs: bool = False
    #: Drop `$schema`.
    strip_schema_uri: bool = False
    #: Shorten parameter descriptions so the schema fits `schema_max_bytes` the way Codex
    #: measures it, instead of letting Codex drop every description.
    shrink_descriptions: bool = False
    schema_max_bytes: int = CODEX_SCHEMA_MAX_BYTES


@dataclass(frozen=True, slots=True)
class ToolSettings:
    """Per-tool settings, keyed by the child's own tool name."""

    hidden: bool = False
    rename: str | None = None
    description: str | None = None
    #: Merged over the child's annotations (camelCase MCP keys: readOnlyHint, ...).
    annotations: dict[str, Any] = field(default_factory=dict)

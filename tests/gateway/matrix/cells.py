"""The matrix's dimensions and which of its cells a run takes: all pairs (a covering set
made by a greedy generator, below) by default, the full product with
`CODEX_MCP_MATRIX=full`. Pure and deterministic: the same cells, in the same order, on
every run, so the known-defect list names stable cells."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

V0618, V1125, V2026 = "2025-06-18", "2025-11-25", "2026-07-28"

#: name -> values. The first six are issue 38's; `gateway` (the front transport, stdio
#: `codex-mcp` or `codex-mcp-http`) is the side-by-side test's, folded in.
DIMENSIONS: dict[str, tuple[str, ...]] = {
    "front": (V0618, V1125, V2026),
    "child": ("older", "modern", "both"),
    "sharing": ("shared", "per_session"),
    "transport": ("stdio", "http"),
    "lifecycle": ("eager", "lazy", "idle", "restarted"),
    "policy": ("none", "rules", "hook"),
    "gateway": ("stdio", "http"),
}
PRODUCT = ("front", "child", "sharing", "transport", "lifecycle", "policy")


@dataclass(frozen=True)
class Cell:
    front: str
    child: str
    sharing: str
    transport: str
    lifecycle: str
    policy: str
    gateway: str

    def __str__(self) -> str:
        return "-".join(
            (self.front, self.child, self.sharing, f"{self.transport}child", self.lifecycle,
             f"policy_{self.policy}", f"{self.gateway}gw")
        )  # fmt: skip

    def value(self, dimension: str) -> str:
        return str(getattr(self, dimension))


Row = tuple[str, ...]


def _pairs(row: Row) -> Iterator[tuple[int, str, int, str]]:
    for (i, a), (j, b) in itertools.combinations(enumerate(row), 2):
        yield i, a, j, b


def all_pairs(values: Sequence[Sequence[str]]) -> list[Row]:
    """A covering set: every pair of values of every two dimensions is in some row.
    Greedy (AETG's idea, made deterministic): each row starts from the first pair not yet
    covered, then each other dimension takes the value covering most uncovered pairs with
    the values chosen so far (the first on ties)."""
    uncovered = {
        (i, a, j, b)
        for i, j in itertools.combinations(range(len(values)), 2)
        for a in values[i]
        for b in values[j]
    }
    rows: list[Row] = []
    while uncovered:
        i, a, j, b = min(uncovered, key=lambda p: (p[0], p[2], values[p[0]].index(p[1]),
                                                    values[p[2]].index(p[3])))  # fmt: skip
        chosen: dict[int, str] = {i: a, j: b}
        for k in range(len(values)):
            if k in chosen:
                continue

            def gain(
                v: str, k: int = k, chosen: dict[int, str] = chosen, uncovered: set[Any] = uncovered
            ) -> int:
                return sum(
                    (min(k, m), v if k < m else w, max(k, m), w if k < m else v) in uncovered
                    for m, w in chosen.items()
                )

            chosen[k] = max(values[k], key=lambda v: (gain(v), -values[k].index(v)))
        row = tuple(chosen[k] for k in range(len(values)))
        uncovered -= set(_pairs(row))
        rows.append(row)
    return rows


def pairwise_cells() -> list[Cell]:
    return [Cell(*row) for row in all_pairs(list(DIMENSIONS.values()))]


def full_cells() -> list[Cell]:
    """The product of issue 38's six dimensions; the gateway's transport alternates along
    it (the last dimension has an odd count, so it pairs with every value of every other)."""
    product = itertools.product(*(DIMENSIONS[name] for name in PRODUCT))
    return [Cell(*row, DIMENSIONS["gateway"][n % 2]) for n, row in enumerate(product)]


def selected() -> list[Cell]:
    return full_cells() if os.environ.get("CODEX_MCP_MATRIX") == "full" else pairwise_cells()

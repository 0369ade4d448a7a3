"""The one table of documented differences between a child seen directly and through the
gateway, read from specs/gateway.md ("Side by side"), and the matching of a difference
against it (and against the known-defect list of test_matrix.py, which has the same shape).

A row: `field` (a pattern over the report's keys, fnmatch), `child` (a config name,
`cell` for the cell's own fields, `*` any), `cells` (space-separated `dimension=v1,v2`
conditions, all of which must hold; `*` any), `shows` (empty, or a regular expression the
gateway's value must contain, as its repr) and `why`."""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .cells import DIMENSIONS, Cell

SPEC = Path(__file__).resolve().parents[3] / "specs/gateway.md"
BEGIN, END = "<!-- differences: begin -->", "<!-- differences: end -->"


@dataclass(frozen=True)
class Entry:
    field: str
    child: str
    cells: str
    shows: str
    why: str
    #: A known defect that shows in some runs of its cells only: it explains the difference
    #: where it shows, but does not make its cells strict xfails.
    intermittent: bool = False

    def holds(self, cell: Cell) -> bool:
        """Does this entry's `cells` take `cell`?"""
        for condition in self.cells.split():
            if condition == "*":
                continue
            dimension, _, values = condition.partition("=")
            if cell.value(dimension) not in values.split(","):
                return False
        return True

    def explains(self, cell: Cell, child: str, field: str, through: Any) -> bool:
        return (
            self.child in ("*", child)
            and fnmatch.fnmatchcase(field, self.field)
            and self.holds(cell)
            and (not self.shows or re.search(self.shows, repr(through)) is not None)
        )

    def check(self) -> None:
        """A condition naming no dimension or value is a typo: it would never hold."""
        for condition in self.cells.split():
            if condition == "*":
                continue
            dimension, _, values = condition.partition("=")
            known = DIMENSIONS.get(dimension)
            assert known is not None, f"{self}: no dimension {dimension!r}"
            for value in values.split(","):
                assert value in known, f"{self}: {dimension} has no value {value!r}"


def _cells(text: str) -> str:
    return text.strip().strip("`")


def documented(spec: Path = SPEC) -> list[Entry]:
    """The table between the markers of specs/gateway.md."""
    text = spec.read_text()
    table = text[text.index(BEGIN) + len(BEGIN) : text.index(END)]
    entries = []
    for line in table.strip().splitlines()[2:]:  # past the header and its rule
        columns = [c.strip() for c in line.strip().strip("|").split("|")]
        assert len(columns) == 5, f"specs/gateway.md, differences: {line!r}"
        field, child, cells, shows, why = columns
        entry = Entry(_cells(field), _cells(child), _cells(cells), _cells(shows), why)
        entry.check()
        entries.append(entry)
    return entries

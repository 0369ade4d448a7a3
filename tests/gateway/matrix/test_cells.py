"""The matrix's own machinery, in the inner loop: the covering set covers every pair, the
full product is whole and pairs the front's transport with every other value, and the
table of documented differences and the known-defect list name only dimensions and values
that exist (a typo there would let a difference pass nowhere, or hold nowhere)."""

from __future__ import annotations

import itertools

from .cells import DIMENSIONS, PRODUCT, all_pairs, full_cells, pairwise_cells
from .differences import documented
from .test_matrix import KNOWN_DEFECTS


def _pairs(rows: list[tuple[str, ...]], width: int) -> set[tuple[int, str, int, str]]:
    return {
        (i, row[i], j, row[j]) for row in rows for i, j in itertools.combinations(range(width), 2)
    }


def test_the_covering_set_has_every_pair_and_is_the_same_each_time() -> None:
    values = list(DIMENSIONS.values())
    rows = all_pairs(values)
    wanted = {
        (i, a, j, b)
        for i, j in itertools.combinations(range(len(values)), 2)
        for a in values[i]
        for b in values[j]
    }
    assert _pairs(rows, len(values)) == wanted
    assert rows == all_pairs(values)
    # Greedy, not minimal, but close: the two largest dimensions (4 x 3) bound it below.
    assert 12 <= len(pairwise_cells()) <= 18


def test_a_small_covering_set_is_exact() -> None:
    assert all_pairs([("a", "b"), ("x", "y")]) == [("a", "x"), ("a", "y"), ("b", "x"), ("b", "y")]
    rows = all_pairs([("0", "1")] * 3)
    assert len(rows) == 4 and _pairs(rows, 3) == {
        (i, a, j, b) for i, j in itertools.combinations(range(3), 2) for a in "01" for b in "01"
    }


def test_the_full_product_is_whole_and_pairs_the_front_transport_with_every_value() -> None:
    cells = full_cells()
    product = {tuple(c.value(d) for d in PRODUCT) for c in cells}
    assert len(cells) == len(product) == 432
    names = list(DIMENSIONS)
    rows = [tuple(c.value(d) for d in names) for c in cells]
    gateway = names.index("gateway")
    for i, name in enumerate(names[:-1]):
        for value in DIMENSIONS[name]:
            assert {r[gateway] for r in rows if r[i] == value} == {"stdio", "http"}, value


def test_the_documented_table_and_the_known_defects_name_real_cells() -> None:
    entries = documented()  # checks each row's conditions as it reads them
    assert entries, "specs/gateway.md has no table of differences between its markers"
    for entry in KNOWN_DEFECTS:
        entry.check()
        assert entry.why, entry

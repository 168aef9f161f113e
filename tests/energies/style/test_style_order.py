"""Penrose's map order (Immutable.js), deep dependency chains, and the shape order's direct placing."""

from __future__ import annotations

from typing import Any

import pytest

from energies.lang.frontend import run_front_end
from energies.lang.match import MatchTable
from energies.style import roles
from energies.style.env import build_assignment
from energies.style.errors import Reporter
from energies.style.graph import shape_order
from energies.style.penrose_order import PenroseMap, smi, string_hash

from .conftest import CANVAS, SET_DOMAIN, Trio, build


def test_string_hash_is_javas_string_hash_through_smi():
    assert string_hash("hello") == 99162322  # Java's "hello".hashCode(), bit 31 clear so smi keeps it
    assert string_hash("") == 0
    assert smi(0x80000000) == 0xC0000000  # smi copies bit 31 into bit 30
    assert string_hash("é") == 0xE9  # one UTF-16 code unit


def test_small_maps_keep_insertion_order_and_removal_moves_the_last_entry():
    m: PenroseMap[str, int] = PenroseMap()
    for i, k in enumerate("abcd"):
        m[k] = i
    m["b"] = 10  # updating keeps the position
    assert m.keys() == ["a", "b", "c", "d"]
    m.pop("a")  # Immutable's ArrayMapNode: the last entry takes the removed one's place
    assert m.keys() == ["d", "b", "c"]
    m["a"] = 0
    assert m.keys() == ["d", "b", "c", "a"]


def test_maps_of_nine_or_more_entries_iterate_in_hash_trie_order():
    m: PenroseMap[str, int] = PenroseMap()
    for k in "abcdefgh":
        m[k] = 0
    assert m.keys() == list("abcdefgh")
    m["A"] = 0  # hash 65: low fragment 1, next 2 -> before "a" (97: fragments 1, 3)
    m["`"] = 0  # hash 96: low fragment 0 -> first
    assert m.keys() == ["`", "A", "a", "b", "c", "d", "e", "f", "g", "h"]
    for k in list(m.keys()):
        m.pop(k)
    m["z"] = 0
    m["y"] = 0
    assert m.keys() == ["z", "y"]  # emptied: small again, insertion order


def test_substance_objects_beyond_eight_come_in_hash_order():
    names = [f"S{i}" for i in range(10)]
    d = build("forall Set x {\n  x.icon = Circle { }\n}\n", substance="Set " + ", ".join(names) + "\n")
    expected = sorted(names, key=lambda n: [(string_hash(n) >> s) & 31 for s in range(0, 32, 5)])
    assert [s.name for s in d.shapes] == [f"`{n}`.icon" for n in expected]
    assert expected != names  # the test would not tell otherwise


def test_a_long_chain_of_paths_evaluates():
    lines = ["chain {", "  v0 = 1"] + [f"  v{i} = v{i - 1} + 1" for i in range(1, 3000)]
    lines += ["  s = Circle { r: v2999 }", "}"]
    d = build("\n".join(lines) + "\n", substance="")
    assert d.shapes[0].props["r"] == 3000.0


def test_an_error_at_the_root_of_a_long_chain_is_reported_once_and_quickly():
    import time

    import pytest

    from energies.lang.errors import DiagramError

    lines = ["chain {", "  v0 = true - 1"] + [f"  v{i} = v{i - 1} + 1" for i in range(1, 2000)]
    lines += [f"  w{i} = v{i} * 2" for i in range(2000)] + ["}"]
    start = time.perf_counter()
    with pytest.raises(DiagramError) as info:
        build("\n".join(lines) + "\n", substance="")
    assert time.perf_counter() - start < 10  # dependents are skipped, not re-evaluated (was quadratic)
    assert info.value.kind == "BinOpTypeError" and info.value.line == 6
    assert len(getattr(info.value, "errors", [info.value])) == 1


# Registry trios whose blocks place shapes from many local scopes (`LocalRoles.placing`).
PLACING_TRIOS = (
    "spectral-graphs/examples/torus",
    "structural-formula/molecules/caffeine",
    "walk-on-spheres/SignedAngleOutside",
    "timeline/penrose",
)
PLACING_STYLE = """global {
  global.box = Rectangle { width: 50  height: 50 }
}
forall Set x {
  x.icon = Circle { }
}
forall Set x; Set y {
  d = x.icon.r + y.icon.r
  ensure disjoint(y.icon, global.box, d)
  ensure disjoint(x.icon, y.icon)
}
"""


def shapes_in_order(
    domain: str, substance: str, style: str, direct: bool, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[str], int]:
    """The shape order, with scopes placing directly or by binding them (the plain walk); how many
    scopes placed directly."""
    placed_directly = [0]
    plain_subst = MatchTable.subst

    def counted(table: MatchTable, i: int) -> Any:
        placed_directly[0] += 1
        return plain_subst(table, i)

    with monkeypatch.context() as m:
        m.setattr(MatchTable, "subst", counted)
        if not direct:
            init = roles.LocalRoles.__init__

            def plain(self: roles.LocalRoles, plan: Any) -> None:
                init(self, plan)
                self.placing = None

            m.setattr(roles.LocalRoles, "__init__", plain)
        front = run_front_end(domain, substance, style)
        rep = Reporter(style)
        order = [key for key, _ in shape_order(build_assignment(front, rep), rep)]
    return order, placed_directly[0]


def test_scopes_placing_directly_give_the_plain_walks_order(monkeypatch: pytest.MonkeyPatch) -> None:
    substance = "Set " + ", ".join(f"S{i}" for i in range(12)) + "\n"  # 78 scopes: hash order
    style = CANVAS + PLACING_STYLE
    plain, none = shapes_in_order(SET_DOMAIN, substance, style, False, monkeypatch)
    direct, placed = shapes_in_order(SET_DOMAIN, substance, style, True, monkeypatch)
    assert none == 0 and placed > 0
    assert direct == plain
    # the pairs' scopes met some icons before their own Substance objects' fields did
    assert plain[0] == "global.box" and plain[1:] != [f"`S{i}`.icon" for i in range(12)]


@pytest.mark.parametrize("key", PLACING_TRIOS)
def test_registry_scopes_placing_directly_give_the_plain_walks_order(
    registry: list[Trio], key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    (t,) = [t for t in registry if t.key == key]
    plain, _ = shapes_in_order(t.domain, t.substance, t.style, False, monkeypatch)
    direct, placed = shapes_in_order(t.domain, t.substance, t.style, True, monkeypatch)
    assert placed > 0
    assert direct == plain

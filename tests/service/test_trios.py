"""Loading registry indexes and trio files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from service.trios import (
    TrioError,
    TrioLoadFailure,
    TrioSpec,
    default_registry_dir,
    load_registry,
    load_registry_entries,
    load_trio,
    svg_name,
)

from .service_support import write_trio

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"


def test_style_list_is_joined_and_paths_are_relative_to_the_trio(tmp_path: Path) -> None:
    path = write_trio(
        tmp_path / "dom" / "sub",
        "t",
        {
            "substance": "./t.substance",
            "style": ["../a.style", "./b.style"],
            "domain": "../d.domain",
            "variation": "Seed1",
            "excludeWarnings": ["BBoxApproximationWarning"],
        },
        {"t.substance": "S", "../a.style": "A", "b.style": "B", "../d.domain": "D"},
    )
    trio = load_trio(path, key="dom/sub/t", name="T")
    assert trio == TrioSpec(
        "dom/sub/t",
        "T",
        "D",
        "S",
        "A\nB",
        "Seed1",
        ("BBoxApproximationWarning",),
        path.parent,
        (path.parent.parent.resolve(), path.parent.resolve()),  # each Style file's folder, in order
    )
    single = write_trio(tmp_path, "u", {"substance": "s", "style": "a.style", "domain": "d"},
                        {"s": "S", "a.style": "A", "d": "D"})  # fmt: skip
    loaded = load_trio(single, key="u")
    assert (loaded.style, loaded.variation, loaded.exclude_warnings, loaded.name) == ("A", "", (), None)


def test_errors_name_the_file_and_problem(tmp_path: Path) -> None:
    path = write_trio(
        tmp_path, "t", {"substance": "s", "style": "missing.style", "domain": "d"}, {"s": "", "d": ""}
    )
    with pytest.raises(TrioError, match=r"t\.trio\.json: field 'style\[0\]': cannot read .*missing\.style"):
        load_trio(path, key="t")
    bad = tmp_path / "bad.trio.json"
    bad.write_text('{"substance": "s",\n  "style": }')
    with pytest.raises(TrioError, match=r"bad\.trio\.json:2:12: invalid JSON"):
        load_trio(bad, key="bad")
    path = write_trio(tmp_path, "v", {"substance": "s", "domain": "d"}, {})
    with pytest.raises(TrioError, match="missing field.*style"):
        load_trio(path, key="v")
    path = write_trio(
        tmp_path, "w", {"substance": "s", "style": "s", "domain": "s", "variation": 3}, {"s": ""}
    )
    with pytest.raises(TrioError, match="'variation' must be a string"):
        load_trio(path, key="w")


def test_registry_only_glob_and_broken_entries(tmp_path: Path) -> None:
    files = {"x.sub": "", "x.sty": "", "x.dom": ""}
    for key in ("a/one", "a/two", "b/three"):
        write_trio(tmp_path / key.split("/")[0], key.split("/")[1],
                   {"substance": "x.sub", "style": "x.sty", "domain": "x.dom"}, files)  # fmt: skip
    (tmp_path / "registry.json").write_text(
        json.dumps({"a/one": {"name": "One"}, "a/two": {}, "b/three": {}, "c/missing": {}})
    )
    assert [t.key for t in load_registry(tmp_path, "a/*")] == ["a/one", "a/two"]
    entries = load_registry_entries(tmp_path)
    assert [type(e).__name__ for e in entries] == ["TrioSpec", "TrioSpec", "TrioSpec", "TrioLoadFailure"]
    assert entries[0].name == "One" and entries[1].name is None
    failure = entries[3]
    assert isinstance(failure, TrioLoadFailure) and "c/missing.trio.json" in failure.error
    with pytest.raises(TrioError, match="missing.trio.json"):
        load_registry(tmp_path)


def test_svg_name_matches_penrose_reference() -> None:
    assert svg_name("graph-domain/textbook/sec2/fig4") == "graph-domain__textbook__sec2__fig4.svg"


@pytest.mark.skipif(not (SHARED / "penrose-registry").is_dir(), reason="shared registry absent")
def test_real_registry_loads() -> None:
    registry = SHARED / "penrose-registry"
    trios = load_registry(registry)
    assert len(trios) == len(json.loads((registry / "registry.json").read_text()))
    wedge = next(t for t in trios if t.key == "exterior-algebra/vector-wedge")
    assert wedge.style == (registry / "exterior-algebra" / "exterior-algebra.style").read_text()
    assert wedge.variation == "SnorlaxIbis743" and wedge.exclude_warnings == ("BBoxApproximationWarning",)
    assert default_registry_dir(Path(__file__).resolve().parents[2]) == registry.resolve()
    reference_svgs = SHARED / "penrose-reference" / "svg"
    if reference_svgs.is_dir():
        assert all(
            (reference_svgs / svg_name(t.key)).is_file()
            for t in trios
            if t.key != "shape-distance/lines-around-rect"
        )

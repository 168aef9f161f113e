"""End to end over a sample of registry trios of every family, chosen by a rule, not by hand.

The sample: for each family (the first folder of a registry key), the trio real Penrose laid out
fastest (from ../shared/penrose-reference/results.jsonl). Oracles: Penrose's reference SVG (the same
set of titled shapes must be drawn) and Penrose's own constraint satisfaction (of the sampled trios
Penrose satisfies, at least 90% must be satisfied by us too, the product's quality target).
Determinism: the same seed gives the same SVG, byte for byte, also in another process.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from energies.shapes import Canvas
from registry.svg_check import svg_problems
from service.pipeline import render_trio
from service.render.concrete import concrete_shapes
from service.render.svg import render_svg
from service.trios import load_trio, trio_image_resolver

from .service_support import HAS_REGISTRY, REFERENCE, REGISTRY, REPO, render_registry_trio

pytestmark = pytest.mark.skipif(not HAS_REGISTRY, reason="needs ../shared registry data")


def sample() -> list[dict]:
    rows = [
        json.loads(line) for line in (REFERENCE / "results.jsonl").read_text().splitlines() if line.strip()
    ]
    fastest: dict[str, dict] = {}
    for row in sorted(rows, key=lambda r: r["key"]):
        if row["status"] != "ok":
            continue
        family = row["key"].split("/")[0]
        if family not in fastest or row["totalMs"] < fastest[family]["totalMs"]:
            fastest[family] = row
    return sorted(fastest.values(), key=lambda r: r["key"])


def titles(svg: str) -> list[str]:
    return sorted(re.findall(r"<title>([^<]*)</title>", svg))


def render(key: str):
    return render_registry_trio(key, time_limit=60.0)


@pytest.fixture(scope="module")
def renderings() -> dict[str, object]:
    return {row["key"]: render(row["key"]) for row in sample()}


def test_the_sample_covers_every_family() -> None:
    rows = sample()
    families = {
        json.loads(line)["key"].split("/")[0]
        for line in (REFERENCE / "results.jsonl").read_text().splitlines()
    }
    assert len(rows) >= 35 and {r["key"].split("/")[0] for r in rows} <= families


def test_every_sampled_trio_draws_the_shapes_penrose_drew(renderings) -> None:
    for key, r in renderings.items():
        reference = (REFERENCE / "svg" / (key.replace("/", "__") + ".svg")).read_text()
        assert titles(r.svg) == titles(reference), key


def test_constraints_are_satisfied_where_penrose_satisfies_them(renderings) -> None:
    satisfied_by_penrose = [row["key"] for row in sample() if row["nViolated"] == 0]
    ours = [k for k in satisfied_by_penrose if renderings[k].optimization.n_violated == 0]
    assert len(ours) >= 0.9 * len(satisfied_by_penrose), sorted(set(satisfied_by_penrose) - set(ours))


def test_every_svg_is_well_formed_inert_and_unchanged_by_safe_mode(renderings) -> None:
    """Safe mode removes nothing the registry's Styles draw: the unsafe rendering of the same
    layout is the same document."""
    for key, r in renderings.items():
        assert not svg_problems(r.svg), key
        trio = load_trio(REGISTRY / f"{key}.trio.json", key=key)
        unsafe = render_svg(
            Canvas(*r.diagram.canvas),
            concrete_shapes(r.diagram.shapes, r.optimization.x),
            resolve_image=trio_image_resolver(trio.base_dir, *trio.style_dirs),
            variation=r.diagram.variation,
            safe=False,
        )
        assert unsafe == r.svg, key


def test_same_seed_same_svg_bytes_in_another_process(renderings, tmp_path) -> None:
    key = "set-theory-domain/tree-venn"
    first = render(key).svg
    assert first == render(key).svg
    out = tmp_path / "again.svg"
    subprocess.run(
        [sys.executable, "-m", "service", "render", str(REGISTRY / f"{key}.trio.json"), "-o", str(out)],
        check=True,
        cwd=REPO,
        capture_output=True,
        timeout=120,
    )
    assert out.read_text() == first
    other = render_trio(*_texts(key), variation="another seed")
    assert other.svg != first


def _texts(key: str) -> tuple[str, str, str]:
    trio = load_trio(REGISTRY / f"{key}.trio.json", key=key)
    return trio.domain, trio.substance, trio.style


def test_images_resolve_beside_the_trio_or_its_styles_and_nowhere_else(tmp_path) -> None:
    shared_style_dir = tmp_path / "family"
    trio_dir = shared_style_dir / "trios"
    trio_dir.mkdir(parents=True)
    (shared_style_dir / "background.svg").write_text("<svg/>")
    (tmp_path / "secret.svg").write_text("<svg>secret</svg>")
    resolve = trio_image_resolver(trio_dir, shared_style_dir)
    assert resolve("background.svg").startswith("data:image/svg+xml;base64,")
    assert resolve("../secret.svg") is None  # no escape from either folder
    assert resolve(str(tmp_path / "secret.svg")) is None  # no absolute paths
    assert resolve("https://example.org/a.png") is None  # URLs pass through as given
    assert trio_image_resolver(trio_dir)("background.svg") is None

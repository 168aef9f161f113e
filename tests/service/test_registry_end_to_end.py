"""Registry trios through the HTTP API, checked against what real Penrose drew.

Oracle: Penrose's reference SVGs title every shape (`A`.icon, ...); our SVG of the same trio must
contain exactly the same shapes. Skipped when ../shared (beside the repo) is absent.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from service.trios import load_trio

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
REGISTRY = SHARED / "penrose-registry"
REFERENCE = SHARED / "penrose-reference" / "svg"
KEYS = ["set-theory-domain/tree-venn", "graph-domain/textbook/sec1/fig1"]

pytestmark = pytest.mark.skipif(
    not (REGISTRY / "registry.json").is_file() or not REFERENCE.is_dir(),
    reason="needs ../shared registry data",
)


def titles(svg: str) -> list[str]:
    return sorted(re.findall(r"<title>([^<]*)</title>", svg))


@pytest.mark.parametrize("key", KEYS)
def test_registry_trio_renders_the_shapes_penrose_drew(client, key):
    trio = load_trio(REGISTRY / f"{key}.trio.json", key=key)
    body = {
        "domain": trio.domain,
        "substance": trio.substance,
        "style": trio.style,
        "variation": trio.variation,
        "excludeWarnings": list(trio.exclude_warnings),
    }
    r = client.post("/diagrams", json=body, headers={"accept": "application/json"})
    assert r.status_code == 200, r.text
    report = r.json()
    assert report["status"] == "EPConverged"
    reference = (REFERENCE / (key.replace("/", "__") + ".svg")).read_text()
    assert titles(report["svg"]) == titles(reference)
    assert all(g["satisfied"] for g in report["goals"] if g["kind"] == "constraint")

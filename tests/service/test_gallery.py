"""The gallery's Penrose examples (service/example_trios/penrose): shipped with Penrose's license,
byte for byte the registry's files, and each one renders."""

from __future__ import annotations

import json

import pytest

from service.examples import PENROSE_EXAMPLES_DIR, examples, group_of
from service.pipeline import portfolio_settings, render_trio

from .service_support import HAS_REGISTRY, REGISTRY

PENROSE = [k for k in examples() if group_of(k) == "penrose"]


def test_at_least_twenty_registry_examples_across_families_with_the_license():
    assert len(PENROSE) >= 20 and len({k.split("/")[0] for k in PENROSE}) >= 15
    license_text = (PENROSE_EXAMPLES_DIR / "LICENSE").read_text()
    assert license_text.startswith("MIT License") and "Permission is hereby granted" in license_text
    listed = json.loads((PENROSE_EXAMPLES_DIR / "registry.json").read_text())
    assert sorted(listed) == sorted(PENROSE)


@pytest.mark.skipif(not HAS_REGISTRY, reason="needs ../shared/penrose-registry")
def test_the_files_are_the_registrys_own():
    for path in PENROSE_EXAMPLES_DIR.rglob("*"):
        if path.is_file() and path.name not in ("registry.json", "README.md"):
            original = REGISTRY / path.relative_to(PENROSE_EXAMPLES_DIR)
            assert path.read_bytes() == original.read_bytes(), path


@pytest.mark.parametrize("key", PENROSE)
def test_each_registry_example_renders(key):
    trio = examples()[key]
    r = render_trio(
        trio.domain, trio.substance, trio.style, trio.variation, trio.exclude_warnings,
        portfolio=portfolio_settings(1), time_limit=60,
    )  # fmt: skip
    assert r.svg.startswith("<svg") and r.diagram.shapes

"""Fixtures for the language tests: the Penrose registry and reference SVGs from ../shared."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[3] / ".." / "shared"
REGISTRY = SHARED / "penrose-registry"
REFERENCE_SVG = SHARED / "penrose-reference" / "svg"


@dataclass(frozen=True)
class RegistryTrio:
    key: str
    domain: str
    substance: str
    style: str


def _load() -> list[RegistryTrio]:
    keys = json.loads((REGISTRY / "registry.json").read_text())
    out = []
    for key in keys:
        spec_path = REGISTRY / f"{key}.trio.json"
        spec = json.loads(spec_path.read_text())
        base = spec_path.parent
        styles = spec["style"] if isinstance(spec["style"], list) else [spec["style"]]
        out.append(
            RegistryTrio(
                key,
                (base / spec["domain"]).read_text(),
                (base / spec["substance"]).read_text(),
                "\n".join((base / s).read_text() for s in styles),
            )
        )
    return out


@pytest.fixture(scope="session")
def registry_trios() -> list[RegistryTrio]:
    if not (REGISTRY / "registry.json").exists():
        pytest.skip("Penrose registry not found beside the repo (../shared/penrose-registry)")
    return _load()


@pytest.fixture(scope="session")
def reference_svg_dir() -> Path:
    if not REFERENCE_SVG.is_dir():
        pytest.skip("Penrose reference SVGs not found (../shared/penrose-reference/svg)")
    return REFERENCE_SVG

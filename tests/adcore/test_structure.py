"""adcore's structure: its public surface is what other packages use, its transformation modules
import one another in one direction, and the builder type-checks what it finishes.

Oracles: the import statements in the source files (read with `ast`, not by importing), and a
function whose declared result type contradicts its body.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import adcore
from adcore import AdcoreTypeError, Real
from adcore.builder import Builder
from adcore.ir import Var

ROOT = Path(__file__).resolve().parents[2]


def imports(path: Path, package: str) -> list[tuple[str, tuple[str, ...]]]:
    """(module, names imported from it) for every import in a source file, function-level ones too,
    with relative modules made absolute (`import m` gives (m, ()))."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                parts = package.split(".")
                module = ".".join([*parts[: len(parts) - node.level + 1], *([module] if module else [])])
            found.append((module, tuple(a.name for a in node.names)))
        elif isinstance(node, ast.Import):
            found += [(a.name, ()) for a in node.names]
    return found


@pytest.mark.parametrize("package", ["energies", "service"])
def test_other_packages_use_only_adcores_public_surface(package: str) -> None:
    offenders = []
    for path in sorted((ROOT / package).rglob("*.py")):
        where = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
        for module, names in imports(path, where):
            if module == "adcore":
                offenders += [f"{path.name}: adcore.{n}" for n in names if n not in adcore.__all__]
            elif module.startswith("adcore.") and module != "adcore.math":  # adcore.math is public
                offenders.append(f"{path.name}: {module}")
    assert offenders == []


def test_every_public_name_is_there() -> None:
    for name in adcore.__all__:
        assert getattr(adcore, name) is not None


def test_transformation_modules_import_in_one_direction() -> None:
    """The IR and its transformations form no import cycle (dce, linearity and unzip once did)."""
    stages = ["ir", "types", "prims", "errors", "builder", "typecheck", "dce", "linearity", "unzip"]
    stages += ["transpose", "forward", "reverse", "convert", "interpreter"]
    graph = {}
    for s in stages:
        modules = {m for m, names in imports(ROOT / "adcore" / f"{s}.py", "adcore") for m in (m, *names)}
        graph[s] = {m.split(".")[-1] for m in modules} & set(stages) - {s}

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(n == goal or (n not in seen and reaches(n, goal, seen | {n})) for n in graph[start])

    assert [s for s in stages if reaches(s, s, {s})] == []


def test_the_builder_type_checks_what_it_finishes() -> None:
    b = Builder()
    x = Var(Real)
    y = b.emit1("lt", x, x)  # a Bool
    with pytest.raises(AdcoreTypeError, match="returns"):
        b.finish("wrong", [x], [y], [Real])

"""The packages' architecture, read from their import graph (grimp, import-linter).

- The contracts of pyproject.toml's [tool.importlinter]: registry -> service -> energies -> adcore,
  never upward; other packages reach adcore only through its public __init__ (and adcore.math); no
  cycles among the modules or sub-packages of a package.
- No import cycle between any two modules of the four packages, imports inside functions included
  (deferring an import hides a cycle from the interpreter, not from the design). The only cycles
  allowed are the known ones the acyclic contracts list in `ignore_imports`, each of which must
  still exist.

Oracles for the checks themselves: small packages written here with a cycle and an upward import,
which the same checks must reject.
"""

from __future__ import annotations

import graphlib
import tomllib
from collections.abc import Iterable
from pathlib import Path

import grimp
import pytest
from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"
PACKAGES = ("adcore", "energies", "service", "registry")


def known_cycle_imports(pyproject: Path = PYPROJECT) -> set[tuple[str, str]]:
    """The imports the acyclic contracts ignore, as (importer, imported)."""
    config = tomllib.loads(pyproject.read_text())["tool"]["importlinter"]
    pairs = set()
    for contract in config["contracts"]:
        if contract["type"] == "acyclic_siblings":
            for line in contract.get("ignore_imports", ()):
                importer, imported = (part.strip() for part in line.split("->"))
                pairs.add((importer, imported))
    return pairs


def module_cycle(packages: Iterable[str], known: set[tuple[str, str]] = frozenset()) -> list[str] | None:
    """One import cycle among the packages' modules (each link with its line numbers), or None."""
    graph = grimp.build_graph(*packages, cache_dir=None)
    imports = {
        m: {i for i in graph.find_modules_directly_imported_by(m) if (m, i) not in known}
        for m in graph.modules
    }
    try:
        graphlib.TopologicalSorter(imports).prepare()
    except graphlib.CycleError as e:
        found = e.args[1][-2::-1]  # graphlib lists it against the import direction, closed
        first = found.index(min(found))  # told from its first module by name, whatever the hash seed
        cycle = [*found[first:], *found[:first], found[first]]
        links = []
        for importer, imported in zip(cycle, cycle[1:], strict=False):
            lines = sorted(
                d["line_number"] for d in graph.get_import_details(importer=importer, imported=imported)
            )
            links.append(f"{importer} (line {', '.join(map(str, lines))})")
        return [*links, cycle[-1]]
    return None


def test_the_import_contracts_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    assert lint_imports(str(PYPROJECT), no_cache=True, no_logo=True) == 0  # its report says what broke


def test_no_import_cycle_between_modules_but_the_known_ones() -> None:
    known = known_cycle_imports()
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    gone = [f"{a} -> {b}" for a, b in sorted(known) if not graph.direct_import_exists(importer=a, imported=b)]
    assert not gone, f"no longer imported, delete from pyproject.toml's ignore_imports: {gone}"
    cycle = module_cycle(PACKAGES, known)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or ())


def write_package(root: Path, name: str, modules: dict[str, str]) -> None:
    (root / name).mkdir()
    (root / name / "__init__.py").write_text("")
    for module, text in modules.items():
        (root / name / f"{module}.py").write_text(text)


def test_the_checks_reject_a_cycle_and_an_upward_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    # a cycle closed by an import deferred into a function, as in the cycles this test keeps out
    write_package(
        tmp_path,
        "archcheck_low",
        {
            "a": "from archcheck_low.b import g\n\ndef f():\n    return g()\n",
            "b": "def g():\n    from archcheck_low import a\n\n    return a\n",
            "c": "import archcheck_high\n",  # upward: the low layer imports the high one
        },
    )
    write_package(tmp_path, "archcheck_high", {"d": "import archcheck_low.a\n"})
    assert module_cycle(["archcheck_low", "archcheck_high"]) == [
        "archcheck_low.a (line 1)",
        "archcheck_low.b (line 2)",
        "archcheck_low.a",
    ]
    assert module_cycle(["archcheck_low"], {("archcheck_low.b", "archcheck_low.a")}) is None
    config = tmp_path / "contracts.toml"
    config.write_text(
        '[tool.importlinter]\nroot_packages = ["archcheck_low", "archcheck_high"]\n\n'
        '[[tool.importlinter.contracts]]\nname = "layers"\ntype = "layers"\n'
        'layers = ["archcheck_high", "archcheck_low"]\n'
    )
    monkeypatch.chdir(tmp_path)
    assert lint_imports(str(config), no_cache=True, no_logo=True) == 1
    (tmp_path / "archcheck_low" / "c.py").unlink()
    assert lint_imports(str(config), no_cache=True, no_logo=True) == 0

"""Which Domain / Substance / Style constructs the Penrose registry uses, and how often.

    python -m registry.constructs [--registry DIR] [--out docs/language-coverage.md]

Parses, checks and matches every trio with `energies.lang`, walks the ASTs and counts, for
each construct, the number of trios using it; writes a Markdown table.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from energies.lang import ast as A
from energies.lang import style_ast as S
from energies.lang.domain_env import check_domain
from energies.lang.errors import DiagramError
from energies.lang.match import match_style
from energies.lang.parse import parse_domain, parse_style, parse_substance
from energies.lang.substance_env import check_substance
from service.trios import TrioError, TrioSpec, default_registry_dir, load_registry

REPO = Path(__file__).resolve().parents[1]


def _nodes(node: Any) -> Iterator[Any]:
    """Every AST node under `node` (dataclasses), depth first."""
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        yield node
        for f in dataclasses.fields(node):
            if f.name != "pos":
                yield from _nodes(getattr(node, f.name))
    elif isinstance(node, tuple | list):
        for item in node:
            yield from _nodes(item)


def _features(node: Any) -> Iterator[tuple[str, str]]:
    """(section, construct) pairs describing one node."""
    kind = type(node).__name__
    if isinstance(node, A.Name | A.Arg | A.Pos | S.DeclPattern | S.Block | S.HeaderBlock):
        return
    section = "Style" if type(node).__module__.endswith("style_ast") else "Domain/Substance"
    if isinstance(node, S.BVar):
        if node.backticked:
            yield section, "`Substance` name in selector"
        return
    yield section, kind
    if isinstance(node, S.Selector | S.Collector):
        if node.repeatable:
            yield section, "repeatable"
        if node.with_:
            yield section, f"{'forall' if isinstance(node, S.Selector) else 'collect'} ... with"
        if isinstance(node, S.Collector) and node.foreach:
            yield section, "collect ... foreach"
    match node:
        case A.PredicateDecl(symmetric=True):
            yield section, "symmetric predicate"
        case A.TypeDecl(supertypes=sup) if sup:
            yield section, "type T <: U"
        case A.Decl(names=names) if len(names) > 1:
            yield section, "Decl with several names"
        case A.DeclBind(let=True):
            yield section, "Let x := f(...)"
        case A.LabelDecl(label_type=t):
            yield section, f"Label ({t})"
        case A.AutoLabel(names=None):
            yield section, "AutoLabel All"
        case A.IndexSet(condition=c) if c is not None:
            yield section, "index set with where"
        case S.Namespace(name=n):
            yield (
                section,
                f"namespace `{n}`" if n.value in ("canvas", "const", "global") else "namespace (other)",
            )
        case S.RelPred(alias=a) if a is not None:
            yield section, "predicate alias `as`"
        case S.RelField(descriptor=d):
            yield section, f"has {'' if d is None else d.replace('Label', '').lower() + ' '}label"
        case S.PathAssign(type=t) if t is not None:
            yield section, f"typed declaration `{t.name}{'[]' if t.is_list else ''}`"
        case S.Path(var=v) if v.name in ("match_id", "match_total"):
            yield section, v.name
        case S.Path(indices=i) if i:
            yield section, "indexing v[i]"
        case S.BinOp(op=op) | S.UOp(op=op):
            yield section, f"{kind} {op}"
        case S.Vary(init=init, stages=stages, exclude=exclude):
            if init is not None:
                yield section, "?[init]"
            if stages:
                yield section, "? except [...]" if exclude else "? in [...]"
        case S.ObjFn(body=b, stages=st) | S.ConstrFn(body=b, stages=st):
            if st:
                yield section, f"{kind} with stages"
            if isinstance(b, S.InlineComparison):
                yield section, f"inline comparison {b.op}"
            else:
                yield "Style functions (ensure/encourage)", b.name.value
        case S.GPIDecl(shape=s):
            yield "Style shapes", s.value
        case S.CompApp(name=n):
            yield "Style functions (computations)", n.value
        case S.Layering(op=op):
            yield section, f"layering {op}"
        case _:
            pass


def coverage(trios: list[TrioSpec]) -> tuple[dict[str, Counter[str]], dict[str, str], dict[str, int]]:
    """Per section: construct -> number of trios; an example trio per construct; pass counts."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    example: dict[str, str] = {}
    passes = Counter({"trios": len(trios)})
    for trio in trios:
        try:
            dom, sub, sty = (
                parse_domain(trio.domain),
                parse_substance(trio.substance),
                parse_style(trio.style),
            )
            passes["parse"] += 1
            denv = check_domain(dom, trio.domain)
            senv = check_substance(sub, denv, trio.substance)
            passes["check"] += 1
            match_style(sty, denv, senv, trio.style)
            passes["match"] += 1
        except DiagramError as err:
            print(f"{trio.key}: {err}", file=sys.stderr)
            continue
        seen = {feat for prog in (dom, sub, sty) for node in _nodes(prog) for feat in _features(node)}
        for section, construct in seen:
            counts[section][construct] += 1
            example.setdefault(construct, trio.key)
    return counts, example, dict(passes)


def render(
    counts: dict[str, Counter[str]], example: dict[str, str], passes: dict[str, int], secs: float
) -> str:
    lines = [
        "# Language coverage of the Penrose registry",
        "",
        "Generated by `python -m registry.constructs`; counts are numbers of registry trios whose",
        "Domain, Substance or Style uses the construct (AST node kinds and notable variants).",
        "",
        f"Trios: {passes.get('trios', 0)}; parsed: {passes.get('parse', 0)}; "
        f"checked: {passes.get('check', 0)}; matched: {passes.get('match', 0)} ({secs:.1f} s).",
    ]
    order = ["Domain/Substance", "Style", "Style shapes", "Style functions (ensure/encourage)"]
    order += sorted(set(counts) - set(order))
    for section in order:
        if section not in counts:
            continue
        lines += ["", f"## {section}", "", "| construct | trios | example |", "|---|---:|---|"]
        for construct, n in sorted(counts[section].items(), key=lambda kv: (-kv[1], kv[0])):
            lines.append(f"| {construct} | {n} | {example[construct]} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--registry", type=Path, default=default_registry_dir(REPO))
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "language-coverage.md")
    args = parser.parse_args(argv)
    if args.registry is None:
        print("no registry found at ../shared/penrose-registry; pass --registry DIR", file=sys.stderr)
        return 2
    try:
        trios = load_registry(args.registry)
    except TrioError as err:
        print(err, file=sys.stderr)
        return 2
    start = time.perf_counter()
    counts, example, passes = coverage(trios)
    secs = time.perf_counter() - start
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(render(counts, example, passes, secs))
    print(f"wrote {args.out}: {passes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The bulk selector matcher against a brute-force oracle on random Substance programs.

The oracle below is Penrose's `getSubsts` written the slow, literal way over the generated
facts themselves (not over the checked `SubstanceEnv`): candidates of each relation in
statement order (symmetric predicates both ways), candidates of each declaration not named by
a relation, joined left to right by nested loops with dict merges, the first of each
(statements used, set of values) kept, and matches binding one value twice dropped unless
`repeatable`. It also counts the partial joins to say when the matcher must refuse. The
exact match list is compared: values, the order of matches and the order of each dict's keys.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import pytest

import energies.lang.match as match_module
from energies.lang.domain_env import check_domain
from energies.lang.errors import DiagramError
from energies.lang.match import match_style
from energies.lang.parse import parse_domain, parse_style, parse_substance
from energies.lang.substance_env import Literal, check_substance

DOMAIN = """type Set
type Circle <: Set
type Point
predicate In(Point p, Set s)
predicate Sub(Set a, Set b)
symmetric predicate Meets(Set a, Set b)
predicate Big(Set s)
predicate Between(Point p, Point q, Set s)
predicate Has(Set s, Number n)
"""
PARAMS = {
    "In": ("Point", "Set"),
    "Sub": ("Set", "Set"),
    "Meets": ("Set", "Set"),
    "Big": ("Set",),
    "Between": ("Point", "Point", "Set"),
    "Has": ("Set", "Number"),
}
SYMMETRIC = {"Meets"}
NUMBERS = (1.0, 2.0, 2.5)
Value = str | Literal


def is_subtype(sub: str, sup: str) -> bool:
    return sub == sup or (sub, sup) == ("Circle", "Set")


@dataclass
class World:
    """A generated Substance program, kept as data for the oracle."""

    objects: dict[str, str]  # name -> type, in declaration order
    facts: list[tuple[str, tuple[Value, ...]]] = field(default_factory=list)
    labels: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> (text, kind)

    def text(self) -> str:
        lines = [f"{t} {n}" for n, t in self.objects.items()]
        for name, args in self.facts:
            shown = [a if isinstance(a, str) else f"{a.value:g}" for a in args]
            lines.append(f"{name}({', '.join(shown)})")
        for n, (text, kind) in self.labels.items():
            lines.append(f"Label {n} ${text}$" if kind == "MathLabel" else f'Label {n} "{text}"')
        return "\n".join(lines) + "\n"

    def type_of(self, v: Value) -> str:
        return "Number" if isinstance(v, Literal) else self.objects[v]

    def literals(self) -> list[Literal]:
        return list(dict.fromkeys(a for _, args in self.facts for a in args if isinstance(a, Literal)))


@dataclass
class Selector:
    decls: list[tuple[str, str]]  # (type, variable)
    relations: list[tuple]  # ("pred", name, args, alias) | ("label", var, kind or None)
    repeatable: bool

    def text(self) -> str:
        where = []
        for rel in self.relations:
            if rel[0] == "pred":
                _, name, args, alias = rel
                shown = [a if isinstance(a, str) else f"{a.value:g}" for a in args]
                where.append(f"{name}({', '.join(shown)})" + (f" as {alias}" if alias else ""))
            else:
                _, var, kind = rel
                word = {None: "", "MathLabel": "math ", "TextLabel": "text "}[kind]
                where.append(f"{var} has {word}label")
        decls = "; ".join(f"{t} {v}" for t, v in self.decls)
        return (
            "forall "
            + ("repeatable " if self.repeatable else "")
            + decls
            + (" where " + "; ".join(where) if where else "")
            + " { }"
        )


def random_world(rng: random.Random) -> World:
    objects = {}
    for kind, prefix in (("Set", "S"), ("Circle", "C"), ("Point", "P")):
        for i in range(rng.choice([0, 1, 2, 3, 4, 6])):
            objects[f"{prefix}{i}"] = kind
    world = World(objects)
    for _ in range(rng.randrange(12)):
        name = rng.choice(list(PARAMS))
        args: list[Value] = []
        for param in PARAMS[name]:
            if param == "Number":
                args.append(Literal(rng.choice(NUMBERS)))
                continue
            fitting = [n for n, t in objects.items() if is_subtype(t, param)]
            if not fitting:
                break
            args.append(rng.choice(fitting))
        else:
            world.facts.append((name, tuple(args)))
    for n in objects:
        if rng.random() < 0.4:
            world.labels[n] = (n.lower(), rng.choice(["MathLabel", "TextLabel"]))
    return world


def random_selector(rng: random.Random) -> Selector:
    decls = [(rng.choice(["Set", "Set", "Circle", "Point"]), f"v{i}") for i in range(rng.randrange(1, 5))]
    if rng.random() < 0.2:
        decls.append(("Number", "n"))
    relations: list[tuple] = []
    for r in range(rng.choice([0, 1, 1, 2, 2, 3])):
        if rng.random() < 0.2:
            typ, var = rng.choice([d for d in decls if d[0] != "Number"] or decls)
            if typ != "Number":
                relations.append(("label", var, rng.choice([None, "MathLabel", "TextLabel"])))
            continue
        name = rng.choice(list(PARAMS))
        args: list[Value] = []
        for param in PARAMS[name]:
            fitting = [v for t, v in decls if is_subtype(t, param)]
            if param == "Number" and (not fitting or rng.random() < 0.3):
                args.append(Literal(rng.choice(NUMBERS)))
            elif fitting:
                args.append(rng.choice(fitting))
        if len(args) == len(PARAMS[name]):
            relations.append(("pred", name, tuple(args), f"r{r}" if rng.random() < 0.3 else None))
    return Selector(decls, relations, rng.random() < 0.25)


class Refused(Exception):
    pass


def _unordered_pairs(left: list, right: list, repeatable: bool) -> bool:
    """Two lists each declaring one variable over the same distinct objects, without statements:
    the matcher lists their unordered pairs directly, so only those count against the limit."""
    if repeatable or any(len(s) != 1 or used for s, used in left + right):
        return False
    values = [next(iter(s.values())) for s, _ in left]
    same = values == [next(iter(s.values())) for s, _ in right] and len(set(values)) == len(values)
    return same and left[0][0].keys() != right[0][0].keys()


def oracle(world: World, sel: Selector, limit: int) -> list[dict[str, Value]]:
    var_type = {v: t for t, v in sel.decls}
    lists: list[list[tuple[dict[str, Value], frozenset[int]]]] = []
    mentioned: set[str] = set()
    for rel in sel.relations:
        cands = []
        if rel[0] == "pred":
            _, name, args, alias = rel
            mentioned |= {a for a in args if isinstance(a, str)}
            for index, (fact, values) in enumerate(world.facts):
                if fact != name:
                    continue
                orders = [args, args[::-1]] if name in SYMMETRIC else [args]
                for pattern in orders:
                    subst: dict[str, Value] = {}
                    for p, v in zip(pattern, values, strict=True):
                        if isinstance(p, Literal):
                            ok = p == v
                        else:
                            ok = is_subtype(world.type_of(v), var_type[p]) and subst.setdefault(p, v) == v
                        if not ok:
                            break
                    else:
                        if alias:
                            subst[alias] = "_".join([name, *(v for v in values if isinstance(v, str))])
                        cands.append((subst, frozenset({index})))
        else:
            _, var, kind = rel
            mentioned.add(var)
            for n, t in world.objects.items():
                text, label_kind = world.labels.get(n, ("", "NoLabel"))
                if is_subtype(t, var_type[var]) and (label_kind == kind if kind else text):
                    cands.append(({var: n}, frozenset()))
        lists.append(cands)
    for t, v in sel.decls:
        if v not in mentioned:
            pool = (
                world.literals()
                if t == "Number"
                else [n for n, u in world.objects.items() if is_subtype(u, t)]
            )
            lists.append([({v: x}, frozenset()) for x in pool])
    if not lists or not all(lists):
        return []
    if len(lists) == 2 and _unordered_pairs(lists[0], lists[1], sel.repeatable):
        n = len(lists[0])
        if n * (n - 1) // 2 > limit:
            raise Refused
        limit = 2**62  # no n x n join is formed
    joined = lists[0]
    for right in lists[1:]:
        if not joined:
            return []
        if len(joined) * len(right) > limit and not (joined[0][0].keys() & right[0][0].keys()):
            raise Refused
        joined = [
            ({**a, **b}, sa | sb)
            for a, sa in joined
            for b, sb in right
            if all(a[k] == b[k] for k in a.keys() & b.keys())
        ]
        if len(joined) > limit:
            raise Refused
    seen, out = set(), []
    for subst, used in joined:
        key = (used, frozenset(subst.values()))
        if key not in seen:
            seen.add(key)
            if sel.repeatable or len(set(subst.values())) == len(subst):
                out.append(subst)
    return out


def run_matcher(world: World, sel: Selector) -> list[dict[str, Value]]:
    denv = check_domain(parse_domain(DOMAIN), DOMAIN)
    senv = check_substance(parse_substance(world.text()), denv, world.text())
    style = sel.text()
    (bm,) = match_style(parse_style(style), denv, senv, style)
    assert [(m.match_id, m.match_total) for m in bm.matches] == [
        (i + 1, len(bm.matches)) for i in range(len(bm.matches))
    ]
    return [m.subst for m in bm.matches]


@pytest.mark.parametrize("seed", range(40))
def test_matches_equal_the_brute_force_oracle(seed, monkeypatch):
    rng = random.Random(seed)
    limit = rng.choice([10, 60, 10**6])
    monkeypatch.setattr(match_module, "MAX_CANDIDATES", limit)
    for _ in range(25):
        world, sel = random_world(rng), random_selector(rng)
        try:
            expected = oracle(world, sel, limit)
        except Refused:
            with pytest.raises(DiagramError) as info:
                run_matcher(world, sel)
            assert (info.value.kind, info.value.line, info.value.column) == ("MatchLimitError", 1, 1)
            assert f"more than {limit} candidate matches" in str(info.value)
            continue
        got = run_matcher(world, sel)
        # dict equality ignores key order, which shows in messages: compare item lists
        assert [list(s.items()) for s in got] == [list(s.items()) for s in expected], sel.text()


@pytest.mark.parametrize("slack", [0, -1])
def test_match_limit_boundaries(slack, monkeypatch):
    """Refused exactly when a join exceeds the limit: 4 sets make 6 unordered pairs (listed
    directly, not from a 4 x 4 join); 5 points in S0 joined with 2 facts `Sub(S0, _)` on the shared
    set make 10 rows."""
    sets = World({f"S{i}": "Set" for i in range(4)})
    pairs = Selector([("Set", "x"), ("Set", "y")], [], False)
    points = World({"S0": "Set", "S1": "Set", "S2": "Set"} | {f"P{i}": "Point" for i in range(5)})
    points.facts = [("In", (f"P{i}", "S0")) for i in range(5)] + [
        ("Sub", ("S0", "S1")),
        ("Sub", ("S0", "S2")),
    ]
    chain = Selector([("Point", "p"), ("Set", "x"), ("Set", "y")], [], False)
    chain.relations = [("pred", "In", ("p", "x"), None), ("pred", "Sub", ("x", "y"), None)]
    for world, sel, rows, matches in ((sets, pairs, 6, 6), (points, chain, 10, 10)):
        monkeypatch.setattr(match_module, "MAX_CANDIDATES", rows + slack)
        if slack < 0:
            with pytest.raises(DiagramError, match=f"more than {rows - 1} candidate matches"):
                run_matcher(world, sel)
        else:
            assert len(run_matcher(world, sel)) == matches


def test_all_pairs_over_many_objects_in_nested_loop_order():
    world = World({f"S{i}": "Set" for i in range(40)} | {f"C{i}": "Circle" for i in range(5)})
    sel = Selector([("Set", "x"), ("Set", "y")], [], False)
    got = run_matcher(world, sel)
    names = list(world.objects)
    assert got == [{"x": a, "y": b} for i, a in enumerate(names) for b in names[i + 1 :]]


def test_symmetric_flips_keep_their_own_key_order():
    world = World({"A": "Set", "B": "Set", "Z": "Set"}, [("Meets", ("A", "B")), ("Sub", ("B", "Z"))])
    world.facts.append(("Sub", ("A", "Z")))
    sel = Selector([("Set", "x"), ("Set", "y"), ("Set", "z")], [("pred", "Meets", ("x", "y"), None)], False)
    sel.relations.append(("pred", "Sub", ("y", "z"), None))
    got = [list(s.items()) for s in run_matcher(world, sel)]
    assert got == [[("x", "A"), ("y", "B"), ("z", "Z")], [("y", "A"), ("x", "B"), ("z", "Z")]]

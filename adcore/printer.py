"""Readable IR text, in the spirit of the Rose paper's listings."""

from __future__ import annotations

from .ir import LOOPS, Atom, Block, Eqn, Function, call_graph, loop_carries, loop_count


def show_program(f: Function) -> str:
    """f and every function it calls, callees first."""
    return "\n\n".join(show_function(g) for g in call_graph(f))


def show_function(f: Function) -> str:
    params = ", ".join(f"{p!r}: {p.ty!r}" for p in f.params)
    rets = ", ".join(map(repr, f.result_types))
    head = f"fn {f.name}({params}) -> ({rets})"
    if f.body is None:
        rules = [
            f"{k}: {g.name}"
            for k, g in (
                ("jvp", f.custom_jvp),
                ("interval", f.custom_interval),
                ("near", f.custom_interval_near),
            )
            if g
        ]
        return head + " opaque" + "".join(f"  -- {r}" for r in rules)
    lines = [head + " {"]
    _block(f.body, lines, 1)
    lines.append("}")
    return "\n".join(lines)


def _atoms(atoms: tuple[Atom, ...]) -> str:
    return ", ".join(map(repr, atoms))


def _block(b: Block, lines: list[str], depth: int) -> None:
    for e in b.eqns:
        _eqn(e, lines, depth)
    lines.append("  " * depth + f"return {_atoms(b.results)}")


def _eqn(e: Eqn, lines: list[str], depth: int) -> None:
    pad = "  " * depth
    outs = ", ".join(f"{o!r}: {o.ty!r}" for o in e.outs)
    lhs = f"let {outs} = " if e.outs else ""
    if e.prim in LOOPS:  # for i in 0..n, refs {...}; fold i in 0..n with carry = init, refs {...}
        body: Block = e.params["body"]
        c = loop_carries(e)
        i, carries, refs = body.params[0], body.params[1 : 1 + c], body.params[1 + c :]
        state = ", ".join(f"{p!r}: {p.ty!r} = {a!r}" for p, a in zip(carries, e.args))
        carried = f" with {state}" if c else ""
        accs = "".join(f", {r!r}: {r.ty!r}" for r in refs)
        count = loop_count(e)
        upto = f"{count!r} (of {e.params['n']})" if count is not None else f"{e.params['n']}"
        lines.append(f"{pad}{lhs}{e.prim} {i!r} in 0..{upto}{carried}{accs} {{")
        _block(body, lines, depth + 1)
        lines.append(pad + "}")
        return
    name = e.params["fn"].name if e.prim == "call" else e.prim
    extra = f" <{e.params['ty']!r}>" if e.prim == "zeros" else ""
    if e.prim == "checked":
        extra = f" <{e.params['kind']} < {e.params['n']}>"
    lines.append(f"{pad}{lhs}{name}{extra}({_atoms(e.args)})")

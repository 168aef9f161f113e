"""Scaling benchmark: registry Styles on growing Substances, our pipeline beside Penrose's.

    python benchmarks/scaling.py [--series graph venn tree circles] [--sizes 8 16 ... 1024]
        [--variations K] [--timeout 300] [--penrose] [--keep-going] [--out /tmp/scaling]
        [--pictures 8 32 128 1024] [--plot PATH] [--registry DIR]
    python benchmarks/scaling.py --from-rows OUT/scaling.jsonl [...] [--plot PATH]

The trios are benchmarks/scaling_trios.py's (graph, venn, tree, circles; each size's Substance
is fixed, variation k only seeds the layout). For every series, size and variation our pipeline
runs in a fresh interpreter through the public API (`service.render_trio`, default portfolio
settings, `time_limit` = the timeout), after one warm-up render of the same series on 4 objects
in that process (the library, parsers, fonts and Wasm engine load once per process, as in a
layout worker; Penrose's runner likewise imports @penrose/core before its clock starts). The
parent kills a child that overruns the timeout by more than a grace period. With `--penrose`,
Penrose itself (registry/penrose_task.py's task, a fresh `node` per trio) runs the same trio
with the same timeout, after ours, never at the same time.

A series stops at the first size where a run times out, ours and Penrose's separately (larger
sizes would too), unless `--keep-going`.

Each run is one JSON row of OUT/scaling.jsonl, appended as it finishes: series, n, variation,
impl (ours | penrose), status (ok | timeout | error), error, compile_s (ours: parsing, matching,
Style evaluation and energy compilation; Penrose: its compile()), optimize_s, total_s (through
the SVG), cpu_s (ours: the processor time of the render, every thread of the process; on a
loaded machine the closest measure of what an idle one would take, as the layout is
single-threaded but for Wasm compiles in the background), wall_s (the child process as the
parent saw it, including start-up and warm-up;
warm_up_s that warm-up), load1_start and load1 (the 1-minute load average before and after),
energy, constraints, objectives, violated (constraints above 1e-3), peak_rss_mb (ours), starts
(ours: portfolio starts run). The markdown table (OUT/scaling.md, also printed) has one line per
series and size: medians over the variations that finished, with the energy's range. The plot
(`--plot`, default OUT/scaling.png; the committed figure is docs/scaling.png) is log-log time
against N per series, ours solid and Penrose dashed, a hollow marker at the timeout for a size
that did not finish, and beside it each series' median energy (symmetric-log axes: energies can
be negative, and differ by hundreds of orders of magnitude between series). For the sizes in
`--pictures`, variation 0's SVG of both layouts goes to OUT/pictures/<series>-<n>-<impl>.svg,
and a PNG beside it (resvg, as the service converts, at most 4 Mpx), made by the parent after
the run, outside every clock.

`--from-rows` remakes the table and plot from earlier row files (e.g. two sittings) without
running anything; a later file's rows of a series, size and implementation replace an earlier
file's (a rerun with more variations or a longer timeout). matplotlib (the `bench` extra) is
needed only for the plot.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from scaling_trios import DEFAULT_REGISTRY, SERIES, trio  # the module next to this one

Row = dict[str, Any]
DEFAULT_SIZES = [8, 16, 32, 64, 128, 256, 512, 1024]
GRACE_S = 120.0  # a child's start-up and warm-up, beyond the layout's own time limit
WARM_UP_N = 4
MAX_PNG_PIXELS = 4_000_000


# ---------------------------------------------------------------------------------------------
# One run of our pipeline, in the child process.


def child(spec: dict[str, Any]) -> Row:
    import resource

    from energies.diagram import count_goals
    from service import render_trio

    def render(n: int, variation: str, time_limit: float) -> Any:
        t = trio(spec["series"], n, 0, spec["registry"])
        return render_trio(t.domain, t.substance, t.style, variation, time_limit=time_limit)

    t0 = time.perf_counter()
    with contextlib.suppress(Exception):  # the warm-up loads what layouts need; a failed one did too
        render(WARM_UP_N, "warm-up", spec["timeout"])
    row: Row = {"warm_up_s": time.perf_counter() - t0}
    t = trio(spec["series"], spec["n"], spec["variation"], spec["registry"])
    cpu = time.process_time()
    try:
        r = render_trio(t.domain, t.substance, t.style, t.variation, time_limit=spec["timeout"])
    except Exception as e:  # the pipeline's LayoutError (status timeout | nan | ...) or DiagramError
        status = getattr(e, "status", None)
        row.update(status="timeout" if status == "timeout" else "error", error=f"{type(e).__name__}: {e}")
    else:
        ms, opt = r.timings, r.optimization
        row.update(
            status="ok",
            compile_s=ms["compile"] / 1e3,
            optimize_s=ms["optimize"] / 1e3,
            total_s=ms["total"] / 1e3,
            cpu_s=time.process_time() - cpu,
            energy=opt.energy,
            constraints=count_goals(r.diagram.goals, "constraint"),
            objectives=count_goals(r.diagram.goals, "objective"),
            violated=opt.n_violated,
            max_violation=opt.max_constraint_violation,
            starts=len(r.portfolio.starts) if r.portfolio is not None else 1,
        )
        if spec.get("pictures"):  # the PNG is the parent's, after the run and outside its clock
            stem = Path(spec["pictures"])
            stem.parent.mkdir(parents=True, exist_ok=True)
            stem.with_suffix(".svg").write_text(r.svg, encoding="utf-8")
    row["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return row


def save_png(stem: Path) -> None:
    """`stem`.png from `stem`.svg: resvg (as the service converts) at 1 px per SVG px, less for a
    picture of over 4 Mpx. resvg's time grows with the pixels its shapes cover: a large Venn
    diagram's huge overlapping circles take minutes at full size."""
    from service.render.formats import convert

    svg = stem.with_suffix(".svg").read_text(encoding="utf-8")
    root = re.search(r"<svg\b[^>]*>", svg)
    sides = re.findall(r'\b(?:width|height)="([\d.]+)', root.group(0) if root else "")
    pixels = math.prod(float(s) for s in sides) if len(sides) == 2 else 0.0
    scale = min(1.0, math.sqrt(MAX_PNG_PIXELS / pixels)) if pixels else 1.0
    stem.with_suffix(".png").write_bytes(convert(svg, "png", scale))


# ---------------------------------------------------------------------------------------------
# The parent: runs, rows, stop rule.


def run_ours(spec: dict[str, Any]) -> Row:
    command = [sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(spec)]
    t0 = time.perf_counter()
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=spec["timeout"] + GRACE_S, check=False
        )
    except subprocess.TimeoutExpired:
        wall = time.perf_counter() - t0
        return {"status": "timeout", "error": f"killed after {wall:.0f} s", "wall_s": wall}
    wall = time.perf_counter() - t0
    lines = done.stdout.strip().splitlines()
    try:
        row = json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        tail = (done.stderr or done.stdout)[-1500:].strip()
        row = {"status": "error", "error": f"child exited with status {done.returncode}: {tail}"}
    return {**row, "wall_s": wall}


def run_penrose(series: str, n: int, variation: int, args: argparse.Namespace, pictures: Path | None) -> Row:
    from registry.penrose_task import penrose_task

    t0 = time.perf_counter()
    out = penrose_task(trio(series, n, variation, args.registry), args.timeout)
    wall = time.perf_counter() - t0
    status = out.get("status")
    row: Row = {
        "status": "ok" if status == "ok" else "timeout" if status == "timeout" else "error",
        "error": None if status == "ok" else f"{status}: {str(out.get('error'))[-1500:]}",
        "wall_s": wall,
    }
    if status == "ok":
        row.update(
            compile_s=out["compileMs"] / 1e3,
            optimize_s=out["optimizeMs"] / 1e3,
            total_s=out["totalMs"] / 1e3,
            # JSON has no infinity: the runner writes a non-finite energy as null (its `nan` flag)
            energy=math.inf if out.get("energy") is None else out["energy"],
            constraints=out.get("nConstraints"),
            objectives=out.get("nObjectives"),
            violated=out.get("nViolated"),
            max_violation=out.get("maxConstrViolation"),
        )
        if pictures is not None and isinstance(out.get("svg"), str):
            pictures.parent.mkdir(parents=True, exist_ok=True)
            pictures.with_suffix(".svg").write_text(out["svg"], encoding="utf-8")
    return row


def run_one(series: str, n: int, k: int, impl: str, args: argparse.Namespace) -> Row:
    """One run, ours or Penrose's, as a row; its pictures when its size is one of `--pictures`."""
    pictures = args.out / "pictures" / f"{series}-{n}-{impl}" if n in args.pictures and k == 0 else None
    if pictures is not None:
        pictures.with_suffix(".svg").unlink(missing_ok=True)  # an earlier sitting's
    load = os.getloadavg()[0]
    if impl == "ours":
        spec = {"series": series, "n": n, "variation": k, "registry": str(args.registry)}
        spec |= {"timeout": args.timeout, "pictures": str(pictures) if pictures else None}
        result = run_ours(spec)
    else:
        result = run_penrose(series, n, k, args, pictures)
    row = {"series": series, "n": n, "variation": k, "impl": impl, **result, "timeout": args.timeout}
    row |= {"date": time.strftime("%Y-%m-%d %H:%M"), "load1_start": load, "load1": os.getloadavg()[0]}
    if pictures is not None and pictures.with_suffix(".svg").is_file():
        save_png(pictures)
    return row


def run_all(args: argparse.Namespace) -> list[Row]:
    args.out.mkdir(parents=True, exist_ok=True)
    rows: list[Row] = []
    impls = ["ours", "penrose"] if args.penrose else ["ours"]
    if args.penrose:
        from registry.penrose_task import ensure_runner_installed

        ensure_runner_installed()
    with (args.out / "scaling.jsonl").open("a", encoding="utf-8") as sink:
        for series in args.series:
            stopped: set[str] = set()
            for n in args.sizes:
                for impl in [i for i in impls if i not in stopped]:
                    for k in range(args.variations):
                        row = run_one(series, n, k, impl, args)
                        rows.append(row)
                        sink.write(json.dumps(row) + "\n")
                        sink.flush()
                        print(brief(row), file=sys.stderr, flush=True)
                        if row["status"] == "timeout" and not args.keep_going:
                            stopped.add(impl)
                            break
    return rows


def brief(row: Row) -> str:
    head = f"{row['series']} N={row['n']} v{row['variation']} {row['impl']}: {row['status']}"
    if row["status"] != "ok":
        return f"{head} ({str(row.get('error'))[:200]}) wall {row.get('wall_s', float('nan')):.1f} s"
    return (
        f"{head} total {row['total_s']:.2f} s (compile {row['compile_s']:.2f},"
        f" optimize {row['optimize_s']:.2f}; CPU {row.get('cpu_s', float('nan')):.2f})"
        f" energy {row['energy']:.4g} violated {row['violated']}"
        f" load {row['load1']:.2f}"
    )


# ---------------------------------------------------------------------------------------------
# Summaries: the table and the plot.


def groups(rows: Iterable[Row]) -> dict[tuple[str, int, str], list[Row]]:
    out: dict[tuple[str, int, str], list[Row]] = {}
    for r in rows:
        out.setdefault((r["series"], r["n"], r["impl"]), []).append(r)
    return out


def median_of(rows: Sequence[Row], key: str) -> float | None:
    values = [r[key] for r in rows if r["status"] == "ok" and r.get(key) is not None]
    return statistics.median(values) if values else None


def cell(rows: Sequence[Row] | None, timeout: float) -> dict[str, str]:
    """One implementation's columns of a table line."""
    if not rows:
        return {"total": "", "energy": "", "violated": "", "status": "not run"}
    ok = [r for r in rows if r["status"] == "ok"]
    counts = {s: sum(r["status"] == s for r in rows) for s in ("ok", "timeout", "error")}
    status = ", ".join(f"{c} {s}" for s, c in counts.items() if c) if len(rows) > 1 else rows[0]["status"]
    if not ok:
        over = f"> {max(r.get('timeout', timeout) for r in rows):g}" if counts["timeout"] else "-"
        return {"total": over, "energy": "-", "violated": "-", "status": status}
    energies = sorted(math.inf if r["energy"] is None else r["energy"] for r in ok)  # JSON has no inf
    energy = f"{statistics.median(energies):.4g}"
    if len(energies) > 1:
        energy += f" ({energies[0]:.4g} to {energies[-1]:.4g})"
    return {
        "total": f"{median_of(ok, 'total_s'):.2f}",
        "energy": energy,
        "violated": f"{median_of(ok, 'violated'):g}",
        "status": status,
    }


def table(rows: Sequence[Row], timeout: float) -> str:
    by = groups(rows)
    lines = [
        "| series | N | goals | ours compile s | ours optimize s | ours total s | ours CPU s | ours energy "
        "| ours violated | ours RSS MB | ours status | Penrose total s | Penrose energy | Penrose violated "
        "| Penrose status |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for series, n in sorted({(s, n) for s, n, _ in by}, key=lambda k: (SERIES.index(k[0]), k[1])):
        ours, theirs = by.get((series, n, "ours")), by.get((series, n, "penrose"))
        goals = [r for r in (ours or []) + (theirs or []) if r["status"] == "ok"]
        count = f"{goals[0]['constraints'] + goals[0]['objectives']:,}" if goals else ""
        o, p = cell(ours, timeout), cell(theirs, timeout)
        compile_s, optimize_s = (median_of(ours or [], k) for k in ("compile_s", "optimize_s"))
        rss = median_of([r for r in ours or [] if r.get("peak_rss_mb")], "peak_rss_mb")
        cpu = median_of(ours or [], "cpu_s")
        lines.append(
            f"| {series} | {n} | {count} | {'' if compile_s is None else f'{compile_s:.2f}'} "
            f"| {'' if optimize_s is None else f'{optimize_s:.2f}'} | {o['total']} "
            f"| {'' if cpu is None else f'{cpu:.2f}'} | {o['energy']} "
            f"| {o['violated']} | {'' if rss is None else f'{rss:.0f}'} | {o['status']} | {p['total']} "
            f"| {p['energy']} | {p['violated']} | {p['status']} |"
        )
    return "\n".join(lines) + "\n"


def plot(rows: Sequence[Row], path: Path, timeout: float) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    by = groups(rows)
    shown = [s for s in SERIES if any(k[0] == s for k in by)]
    fig = plt.figure(figsize=(15, 6.5))
    grid = fig.add_gridspec(2, 4)
    ax_t = fig.add_subplot(grid[:, :2])
    energy_axes = {s: fig.add_subplot(grid[i // 2, 2 + i % 2]) for i, s in enumerate(shown)}
    colors = dict(zip(SERIES, plt.rcParams["axes.prop_cycle"].by_key()["color"], strict=False))
    for series in shown:
        ax_e = energy_axes[series]
        for impl, style, marker in (("ours", "-", "o"), ("penrose", "--", "s")):
            sizes = sorted(n for s, n, i in by if s == series and i == impl)
            done = [(n, median_of(by[series, n, impl], "total_s")) for n in sizes]
            finished = [(n, t) for n, t in done if t is not None]
            label = f"{series} ({'ours' if impl == 'ours' else 'Penrose'})"
            if finished:
                ax_t.plot(*zip(*finished), style, marker=marker, color=colors[series], label=label)
                energies = [(n, median_of(by[series, n, impl], "energy")) for n, _ in finished]
                ax_e.plot(*zip(*energies), style, marker=marker, color=colors[series], label=label)
            for n, t in done:  # a size that did not finish: a hollow marker at its timeout
                over = [r["timeout"] for r in by[series, n, impl] if r["status"] == "timeout"]
                if t is None and over:
                    ax_t.plot(
                        [n], [max(over)], marker=marker, markerfacecolor="none", color=colors[series],
                        markersize=10, linestyle="none",
                    )  # fmt: skip
        ax_e.set_title(f"{series}: final energy (median)", fontsize=9)
        ax_e.set_yscale("symlog", linthresh=1.0)
        ax_e.tick_params(labelsize=7)
    for ax in (ax_t, *energy_axes.values()):
        ax.set_xscale("log", base=2)
        ax.grid(True, which="both", alpha=0.3)
    ax_t.set_xlabel("N (objects)")
    ax_t.set_yscale("log")
    ax_t.set_ylabel("seconds to a diagram (median over variations)")
    ax_t.set_title("hollow: did not finish, drawn at its timeout", fontsize=9)
    if ax_t.get_legend_handles_labels()[0]:
        ax_t.legend(fontsize=8, ncol=2)
    fig.suptitle("Scaling: registry Styles on N objects, ours (solid) and Penrose (dashed)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def read_rows(paths: Iterable[Path]) -> list[Row]:
    """The rows of several files; a later file's rows of a (series, N, impl) replace an earlier's."""
    kept: dict[tuple[str, int, str], list[Row]] = {}
    for p in paths:
        lines = p.read_text(encoding="utf-8").splitlines()
        kept |= groups(json.loads(line) for line in lines if line.strip())
    return [r for rows in kept.values() for r in rows]


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--series", nargs="+", choices=SERIES, default=list(SERIES))
    ap.add_argument("--sizes", type=int, nargs="+", default=DEFAULT_SIZES)
    ap.add_argument("--variations", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per run, ours and Penrose's")
    ap.add_argument("--penrose", action="store_true", help="also run Penrose (needs node and npm)")
    ap.add_argument("--keep-going", action="store_true", help="run larger sizes after a timeout")
    ap.add_argument("--registry", type=Path, default=DEFAULT_REGISTRY)
    ap.add_argument("--out", type=Path, default=Path("/tmp/scaling"))
    ap.add_argument("--pictures", type=int, nargs="*", default=[8, 32, 128, 1024], help="sizes to save")
    ap.add_argument("--plot", type=Path, default=None, help="the PNG plot (default OUT/scaling.png)")
    ap.add_argument("--from-rows", type=Path, nargs="+", default=None, help="summarize these row files")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    return ap


def main(argv: Sequence[str] | None = None) -> None:
    args = parser().parse_args(argv)
    if args.child is not None:
        print(json.dumps(child(json.loads(args.child))))
        return
    if not args.from_rows and not (args.registry / "registry.json").is_file():
        raise SystemExit(f"{args.registry}: not a Penrose registry (no registry.json); give --registry")
    rows = read_rows(args.from_rows) if args.from_rows else run_all(args)
    timeout = max((r["timeout"] for r in rows if r.get("timeout")), default=args.timeout)
    text = table(rows, timeout)
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "scaling.md").write_text(text, encoding="utf-8")
    try:
        plot(rows, args.plot or args.out / "scaling.png", timeout)
    except ModuleNotFoundError as e:
        if e.name != "matplotlib":
            raise
        print("no plot: matplotlib is not installed (pip install -e '.[bench]')", file=sys.stderr)


if __name__ == "__main__":
    main()

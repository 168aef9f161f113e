"""Batch-run a Penrose registry and compare with Penrose's own results.

    python -m registry.bench --registry DIR --out OUT [--jobs N] [--scheduler ADDRESS]
                             [--only GLOB] [--timeout S] [--penrose-results FILE]
                             [--run-penrose [--penrose-dir DIR] [--penrose-labels ours]]

DIR defaults to ``../shared/penrose-registry`` (relative to the working directory, i.e. beside the
repo root) and the Penrose results to ``penrose-reference/results.jsonl`` beside it. Writes
``OUT/results.jsonl`` (one row per trio, as each finishes), ``OUT/svg/<key with / as __>.svg``,
``OUT/report.md`` and ``OUT/report.html``. With ``--run-penrose`` it also runs Penrose itself (npm
``@penrose/core`` in Node, see :mod:`registry.penrose_task`) on the same trios after ours, writes
``OUT/penrose-results.jsonl`` and ``OUT/penrose-svg/``, and compares with those rows instead;
``--penrose-results OUT/penrose-results.jsonl`` compares with them again without rerunning Penrose.
``--penrose-labels ours`` gives that run our Text label sizes, so that both lay out the same boxes.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import importlib
import inspect
import json
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from energies.optimize.parallel_starts import available_cores
from registry import report
from registry.robustness import VARIATION_MARK
from registry.runner import (
    DEFAULT_GRACE,
    Callbacks,
    Row,
    Task,
    failure_row,
    pipeline_task,
    run_dask,
    run_local,
)
from service.jsonable import finite_or_none
from service.trios import (
    TrioError,
    TrioLoadFailure,
    TrioSpec,
    default_registry_dir,
    load_registry_entries,
    svg_name,
)


class ResultStore:
    """Appends rows to ``results.jsonl`` as they arrive; moves each row's SVG text into ``svg/``."""

    def __init__(self, out_dir: Path, prefix: str = "") -> None:
        self.out_dir = out_dir
        self.svg_dir = out_dir / f"{prefix}svg"
        self.svg_dir.mkdir(parents=True, exist_ok=True)
        self._file: TextIO = (out_dir / f"{prefix}results.jsonl").open("w", encoding="utf-8")
        self.rows: list[Row] = []

    def add(self, row: Row) -> None:
        svg = row.pop("svg", None)
        if isinstance(svg, str):
            data = svg.encode("utf-8")
            (self.svg_dir / svg_name(row["key"])).write_bytes(data)
            if row.get("svgBytes") is None:
                row["svgBytes"] = len(data)
        self.rows.append(row)
        self._file.write(json.dumps(finite_or_none(row)) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()


class Progress:
    """A tqdm bar with the current trio and running status counts; plain lines without tqdm."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.counts: Counter[str] = Counter()
        self.done = 0
        self.total = total
        self._bar = None
        self._enabled = enabled
        if enabled:
            try:
                from tqdm import tqdm

                self._bar = tqdm(total=total, unit="trio", dynamic_ncols=True, file=sys.stderr)
            except ImportError:
                pass

    def _counts_text(self) -> str:
        return " ".join(f"{status}={n}" for status, n in sorted(self.counts.items()))

    def started(self, trio: TrioSpec) -> None:
        if self._bar is not None:
            self._bar.set_description_str(trio.key, refresh=True)

    def finished(self, row: Row) -> None:
        self.counts[row["status"]] += 1
        self.done += 1
        if self._bar is not None:
            self._bar.set_postfix_str(self._counts_text(), refresh=False)
            self._bar.update(1)
        elif self._enabled:
            print(f"[{self.done}/{self.total}] {row['status']:<14} {row['key']}  ({self._counts_text()})",
                  file=sys.stderr)  # fmt: skip

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def run_batch(
    entries: Sequence[TrioSpec | TrioLoadFailure],
    out_dir: Path,
    *,
    task: Task = pipeline_task,
    jobs: int = 1,
    scheduler: Any = None,
    timeout: float | None = None,
    grace: float = DEFAULT_GRACE,
    progress: bool = True,
    prefix: str = "",
) -> list[Row]:
    """Run ``task`` on every loaded trio (locally or on Dask) and store the rows (in
    ``{prefix}results.jsonl`` and ``{prefix}svg/``); unreadable trios become ``compile-error`` rows."""
    out_dir.mkdir(parents=True, exist_ok=True)
    store = ResultStore(out_dir, prefix)
    bar = Progress(len(entries), progress)
    trios = [e for e in entries if isinstance(e, TrioSpec)]

    def done(row: Row) -> None:
        store.add(row)
        bar.finished(row)

    try:
        for failure in (e for e in entries if isinstance(e, TrioLoadFailure)):
            done(failure_row(failure.key, failure.name, "compile-error", failure.error))
        callbacks = Callbacks(on_start=bar.started, on_done=done)
        if scheduler is not None:
            run_dask(task, trios, scheduler=scheduler, timeout=timeout, grace=grace, callbacks=callbacks)
        else:
            run_local(task, trios, jobs=jobs, timeout=timeout, grace=grace, callbacks=callbacks)
    finally:
        bar.close()
        store.close()
    return store.rows


Entry = TrioSpec | TrioLoadFailure


def with_variations(entries: Sequence[Entry], n: int) -> list[Entry]:
    """Every trio over ``n`` variations: its own under its key, then ``{variation}~{i}`` under the key
    ``{key}@{i}`` (both systems get the same list, so their rows pair up by key)."""
    out: list[Entry] = []
    for e in entries:
        out.append(e)
        if isinstance(e, TrioSpec):
            for i in range(1, n):
                key = f"{e.key}{VARIATION_MARK}{i}"
                out.append(dataclasses.replace(e, key=key, variation=f"{e.variation}~{i}"))
    return out


def penrose_svgs_beside(results: Path) -> Path:
    """Penrose's SVGs beside its results: ``svg/`` in the reference folder, ``penrose-svg/`` beside an
    earlier ``--run-penrose`` run's ``penrose-results.jsonl`` (its ``svg/`` holds our SVGs)."""
    prefix = "penrose-" if results.name == "penrose-results.jsonl" else ""
    return results.parent / f"{prefix}svg"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m registry.bench", description=__doc__.split("\n")[0])
    p.add_argument("--registry", type=Path, help="registry folder (default: ../shared/penrose-registry)")
    p.add_argument("--out", type=Path, required=True, help="output folder")
    p.add_argument("--jobs", type=int, default=1, help="worker processes at a time (default 1)")
    p.add_argument("--scheduler", help="Dask scheduler address, e.g. tcp://host:8786 (instead of --jobs)")
    p.add_argument(
        "--only",
        action="append",
        help="run only keys matching this glob, e.g. 'set-theory-domain/*' (repeat for several)",
    )
    p.add_argument(
        "--timeout", type=float, default=120.0, help="seconds per trio (default 120; killed after S + grace)"
    )
    p.add_argument("--penrose-results", type=Path, help="Penrose's results.jsonl to compare with")
    p.add_argument("--run-penrose", action="store_true", help="also run Penrose (Node) on the same trios")
    p.add_argument("--penrose-dir", type=Path, help="Node runner folder (default registry/penrose_runner)")
    p.add_argument(
        "--penrose-labels",
        choices=("penrose", "ours"),
        default="penrose",
        help="with --run-penrose: Text label sizes Penrose measures itself, or ours (default penrose)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--task", default="registry.runner:pipeline_task", help="task to run, module:function")
    p.add_argument(
        "--starts",
        type=int,
        help="multi-start count of our layouts (default: the pipeline's; 1 = a single start, as Penrose)",
    )
    p.add_argument(
        "--start-processes",
        type=int,
        help="processes each trio's starts may use at once (default: the cores left per job, at least 1;"
        " 1 with --scheduler); the layouts are the same with any number",
    )
    p.add_argument(
        "--variations",
        type=int,
        default=1,
        help="run every trio over N variations (its own, then derived ones) and report how often each"
        " system reaches a good layout",
    )
    return p


def resolve_task(reference: str) -> Callable[..., Row]:
    """``module:function`` -> the function (it must be importable by the workers too)."""
    module_name, _, function_name = reference.partition(":")
    try:
        task = getattr(importlib.import_module(module_name), function_name)
    except (ImportError, AttributeError) as err:
        raise ValueError(f"--task {reference!r}: {err}") from None
    if not callable(task):
        raise ValueError(f"--task {reference!r} is not a function")
    return task


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    registry_dir = args.registry or default_registry_dir()
    if registry_dir is None:
        print("error: no --registry given and ../shared/penrose-registry does not exist", file=sys.stderr)
        return 2
    try:
        task = resolve_task(args.task)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for name in ("jobs", "variations", "starts", "start_processes"):
        value = getattr(args, name)
        if value is not None and value < 1:
            print(f"error: --{name.replace('_', '-')} must be at least 1, got {value}", file=sys.stderr)
            return 2
    if args.starts is not None:
        task = functools.partial(task, starts=args.starts)
    if "processes" in inspect.signature(task).parameters:
        free = 1 if args.scheduler else max(1, available_cores() // args.jobs)
        task = functools.partial(task, processes=args.start_processes or free)
    elif args.start_processes is not None:
        print(f"error: --task {args.task} takes no --start-processes", file=sys.stderr)
        return 2
    try:
        entries = load_registry_entries(registry_dir, args.only)
    except TrioError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if not entries:
        print(f"error: no registry key in {registry_dir} matches --only {args.only!r}", file=sys.stderr)
        return 2
    entries = with_variations(entries, args.variations)
    penrose_task = None
    if args.run_penrose:
        from registry import penrose_task as penrose

        runner_dir = args.penrose_dir or penrose.RUNNER_DIR
        try:
            penrose.ensure_runner_installed(runner_dir)
        except penrose.PenroseSetupError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        penrose_task = functools.partial(
            penrose.penrose_task, runner_dir=Path(runner_dir).resolve(), label_sizes=args.penrose_labels
        )
    penrose_file = args.penrose_results
    if penrose_file is None:
        guess = Path(registry_dir).resolve().parent / "penrose-reference" / "results.jsonl"
        penrose_file = guess if guess.is_file() else None
    rows = run_batch(
        entries, args.out, task=task, jobs=args.jobs, scheduler=args.scheduler, timeout=args.timeout,
        progress=not args.no_progress,
    )  # fmt: skip
    penrose_rows = report.load_rows(penrose_file) if penrose_file else []
    penrose_svg_dir = penrose_svgs_beside(penrose_file) if penrose_file else None
    if penrose_task is not None:
        penrose_rows = run_batch(
            entries, args.out, task=penrose_task, jobs=args.jobs, scheduler=args.scheduler,
            timeout=args.timeout, progress=not args.no_progress, prefix="penrose-",
        )  # fmt: skip
        penrose_svg_dir = args.out / "penrose-svg"
    report.write_reports(rows, penrose_rows, args.out, penrose_svg_dir=penrose_svg_dir)
    counts = Counter(row["status"] for row in rows)
    print(f"{len(rows)} trios: " + ", ".join(f"{n} {s}" for s, n in counts.most_common()))
    print(f"wrote {args.out / 'results.jsonl'}, {args.out / 'report.md'}, {args.out / 'report.html'}")
    if not set(row["key"] for row in rows) & set(row["key"] for row in penrose_rows):
        print(report.NO_REFERENCE, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Run real Penrose (npm ``@penrose/core``) on a trio, as a harness task beside our own pipeline.

:func:`penrose_task` is a task for :mod:`registry.runner` (so it gets the same per-trio worker
process and wall-clock limit as ours): it sends the trio as JSON to ``node run.mjs`` (in
:data:`RUNNER_DIR`, see its header for the row's fields) on standard input, waits at most
``timeout`` seconds, and parses the JSON row from the last line of the runner's standard output.
A runner that overruns is killed (status ``timeout``); one that exits without a row, or prints
something that is not a row, yields ``crash`` with its exit status and the tail of its output.

With ``label_sizes="ours"`` the runner is also given our size of every Text label
(:func:`our_text_sizes`), so Penrose lays out the same label boxes as we do: where the two
measurements differ (the runner snaps ink boxes to whole pixels, as the reference machine's hinting
did; we keep the glyphs' exact extents), energies are then compared like with like. Equation labels
stay Penrose's (MathJax).

:func:`ensure_runner_installed` checks that ``node``/``npm`` exist and installs the runner's npm
dependencies (``npm ci`` from the lockfile, else ``npm install``) when ``node_modules`` is missing.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from service.trios import TrioSpec

Row = dict[str, Any]
RUNNER_DIR = Path(__file__).resolve().parent / "penrose_runner"
RUNNER_SCRIPT = "run.mjs"
PENROSE_PACKAGE = Path("node_modules") / "@penrose" / "core" / "package.json"
_OUTPUT_TAIL = 2000
LabelSizes = Literal["penrose", "ours"]
# Penrose's toFontRule: these properties, space-separated in this order, then "/lineHeight" if set.
_FONT_RULE_PROPS = ("fontStretch", "fontStyle", "fontVariant", "fontWeight", "fontSize", "fontFamily")


class PenroseSetupError(RuntimeError):
    """Node or npm is missing, or the runner's dependencies could not be installed."""


def trio_payload(trio: TrioSpec) -> dict[str, Any]:
    """What ``run.mjs`` reads: the program texts, the variation and where Style resources live."""
    return {
        "key": trio.key,
        "domain": trio.domain,
        "substance": trio.substance,
        "style": trio.style,
        "variation": trio.variation,
        "excludeWarnings": list(trio.exclude_warnings),
        "baseDir": str(trio.base_dir),
    }


def penrose_font_rule(props: Mapping[str, Any]) -> str:
    """The CSS font rule Penrose sets on its canvas to measure a Text shape with these properties."""
    rule = " ".join(str(props.get(name, "")) for name in _FONT_RULE_PROPS)
    line_height = str(props.get("lineHeight", ""))
    return f"{rule}/{line_height}" if line_height else rule


def _text_shapes(shapes: Iterable[Any]) -> Iterable[Any]:
    for shape in shapes:
        if shape.kind == "Text":
            yield shape
        elif shape.kind == "Group":
            yield from _text_shapes(shape.props.get("shapes", ()))


def our_text_sizes(trio: TrioSpec) -> list[dict[str, Any]] | None:
    """Our size of every Text label of the trio, as the runner's ``textSizes``; None when our
    pipeline cannot build the diagram (Penrose then measures as usual)."""
    from energies.diagram_build import build_diagram
    from energies.lang.errors import DiagramError

    style = trio.style if isinstance(trio.style, str) else "\n".join(trio.style)
    try:
        diagram = build_diagram(
            trio.domain, trio.substance, style, trio.variation, tuple(trio.exclude_warnings)
        )
    except DiagramError:
        return None
    sizes = {}
    for shape in _text_shapes(diagram.shapes):
        p = shape.props
        font, text = penrose_font_rule(p), str(p["string"])
        sizes[font, text] = {
            "font": font,
            "text": text,
            **{k: float(p[k]) for k in ("width", "ascent", "descent")},
        }
    return list(sizes.values())


def _tail(text: str) -> str:
    return text[-_OUTPUT_TAIL:].strip()


def parse_runner_output(stdout: str, stderr: str, returncode: int) -> Row:
    """The row a runner printed (its last non-empty stdout line), or a ``crash`` row explaining why not."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    row: Any = None
    if lines:
        try:
            row = json.loads(lines[-1])
        except json.JSONDecodeError:
            row = None
    if isinstance(row, dict) and isinstance(row.get("status"), str):
        if returncode != 0 and row["status"] == "ok":  # a row, then a failure: do not trust the row
            row = {**row, "status": "crash", "error": f"node exited with status {returncode} after an ok row"}
        return row
    described = (
        f"node exited with status {returncode}" if returncode >= 0 else f"node killed by signal {-returncode}"
    )
    output = _tail(stderr + ("\n" + stdout if stdout.strip() else ""))
    return {
        "status": "crash",
        "error": f"{described} without a JSON row" + (f"; output:\n{output}" if output else ""),
    }


def run_penrose_process(
    payload: dict[str, Any], timeout: float | None, command: Sequence[str], cwd: Path
) -> Row:
    """Run ``command`` with ``payload`` as JSON on stdin, at most ``timeout`` seconds; its row."""
    try:
        done = subprocess.run(
            list(command),
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            cwd=cwd,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as err:
        stderr = (
            err.stderr.decode("utf-8", "replace") if isinstance(err.stderr, bytes) else (err.stderr or "")
        )
        error = f"Penrose runner killed after {timeout}s" + (
            f"; output:\n{_tail(stderr)}" if stderr.strip() else ""
        )
        return {"status": "timeout", "error": error}
    except OSError as err:
        return {"status": "crash", "error": f"could not start {command[0]!r}: {err}"}
    return parse_runner_output(done.stdout, done.stderr, done.returncode)


def penrose_task(
    trio: TrioSpec,
    timeout: float | None,
    runner_dir: Path | str | None = None,
    label_sizes: LabelSizes = "penrose",
) -> Row:
    """Harness task: one trio through Penrose in a fresh ``node`` process (bind ``runner_dir`` or
    ``label_sizes`` with ``functools.partial``: another runner folder, our Text label sizes)."""
    folder = Path(runner_dir) if runner_dir is not None else RUNNER_DIR
    node = shutil.which("node") or "node"
    payload = trio_payload(trio)
    sizes = our_text_sizes(trio) if label_sizes == "ours" else None
    if sizes is not None:
        payload["textSizes"] = sizes
    return run_penrose_process(payload, timeout, [node, str(folder / RUNNER_SCRIPT)], folder)


def ensure_runner_installed(runner_dir: Path = RUNNER_DIR, *, quiet: bool = False) -> None:
    """Check for node and npm; install the runner's npm dependencies if ``@penrose/core`` is absent."""
    runner_dir = Path(runner_dir)
    if not (runner_dir / "package.json").is_file() or not (runner_dir / RUNNER_SCRIPT).is_file():
        raise PenroseSetupError(
            f"{runner_dir}: not a Penrose runner folder (needs package.json and {RUNNER_SCRIPT})"
        )
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing:
        raise PenroseSetupError(
            f"--run-penrose needs Node.js: {' and '.join(missing)} not found on PATH "
            "(install Node 18 or newer with npm)"
        )
    if (runner_dir / PENROSE_PACKAGE).is_file():
        return
    install = "ci" if (runner_dir / "package-lock.json").is_file() else "install"
    command = [shutil.which("npm") or "npm", install, "--no-audit", "--no-fund"]
    if not quiet:
        print(f"installing the Penrose runner's dependencies: {' '.join(command[1:])} in {runner_dir}")
    done = subprocess.run(command, cwd=runner_dir, capture_output=True, text=True, check=False)
    if done.returncode != 0 or not (runner_dir / PENROSE_PACKAGE).is_file():
        raise PenroseSetupError(
            f"npm {install} failed in {runner_dir} (status {done.returncode}):\n{_tail(done.stderr)}"
        )

"""Command line: render a trio to SVG, or serve the HTTP API.

    python -m service render TRIO.trio.json -o OUT.svg [--report OUT.json] [--variation SEED]
    python -m service render --domain D --substance S --style T [--style T2] -o OUT.svg
    python -m service render --example NAME -o OUT.svg
    python -m service serve [--host H] [--port P] [--workers N]

Exit codes: 0 ok, 1 user error (file:line:col message and the offending line), 2 usage,
3 layout failure (timeout, non-finite energy, ...), 4 internal error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_USER, EXIT_USAGE, EXIT_LAYOUT, EXIT_INTERNAL = 0, 1, 2, 3, 4


class UserError(Exception):
    """A mistake in the command's inputs (unreadable file, bad trio JSON)."""


@dataclass
class Inputs:
    domain: str
    substance: str
    style: str
    variation: str
    exclude_warnings: tuple[str, ...]
    base_dir: Path  # local images resolve inside this folder (or a Style file's folder) only
    # where each program came from, to name real files in error messages:
    # source -> [(path, first line of that file within the program text)]
    files: dict[str, list[tuple[str, int]]]
    style_dirs: tuple[Path, ...] = ()


def read_text(path: Path, what: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as e:
        raise UserError(f"{path}: cannot read the {what}: {e.strerror}") from None
    except UnicodeDecodeError:
        raise UserError(f"{path}: the {what} is not UTF-8 text") from None


def joined(paths: list[Path], what: str) -> tuple[str, list[tuple[str, int]]]:
    """Texts joined with a newline (Penrose's rule for several Style files) and each file's first line."""
    texts, starts, line = [], [], 1
    for p in paths:
        text = read_text(p, what)
        texts.append(text)
        starts.append((str(p), line))
        line += text.count("\n") + 1
    return "\n".join(texts), starts


def from_files(domain: Path, substance: Path, styles: list[Path], variation: str) -> Inputs:
    style, style_files = joined(styles, "style")
    return Inputs(
        read_text(domain, "domain"),
        read_text(substance, "substance"),
        style,
        variation,
        (),
        styles[0].resolve().parent,
        {"domain": [(str(domain), 1)], "substance": [(str(substance), 1)], "style": style_files},
    )


def from_trio_file(path: Path) -> Inputs:
    try:
        data = json.loads(read_text(path, "trio"))
    except json.JSONDecodeError as e:
        raise UserError(f"{path}:{e.lineno}:{e.colno}: invalid JSON: {e.msg}") from None
    if not isinstance(data, dict):
        raise UserError(f"{path}: expected a JSON object with domain, substance, style")
    missing = [k for k in ("domain", "substance", "style") if k not in data]
    if missing:
        raise UserError(f"{path}: missing field(s) {', '.join(missing)}")
    styles = data["style"] if isinstance(data["style"], list) else [data["style"]]
    names = [data["domain"], data["substance"], *styles]
    if not styles or not all(isinstance(n, str) for n in names):
        raise UserError(f"{path}: domain, substance and style must be paths (style may be a list of paths)")
    variation = data.get("variation", "")
    exclude = data.get("excludeWarnings", [])
    if not isinstance(variation, str):
        raise UserError(f"{path}: field 'variation' must be a string")
    if not (isinstance(exclude, list) and all(isinstance(w, str) for w in exclude)):
        raise UserError(f"{path}: field 'excludeWarnings' must be a list of strings")
    base = path.parent
    inputs = from_files(
        base / data["domain"], base / data["substance"], [base / s for s in styles], variation
    )
    inputs.exclude_warnings = tuple(exclude)
    inputs.base_dir = base.resolve()
    inputs.style_dirs = tuple(dict.fromkeys((base / s).resolve().parent for s in styles))
    return inputs


def from_example(name: str) -> Inputs:
    from .examples import EXAMPLES_DIR, examples

    if name not in examples():
        raise UserError(f"no example named {name!r}; examples: {', '.join(examples())}")
    return from_trio_file(EXAMPLES_DIR / f"{name}.trio.json")


def locate(inputs: Inputs, source: str, line: int) -> tuple[str, int]:
    """The real file and its own line number for a line of a (possibly joined) program."""
    files = inputs.files.get(source) or [(source, 1)]
    path, start = files[0]
    for p, s in files:
        if s <= line:
            path, start = p, s
    return path, line - start + 1


def format_diagram_error(error: Any, inputs: Inputs) -> str:
    from .layout_job import distinct_errors

    out = []
    for e in distinct_errors(error):
        path, line = locate(inputs, e.source, e.line)
        out.append(f"{path}:{line}:{e.column}: {e.message}")
        if e.excerpt:
            out.append(e.excerpt)
    return "\n".join(out)


def progress_printer(stream: Any) -> Callable[[Any], None]:
    """A one-line, self-overwriting progress display, refreshed at most 10 times a second."""
    t0 = time.monotonic()
    last = [0.0]

    def show(p: Any) -> None:
        now = time.monotonic()
        if now - last[0] < 0.1:
            return
        last[0] = now
        stage = f" stage {p.stage_name}" if p.stage_name else ""
        start = f" start {p.start + 1}" if p.start else ""
        stream.write(
            f"\r  layout{start}{stage}: round {p.ep_round}, {p.iterations} iterations, "
            f"energy {p.energy:.4g}, {now - t0:.1f} s   "
        )
        stream.flush()

    return show


def cmd_render(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from energies.lang.errors import DiagramError

    from .layout_job import report_of
    from .pipeline import LayoutError, portfolio_settings, render_trio, trio_image_resolver
    from .render import RenderError

    given = [args.trio is not None, args.example is not None, any((args.domain, args.substance, args.style))]
    if sum(given) != 1:
        parser.error("give exactly one of: a trio file, --example NAME, or --domain/--substance/--style")
    if given[2] and not (args.domain and args.substance and args.style):
        parser.error("--domain, --substance and --style are needed together")
    try:
        if args.trio is not None:
            inputs = from_trio_file(Path(args.trio))
        elif args.example is not None:
            inputs = from_example(args.example)
        else:
            inputs = from_files(Path(args.domain), Path(args.substance), [Path(s) for s in args.style], "")
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USER
    if args.variation is not None:
        inputs.variation = args.variation

    tty = sys.stderr.isatty()
    try:
        rendering = render_trio(
            inputs.domain,
            inputs.substance,
            inputs.style,
            inputs.variation,
            inputs.exclude_warnings,
            time_limit=args.time_limit,
            resolve_image=trio_image_resolver(inputs.base_dir, *inputs.style_dirs),
            on_progress=progress_printer(sys.stderr) if tty else None,
            portfolio=portfolio_settings(args.starts, args.start_seconds),
            safe_svg=not args.unsafe,
        )
    except DiagramError as e:
        print(format_diagram_error(e, inputs), file=sys.stderr)
        return EXIT_USER
    except RenderError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USER
    except LayoutError as e:
        if tty:
            sys.stderr.write("\n")
        print(f"layout failed ({e.status}): {e}", file=sys.stderr)
        return EXIT_LAYOUT
    except Exception:  # noqa: BLE001 - a bug of ours, not the user's: say so and show where
        traceback.print_exc()
        print("internal error (a bug in the renderer, not in your diagram)", file=sys.stderr)
        return EXIT_INTERNAL
    if tty:
        sys.stderr.write("\n")
    try:
        if args.output == "-":
            sys.stdout.write(rendering.svg)
        else:
            Path(args.output).write_text(rendering.svg, encoding="utf-8")
        if args.report:
            Path(args.report).write_text(json.dumps(report_of(rendering), indent=2), encoding="utf-8")
    except OSError as e:
        print(f"error: cannot write {e.filename}: {e.strerror}", file=sys.stderr)
        return EXIT_USER
    for w in rendering.warnings:
        print(f"warning: {w}", file=sys.stderr)
    return EXIT_OK


def cmd_serve(args: argparse.Namespace) -> int:
    import logging

    import uvicorn

    from .app import create_app
    from .settings import settings_from_env

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    base = settings_from_env()
    overrides = {
        "workers": args.workers,
        "time_limit": args.time_limit,
        "max_body_bytes": args.max_body_bytes,
        "unsafe_svg": args.unsafe,
    }
    settings = type(base)(**{**base.__dict__, **{k: v for k, v in overrides.items() if v is not None}})
    uvicorn.run(create_app(settings), host=args.host, port=args.port, log_level="info", access_log=False)
    return EXIT_OK


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m service", description="Penrose-style diagrams to SVG")
    sub = parser.add_subparsers(dest="command", required=True)

    render = sub.add_parser("render", help="render a trio to SVG")
    render.add_argument("trio", nargs="?", help="a Penrose .trio.json (paths inside are relative to it)")
    render.add_argument("--example", help="one of our examples (registry/examples)")
    render.add_argument("--domain", help="Domain program file")
    render.add_argument("--substance", help="Substance program file")
    render.add_argument("--style", action="append", help="Style program file (repeat to join several)")
    render.add_argument("-o", "--output", required=True, help="SVG file to write ('-' for stdout)")
    render.add_argument("--report", help="also write the JSON report here")
    render.add_argument("--variation", help="seed of the random initial state (overrides the trio's)")
    render.add_argument("--time-limit", type=float, default=60.0, help="seconds (default 60)")
    render.add_argument(
        "--starts",
        type=positive_int,
        help="initial states to try, keeping the best layout (default 6; 1 is Penrose's single run)",
    )
    render.add_argument(
        "--start-seconds",
        type=float,
        help="seconds for the starts after the first (default: no budget; a cut makes the layout"
        " machine-dependent)",
    )
    render.add_argument(
        "--unsafe",
        action="store_true",
        help="keep Penrose's full passthrough of Style properties to the SVG, even event handlers and"
        " external URLs (only for Styles you trust)",
    )

    serve = sub.add_parser("serve", help="serve the HTTP API and the playground")
    serve.add_argument("--host", default=os.environ.get("PENROSE_HOST", "127.0.0.1"))
    serve.add_argument("--port", type=int, default=int(os.environ.get("PENROSE_PORT", "8000")))
    serve.add_argument("--workers", type=int, help="layout worker processes (default $PENROSE_WORKERS or 2)")
    serve.add_argument(
        "--time-limit", type=float, help="seconds per layout (default $PENROSE_TIME_LIMIT or 30)"
    )
    serve.add_argument("--max-body-bytes", type=int, help="request size limit (default 1000000)")
    serve.add_argument(
        "--unsafe",
        action="store_const",
        const=True,
        help="answer SVGs with Penrose's full passthrough, even event handlers and external URLs"
        " (default $PENROSE_UNSAFE_SVG or off; only for trusted clients)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "render":
        return cmd_render(args, parser)
    return cmd_serve(args)

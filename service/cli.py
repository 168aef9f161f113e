"""Command line (`penrose-py`, or `python -m service`): render a trio, print its URL, or serve the API.

    penrose-py render TRIO.trio.json -o OUT.svg|.png|.pdf [--format F] [--report OUT.json] [--variation SEED]
    penrose-py render --domain D --substance S --style T [--style T2] -o OUT.svg
    penrose-py render --example NAME -o OUT.svg
    penrose-py render - -o -          (the trio as the HTTP API's JSON on stdin; the picture on stdout)
    penrose-py url TRIO.trio.json     (the GET URL of the diagram; `-` reads the JSON from stdin)
    penrose-py serve [--host H] [--port P] [--workers N]

Exit codes: 0 ok, 1 user error (file:line:col message and the offending line), 2 usage,
3 layout failure (timeout, non-finite energy, ...), 4 internal error. Imports wait for the command
that needs them: a render never loads the web server, an SVG never loads the PNG or PDF library,
and --help, usage errors, a trio file that cannot be read and `url` of a trio file load neither
the layout pipeline (numpy, scipy, wasmtime) nor pydantic: `render` checks its arguments and reads
its trio before importing the pipeline, and `serve`'s arguments, whose help quotes
service.settings, are added only when `serve` is given (`DeferredParser`). A trio given as JSON
(`-`) loads pydantic for the HTTP API's schema. tests/service/test_cli.py holds these paths to this.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from .trios import TrioError, TrioSpec, load_trio, style_list_files, trio_from_files

EXIT_OK, EXIT_USER, EXIT_USAGE, EXIT_LAYOUT, EXIT_INTERNAL = 0, 1, 2, 3, 4
FORMATS = ("svg", "png", "pdf")
STDIN = "-"


def trio_from_json(text: str, where: str = "stdin") -> TrioSpec:
    """A trio given as the HTTP API's JSON (program texts, not paths); local images resolve
    against the working directory."""
    from pydantic import ValidationError

    from service.http.schemas import DiagramRequest

    try:
        body = DiagramRequest.model_validate_json(text)
    except ValidationError as e:
        problems = "; ".join(f"{'.'.join(map(str, x['loc'])) or 'body'}: {x['msg']}" for x in e.errors())
        raise TrioError(f"{where}: not a trio ({problems})") from None
    cwd = Path.cwd()
    return TrioSpec(
        where,
        None,
        body.domain,
        body.substance,
        body.style_text(),
        body.variation,
        tuple(body.excludeWarnings),
        cwd,
        (cwd,),
        style_list_files(body.style),
    )


def read_trio(args: argparse.Namespace) -> TrioSpec:
    if args.trio == STDIN:
        return trio_from_json(sys.stdin.read())
    if args.trio is not None:
        return load_trio(Path(args.trio))
    if args.example is not None:
        from .examples import examples

        if args.example not in examples():
            raise TrioError(f"no example named {args.example!r}; examples: {', '.join(examples())}")
        return examples()[args.example]
    return trio_from_files(Path(args.domain), Path(args.substance), [Path(s) for s in args.style])


def format_diagram_error(error: Any, trio: TrioSpec) -> str:
    from service.workers.layout_job import distinct_errors

    out = []
    for e in distinct_errors(error):
        path, line = trio.place(e.source, e.line)
        out.append(f"{path}:{line}:{e.column}: {e.message}" if line > 0 else f"{path}: {e.message}")
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


def output_format(args: argparse.Namespace) -> str:
    from service.render.formats import format_of

    return args.format or format_of(args.output)


def check_output_format(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """The output's suffix and --format agree, and --scale is positive: never a PNG in a .svg file."""
    from service.render.formats import MEDIA_TYPES

    suffix = Path(args.output).suffix.lower().lstrip(".")
    if args.output != STDIN and args.format is None and suffix not in MEDIA_TYPES:
        parser.error(f"cannot tell the format of {args.output}: name it .svg, .png or .pdf, or give --format")
    if args.format is not None and suffix in MEDIA_TYPES and suffix != args.format:
        parser.error(f"--format {args.format} does not match the output's suffix .{suffix}")
    if not args.scale > 0:
        parser.error(f"--scale must be a positive number, not {args.scale:g}")


def cmd_render(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    given = [args.trio is not None, args.example is not None, any((args.domain, args.substance, args.style))]
    if sum(given) == 0:
        parser.error(
            "which trio? give a .trio.json file ('-' reads the JSON from stdin), --example NAME"
            " or --domain/--substance/--style"
        )
    if sum(given) > 1:
        parser.error("give only one of: a trio file, --example NAME, or --domain/--substance/--style")
    if given[2] and not (args.domain and args.substance and args.style):
        parser.error("--domain, --substance and --style are needed together")
    if args.output is None:
        parser.error("where to? give -o OUT.svg (or .png, .pdf; '-' writes to stdout)")
    check_output_format(args, parser)
    try:
        trio = read_trio(args)
    except TrioError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USER
    if args.variation is not None:
        trio = replace(trio, variation=args.variation)

    # the pipeline only now: a usage error or an unreadable trio is told without loading it
    from energies.lang.errors import DiagramError
    from energies.optimize.parallel_starts import free_cores
    from service.render.formats import FormatError
    from service.render.svg import RenderError
    from service.workers.layout_job import report_of

    from .pipeline import LayoutError, portfolio_settings, render_trio
    from .trios import trio_image_resolver

    tty = sys.stderr.isatty()
    try:
        rendering = render_trio(
            trio.domain,
            trio.substance,
            trio.style,
            trio.variation,
            trio.exclude_warnings,
            time_limit=args.time_limit,
            resolve_image=trio_image_resolver(trio.base_dir, *trio.style_dirs),
            on_progress=progress_printer(sys.stderr) if tty else None,
            portfolio=portfolio_settings(
                args.starts, args.start_seconds, args.start_processes or free_cores()
            ),
            safe_svg=not args.unsafe,
        )
        rendering.files = trio.files  # warnings name the trio's files
        picture = rendering.to(output_format(args), args.scale)
    except DiagramError as e:
        print(format_diagram_error(e, trio), file=sys.stderr)
        return EXIT_USER
    except (RenderError, FormatError) as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USER
    except LayoutError as e:
        if tty:
            sys.stderr.write("\n")
        print(f"layout failed ({e.status}): {e}", file=sys.stderr)
        if e.status == "timeout":
            print("raise the limit with --time-limit SECONDS", file=sys.stderr)
        return EXIT_LAYOUT
    except Exception:  # noqa: BLE001 - a bug of ours, not the user's: say so and show where
        import traceback

        traceback.print_exc()
        print("internal error (a bug in the renderer, not in your diagram)", file=sys.stderr)
        return EXIT_INTERNAL
    if tty:
        sys.stderr.write("\n")
    try:
        if args.output == STDIN:
            sys.stdout.buffer.write(picture)
            sys.stdout.flush()
        else:
            Path(args.output).write_bytes(picture)
        if args.report:
            Path(args.report).write_text(json.dumps(report_of(rendering), indent=2), encoding="utf-8")
    except OSError as e:
        print(f"error: cannot write {e.filename}: {e.strerror}", file=sys.stderr)
        return EXIT_USER
    for w in rendering.warnings:
        print(f"warning: {w}", file=sys.stderr)
    unmet = rendering.optimization.n_violated
    if unmet:
        why = rendering.diagnosis.to_json() if rendering.diagnosis is not None else None
        print(
            f"warning: {unmet} constraint{'s' * (unmet > 1)} not satisfied (largest violation"
            f" {rendering.optimization.max_constraint_violation:.3g})"
            + (":" if why else "; --report OUT.json lists each goal"),
            file=sys.stderr,
        )
        if why:
            print(explain(why, trio.place), file=sys.stderr)
    return EXIT_OK


SHOWN_LINES = 8  # Style lines listed under a layout's unsatisfied constraints; the rest are counted
SHOWN_MATCHES = 3  # the Substance objects of this many matches are named per line


def explain(diagnosis: dict[str, Any], place: Callable[[str, int], tuple[str, int]]) -> str:
    """The report's diagnosis (energies.diagnose) as the CLI prints it: the violated constraints
    grouped by Style line, most violated first, then the lines that pull against each other, then
    what to do. ``place`` maps a line of the joined Style to its file and line."""
    goals = diagnosis["goals"]

    def where(g: dict[str, Any]) -> str:
        if not g["line"]:
            return "(implicit)" if g["implicit"] else "style"
        path, line = place("style", g["line"])
        return f"{path}:{line}:{g['column']}"

    lines: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for g in goals:
        if g["kind"] == "constraint":
            key = (g["line"], g["column"], g["function"], g["block"] if g["line"] else g["shapes"])
            lines.setdefault(key, []).append(g)
    out = []
    ranked = sorted(lines.values(), key=lambda ms: -max(m["value"] for m in ms))  # most violated first
    for members in ranked[:SHOWN_LINES]:
        g = members[0]
        named = "; ".join(", ".join(m["substance"]) for m in members[:SHOWN_MATCHES] if m["substance"])
        more = len(members) - SHOWN_MATCHES
        named += f" and {more} more" if more > 0 and named else ""
        block = f" in {g['block'].rstrip(' {')}" if g["block"] and g["line"] else ""
        share = sum(m["share"] for m in members)
        out.append(
            f"  {where(g)}: ensure {g['function']}{block}: {len(members)} violated"
            + (f" ({named})" if named else "")
            + f", largest value {max(m['value'] for m in members):.3g}, {share:.0%} of the energy"
            + ("; it can never hold" if any(m["never"] for m in members) else "")
        )
    rest = len(lines) - SHOWN_LINES
    if rest > 0 or diagnosis["omitted"]:
        out.append(
            f"  and {max(rest, 0)} more Style line{'s' * (rest != 1)}"
            + (f" ({diagnosis['omitted']} goals not detailed)" if diagnosis["omitted"] else "")
        )
    pairs: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for c in diagnosis["conflicts"]:
        a, b = sorted((goals[c["a"]], goals[c["b"]]), key=lambda g: (g["line"], g["column"]))
        pairs.setdefault((f"{where(a)} {a['function']}", f"{where(b)} {b['function']}"), []).append(c)
    for (a, b), found in pairs.items():
        first = [min(goals[c["a"]], goals[c["b"]], key=lambda g: (g["line"], g["column"])) for c in found]
        shapes = "; ".join(", ".join(g["substance"]) for g in first[:SHOWN_MATCHES])
        more = len(found) - SHOWN_MATCHES
        verb = "cannot both hold" if found[0]["known"] else "pull against each other"
        out.append(
            f"  contradiction: {a} and {b} {verb} for the same shapes ({shapes}"
            + (f" and {more} more" if more > 0 else "")
            + ")"
        )
    heavy = [g for g in goals if g["kind"] == "objective"]
    for g in heavy[:SHOWN_MATCHES]:
        out.append(
            f"  {where(g)}: encourage {g['function']} ({', '.join(g['substance'])}) holds {g['share']:.0%}"
            " of the energy"
        )
    violated = [g for g in goals if g["kind"] == "constraint"]
    if pairs:
        hint = "the Style asks for constraints that cannot all hold: change one of each contradicting pair"
    elif violated and all(g["never"] for g in violated):
        hint = "no layout can satisfy them: the Style fixes every value they read"
    else:
        hint = "another --variation or more --starts may find a layout that satisfies them"
    out.append(f"  {hint} (--report OUT.json lists each goal)")
    return "\n".join(out)

    return EXIT_OK


def cmd_url(args: argparse.Namespace) -> int:
    from service.http.diagram_url import MAX_ENCODED_CHARS, encode_trio

    try:
        trio = trio_from_json(sys.stdin.read()) if args.trio == STDIN else load_trio(Path(args.trio))
    except TrioError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USER
    body: dict[str, Any] = {"domain": trio.domain, "substance": trio.substance, "style": trio.style}
    if trio.variation:
        body["variation"] = trio.variation
    if trio.exclude_warnings:
        body["excludeWarnings"] = list(trio.exclude_warnings)
    encoded = encode_trio(body)
    if len(encoded) > MAX_ENCODED_CHARS:
        print(
            f"error: the encoded trio has {len(encoded):,} characters, more than a server takes in a URL"
            f" ({MAX_ENCODED_CHARS:,}); POST it to /diagrams instead",
            file=sys.stderr,
        )
        return EXIT_USER
    server, origin = server_url(args.server)
    print(f"server: {server} ({origin})", file=sys.stderr)
    print(f"{server}/diagrams/{args.format}/{encoded}")
    return EXIT_OK


SERVER_ENV = "PENROSE_SERVER"
DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 8000


def default_host() -> str:
    return os.environ.get("PENROSE_HOST", DEFAULT_HOST)


def default_port() -> int:
    return int(os.environ.get("PENROSE_PORT", str(DEFAULT_PORT)))


def server_url(given: str | None) -> tuple[str, str]:
    """The base URL `url` names, and where it came from: --server, $PENROSE_SERVER, else the
    address `serve` listens on by default (its $PENROSE_HOST and $PENROSE_PORT, a wildcard host
    reached as 127.0.0.1)."""
    if given:
        return given.rstrip("/"), "--server"
    if os.environ.get(SERVER_ENV):
        return os.environ[SERVER_ENV].rstrip("/"), f"${SERVER_ENV}"
    host = default_host()
    host = DEFAULT_HOST if host in ("0.0.0.0", "::", "") else host
    host = f"[{host}]" if ":" in host else host
    set_by = [v for v in ("PENROSE_HOST", "PENROSE_PORT") if os.environ.get(v)]
    origin = f"serve's default, from ${' and $'.join(set_by)}" if set_by else "serve's default"
    return f"http://{host}:{default_port()}", origin + f"; --server or ${SERVER_ENV} to choose another"


def cmd_serve(args: argparse.Namespace) -> int:
    import logging

    import uvicorn

    from service.http.app import create_app

    from .settings import settings_from_env

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    base = settings_from_env()
    overrides = {
        "workers": args.workers,
        "time_limit": args.time_limit,
        "max_body_bytes": args.max_body_bytes,
        "unsafe_svg": args.unsafe,
        "start_processes": args.start_processes,
    }
    settings = type(base)(**{**base.__dict__, **{k: v for k, v in overrides.items() if v is not None}})
    # Shutdown drains in-flight requests for at most drain_seconds, then cuts them.
    uvicorn.run(
        create_app(settings),
        host=args.host,
        port=args.port,
        log_level="info",
        access_log=False,
        timeout_graceful_shutdown=max(1, math.ceil(settings.drain_seconds)),
        # a request head may be as long as a body (h11's default, 64 KiB, answers a plain 400 to a
        # longer diagram URL before the app can say 414 and why)
        h11_max_incomplete_event_size=max(settings.max_body_bytes, 65_536),
    )
    return EXIT_OK


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


class DeferredParser(argparse.ArgumentParser):
    """A subcommand's parser whose arguments are added by `deferred` when it first parses, so that
    what they import is loaded only when that subcommand is given: the top level's help and its
    usage errors name the subcommands alone, never their arguments."""

    deferred: Callable[[argparse.ArgumentParser], None] | None = None

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        if self.deferred is not None:
            add_arguments, self.deferred = self.deferred, None
            add_arguments(self)
        return super().parse_known_args(args, namespace)


class VersionAction(argparse.Action):
    """`--version`, read from the installed package only when asked (importlib.metadata is slow
    to import, and a render does not need it)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any):
        super().__init__(option_strings, dest, nargs=0, help="show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            number = version("penrose-py")
        except PackageNotFoundError:
            number = "unknown (not installed)"
        print(f"{parser.prog} {number}")  # on stdout, as argparse's own version action
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="penrose-py", description="Penrose diagrams (Domain, Substance, Style) to SVG, PNG or PDF"
    )
    parser.add_argument("--version", action=VersionAction)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=DeferredParser)

    render = sub.add_parser("render", help="render a trio to SVG, PNG or PDF")
    render.add_argument(
        "trio",
        nargs="?",
        help="a Penrose .trio.json (paths inside are relative to it), or '-' for the"
        " HTTP API's JSON (program texts) on stdin",
    )
    render.add_argument(
        "--example",
        help="one of the gallery's examples (service/example_trios), e.g. sets or"
        " set-theory-domain/tree-venn",
    )
    render.add_argument("--domain", help="Domain program file")
    render.add_argument("--substance", help="Substance program file")
    render.add_argument("--style", action="append", help="Style program file (repeat to join several)")
    render.add_argument("-o", "--output", help="file to write ('-' for stdout); its suffix picks the format")
    render.add_argument(
        "--format", choices=FORMATS, help="svg, png or pdf (default: by the output's suffix, else svg)"
    )
    render.add_argument("--scale", type=float, default=1.0, help="PNG pixels per SVG pixel (default 1)")
    render.add_argument("--report", help="also write the JSON report here")
    render.add_argument("--variation", help="seed of the random initial state (overrides the trio's)")
    render.add_argument("--time-limit", type=float, default=60.0, help="seconds (default 60)")
    render.add_argument(
        "--starts",
        type=positive_int,
        help="initial states to try, keeping the best layout (default 7; 1 is Penrose's single run)",
    )
    render.add_argument(
        "--start-seconds",
        type=float,
        help="seconds for the starts after the first (default: no budget; a cut makes the layout"
        " machine-dependent)",
    )
    render.add_argument(
        "--start-processes",
        type=positive_int,
        help="processes the starts may use at once (default: the machine's idle cores; the layout is the"
        " same with any number)",
    )
    render.add_argument(
        "--unsafe",
        action="store_true",
        help="keep Penrose's full passthrough of Style properties to the SVG, even event handlers and"
        " external URLs (only for Styles you trust)",
    )

    render.set_defaults(parser=render)  # usage errors show render's own usage

    url = sub.add_parser("url", help="print the GET URL that renders a trio (Kroki's encoding)")
    url.add_argument("trio", help="a .trio.json, or '-' for the HTTP API's JSON on stdin")
    url.add_argument("--format", choices=FORMATS, default="svg", help="svg (default), png or pdf")
    url.add_argument(
        "--server",
        help=f"the server's base URL (default ${SERVER_ENV}, else where `serve` listens by default:"
        f" $PENROSE_HOST and $PENROSE_PORT, else {DEFAULT_HOST}:{DEFAULT_PORT}); the one used is said"
        " on stderr",
    )

    serve = sub.add_parser("serve", help="serve the HTTP API and the playground")
    serve.deferred = add_serve_arguments  # its help quotes service.settings, which loads pydantic
    return parser


def add_serve_arguments(serve: argparse.ArgumentParser) -> None:
    from .settings import Settings

    defaults = Settings()
    serve.add_argument(
        "--host",
        default=default_host(),
        help="address to listen on (default: %(default)s, from $PENROSE_HOST when set)",
    )
    serve.add_argument(
        "--port",
        type=int,
        default=default_port(),
        help="port (default: %(default)s, from $PENROSE_PORT when set)",
    )
    serve.add_argument(
        "--workers",
        type=int,
        help=f"layout worker processes (default $PENROSE_WORKERS or {defaults.workers})",
    )
    serve.add_argument(
        "--time-limit",
        type=float,
        help=f"seconds per layout (default $PENROSE_TIME_LIMIT or {defaults.time_limit:g})",
    )
    serve.add_argument(
        "--max-body-bytes",
        type=int,
        help=f"request size limit (default $PENROSE_MAX_BODY_BYTES or {defaults.max_body_bytes})",
    )
    serve.add_argument(
        "--start-processes",
        type=positive_int,
        help="processes one layout's starts may use at once (default $PENROSE_START_PROCESSES or"
        f" {defaults.start_processes}: the workers already keep the cores busy)",
    )
    serve.add_argument(
        "--unsafe",
        action="store_const",
        const=True,
        help="answer SVGs with Penrose's full passthrough, even event handlers and external URLs"
        " (default $PENROSE_UNSAFE_SVG or off; only for trusted clients)",
    )


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "render":
        return cmd_render(args, args.parser)
    if args.command == "url":
        return cmd_url(args)
    return cmd_serve(args)

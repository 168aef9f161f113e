"""`python -m service render`: outputs and exit codes (0 ok, 1 user error, 2 usage, 3 layout, 4 internal)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from service import cli
from service.examples import EXAMPLES_DIR

from .service_support import HAS_REGISTRY, REGISTRY, REPO, heavy_body

SVG_NS = "{http://www.w3.org/2000/svg}"


def run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "service", *args], cwd=REPO, capture_output=True, text=True, timeout=timeout
    )


def copy_example(name: str, into: Path) -> Path:
    for f in EXAMPLES_DIR.glob(f"{name}.*"):
        (into / f.name).write_text(f.read_text())
    return into / f"{name}.trio.json"


def test_render_trio_file_writes_svg_and_report(tmp_path):
    trio = copy_example("sets", tmp_path)
    out, report = tmp_path / "out.svg", tmp_path / "out.json"
    done = run_cli("render", str(trio), "-o", str(out), "--report", str(report))
    assert done.returncode == 0, done.stderr
    root = ET.fromstring(out.read_text())
    assert len(root.findall(f".//{SVG_NS}circle")) == 4
    rep = json.loads(report.read_text())
    assert rep["status"] == "EPConverged"
    assert {"compile", "optimize", "render", "total"} <= rep["timingsMs"].keys()
    assert "\r" not in done.stderr  # no progress line when stderr is not a terminal


def test_variation_changes_the_layout(tmp_path):
    a, b = tmp_path / "a.svg", tmp_path / "b.svg"
    assert run_cli("render", "--example", "graph", "-o", str(a)).returncode == 0
    assert run_cli("render", "--example", "graph", "-o", str(b), "--variation", "Other42").returncode == 0
    assert a.read_text() != b.read_text()


def test_render_from_three_files(tmp_path):
    d = EXAMPLES_DIR
    out = tmp_path / "v.svg"
    done = run_cli(
        "render",
        "--domain",
        str(d / "vectors.domain"),
        "--substance",
        str(d / "vectors.substance"),
        "--style",
        str(d / "vectors.style"),
        "-o",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    assert ET.fromstring(out.read_text()).tag == f"{SVG_NS}svg"


def test_user_error_names_the_real_file_line_and_column(tmp_path):
    trio = copy_example("graph", tmp_path)
    # split the style in two files: the error is in the second, at its own line 3
    style = (tmp_path / "graph.style").read_text()
    (tmp_path / "extra.style").write_text("-- extra rules\n\nforall Vertex v { ensure nosuch(v.dot) }\n")
    data = json.loads(trio.read_text())
    data["style"] = ["./graph.style", "./extra.style"]
    trio.write_text(json.dumps(data))
    assert style  # the first file is unchanged
    done = run_cli("render", str(trio), "-o", str(tmp_path / "x.svg"))
    assert done.returncode == 1
    first = done.stderr.splitlines()[0]
    assert first.startswith(f"{tmp_path / 'extra.style'}:3:")
    assert "nosuch" in first
    assert "^" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "x.svg").exists()


def test_a_mistake_of_the_whole_style_names_its_file_without_a_line(tmp_path):
    trio = copy_example("sets", tmp_path)
    style = tmp_path / "sets.style"
    style.write_text(re.sub(r"canvas \{[^}]*\}", "", style.read_text()))
    done = run_cli("render", str(trio), "-o", str(tmp_path / "x.svg"))
    assert done.returncode == 1
    assert done.stderr.splitlines()[0].startswith(f"{style}: the Style must set canvas.width"), done.stderr


def test_missing_file_is_a_user_error(tmp_path):
    done = run_cli("render", str(tmp_path / "nope.trio.json"), "-o", str(tmp_path / "x.svg"))
    assert done.returncode == 1
    assert "nope.trio.json" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["render"],  # no output
        ["render", "--example", "sets", "-o", "x.svg", "--starts", "0"],  # a start count below 1
        ["render", "--example", "sets", "-o", "x.svg", "--start-processes", "0"],
        ["render", "-o", "x.svg"],  # no input
        ["render", "--example", "sets", "--domain", "d", "-o", "x.svg"],  # two inputs
        ["render", "--domain", "d", "-o", "x.svg"],  # incomplete trio
        ["frobnicate"],
    ],
)
def test_usage_errors_exit_2(args):
    assert run_cli(*args).returncode == 2


# What a command that needs no layout must not load: the layout pipeline (numpy, scipy, the Wasm
# runtime, the Penrose front end and compiler), pydantic (the request schema and the settings) and
# the web stack; together they take over a second to import.
HEAVY = (
    "numpy",
    "scipy",
    "wasmtime",
    "adcore",
    "energies.lang",
    "energies.compile",
    "service.pipeline",
    "service.workers",
    "pydantic",
    "fastapi",
    "starlette",
    "uvicorn",
)


@pytest.mark.parametrize(
    "args, code",
    [
        pytest.param(["--help"], 0, id="help"),
        pytest.param(["render", "--help"], 0, id="render-help"),
        pytest.param(["url", "--help"], 0, id="url-help"),
        pytest.param([], 2, id="no-command"),
        pytest.param(["frobnicate"], 2, id="unknown-command"),
        pytest.param(["render"], 2, id="no-trio"),  # found by cmd_render, not argparse
        pytest.param(["render", "--example", "sets", "-o", "x.svg", "--starts", "0"], 2, id="bad-starts"),
        pytest.param(["render", "--example", "sets", "-o", "x.gif"], 2, id="unknown-format"),
        pytest.param(["render", "nope.trio.json", "-o", "x.svg"], 1, id="unreadable-trio"),
        pytest.param(["url", str(EXAMPLES_DIR / "sets.trio.json")], 0, id="url"),
    ],
)
def test_commands_that_lay_nothing_out_load_no_layout_pipeline(args, code):
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "service", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == code, done.stderr[-2000:]
    said = [line for line in done.stderr.splitlines() if line.startswith("import time:")]
    loaded = {line.rsplit("|", 1)[1].strip() for line in said}
    assert "service.cli" in loaded  # -X importtime did report this process's imports
    heavy = sorted(m for m in loaded if any(m == h or m.startswith(h + ".") for h in HEAVY))
    assert not heavy, f"{' '.join(args)} loaded {heavy[:8]}"


def test_layout_failure_exits_3(tmp_path):
    body = heavy_body()
    for name in ("domain", "substance", "style"):
        (tmp_path / f"h.{name}").write_text(body[name])
    done = run_cli(
        "render",
        "--domain",
        str(tmp_path / "h.domain"),
        "--substance",
        str(tmp_path / "h.substance"),
        "--style",
        str(tmp_path / "h.style"),
        "-o",
        str(tmp_path / "h.svg"),
        "--time-limit",
        "0.5",
    )
    assert done.returncode == 3, done.stderr
    assert "timeout" in done.stderr and "raise the limit with --time-limit SECONDS" in done.stderr


def test_internal_error_exits_4(monkeypatch, tmp_path, capsys):
    import service.pipeline

    def broken(*args, **kwargs):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(service.pipeline, "render_trio", broken)
    code = cli.main(["render", "--example", "sets", "-o", str(tmp_path / "x.svg")])
    assert code == 4
    assert "internal error" in capsys.readouterr().err


def test_progress_line_only_on_a_terminal():
    class FakeTty:
        def __init__(self) -> None:
            self.text = ""

        def write(self, s: str) -> None:
            self.text += s

        def flush(self) -> None:
            pass

    from energies.optimize.optimizer import Progress

    stream = FakeTty()
    show = cli.progress_printer(stream)
    show(Progress(0, "", 3, 100.0, 42, 1.5))
    show(Progress(0, "", 3, 100.0, 43, 1.4))  # within 0.1 s: not redrawn
    assert stream.text.count("\r") == 1
    assert "round 3" in stream.text and "42 iterations" in stream.text
    assert "start" not in stream.text  # a single start, or the first, says nothing of starts
    time.sleep(0.11)
    show(Progress(0, "", 1, 100.0, 7, 1.2, start=2))
    assert "layout start 3: round 1, 7 iterations" in stream.text


def test_cli_inlines_local_images_from_the_trio_folder_only(tmp_path):
    folder = tmp_path / "trio"
    folder.mkdir()
    trio = copy_example("graph", folder)
    (folder / "pic.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>')
    (tmp_path / "outside.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>')
    style = folder / "graph.style"
    style.write_text(
        style.read_text()
        + '\nforall Vertex v {\n  v.a = Image {\n    href : "pic.svg"\n  }\n'
        + '  v.b = Image {\n    href : "../outside.svg"\n  }\n}\n'
    )
    out = folder / "out.svg"
    done = run_cli("render", str(trio), "-o", str(out))
    assert done.returncode == 0, done.stderr
    hrefs = [
        el.get("href") or el.get("{http://www.w3.org/1999/xlink}href")
        for el in ET.fromstring(out.read_text()).iter(f"{SVG_NS}image")
    ]
    assert len(hrefs) == 10
    assert sum(h is not None and h.startswith("data:image/svg+xml;base64,") for h in hrefs) == 5
    assert hrefs.count(None) == 5  # outside the folder: not inlined, and (safe mode) not written


def test_progress_line_is_drawn_when_stderr_is_a_terminal(tmp_path):
    import os
    import pty

    body = heavy_body(n_sets=20)
    for name in ("domain", "substance", "style"):
        (tmp_path / f"h.{name}").write_text(body[name])
    files = [f"--{n}={tmp_path / f'h.{n}'}" for n in ("domain", "substance", "style")]
    master, slave = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "service", "render", *files, "-o", str(tmp_path / "h.svg")],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=slave,
    )
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the terminal closes when the process exits
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    assert process.wait(120) == 0
    text = seen.decode()
    assert "\r  layout: round" in text and "iterations" in text
    assert text.endswith("\r\n")  # the progress line is closed with a newline (the pty shows \n as \r\n)


def test_start_count_and_budget_reach_the_layout(tmp_path):
    report = tmp_path / "r.json"
    r = run_cli(
        "render",
        "--example",
        "graph",
        "-o",
        str(tmp_path / "g.svg"),
        "--starts",
        "1",
        "--report",
        str(report),
    )
    assert r.returncode == 0, r.stderr
    assert len(json.loads(report.read_text())["portfolio"]["starts"]) == 1
    r = run_cli(
        "render", "--example", "graph", "-o", str(tmp_path / "g.svg"), "--start-seconds", "1e-9",
        "--report", str(report),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    portfolio = json.loads(report.read_text())["portfolio"]
    assert portfolio["stopped"] == "seconds" and "1 of 7" in portfolio["cutShort"]


def test_warnings_name_the_style_file_and_its_own_line(tmp_path):
    trio = copy_example("sets", tmp_path)
    (tmp_path / "extra.style").write_text("-- extra\nforall Set s {\n  s.x = Circle { strokeWidht: 3 }\n}\n")
    data = json.loads(trio.read_text())
    data["style"] = [*data["style"], "./extra.style"]
    trio.write_text(json.dumps(data))
    done = run_cli("render", str(trio), "-o", str(tmp_path / "x.svg"))
    assert done.returncode == 0, done.stderr
    assert (
        f"warning: {tmp_path / 'extra.style'}:3:18: UnknownPropertyWarning: Circle has no property"
        " strokeWidht (did you mean strokeWidth?)" in done.stderr
    )


def test_svg_is_safe_unless_unsafe_is_asked_for(tmp_path):
    (tmp_path / "d.domain").write_text("type Set\n")
    (tmp_path / "s.substance").write_text("Set A\n")
    style = (
        'canvas {\n  width = 100\n  height = 100\n}\nforall Set s {\n  s.c = Circle { onclick: "x()" }\n}\n'
    )
    (tmp_path / "t.style").write_text(style)
    files = ["--domain", str(tmp_path / "d.domain"), "--substance", str(tmp_path / "s.substance")]
    files += ["--style", str(tmp_path / "t.style")]
    safe, unsafe = tmp_path / "safe.svg", tmp_path / "unsafe.svg"
    assert run_cli("render", *files, "-o", str(safe)).returncode == 0
    assert run_cli("render", *files, "-o", str(unsafe), "--unsafe").returncode == 0
    assert ET.fromstring(safe.read_text()).find(f".//{SVG_NS}circle").get("onclick") is None
    assert ET.fromstring(unsafe.read_text()).find(f".//{SVG_NS}circle").get("onclick") == "x()"


@pytest.mark.parametrize(
    "args, said",
    [
        (["-o", "x.gif"], "x.gif: name it .svg, .png or .pdf, or give --format"),
        (["-o", "x.svg", "--format", "png"], "--format png does not match the output's suffix .svg"),
        (["-o", "x.png", "--scale", "0"], "--scale must be a positive number"),
    ],
)
def test_an_output_whose_format_is_unclear_is_a_usage_error(tmp_path, args, said):
    args = [str(tmp_path / a) if a.startswith("x.") else a for a in args]
    done = run_cli("render", "--example", "sets", *args)
    assert done.returncode == 2 and said in done.stderr
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_unsatisfied_constraints_are_said_on_stderr(tmp_path):
    trio = copy_example("sets", tmp_path)
    style = tmp_path / "sets.style"
    # circles no larger than 1 px cannot contain their labels
    style.write_text(style.read_text().replace("r : ?", "r : 1"))
    done = run_cli("render", str(trio), "-o", str(tmp_path / "x.svg"), "--starts", "1")
    assert done.returncode == 0, done.stderr
    assert re.search(r"warning: \d+ constraints? not satisfied \(largest violation", done.stderr)


@pytest.mark.skipif(not HAS_REGISTRY, reason="needs ../shared registry data")
def test_start_processes_reach_the_layout_and_change_only_its_time(tmp_path, monkeypatch):
    import service.pipeline
    from energies.optimize.parallel_starts import ParallelStarts

    used: list[int] = []

    class Recorded(ParallelStarts):
        def close(self) -> None:
            super().close()
            used.append(self.stats.forked)

    monkeypatch.setattr(service.pipeline, "ParallelStarts", Recorded)
    trio = REGISTRY / "minkowski-tests" / "maze" / "non-convex.trio.json"
    for n in ("1", "2"):
        out, report = str(tmp_path / f"{n}.svg"), str(tmp_path / f"{n}.json")
        assert cli.main(["render", str(trio), "-o", out, "--report", report, "--start-processes", n]) == 0
    assert used == [0, 2]  # two workers did the second layout's later starts
    assert (tmp_path / "1.svg").read_bytes() == (tmp_path / "2.svg").read_bytes()
    reports = [json.loads((tmp_path / f"{n}.json").read_text()) for n in ("1", "2")]
    assert reports[0]["portfolio"] == reports[1]["portfolio"]


def run_url(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    import os

    clean = {
        k: v for k, v in os.environ.items() if k not in ("PENROSE_SERVER", "PENROSE_HOST", "PENROSE_PORT")
    }
    trio = str(EXAMPLES_DIR / "sets.trio.json")
    return subprocess.run(
        [sys.executable, "-m", "service", "url", trio, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        env={**clean, **env},
    )


def test_url_follows_the_server_and_says_which_it_used():
    # where `serve` listens by default, with the same environment
    done = run_url({"PENROSE_PORT": "9123"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("http://127.0.0.1:9123/diagrams/svg/")
    assert "serve's default, from $PENROSE_PORT" in done.stderr
    done = run_url({"PENROSE_HOST": "0.0.0.0"})  # listening everywhere: reached on this machine
    assert done.stdout.startswith("http://127.0.0.1:8000/diagrams/svg/") and "$PENROSE_HOST" in done.stderr
    done = run_url({"PENROSE_SERVER": "https://diagrams.example/", "PENROSE_PORT": "9123"})
    assert done.stdout.startswith("https://diagrams.example/diagrams/svg/")
    assert "$PENROSE_SERVER" in done.stderr
    done = run_url({"PENROSE_SERVER": "https://a.example"}, "--server", "http://b.example:81")
    assert done.stdout.startswith("http://b.example:81/diagrams/svg/") and "--server" in done.stderr


def test_serve_help_shows_every_default(capsys):
    from service.settings import Settings

    with pytest.raises(SystemExit):
        cli.main(["serve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    d = Settings()
    for option, default in [
        ("--host", "127.0.0.1"),
        ("--port", "8000"),
        ("--workers", str(d.workers)),
        ("--time-limit", f"{d.time_limit:g}"),
        ("--max-body-bytes", str(d.max_body_bytes)),
        ("--start-processes", str(d.start_processes)),
    ]:
        said = text.split(f"{option} ")[-1]  # the option's own help, after its usage line
        assert re.match(rf"\S* ?[^-]*default[^-]*\b{re.escape(default)}\b", said), (option, said[:120])

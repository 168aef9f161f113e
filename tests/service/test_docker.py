"""docker/Dockerfile's structure, and its exact command starting the service outside Docker."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import httpx

from service.cli import build_parser

from .service_support import REPO, free_port, running_server

DOCKERFILE = REPO / "docker" / "Dockerfile"
COMPOSE = REPO / "docker" / "compose.yaml"


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, with continuation lines joined and comments dropped."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def only(name: str) -> str:
    found = [args for word, args in instructions() if word == name]
    assert len(found) == 1, f"expected one {name}, found {found}"
    return found[0]


def env_defaults() -> dict[str, str]:
    return dict(re.findall(r"(\w+)=(\S+)", only("ENV")))


def test_dockerfile_structure():
    # the base image is a build argument defaulting to Python 3.11 on Debian
    args = [a for word, a in instructions() if word == "ARG"]
    assert "BASE=python:3.11-slim" in args
    assert only("FROM") == "${BASE}"
    # dependencies come from the hashed lock, and nothing is installed unhashed
    copies = [args for word, args in instructions() if word == "COPY"]
    assert copies[0].startswith("docker/requirements.lock")
    run_lines = [args for word, args in instructions() if word == "RUN"]
    installs = [r for r in run_lines if "pip install" in r]
    assert len(installs) == 1 and "--require-hashes" in installs[0] and "requirements.lock" in installs[0]
    # a non-root user is set after everything is installed
    user = only("USER")
    assert user not in ("root", "0")
    words = [w for w, _ in instructions()]
    assert words.index("USER") > max(i for i, w in enumerate(words) if w == "RUN")
    assert any("useradd" in r and user in r for r in run_lines)
    # the port the service listens on is exposed
    assert only("EXPOSE") == env_defaults()["PENROSE_PORT"] == "8000"
    assert env_defaults()["PENROSE_HOST"] == "0.0.0.0"
    assert "/healthz" in only("HEALTHCHECK")


def docker_cmd() -> list[str]:
    return json.loads(only("CMD"))


def test_entrypoint_is_the_cli_serve_command():
    cmd = docker_cmd()
    assert cmd[:3] == ["python", "-m", "service"]
    args = build_parser().parse_args(cmd[3:])
    assert args.command == "serve"


def test_the_lock_pins_every_dependency_within_pyproject_ranges_with_hashes():
    import tomllib

    from packaging.requirements import Requirement

    lock = re.sub(r"\\\n", " ", (REPO / "docker" / "requirements.lock").read_text())
    pinned = {}
    for line in lock.splitlines():
        if line and not line.startswith((" ", "#")):
            name, version = line.split()[0].split("==")
            assert "--hash=sha256:" in line, f"{name} is not hashed"
            pinned[name.lower().replace("_", "-")] = version
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    for dep in map(Requirement, project):
        name = dep.name.lower().replace("_", "-")
        assert name in pinned, f"{name} is not in the lock"
        assert dep.specifier.contains(pinned[name]), f"{name}=={pinned[name]} is outside {dep.specifier}"


def test_dockerignore_keeps_the_context_to_what_the_image_copies():
    lines = (REPO / ".dockerignore").read_text().splitlines()
    ignore = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    assert ignore[0] == "*"  # everything is excluded, then what the image copies is let back in
    kept = {line[1:].rstrip("/") for line in ignore if line.startswith("!")}
    copied = {a.split()[0].rstrip("/") for w, a in instructions() if w == "COPY"}
    assert {"adcore", "energies", "service", "registry", "docker/requirements.lock"} <= kept
    assert {c for c in copied if "[" not in c} <= kept
    assert not any(".venv" in k for k in kept)


def test_compose_runs_replicas_behind_the_proxy_sharing_the_compile_cache():
    import yaml  # dask's dependency, in the test extra

    services = yaml.safe_load(COMPOSE.read_text())["services"]
    app, proxy = services["diagrams"], services["proxy"]
    assert app["build"]["dockerfile"] == "docker/Dockerfile"
    assert app["deploy"]["replicas"] == "${REPLICAS:-3}"
    cache = app["environment"]["PENROSE_COMPILE_CACHE_DIR"]
    assert app["volumes"] == [f"compile-cache:{cache}"]  # one named volume for every replica
    assert "ports" not in app and proxy["ports"] == ["${PORT:-8000}:8000"]
    nginx = (REPO / "docker" / "proxy" / "nginx.conf").read_text()
    assert "server diagrams:8000" in nginx and "listen 8000" in nginx
    # the image's mount point exists and belongs to the service's user
    assert any(cache in a and "-o penrose" in a for w, a in instructions() if w == "RUN")


def test_entrypoint_command_starts_the_service_outside_docker():
    cmd = [sys.executable if c == "python" else c for c in docker_cmd()]
    port = free_port()
    # the image's environment, except that we listen on loopback and a free port
    env = {**env_defaults(), "PENROSE_HOST": "127.0.0.1", "PENROSE_PORT": str(port), "PENROSE_WORKERS": "1"}
    with running_server(cmd, env, port) as url:
        assert httpx.get(f"{url}/healthz").json() == {"status": "ok"}
        # the HEALTHCHECK command itself succeeds against the running service
        health = json.loads(only("HEALTHCHECK").split("CMD", 1)[1])
        health = [sys.executable if c == "python" else c for c in health]
        done = subprocess.run(health, env={**os.environ, **env}, timeout=20)
        assert done.returncode == 0

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
    assert only("FROM") == "python:3.11-slim"
    # dependencies come from pyproject.toml
    copies = [args for word, args in instructions() if word == "COPY"]
    assert copies[0].startswith("pyproject.toml")
    run_lines = [args for word, args in instructions() if word == "RUN"]
    assert any("pyproject.toml" in r and "pip install" in r for r in run_lines)
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


def test_compose_builds_this_dockerfile_and_maps_the_port():
    text = COMPOSE.read_text()
    assert "dockerfile: docker/Dockerfile" in text
    assert '"8000:8000"' in text


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

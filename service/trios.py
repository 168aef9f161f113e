"""Penrose trios as data: the registry index and ``K.trio.json`` files, loaded into :class:`TrioSpec`.

A registry folder holds ``registry.json`` (key -> {name?, gallery?}) and, for every key ``K``, a
file ``K.trio.json``: ``{substance, style, domain, variation, excludeWarnings?}``, where each
program is a path relative to the trio file's folder and ``style`` may be a list of paths whose
texts are joined with a newline (Penrose's convention). The pipeline, the service and the batch
harness all take a :class:`TrioSpec`; `load_trio(path)` reads one file, and `TrioSpec.place` turns a
line of a joined program back into its file and line there; `trio_image_resolver` inlines the
local images a trio's Style names.
"""

from __future__ import annotations

import fnmatch
import json
import posixpath
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REGISTRY_INDEX = "registry.json"
TRIO_SUFFIX = ".trio.json"


class TrioError(ValueError):
    """A registry or trio file that cannot be read; the message names the file and the problem."""


@dataclass(frozen=True)
class TrioSpec:
    key: str  # registry key, e.g. "set-theory-domain/tree-venn"
    name: str | None  # display name from registry.json, None when it gives none
    domain: str  # program texts
    substance: str
    style: str
    variation: str
    exclude_warnings: tuple[str, ...]
    base_dir: Path  # the trio file's folder: Style resources (images) resolve against it
    style_dirs: tuple[Path, ...] = ()  # the folders of its Style files, where shared Styles keep images
    # where each program came from: (source, path, first line of that file in the program text)
    files: Files = field(default=(), compare=False)

    def place(self, source: str, line: int) -> tuple[str, int]:
        return place(self.files, source, line)

    def relocate(self, message: str) -> str:
        return relocate(self.files, message)


Files = tuple[tuple[str, str, int], ...]
_PLACE = re.compile(r"^(domain|substance|style)(?::(\d+))?:")


def joined_files(source: str, names: Sequence[str], texts: Sequence[str]) -> Files:
    """Where each of several texts joined with a newline (a multi-file Style) begins."""
    files, line = [], 1
    for name, text in zip(names, texts):
        files.append((source, name, line))
        line += text.count("\n") + 1
    return tuple(files)


def style_list_files(style: str | Sequence[str]) -> Files:
    """Where each program of a Style given as a list of texts (HTTP, stdin) begins, named style[i];
    none for a single text."""
    if isinstance(style, str):
        return ()
    return joined_files("style", [f"style[{i}]" for i in range(len(style))], style)


def place(files: Files, source: str, line: int) -> tuple[str, int]:
    """The file (or name) and its own line number for a line of a joined program; line 0 (a
    mistake of the whole program) stays 0, in the program's file when it is one file."""
    if line <= 0:
        names = [name for s, name, _ in files if s == source]
        return (names[0] if len(names) == 1 else source), 0
    where, start = source, 1
    for s, name, first in files:
        if s == source and first <= line:
            where, start = name, first
    return where, line - start + 1


def relocate(files: Files, message: str) -> str:
    """A message that starts with its place (`style:906:3: ...`) with the place in its own file; one
    about a whole program (`style: ...`) names its file when the program is one file."""
    m = _PLACE.match(message)
    if not m or not files:
        return message
    if m[2] is None:
        return f"{place(files, m[1], 0)[0]}:{message[m.end() :]}"
    where, line = place(files, m[1], int(m[2]))
    return f"{where}:{line}:{message[m.end() :]}"


def svg_name(key: str) -> str:
    """The file name Penrose's reference results use for a key: ``a/b`` -> ``a__b.svg``."""
    return key.replace("/", "__") + ".svg"


def _read_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise TrioError(f"{path}: cannot read: {err.strerror}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise TrioError(f"{path}:{err.lineno}:{err.colno}: invalid JSON: {err.msg}") from None


def read_program(path: Path, what: str) -> str:
    """A program file's text; a `TrioError` naming the file and `what` it was to be otherwise."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise TrioError(f"{what}: cannot read {path}: {err.strerror}") from None
    except UnicodeDecodeError:
        raise TrioError(f"{what}: {path} is not UTF-8 text") from None


def _read_program(trio_file: Path, field: str, relative: Any) -> str:
    if not isinstance(relative, str):
        raise TrioError(f"{trio_file}: field {field!r} must be a path string, got {relative!r}")
    return read_program(trio_file.parent / relative, f"{trio_file}: field {field!r}")


def trio_from_files(
    domain: Path, substance: Path, styles: Sequence[Path], variation: str = "", **fields: Any
) -> TrioSpec:
    """A trio from its program files; several Styles are joined with a newline, as Penrose does."""
    if not styles:
        raise TrioError("no Style file given")
    texts = [read_program(p, "style") for p in styles]
    paths = [Path(domain), Path(substance), *map(Path, styles)]
    return TrioSpec(
        key=fields.pop("key", Path(substance).stem),
        name=fields.pop("name", None),
        domain=read_program(paths[0], "domain"),
        substance=read_program(paths[1], "substance"),
        style="\n".join(texts),
        variation=variation,
        exclude_warnings=tuple(fields.pop("exclude_warnings", ())),
        base_dir=fields.pop("base_dir", paths[2].resolve().parent),
        style_dirs=tuple(dict.fromkeys(p.resolve().parent for p in paths[2:])),
        files=(
            ("domain", str(domain), 1),
            ("substance", str(substance), 1),
            *joined_files("style", [str(p) for p in styles], texts),
        ),
    )


def load_trio(trio_file: Path | str, *, key: str | None = None, name: str | None = None) -> TrioSpec:
    """Read one ``.trio.json`` and the programs it names (its key defaults to the file's name)."""
    trio_file = Path(trio_file)
    if key is None:
        key = trio_file.name.removesuffix(TRIO_SUFFIX).removesuffix(".json")
    data = _read_json(trio_file)
    if not isinstance(data, dict):
        raise TrioError(f"{trio_file}: expected a JSON object, got {type(data).__name__}")
    missing = [f for f in ("substance", "style", "domain") if f not in data]
    if missing:
        raise TrioError(f"{trio_file}: missing field(s) {', '.join(missing)}")
    styles = data["style"] if isinstance(data["style"], list) else [data["style"]]
    if not styles:
        raise TrioError(f"{trio_file}: field 'style' is an empty list")
    for i, s in enumerate(styles):
        if not isinstance(s, str):
            raise TrioError(f"{trio_file}: field 'style[{i}]' must be a path string, got {s!r}")
    for f in ("domain", "substance"):
        if not isinstance(data[f], str):
            raise TrioError(f"{trio_file}: field {f!r} must be a path string, got {data[f]!r}")
    variation = data.get("variation", "")
    warnings = data.get("excludeWarnings", [])
    if not isinstance(variation, str):
        raise TrioError(f"{trio_file}: field 'variation' must be a string, got {variation!r}")
    if not (isinstance(warnings, list) and all(isinstance(w, str) for w in warnings)):
        raise TrioError(f"{trio_file}: field 'excludeWarnings' must be a list of strings, got {warnings!r}")
    base = trio_file.parent
    named = [("domain", data["domain"]), ("substance", data["substance"])]
    for field_name, relative in [*named, *((f"style[{i}]", s) for i, s in enumerate(styles))]:
        if not (base / relative).is_file():
            _read_program(trio_file, field_name, relative)  # raises, naming the field and the file
    return trio_from_files(
        base / data["domain"],
        base / data["substance"],
        [base / s for s in styles],
        variation,
        key=key,
        name=name,
        exclude_warnings=warnings,
        base_dir=base.resolve(),
    )


def registry_keys(registry_dir: Path) -> dict[str, dict[str, Any]]:
    """The registry index: key -> its metadata, in file order."""
    index_file = Path(registry_dir) / REGISTRY_INDEX
    index = _read_json(index_file)
    if not isinstance(index, dict) or not all(isinstance(v, dict) for v in index.values()):
        raise TrioError(f"{index_file}: expected an object mapping keys to objects")
    return index


@dataclass(frozen=True)
class TrioLoadFailure:
    """A registry entry whose trio could not be loaded (kept so a batch can report it)."""

    key: str
    name: str | None
    error: str


Globs = str | Sequence[str] | None


def load_registry_entries(registry_dir: Path, only: Globs = None) -> list[TrioSpec | TrioLoadFailure]:
    """Every entry of a registry folder whose key matches the glob ``only``, or any of several (all
    when None); an entry whose trio cannot be read becomes a :class:`TrioLoadFailure` instead of
    stopping the others."""
    registry_dir = Path(registry_dir)
    patterns = [only] if isinstance(only, str) else only
    entries: list[TrioSpec | TrioLoadFailure] = []
    for key, meta in registry_keys(registry_dir).items():
        if patterns is not None and not any(fnmatch.fnmatchcase(key, p) for p in patterns):
            continue
        name = meta.get("name")
        try:
            entries.append(load_trio(registry_dir / f"{key}{TRIO_SUFFIX}", key=key, name=name))
        except TrioError as err:
            entries.append(TrioLoadFailure(key, name, str(err)))
    return entries


def load_registry(registry_dir: Path, only: Globs = None) -> list[TrioSpec]:
    """Like :func:`load_registry_entries`, but the first unreadable trio raises :class:`TrioError`."""
    entries = load_registry_entries(registry_dir, only)
    for entry in entries:
        if isinstance(entry, TrioLoadFailure):
            raise TrioError(entry.error)
    return entries  # type: ignore[return-value]


def default_registry_dir(root: Path | None = None) -> Path | None:
    """``../shared/penrose-registry`` beside the repo root (or ``root``), when it exists."""
    base = Path.cwd() if root is None else Path(root)
    candidate = (base / ".." / "shared" / "penrose-registry").resolve()
    return candidate if (candidate / REGISTRY_INDEX).is_file() else None


def local_href(href: str) -> bool:
    """A relative path (an image beside the trio), not a URL, a data URI or an absolute path."""
    return ":" not in href.split("/")[0] and not href.startswith(("/", "data:"))


def request_image_resolver(images: Mapping[str, str]) -> Callable[[str], str | None] | None:
    """Images a request carries (relative path -> data URI), found as `trio_image_resolver` finds
    files: by the href's normalized path, then by its file name."""
    if not images:
        return None
    by_path = {posixpath.normpath(p): uri for p, uri in images.items()}

    def resolve(href: str) -> str | None:
        if not local_href(href):
            return None
        path = posixpath.normpath(href)
        return by_path.get(path) or by_path.get(posixpath.basename(path))

    return resolve


def trio_image_resolver(base_dir: Any, *style_dirs: Any) -> Callable[[str], str | None]:
    """Local images of a trio file, inlined as data URIs. An href resolves against the trio's folder,
    then the folders of its Style files (Penrose's registry keeps images beside shared Styles), and
    only to a file inside that folder: no `..` escape, no absolute paths."""
    import base64
    import mimetypes

    roots = list(dict.fromkeys(Path(d).resolve() for d in (base_dir, *style_dirs)))

    def resolve(href: str) -> str | None:
        if not local_href(href):
            return None  # URLs, data URIs and absolute paths pass through untouched
        for root in roots:
            path = (root / href).resolve()
            if root in path.parents and path.is_file():
                mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
                return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"
        return None

    return resolve

"""Are SVGs safe to open? Well-formed XML, with nothing that runs script or loads a resource.

    svg_problems(text) -> list[str]       (empty when the SVG is fine)
    python -m registry.svg_check DIR      every *.svg under DIR (e.g. a registry run's OUT/svg)

Written apart from the renderer (service.render.svg), so that it can judge it: an XML parser decides
well-formedness; an attribute is active when its name is an event handler (`on*`), or it is an
href to anything but an embedded `data:image/`, or its value (spaces removed, lowercased) holds a
`url(` not followed by `#`, `javascript:`, `@import` or a backslash (a CSS escape). The root
element's own attributes (namespaces, size) are not judged.
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def active_attribute(name: str, value: str) -> bool:
    folded = "".join(value.split()).lower()
    local = name.rsplit("}", 1)[-1].lower()  # `{http://www.w3.org/1999/xlink}href` is an href too
    if local.startswith("on"):
        return True
    if local.endswith("href"):
        return not folded.startswith("data:image/")
    return "url(" in folded.replace("url(#", "") or any(w in folded for w in ("javascript:", "@import", "\\"))


def svg_problems(text: str) -> list[str]:
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        return [f"not well-formed XML: {e}"]
    return [
        f"<{elem.tag.rsplit('}', 1)[-1]}> {name}={value[:80]!r}"
        for elem in list(root.iter())[1:]
        for name, value in elem.attrib.items()
        if active_attribute(name, value)
    ]


def file_problems(path: Path) -> list[str]:
    try:
        return svg_problems(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as e:
        return [f"not UTF-8: {e}"]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or not Path(args[0]).is_dir():
        print("usage: python -m registry.svg_check DIR", file=sys.stderr)
        return 2
    files = sorted(Path(args[0]).rglob("*.svg"))
    bad = {f: p for f in files if (p := file_problems(f))}
    for f, problems in bad.items():
        print(f"{f}: {'; '.join(problems[:3])}")
    print(f"{len(files) - len(bad)} of {len(files)} SVGs are well-formed XML and inert")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

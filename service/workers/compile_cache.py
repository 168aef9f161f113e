"""The compiled-code cache on disk that layout workers (and replicas) share, bounded in bytes.

adcore writes one checksummed file per compiled module (atomically, so readers never see half a
file; a reader with a file open keeps it after it is deleted).  `prune` deletes the oldest-written
files until the directory holds at most `max_bytes` of them.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def prune(directory: str | Path, max_bytes: int) -> int:
    """Delete the oldest cache files past `max_bytes` in total; returns the bytes kept."""
    files = []
    with contextlib.suppress(OSError), os.scandir(directory) as entries:
        for e in entries:
            with contextlib.suppress(OSError):
                if e.name.endswith(".cwasm") and e.is_file():
                    st = e.stat()
                    files.append((st.st_mtime, st.st_size, e.path))
    total = sum(size for _, size, _ in files)
    for _, size, path in sorted(files):
        if total <= max_bytes:
            break
        with contextlib.suppress(OSError):  # another worker may have pruned it first
            os.unlink(path)
        total -= size
    return total

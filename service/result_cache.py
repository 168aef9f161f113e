"""A small LRU of finished renderings, keyed by everything that determines the picture.

The pipeline is deterministic given (domain, substance, style, variation, excludeWarnings), so
the same request twice returns the stored outcome.  Only successful renderings are stored; the
cache is bounded both in entries and in total bytes of SVG.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from typing import Any


def request_key(
    domain: str,
    substance: str,
    style: str,
    variation: str,
    exclude: list[str],
    starts: int | None = None,
    start_seconds: float | None = None,
) -> str:
    payload = json.dumps(
        [domain, substance, style, variation, sorted(exclude), starts, start_seconds], ensure_ascii=False
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class ResultCache:
    def __init__(self, max_entries: int, max_bytes: int) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._items: OrderedDict[str, tuple[dict[str, Any], int]] = OrderedDict()
        self.bytes = 0

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: str) -> dict[str, Any] | None:
        item = self._items.get(key)
        if item is None:
            return None
        self._items.move_to_end(key)
        return item[0]

    def put(self, key: str, outcome: dict[str, Any]) -> None:
        size = len(outcome.get("svg", "")) + 1024  # SVG plus a rough allowance for the report
        if self.max_entries <= 0 or size > self.max_bytes:
            return
        if key in self._items:
            self.bytes -= self._items.pop(key)[1]
        self._items[key] = (outcome, size)
        self.bytes += size
        while len(self._items) > self.max_entries or self.bytes > self.max_bytes:
            _, (_, evicted) = self._items.popitem(last=False)
            self.bytes -= evicted

"""A small LRU of finished renderings, keyed by everything that determines the picture.

The pipeline is deterministic given (domain, substance, style, variation, excludeWarnings), so
the same request twice returns the stored outcome.  Only successful renderings are stored; the
cache is bounded both in entries and in total bytes of SVG.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from adcore import LRU


def request_key(
    domain: str,
    substance: str,
    style: str,
    variation: str,
    exclude: list[str],
    starts: int | None = None,
    start_seconds: float | None = None,
    images: dict[str, str] | None = None,
) -> str:
    fields = [domain, substance, style, variation, sorted(exclude), starts, start_seconds]
    payload = json.dumps([*fields, sorted((images or {}).items())], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class ResultCache(LRU[str, dict[str, Any]]):
    """Outcomes by request key, at most `max_entries` and about `max_bytes` of SVG."""

    def __init__(self, max_entries: int, max_bytes: int) -> None:
        super().__init__(max_entries, max_bytes, weight=outcome_bytes)


def outcome_bytes(outcome: dict[str, Any]) -> int:
    return len(outcome.get("svg", "")) + 1024  # the SVG plus a rough allowance for the report

"""A trio in a URL, as Kroki encodes its diagrams: JSON, zlib-deflated, base64url.

    encode_trio({"domain", "substance", "style", "variation"?, ...}) -> str
    decode_trio(encoded, max_bytes) -> dict      (raises UrlError with what is wrong)

`GET /diagrams/{svg|png|pdf}/{encoded}` answers the diagram. In Python:

    base64.urlsafe_b64encode(zlib.compress(json.dumps(trio).encode(), 9)).decode()

Decoding is bounded: the inflated JSON may not exceed `max_bytes` (a few hundred bytes of URL can
inflate to gigabytes), and padding may be left off, as many encoders do.
"""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from typing import Any

MAX_ENCODED_CHARS = 8000  # what browsers, proxies and Markdown renderers pass through in a URL


class UrlError(ValueError):
    """An encoded trio that cannot be read; the message says which step failed."""


def encode_trio(trio: dict[str, Any]) -> str:
    data = json.dumps(trio, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return base64.urlsafe_b64encode(zlib.compress(data, 9)).decode("ascii")


def decode_trio(encoded: str, max_bytes: int) -> dict[str, Any]:
    try:
        raw = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
    except (binascii.Error, ValueError):
        raise UrlError(
            "the diagram in the URL is not base64url text (letters, digits, '-' and '_')"
        ) from None
    inflater = zlib.decompressobj()
    try:
        data = inflater.decompress(raw, max_bytes + 1)
    except zlib.error as e:
        raise UrlError(f"the diagram in the URL is not zlib-deflated data ({e})") from None
    if len(data) > max_bytes or inflater.unconsumed_tail:
        raise UrlError(f"the diagram in the URL inflates to more than {max_bytes} bytes")
    if not inflater.eof:
        raise UrlError("the diagram in the URL is cut short (its zlib stream does not end)")
    try:
        trio = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise UrlError("the diagram in the URL does not inflate to UTF-8 text") from None
    except json.JSONDecodeError as e:
        raise UrlError(
            f"the diagram in the URL is not JSON: line {e.lineno} column {e.colno}: {e.msg}"
        ) from None
    if not isinstance(trio, dict):
        raise UrlError("the diagram in the URL must be a JSON object with domain, substance and style")
    return trio

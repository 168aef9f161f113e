"""Horizontal metrics of TrueType fonts, read straight from the font tables.

Text labels need only three facts per character: its advance width and the vertical extent of its
ink. Those live in the `cmap` (character -> glyph), `hmtx` (advances) and `glyf` (each glyph's
bounding box) tables; reading just them keeps loading a font to a few milliseconds.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path


@dataclass(frozen=True)
class GlyphMetrics:
    """One glyph in font units: advance width and ink box (all zero for an empty glyph)."""

    advance: int
    x_min: int
    y_min: int
    x_max: int
    y_max: int
    has_ink: bool


class FontFormatError(ValueError):
    pass


class TrueTypeMetrics:
    """The metric tables of one .ttf file (TrueType outlines; CFF fonts are not supported)."""

    def __init__(self, data: bytes, name: str = "font") -> None:
        self.data = data
        self.name = name
        self.tables = self.read_table_directory()
        for tag in ("head", "hhea", "hmtx", "cmap", "loca", "glyf", "maxp"):
            if tag not in self.tables:
                raise FontFormatError(f"{name}: missing '{tag}' table (only TrueType fonts are supported)")
        head = self.tables["head"]
        self.units_per_em: int = self.u16(head + 18)
        self.long_loca: bool = self.i16(head + 50) == 1
        self.num_glyphs: int = self.u16(self.tables["maxp"] + 4)
        self.num_hmetrics: int = self.u16(self.tables["hhea"] + 34)
        self.char_to_glyph = self.read_cmap()

    @staticmethod
    def from_file(path: Path) -> TrueTypeMetrics:
        return TrueTypeMetrics(path.read_bytes(), path.name)

    def u16(self, offset: int) -> int:
        return struct.unpack_from(">H", self.data, offset)[0]

    def i16(self, offset: int) -> int:
        return struct.unpack_from(">h", self.data, offset)[0]

    def u32(self, offset: int) -> int:
        return struct.unpack_from(">I", self.data, offset)[0]

    def read_table_directory(self) -> dict[str, int]:
        num_tables = self.u16(4)
        tables = {}
        for i in range(num_tables):
            record = 12 + 16 * i
            tag = self.data[record : record + 4].decode("latin-1")
            tables[tag] = self.u32(record + 8)
        return tables

    def read_cmap(self) -> dict[int, int]:
        """Unicode code point -> glyph id, from the best Unicode subtable (format 12, else 4)."""
        cmap = self.tables["cmap"]
        subtables = {}
        for i in range(self.u16(cmap + 2)):
            record = cmap + 4 + 8 * i
            platform, encoding = self.u16(record), self.u16(record + 2)
            subtables[(platform, encoding)] = cmap + self.u32(record + 4)
        for key in ((3, 10), (0, 4), (0, 6), (3, 1), (0, 3), (0, 1), (0, 0)):
            if key in subtables:
                offset = subtables[key]
                fmt = self.u16(offset)
                if fmt == 12:
                    return self.read_cmap_format12(offset)
                if fmt == 4:
                    return self.read_cmap_format4(offset)
        raise FontFormatError(f"{self.name}: no Unicode cmap subtable of format 4 or 12")

    def read_cmap_format4(self, offset: int) -> dict[int, int]:
        seg_count = self.u16(offset + 6) // 2
        ends = offset + 14
        starts = ends + 2 * seg_count + 2  # skip reservedPad
        deltas = starts + 2 * seg_count
        range_offsets = deltas + 2 * seg_count
        mapping = {}
        for seg in range(seg_count):
            start, end = self.u16(starts + 2 * seg), self.u16(ends + 2 * seg)
            delta = self.u16(deltas + 2 * seg)
            range_offset_at = range_offsets + 2 * seg
            range_offset = self.u16(range_offset_at)
            for code in range(start, end + 1):
                if code == 0xFFFF:
                    continue
                if range_offset == 0:
                    glyph = (code + delta) & 0xFFFF
                else:
                    # idRangeOffset is relative to its own position in the file (a quirk of format 4).
                    glyph = self.u16(range_offset_at + range_offset + 2 * (code - start))
                    glyph = (glyph + delta) & 0xFFFF if glyph else 0
                if glyph:
                    mapping[code] = glyph
        return mapping

    def read_cmap_format12(self, offset: int) -> dict[int, int]:
        mapping = {}
        for i in range(self.u32(offset + 12)):
            group = offset + 16 + 12 * i
            start, end, first_glyph = self.u32(group), self.u32(group + 4), self.u32(group + 8)
            for code in range(start, end + 1):
                mapping[code] = first_glyph + code - start
        return mapping

    def glyph_location(self, glyph: int) -> tuple[int, int]:
        loca = self.tables["loca"]
        if self.long_loca:
            return self.u32(loca + 4 * glyph), self.u32(loca + 4 * glyph + 4)
        return 2 * self.u16(loca + 2 * glyph), 2 * self.u16(loca + 2 * glyph + 2)

    def glyph_metrics(self, glyph: int) -> GlyphMetrics:
        glyph = glyph if 0 <= glyph < self.num_glyphs else 0
        hmtx = self.tables["hmtx"]
        advance = self.u16(hmtx + 4 * min(glyph, self.num_hmetrics - 1))
        start, end = self.glyph_location(glyph)
        if end <= start:
            return GlyphMetrics(advance, 0, 0, 0, 0, has_ink=False)
        header = self.tables["glyf"] + start
        x_min, y_min, x_max, y_max = struct.unpack_from(">hhhh", self.data, header + 2)
        return GlyphMetrics(advance, x_min, y_min, x_max, y_max, has_ink=True)

    def char_metrics(self, char: str) -> GlyphMetrics:
        """Metrics of the glyph for `char`; characters the font lacks get glyph 0 (.notdef)."""
        return self.glyph_metrics(self.char_to_glyph.get(ord(char), 0))


@lru_cache(maxsize=32)
def load_font(path: Path) -> TrueTypeMetrics:
    return TrueTypeMetrics.from_file(path)

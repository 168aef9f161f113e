// A stand-in for the browser canvas that Penrose measures Text labels with.
//
// Penrose's `measureText` asks a 2D canvas context for `actualBoundingBox{Left,Right,Ascent,Descent}`
// and takes width = |left| + |right|, height = ascent + descent. jsdom has no canvas, so this
// context answers from DejaVu glyph outlines read with opentype.js (the fonts the Penrose reference
// run and our own Python pipeline use), glyph by glyph without shaping or kerning.
//
// APPROXIMATE. The reference run's canvas hinted the glyphs (whole-pixel sizes for short labels,
// fractional widths for long ones), which cannot be reproduced without FreeType. What is done, and
// how close it came on the labels of four text trios (tree-tree, word-cloud, alloy generic,
// fancy-text): the ink box with horizontal edges snapped outward and vertical extents down to whole
// pixels; 20 px bold single letters match in 5 of 7 labels (else 1 px narrower), long labels within
// about 1 px in width, but small sizes (9-12 px) come out 1-2 px shorter than the reference's.
// Named families other than DejaVu's and the generic serif/monospace are measured as DejaVu Sans,
// as the reference did (its Courier and Palatino labels have DejaVu Sans widths). When no font file
// is found, a crude approximation (0.6 em per character, 0.75 em ascent, 0.25 em descent) is used
// and counted in the row's `approximateTextMeasurements`.
//
// Given label sizes: a FontBook can be handed sizes measured elsewhere (penrose-py's, so that both
// optimizers lay out the same labels), keyed by the exact font rule Penrose sets on the canvas and
// the text; those answer first, unchanged, and are counted in `given`.

import { readFileSync, existsSync } from "node:fs";
import path from "node:path";
import opentype from "opentype.js";

const SNAP_SLACK = 1e-6; // so an edge exactly on a pixel boundary stays there
const CSS_BASE_PX = 16; // CSS initial font size: the base of em, rem and %
const PX_PER_UNIT = {
  px: 1, pt: 96 / 72, pc: 16, in: 96, cm: 96 / 2.54, mm: 96 / 25.4, q: 96 / 101.6,
  em: CSS_BASE_PX, rem: CSS_BASE_PX, "%": CSS_BASE_PX / 100,
};
const SIZE_KEYWORDS_PX = {
  "xx-small": 9, "x-small": 10, small: 13, medium: 16, large: 18, "x-large": 24, "xx-large": 32,
  "xxx-large": 48,
};
const SIZE_TOKEN = /^(\d*\.?\d+(?:e[+-]?\d+)?)(px|pt|pc|in|cm|mm|q|em|rem|%)(?:\/\S+)?$/i;
// Only the generic families and DejaVu's own names pick serif or mono: the reference run drew
// named families it did not have (Courier, Palatino, ...) with its default, DejaVu Sans.
const SERIF = new Set(["serif", "dejavu serif"]);
const MONO = new Set(["monospace", "dejavu sans mono"]);

const FONT_FILES = {
  "sans/regular": "DejaVuSans.ttf", "sans/bold": "DejaVuSans-Bold.ttf",
  "sans/italic": "DejaVuSans-Oblique.ttf", "sans/bolditalic": "DejaVuSans-BoldOblique.ttf",
  "serif/regular": "DejaVuSerif.ttf", "serif/bold": "DejaVuSerif-Bold.ttf",
  "serif/italic": "DejaVuSerif-Italic.ttf", "serif/bolditalic": "DejaVuSerif-BoldItalic.ttf",
  "mono/regular": "DejaVuSansMono.ttf", "mono/bold": "DejaVuSansMono-Bold.ttf",
  "mono/italic": "DejaVuSansMono.ttf", "mono/bolditalic": "DejaVuSansMono-Bold.ttf",
};

/** Parse a CSS `font` shorthand into {sizePx, family, bold, italic}; null if it has no size. */
export function parseFont(rule) {
  // Split on spaces outside quotes; the first token that is a size separates style from family.
  const tokens = rule.match(/"[^"]*"|'[^']*'|[^\s]+/g) ?? [];
  const sizeAt = tokens.findIndex((t) => SIZE_TOKEN.test(t) || t.toLowerCase() in SIZE_KEYWORDS_PX);
  if (sizeAt < 0) return null;
  const sizeToken = tokens[sizeAt].toLowerCase();
  let sizePx = SIZE_KEYWORDS_PX[sizeToken];
  if (sizePx === undefined) {
    const [, value, unit] = SIZE_TOKEN.exec(sizeToken);
    sizePx = Number(value) * PX_PER_UNIT[unit.toLowerCase()];
  }
  const before = tokens.slice(0, sizeAt).map((t) => t.toLowerCase());
  const bold = before.some((t) => t === "bold" || t === "bolder" || (/^\d+$/.test(t) && Number(t) >= 600));
  const italic = before.some((t) => t === "italic" || t === "oblique");
  const family = tokens.slice(sizeAt + 1).join(" ");
  return { sizePx, family, bold, italic };
}

function familyClass(family) {
  for (const name of family.split(",")) {
    const clean = name.trim().replace(/^["']|["']$/g, "").toLowerCase();
    if (SERIF.has(clean)) return "serif";
    if (MONO.has(clean)) return "mono";
    if (clean) return "sans"; // the first named family decides; unknown ones fall back to sans
  }
  return "sans";
}

export class FontBook {
  constructor(fontDirs, givenSizes = []) {
    this.fontDirs = fontDirs;
    this.cache = new Map();
    this.approximated = 0; // how many measurements had no font file
    this.sizes = new Map(givenSizes.map((m) => [sizeKey(m.font, m.text), m]));
    this.given = 0; // how many measurements came from `givenSizes`
  }

  /** Given {width, ascent, descent} for `text` under the canvas font rule `rule`, if any. */
  givenSize(text, rule) {
    const found = this.sizes.get(sizeKey(rule, text));
    if (found === undefined) return undefined;
    this.given += 1;
    return metrics(0, found.width, found.ascent, found.descent);
  }

  font(spec) {
    const key = `${familyClass(spec.family)}/${spec.bold ? "bold" : ""}${spec.italic ? "italic" : ""}`;
    const file = FONT_FILES[key.endsWith("/") ? `${key}regular` : key];
    if (!this.cache.has(file)) {
      const dir = this.fontDirs.find((d) => existsSync(path.join(d, file)));
      const buffer = dir === undefined ? null : readFileSync(path.join(dir, file));
      this.cache.set(file, buffer && opentype.parse(buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.length)));
    }
    return this.cache.get(file);
  }

  /** TextMetrics-like fields for `text` in the font `spec`. */
  measure(text, spec) {
    const font = this.font(spec);
    if (!font) {
      this.approximated += 1;
      return metrics(0, text.length * 0.6 * spec.sizePx, 0.75 * spec.sizePx, 0.25 * spec.sizePx);
    }
    // Glyph by glyph from the character map, no shaping: opentype.js's shaper rejects some of
    // DejaVu's substitution tables, and the reference widths are plain advance sums anyway.
    const scale = spec.sizePx / font.unitsPerEm;
    let advance = 0;
    const ink = { left: Infinity, right: -Infinity, top: -Infinity, bottom: Infinity }; // font units, y up
    for (const char of text) {
      const glyph = font.charToGlyph(char);
      const box = glyph.getBoundingBox();
      if (box.y2 > box.y1 || box.x2 > box.x1) {
        ink.left = Math.min(ink.left, advance + box.x1);
        ink.right = Math.max(ink.right, advance + box.x2);
        ink.top = Math.max(ink.top, box.y2);
        ink.bottom = Math.min(ink.bottom, box.y1);
      }
      advance += glyph.advanceWidth ?? 0;
    }
    if (ink.top === -Infinity || advance === 0) return metrics(0, 0, 0, 0);
    // Pixel-snapped ink box: the horizontal edges outward to whole pixels, the vertical extents
    // down to whole pixels; this reproduced the reference run's label sizes best (see header).
    const left = Math.floor(ink.left * scale + SNAP_SLACK);
    const right = Math.ceil(ink.right * scale - SNAP_SLACK);
    const ascent = Math.max(0, Math.floor(ink.top * scale + SNAP_SLACK));
    const descent = Math.max(0, Math.floor(-ink.bottom * scale + SNAP_SLACK));
    return metrics(-left, right, ascent, descent);
  }
}

const sizeKey = (rule, text) => `${rule}\u0000${text}`;

// Browser convention: `left` is how far the ink reaches left of the origin (negative when it
// starts to the right of it); Penrose adds the absolute values of left and right.
function metrics(left, right, ascent, descent) {
  return {
    width: right - left,
    actualBoundingBoxLeft: left,
    actualBoundingBoxRight: right,
    actualBoundingBoxAscent: ascent,
    actualBoundingBoxDescent: descent,
  };
}

/** Make every canvas of `window` answer getContext("2d") with a measuring context. */
export function installCanvasStandIn(window, book) {
  window.HTMLCanvasElement.prototype.getContext = function getContext(kind) {
    if (kind !== "2d") return null;
    let spec = parseFont("10px sans-serif"); // the canvas default; bad rules are ignored, as in browsers
    let rule = "10px sans-serif";
    return {
      textBaseline: "alphabetic",
      get font() {
        return rule;
      },
      set font(value) {
        const parsed = parseFont(String(value));
        if (parsed) [spec, rule] = [parsed, String(value)];
      },
      measureText: (text) => book.givenSize(String(text), rule) ?? book.measure(String(text), spec),
    };
  };
}

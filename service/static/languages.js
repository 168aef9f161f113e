// Syntax highlighting of Domain, Substance and Style for CodeMirror: a small tokenizer per language
// (comments, strings, numbers, hex colors, keywords, type-like names), read from the registry's trios.
import { HighlightStyle, StreamLanguage, syntaxHighlighting, tags as t } from "./vendor/editor.js";

const KEYWORDS = {
  domain: ["type", "predicate", "function", "constructor", "notation", "symmetric"],
  substance: ["Let", "Label", "AutoLabel", "NoLabel", "All", "for", "in", "where", "true", "false"],
  style: ["forall", "global", "where", "with", "as", "delete", "override", "layout", "in", "except", "ensure",
    "encourage", "canvas", "collect", "into", "foreach", "numberof", "listof", "true", "false", "import"],
};

function tokenizer(words) {
  const keywords = new Set(words);
  return {
    startState: () => ({ comment: false }),
    token(stream, state) {
      if (state.comment) {
        if (stream.skipTo("*/")) { stream.pos += 2; state.comment = false; } else stream.skipToEnd();
        return "comment";
      }
      if (stream.eatSpace()) return null;
      if (stream.match("--")) { stream.skipToEnd(); return "comment"; }
      if (stream.match("/*")) { state.comment = true; return "comment"; }
      if (stream.match(/^"(?:[^"\\]|\\.)*"?/)) return "string";
      if (stream.match(/^\$[^$]*\$?/)) return "string";
      if (stream.match(/^#[0-9A-Fa-f]{3,8}(?![\w])/)) return "color"; // a Style's #rrggbb(aa), one token
      if (stream.match(/^(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?/)) return "number";
      if (stream.match(/^`[^`]*`?/)) return "variableName";
      const word = stream.match(/^[A-Za-z_][A-Za-z0-9_]*/);
      if (word) {
        if (keywords.has(word[0])) return "keyword";
        return /^[A-Z]/.test(word[0]) ? "typeName" : "variableName";
      }
      if (stream.match(/^(?:<:|->|:=|==|[?=:+\-*/^<>!&|])/)) return "operator";
      stream.next();
      return null;
    },
    languageData: { commentTokens: { line: "--", block: { open: "/*", close: "*/" } } },
  };
}

const highlight = HighlightStyle.define([
  { tag: t.comment, color: "#6a737d", fontStyle: "italic" },
  { tag: t.keyword, color: "#8f2fa8", fontWeight: "bold" },
  { tag: t.string, color: "#0a7d32" },
  { tag: t.number, color: "#b15b00" },
  { tag: t.color, color: "#007a7a" },
  { tag: t.typeName, color: "#1d5fbf" },
  { tag: t.operator, color: "#a33" },
]);

export function penroseLanguage(source) {
  return [StreamLanguage.define(tokenizer(KEYWORDS[source])), syntaxHighlighting(highlight)];
}

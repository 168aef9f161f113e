// The third-party code the playground uses, bundled by build.sh into service/static/vendor/editor.js
// as one ES module (no network at run time).
export { EditorState, StateEffect, StateField, RangeSet, Compartment } from "@codemirror/state";
export {
  EditorView, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter, drawSelection,
  gutter, GutterMarker, Decoration,
} from "@codemirror/view";
export { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
export { searchKeymap, highlightSelectionMatches } from "@codemirror/search";
export {
  StreamLanguage, syntaxHighlighting, HighlightStyle, bracketMatching, indentOnInput,
} from "@codemirror/language";
export { tags } from "@lezer/highlight";
export { zipSync, unzipSync, deflateSync, inflateSync, strToU8, strFromU8 } from "fflate";

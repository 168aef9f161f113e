// The playground: edit a trio in three CodeMirror editors, lay it out live (POST /live streams frames
// as server-sent events, kept as a history to scrub through), see why a layout failed (the report's
// diagnosis: Style lines marked, shapes outlined, goals listed), drag shapes to re-optimize, export. Third-party code comes only from
// ./vendor/editor.js (CodeMirror 6 and fflate, bundled by web/build.sh; licenses beside it).
import {
  EditorState, EditorView, GutterMarker, RangeSet, StateEffect, StateField, Decoration, keymap, lineNumbers,
  highlightActiveLine, highlightActiveLineGutter, drawSelection, gutter, defaultKeymap, history as editHistory, historyKeymap,
  indentWithTab, searchKeymap, highlightSelectionMatches, bracketMatching, zipSync, strToU8, strFromU8,
  deflateSync, inflateSync,
} from "./vendor/editor.js";
import { penroseLanguage } from "./languages.js";

const SOURCES = ["domain", "substance", "style"];
const STORAGE_KEY = "penrose-playground-trio";
const $ = (id) => document.getElementById(id);
// The server places a message in a program as `style:12:3: ...` (the CLI puts the file's name there);
// here the file is the editor the user sees, so the message names it as its heading does.
const EDITOR_NAMES = Object.fromEntries(SOURCES.map((s) => [s, document.querySelector(`.editor[data-source='${s}'] h2`).textContent]));
const placed = (message) => String(message).replace(/^(domain|substance|style)(?=:)/, (s) => EDITOR_NAMES[s]);

const state = {
  name: "diagram",          // used for exported file names
  images: new Map(),        // path (relative to the trio's folder) -> data: URL, from opened files
  svg: null,                // the SVG text shown (latest frame or final)
  dragged: false,           // a shape was dragged since the last render: the server's layout differs
  session: null,            // {id, abort} of the running live session
  draggable: new Set(),
  zoom: "fit",
  folder: null,             // {files: Map(path -> File), trios: [path]} of an opened folder
  frames: [],               // the history: [{svg, label, stage, final}] of this render, thinned past MAX_FRAMES
  shown: -1,                // which frame of the history is drawn
  follow: true,             // the slider is at the end: new frames are drawn as they come
  stages: [],               // the layout's stage names (Style's `layout = [...]`)
  diagnosis: null,          // the last layout's report.diagnosis (energies.diagnose)
  focus: null,              // the goal picked in the Report: only its shapes are outlined
};
const MAX_FRAMES = 400; // past this the older half of the history keeps every other frame
// result: the last render's outcome, {event: "done", svg} or {event: "error", message}, for checks
const metrics = { result: null, renderStarted: 0, firstFrameMs: null, frames: 0, dragSentAt: null, dragFrameMs: [], dragSeq: 0, settledSeq: 0, dragBusy: false };
window.playgroundMetrics = metrics; // read by the browser tests' timing report

// -- editors --------------------------------------------------------------------------------------

// Marked lines with a gutter symbol whose tooltip says why: errors (●) and, in the Style, the lines
// of goals the layout does not satisfy (▲). One mark per line; the effect replaces them all.
class LineMarker extends GutterMarker {
  constructor(symbol, message) { super(); this.symbol = symbol; this.message = message; }
  toDOM() { const s = document.createElement("span"); s.textContent = this.symbol; s.title = this.message; return s; }
}
function lineMarks(lineClass, gutterClass, symbol) {
  const set = StateEffect.define();
  const field = StateField.define({
    create: () => ({ lines: Decoration.none, marks: RangeSet.empty }),
    update(value, tr) {
      for (const e of tr.effects) {
        if (!e.is(set)) continue;
        const doc = tr.state.doc;
        const found = e.value.filter((d) => d.line >= 1 && d.line <= doc.lines).sort((a, b) => a.line - b.line);
        const seen = new Set();
        const unique = found.filter((d) => !seen.has(d.line) && seen.add(d.line));
        return {
          lines: Decoration.set(unique.map((d) => Decoration.line({ class: lineClass }).range(doc.line(d.line).from))),
          marks: RangeSet.of(unique.map((d) => new LineMarker(symbol, d.message).range(doc.line(d.line).from))),
        };
      }
      return tr.docChanged ? { lines: value.lines.map(tr.changes), marks: value.marks.map(tr.changes) } : value;
    },
    provide: (f) => EditorView.decorations.from(f, (v) => v.lines),
  });
  return { set, field, extension: [field, gutter({ class: gutterClass, markers: (v) => v.state.field(field).marks })] };
}
const badLines = lineMarks("cm-bad-line", "cm-error-gutter", "●");
const goalLines = lineMarks("cm-goal-line", "cm-goal-gutter", "▲");
const setBad = badLines.set;

const editors = {};
for (const source of SOURCES) {
  editors[source] = new EditorView({
    parent: $(source),
    state: EditorState.create({
      doc: "",
      extensions: [
        // first, so that it runs before defaultKeymap's own Mod-Enter (insertBlankLine): Ctrl+Enter renders
        // and changes no text
        keymap.of([{ key: "Mod-Enter", run: () => { render(); return true; } }]),
        lineNumbers(), highlightActiveLineGutter(), highlightActiveLine(), drawSelection(), editHistory(),
        bracketMatching(), highlightSelectionMatches(), badLines.extension, goalLines.extension,
        keymap.of([...defaultKeymap, ...historyKeymap, ...searchKeymap, indentWithTab]),
        penroseLanguage(source),
        EditorView.contentAttributes.of({ "aria-label": `${source} program` }),
        EditorView.updateListener.of((u) => { if (u.docChanged && !loading) edited(); }),
      ],
    }),
  });
}
let loading = false;
const text = (source) => editors[source].state.doc.toString();

function setText(source, value) {
  const view = editors[source];
  view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: value } });
}

function goTo(source, line, column) {
  const view = editors[source];
  const doc = view.state.doc;
  const l = doc.line(Math.min(Math.max(line, 1), doc.lines));
  const pos = Math.min(l.from + Math.max(column - 1, 0), l.to);
  view.dispatch({ selection: { anchor: pos }, scrollIntoView: true });
  view.focus();
}

// -- status, staleness, errors --------------------------------------------------------------------

function setStatus(message) { $("status").textContent = message; $("status").title = message; }
function setLive(message) { $("live-text").textContent = message; $("live").title = message; }

function markStale(reason) {
  if (!state.svg) return;
  $("diagram").classList.add("stale");
  $("stale").textContent = `out of date: ${reason}`;
  $("stale").hidden = false;
}

function markFresh() {
  $("diagram").classList.remove("stale");
  $("stale").hidden = true;
}

function clearErrors() {
  $("errors").hidden = true;
  $("errors").replaceChildren();
  for (const s of SOURCES) editors[s].dispatch({ effects: setBad.of([]) });
}

function showErrors(body) {
  const box = $("errors");
  box.replaceChildren();
  const diagnostics = body.diagnostics || [];
  if (diagnostics.length === 0) box.append(placed(body.message || "error"));
  for (const d of diagnostics) {
    const link = document.createElement("a");
    link.className = "diagnostic";
    link.textContent = `${EDITOR_NAMES[d.source]}:${d.line}:${d.column}: ${d.message}`;
    link.addEventListener("click", () => goTo(d.source, d.line, d.column));
    const excerpt = document.createElement("div");
    excerpt.textContent = d.excerpt || "";
    box.append(link, excerpt);
  }
  box.hidden = false;
  for (const s of SOURCES) {
    const mine = diagnostics.filter((d) => d.source === s).map((d) => ({ line: d.line, message: d.message }));
    editors[s].dispatch({ effects: setBad.of(mine) });
  }
  markStale("the last render failed");
}

const num = (v) => (v === null || v === undefined ? "–" : Number(v).toPrecision(4));

function showReport(report) {
  const body = $("timings").querySelector("tbody");
  body.replaceChildren();
  const rows = [
    ["status", report.status], ["energy", num(report.energy)], ["largest violation", num(report.maxConstrViolation)],
    ["constraints not satisfied", report.nViolated ?? 0],
    ["iterations", report.iterations],
    ...Object.entries(report.timingsMs || {}).map(([k, v]) => [`${k} (ms)`, num(v)]),
    ["compiled energy reused", report.cached && report.cached.energy ? "yes" : "no"],
  ];
  if (report.warnings && report.warnings.length) rows.push(["warnings", report.warnings.map(placed).join("\n")]);
  for (const [k, v] of rows) {
    const tr = document.createElement("tr");
    for (const cell of [k, String(v)]) { const td = document.createElement("td"); td.textContent = cell; tr.append(td); }
    body.append(tr);
  }
  showDiagnosis(report.diagnosis || null);
}

// -- why the layout failed: the report's diagnosis (energies.diagnose) --------------------------------
// Every violated constraint and every objective holding much of the energy: its Style line is marked
// (the tooltip gives value and shapes), its shapes are outlined in red over the diagram, and the
// Report lists them, sortable, a click going to the line and outlining only that goal's shapes.

const goalText = (g) => `${g.kind === "constraint" ? "ensure" : "encourage"} ${g.function}`;
const objects = (g) => (g.substance.length ? g.substance.join(", ") : g.shapes.join(", "));
const percent = (share) => `${(100 * share).toFixed(share < 0.001 ? 2 : 1)}%`;
const sortKeys = {
  line: (g) => g.line * 1e4 + g.column, goal: (g) => goalText(g), objects: (g) => objects(g),
  value: (g) => -g.value, share: (g) => -g.share,
};
let sortBy = "share";

function showDiagnosis(diagnosis) {
  state.diagnosis = diagnosis;
  state.focus = null;
  const goals = diagnosis ? diagnosis.goals : [];
  // the Style gutter: one mark per line, its tooltip each goal of the line that fails, with its shapes
  const byLine = new Map();
  for (const g of goals) if (g.line && g.kind === "constraint") (byLine.get(g.line) || byLine.set(g.line, []).get(g.line)).push(g);
  const conflicts = diagnosis ? diagnosis.conflicts : [];
  const marks = [...byLine.entries()].map(([line, gs]) => {
    const worst = Math.max(...gs.map((g) => g.value));
    const against = conflicts.filter((c) => goals[c.a].line === line || goals[c.b].line === line)
      .map((c) => (goals[c.a].line === line ? goals[c.b] : goals[c.a]))
      .map((g) => `${EDITOR_NAMES.style}:${g.line} ${g.function}`);
    const shown = gs.slice(0, 6).map((g) => `  ${objects(g)}: value ${num(g.value)}, ${percent(g.share)} of the energy` +
      (g.never ? " (can never hold)" : "")).join("\n");
    return { line, message: `${goalText(gs[0])}: ${gs.length} not satisfied, largest value ${num(worst)}\n${shown}` +
      (gs.length > 6 ? `\n  and ${gs.length - 6} more` : "") +
      (against.length ? `\ncannot all hold with ${[...new Set(against)].join(", ")}` : "") };
  });
  editors.style.dispatch({ effects: goalLines.set.of(marks) });
  showGoalTable();
  drawOutlines();
}

function showGoalTable() {
  const table = $("goals");
  const goals = state.diagnosis ? [...state.diagnosis.goals] : [];
  table.hidden = goals.length === 0;
  goals.sort((a, b) => { const ka = sortKeys[sortBy](a), kb = sortKeys[sortBy](b); return ka < kb ? -1 : ka > kb ? 1 : 0; });
  for (const b of table.querySelectorAll("th button")) {
    const on = b.dataset.sort === sortBy;
    b.textContent = b.textContent.replace(/ ▾$/, "") + (on ? " ▾" : "");
    if (on) b.setAttribute("aria-sort", "descending"); else b.removeAttribute("aria-sort");
  }
  const rows = goals.map((g) => {
    const tr = document.createElement("tr");
    tr.className = "goal" + (g.never ? " never" : "");
    const line = g.line ? `${EDITOR_NAMES.style}:${g.line}` : g.implicit ? "(implicit)" : "–";
    for (const cell of [line, goalText(g) + (g.never ? " (never)" : ""), objects(g), num(g.value), percent(g.share)]) {
      const td = document.createElement("td"); td.textContent = cell; tr.append(td);
    }
    tr.title = g.shapes.join(", ") + (g.match ? ` (${g.match})` : "");
    tr.addEventListener("click", () => {
      state.focus = state.focus === g ? null : g;
      for (const r of table.querySelectorAll("tr.focus")) r.classList.remove("focus");
      if (state.focus) tr.classList.add("focus");
      if (g.line) goTo("style", g.line, g.column);
      drawOutlines();
    });
    return tr;
  });
  table.querySelector("tbody").replaceChildren(...rows);
}
for (const b of document.querySelectorAll("#goals th button")) {
  b.addEventListener("click", () => { sortBy = b.dataset.sort; showGoalTable(); });
}

// Red outlines around the failing goals' shapes (or the Report's chosen goal's), in an overlay group
// of the shown SVG, in its own units (a shape's screen box mapped back), left out of every export.
function drawOutlines() {
  const svg = $("diagram").querySelector("svg");
  if (!svg) return;
  for (const old of svg.querySelectorAll(".outlines")) old.remove();
  const frame = state.frames[state.shown];
  if (!$("outline").checked || !state.diagnosis || !frame || !frame.final) return;
  const goals = state.focus ? [state.focus] : state.diagnosis.goals.filter((g) => g.kind === "constraint");
  const wanted = new Set(goals.flatMap((g) => g.shapes));
  if (!wanted.size) return;
  const ns = "http://www.w3.org/2000/svg";
  const layer = document.createElementNS(ns, "g");
  layer.setAttribute("class", "outlines");
  layer.setAttribute("pointer-events", "none");
  const toSvg = svg.getScreenCTM().inverse();
  const at = (x, y) => { const p = svg.createSVGPoint(); p.x = x; p.y = y; return p.matrixTransform(toSvg); };
  for (const title of svg.querySelectorAll("title")) {
    if (!wanted.has(title.textContent)) continue;
    const box = title.parentElement.getBoundingClientRect();
    const a = at(box.left, box.top), b = at(box.right, box.bottom);
    const rect = document.createElementNS(ns, "rect");
    const pad = 3;
    rect.setAttribute("x", String(Math.min(a.x, b.x) - pad)); rect.setAttribute("y", String(Math.min(a.y, b.y) - pad));
    rect.setAttribute("width", String(Math.abs(b.x - a.x) + 2 * pad)); rect.setAttribute("height", String(Math.abs(b.y - a.y) + 2 * pad));
    rect.setAttribute("fill", "none"); rect.setAttribute("stroke", "#e01b1b"); rect.setAttribute("stroke-width", "2");
    rect.setAttribute("stroke-dasharray", "6 3"); rect.setAttribute("vector-effect", "non-scaling-stroke");
    rect.setAttribute("data-shape", title.textContent);
    layer.append(rect);
  }
  svg.append(layer);
}
$("outline").addEventListener("change", drawOutlines);

// -- the diagram: sanitized inline SVG, fit and zoom --------------------------------------------------

function sanitize(svgText) {
  const doc = new DOMParser().parseFromString(svgText, "image/svg+xml");
  const root = doc.documentElement;
  if (root.nodeName !== "svg") return null;
  for (const bad of root.querySelectorAll("script, foreignObject")) bad.remove();
  for (const el of [root, ...root.querySelectorAll("*")]) {
    for (const attr of [...el.attributes]) {
      const name = attr.name.toLowerCase();
      if (name.startsWith("on")) el.removeAttribute(attr.name);
      else if (name === "href" || name === "xlink:href") {
        const resolved = resolveImage(attr.value);
        if (resolved) el.setAttribute(attr.name, resolved);
        else if (!/^(#|data:image\/|https?:)/i.test(attr.value)) el.removeAttribute(attr.name);
      }
    }
  }
  return document.importNode(root, true);
}

function resolveImage(href) {
  if (/^(#|data:|https?:)/i.test(href)) return null;
  const clean = normalize(href);
  return state.images.get(clean) || state.images.get(clean.split("/").pop()) || null;
}

function canvasSize(svg) {
  const box = (svg.getAttribute("viewBox") || "").split(/[\s,]+/).map(Number);
  if (box.length === 4 && box[2] > 0 && box[3] > 0) return [box[2], box[3]];
  return [Number(svg.getAttribute("width")) || 400, Number(svg.getAttribute("height")) || 400];
}

function applyZoom() {
  const svg = $("diagram").querySelector("svg");
  if (!svg) return;
  const [w, h] = canvasSize(svg);
  const pane = $("diagram");
  let scale = state.zoom;
  if (scale === "fit") scale = Math.min((pane.clientWidth - 4) / w, (pane.clientHeight - 4) / h);
  svg.setAttribute("width", String(Math.max(1, w * scale)));
  svg.setAttribute("height", String(Math.max(1, h * scale)));
}

function showSvg(svgText) {
  const svg = sanitize(svgText);
  if (!svg) return;
  state.svg = svgText;
  $("diagram").replaceChildren(svg);
  // shapes are dragged on the layout as it is now, not on an earlier frame of the history
  if (state.follow) {
    for (const title of svg.querySelectorAll("title")) {
      if (state.draggable.has(title.textContent)) title.parentElement.classList.add("draggable");
    }
  }
  applyZoom();
}

// -- the history: every frame of this render (and of its drags), scrubbed with the slider -------------

function addFrame(svg, label, stage, final = false) {
  const shownFrame = state.frames[state.shown];
  state.frames.push({ svg, label, stage, final });
  if (state.frames.length > MAX_FRAMES) {
    const half = state.frames.length >> 1;
    state.frames = [...state.frames.slice(0, half).filter((_, i) => i % 2 === 0), ...state.frames.slice(half)];
  }
  const range = $("history-range");
  range.max = String(state.frames.length - 1);
  $("history").hidden = false;
  if (state.follow) { range.value = range.max; showFrame(state.frames.length - 1); return; }
  const k = state.frames.indexOf(shownFrame); // an earlier frame stays shown while the history grows
  state.shown = k >= 0 ? k : Math.min(state.shown, state.frames.length - 1);
  range.value = String(state.shown);
  showHistoryLabel();
}

function showFrame(k) {
  state.shown = k;
  const frame = state.frames[k];
  showSvg(frame.svg);
  showStage(frame.stage);
  showHistoryLabel();
  drawOutlines();
}

function showHistoryLabel() {
  const frame = state.frames[state.shown];
  const which = state.shown === state.frames.length - 1 ? "latest" : "earlier";
  $("history-label").textContent = `frame ${state.shown + 1} of ${state.frames.length} (${which})` +
    (frame && frame.final ? ": the final layout" : "");
  $("history-label").title = frame ? frame.label : "";
}

function showStage(current) {
  const box = $("stages");
  const named = state.stages.filter((n) => n);
  if (!named.length) { box.textContent = ""; return; }
  const chips = state.stages.map((name) => {
    const chip = document.createElement("span");
    chip.className = "stage" + (name === current ? " current" : "");
    chip.textContent = name;
    if (name === current) chip.setAttribute("aria-current", "step");
    return chip;
  });
  box.replaceChildren("stage", ...chips);
}

$("history-range").addEventListener("input", (event) => {
  const k = Number(event.target.value);
  state.follow = k === state.frames.length - 1;
  showFrame(k);
});

function resetHistory() {
  state.frames = [];
  state.shown = -1;
  state.follow = true;
  $("history").hidden = true;
}

for (const button of document.querySelectorAll("#zoom button")) {
  button.addEventListener("click", () => {
    const z = button.dataset.zoom;
    const current = currentScale();
    state.zoom = z === "fit" ? "fit" : z === "in" ? current * 1.25 : z === "out" ? current / 1.25 : 1;
    applyZoom();
  });
}
function currentScale() {
  const svg = $("diagram").querySelector("svg");
  return svg ? Number(svg.getAttribute("width")) / canvasSize(svg)[0] : 1;
}
new ResizeObserver(() => { if (state.zoom === "fit") applyZoom(); }).observe($("diagram"));

// -- live layout ------------------------------------------------------------------------------------

function trioRequest() {
  const trio = { domain: text("domain"), substance: text("substance"), style: text("style"), variation: $("variation").value };
  // the server embeds only the images a request carries (safe SVG: no href it would have to fetch)
  return state.images.size ? { ...trio, images: Object.fromEntries(state.images) } : trio;
}

function setRunning(running) {
  $("pause").disabled = !running;
  $("step").disabled = !running;
  $("cancel").disabled = !running;
  $("pause").textContent = "Pause";
}

async function control(action, extra = {}) {
  const session = state.session;
  if (!session || !session.id) return false;
  const response = await fetch(`/live/${session.id}`, {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ action, ...extra }),
  });
  return response.ok;
}

function stopSession() {
  if (state.session) state.session.abort.abort();
  // the next render tells the server to end it at once (the aborted stream's close may come later)
  if (state.session && state.session.id) state.replaces = state.session.id;
  state.session = null;
  state.draggable = new Set();
  setRunning(false);
}

function liveLine(d, label) {
  const num = (v) => (v === null || v === undefined ? "–" : Number(v).toPrecision(4));
  const stage = d.stage ? ` stage ${d.stage},` : "";
  const start = d.start ? ` start ${d.start + 1},` : "";
  return `${label}:${start}${stage} round ${d.round}, ${d.iterations} iterations, energy ${num(d.energy)},` +
    ` largest violation ${num(d.maxViolation)}, ${(d.elapsedMs / 1000).toFixed(2)} s`;
}

async function render() {
  stopSession();
  clearErrors();
  save();
  setStatus("laying out…");
  const abort = new AbortController();
  const session = { id: null, abort };
  state.session = session;
  metrics.renderStarted = performance.now();
  state.dragged = false;
  resetHistory();
  showDiagnosis(null);
  // what is under way now, never the last render's words
  setLive("laying out: building the diagram and compiling its energy…");
  if (!$("diagram").querySelector("svg")) {
    const wait = document.createElement("div");
    wait.className = "placeholder";
    wait.textContent = "Laying out… the first frame comes once the energy is compiled.";
    $("diagram").replaceChildren(wait);
  } else markStale("laying out again");
  metrics.firstFrameMs = null;
  metrics.frames = 0;
  metrics.result = null;
  let response;
  try {
    const replaces = state.replaces ? `&replaces=${encodeURIComponent(state.replaces)}` : "";
    state.replaces = null;
    // autostep off: the server holds the layout at its first frame (the initial state) until Step or Resume
    const paused = $("autostep").checked ? "" : "&paused=true";
    response = await fetch(`/live?interactive=true${paused}${replaces}`, {
      method: "POST", signal: abort.signal,
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify(trioRequest()),
    });
  } catch (err) {
    if (state.session === session) {
      showErrors({ message: `request failed: ${err}` }); setStatus("request failed"); setLive("no layout: the request failed");
      metrics.result = { event: "error", message: String(err) };
    }
    return;
  }
  if (!response.ok) {
    const body = await response.json().catch(() => ({ message: `HTTP ${response.status}` }));
    if (state.session !== session) return;
    state.session = null;
    if (response.status === 429) return renderOnce();
    showErrors(body);
    setStatus(`error ${response.status} (${body.error})`);
    setLive(`no layout: the server answered ${response.status} (${body.error})`);
    metrics.result = { event: "error", message: body.message };
    return;
  }
  setRunning(true);
  try {
    for await (const [event, data] of serverEvents(response.body)) {
      if (state.session !== session) return;
      onEvent(session, event, data);
    }
  } catch (err) {
    if (err.name !== "AbortError" && state.session === session) setStatus(`stream broken: ${err}`);
  }
  if (state.session === session) { state.session = null; state.draggable = new Set(); setRunning(false); }
}

async function* serverEvents(stream) {
  const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let event = "message";
      let data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) event = line.slice(7);
        else if (line.startsWith("data: ")) data += line.slice(6);
      }
      yield [event, data ? JSON.parse(data) : {}];
    }
  }
}

function onEvent(session, event, data) {
  if (event === "session") {
    session.id = data.id;
  } else if (event === "frame") {
    if (data.stages) state.stages = data.stages;
    const label = liveLine(data, state.dragging || session.dragged ? "re-optimizing after the drag" : "optimizing");
    addFrame(data.svg, label, data.stage);
    metrics.frames += 1;
    if (metrics.dragSentAt !== null) { metrics.dragFrameMs.push(performance.now() - metrics.dragSentAt); metrics.dragSentAt = null; }
    if (metrics.firstFrameMs === null) {
      metrics.firstFrameMs = performance.now() - metrics.renderStarted;
      metrics.firstFrameServerMs = data.elapsedMs; // of it, in the live worker (the rest: request, stream)
    }
    if (!state.dragging) markFresh();
    setLive(label);
  } else if (event === "done") {
    state.draggable = new Set(data.draggable || []);
    // the final layout is where the last stage ended (the last frame may be another start's)
    addFrame(data.svg, `done (${data.status})`, state.stages[state.stages.length - 1] || "", true);
    metrics.result = { event: "done", svg: data.svg };
    markFresh();
    showReport(data);
    const total = ((performance.now() - metrics.renderStarted) / 1000).toFixed(2);
    setLive(liveLine({ ...data, round: data.epRounds, maxViolation: data.maxConstrViolation,
      elapsedMs: data.timingsMs.total }, `done (${data.status})`));
    setStatus(`rendered in ${total} s; first frame after ${Math.round(metrics.firstFrameMs ?? 0)} ms` +
      caveats(data) + (state.draggable.size ? "; drag a shape to re-optimize" : ""));
    $("pause").disabled = true;
    $("step").disabled = true;
    $("cancel").disabled = true;
  } else if (event === "settled") {
    metrics.settledSeq = data.seq;
    if (data.seq === metrics.dragSeq) { // not when a newer drag is on its way
      setLive(`settled after the drag: energy ${Number(data.energy).toPrecision(4)}, ${data.nViolated} violated`);
    }
  } else if (event === "paused") {
    $("pause").textContent = "Resume";
    setLive(liveLine(data, "paused"));
  } else if (event === "resumed") $("pause").textContent = "Pause";
  else if (event === "warning") setStatus(placed(data.message));
  else if (event === "error") {
    showErrors(data);
    setStatus(data.kind === "diagram" ? "error in the trio" : `layout failed (${data.status || data.kind})`);
    setLive(data.kind === "diagram" ? "no layout: the trio has an error (below)" : `no layout: it failed (${data.status || data.kind})`);
    metrics.result = { event: "error", message: data.message };
  } else if (event === "end") {
    if (data.reason === "cancel") { markStale("cancelled"); setStatus("cancelled"); }
    else if (data.reason === "idle") setStatus("live session ended after idling; Render to drag again");
    else if (data.reason === "reclaimed") setStatus("live session given to another editor (the server is busy); Render to drag again");
    setRunning(false);
  }
}

// What a finished layout's report says that the picture alone does not: warnings (a misspelled
// property draws nothing) and constraints left unsatisfied.
function caveats(report) {
  const warnings = report.warnings || [];
  const unmet = report.nViolated || 0;
  let said = "";
  if (warnings.length) said += `; ${warnings.length} warning${warnings.length > 1 ? "s" : ""}: ${placed(warnings[0])}`;
  if (unmet) {
    said += `; ${unmet} constraint${unmet > 1 ? "s" : ""} not satisfied`;
    const why = report.diagnosis;
    const first = why && why.conflicts[0];
    if (first) {
      const [a, b] = [why.goals[first.a], why.goals[first.b]].sort((x, y) => x.line - y.line);
      said += `: ${EDITOR_NAMES.style}:${a.line} ${a.function} and ${EDITOR_NAMES.style}:${b.line} ${b.function}` +
        ` ${first.known ? "cannot both hold" : "pull against each other"}`;
    } else if (why && why.goals.some((g) => g.kind === "constraint")) {
      const worst = why.goals.find((g) => g.kind === "constraint");
      said += `, worst ${worst.line ? `${EDITOR_NAMES.style}:${worst.line} ` : ""}${worst.function}`;
    }
    said += " (marked in the Style; see Report)";
  }
  return said;
}

// When every live session is busy, the plain endpoint still renders (without frames).
async function renderOnce() {
  setStatus("live frames unavailable (server busy): rendering without them…");
  const response = await fetch("/diagrams", {
    method: "POST", headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify(trioRequest()),
  });
  const body = await response.json();
  if (!response.ok) {
    showErrors(body); setStatus(`error ${response.status} (${body.error})`);
    metrics.result = { event: "error", message: body.message };
    return;
  }
  addFrame(body.svg, "final layout", "", true); markFresh(); showReport(body);
  metrics.result = { event: "done", svg: body.svg };
  setStatus(`rendered in ${((performance.now() - metrics.renderStarted) / 1000).toFixed(2)} s` +
    caveats(body) + "; live frames and dragging unavailable (server busy: every live session is laying out)");
}

$("render").addEventListener("click", render);
$("pause").addEventListener("click", () => {
  if ($("pause").textContent === "Pause") control("pause");
  else { control("resume"); $("pause").textContent = "Pause"; }
});
$("step").addEventListener("click", () => { control("step"); $("pause").textContent = "Resume"; });
$("cancel").addEventListener("click", () => control("cancel"));
$("resample").addEventListener("click", () => {
  const words = ["Amber", "Birch", "Cedar", "Dune", "Ember", "Fjord", "Grove", "Harbor", "Iris", "Juniper"];
  const pick = () => words[Math.floor(Math.random() * words.length)];
  $("variation").value = `${pick()}${pick()}${Math.floor(Math.random() * 100000)}`;
  render();
});
document.addEventListener("keydown", (event) => {
  if (event.defaultPrevented) return; // an editor's own Mod-Enter already rendered
  if ((event.ctrlKey || event.metaKey) && event.key === "Enter") { event.preventDefault(); render(); }
});
$("autostep").addEventListener("change", () => {
  if (!state.session || !state.session.id || $("pause").disabled) return;
  if ($("autostep").checked) { control("resume"); $("pause").textContent = "Pause"; } else control("pause");
});

// -- dragging: the server pins the shape and re-optimizes the rest ---------------------------------

function svgPoint(svg, event) {
  const p = svg.createSVGPoint();
  p.x = event.clientX; p.y = event.clientY;
  return p.matrixTransform(svg.getScreenCTM().inverse());
}

$("diagram").addEventListener("pointerdown", (event) => {
  const target = event.target.closest(".draggable");
  const svg = $("diagram").querySelector("svg");
  if (!target || !svg || !state.session || !state.session.id || !state.follow) return;
  event.preventDefault();
  const shape = target.querySelector(":scope > title").textContent;
  const start = svgPoint(svg, event);
  // as Penrose's editor, the pointer is held where the shape's bounding box stays on the canvas
  const box = target.getBBox(), view = svg.viewBox.baseVal;
  const lo = { x: start.x - box.x, y: start.y - box.y };
  const hi = { x: view.width - (box.x + box.width - start.x), y: view.height - (box.y + box.height - start.y) };
  const clamp = (v, a, b) => Math.min(Math.max(v, Math.min(a, b)), Math.max(a, b));
  const drag = { shape, start, sent: null, latest: null, inFlight: false, begin: true, released: false };
  state.dragging = drag;
  state.session.dragged = true;
  target.classList.add("dragging");
  // the page has sent everything the pointer did once it is released and nothing is left to send
  const settle = () => { metrics.dragBusy = !(drag.released && !drag.inFlight && drag.latest === drag.sent); };
  metrics.dragBusy = true;
  const send = async () => {
    settle();
    if (drag.inFlight || !drag.latest || drag.latest === drag.sent) return;
    drag.inFlight = true;
    const offset = drag.latest;
    drag.sent = offset;
    if (metrics.dragSentAt === null) metrics.dragSentAt = performance.now();
    metrics.dragSeq += 1;
    state.dragged = true;
    metrics.lastDrag = { ...offset, seq: metrics.dragSeq };
    await control("drag", { shape, dx: offset.dx, dy: offset.dy, begin: drag.begin, seq: metrics.dragSeq });
    drag.begin = false;
    drag.inFlight = false;
    send();
  };
  const move = (e) => {
    const svgNow = $("diagram").querySelector("svg");
    const p = svgPoint(svgNow, e);
    // canvas units with y up, as Penrose's shapes are placed
    drag.latest = { dx: clamp(p.x, lo.x, hi.x) - start.x, dy: -(clamp(p.y, lo.y, hi.y) - start.y) };
    const el = [...svgNow.querySelectorAll("title")].find((t) => t.textContent === shape);
    if (el && svgNow !== svg) el.parentElement.classList.add("dragging");
    send();
  };
  const up = () => {
    window.removeEventListener("pointermove", move);
    window.removeEventListener("pointerup", up);
    state.dragging = null;
    drag.released = true;
    settle();
  };
  window.addEventListener("pointermove", move);
  window.addEventListener("pointerup", up);
});

// -- the trio: gallery, files, folders, drag-and-drop ------------------------------------------------

function loadTrio(trio, { name = "diagram", images = new Map(), example = "" } = {}) {
  stopSession();
  $("example").value = example; // the gallery names what is open, or nothing: picking it again loads it
  loading = true;
  for (const s of SOURCES) setText(s, Array.isArray(trio[s]) ? trio[s].join("\n") : trio[s] || "");
  loading = false;
  $("variation").value = trio.variation || "";
  state.name = name;
  state.images = images;
  clearErrors();
  save();
  markStale("a new trio was loaded");
}

async function loadExamples() {
  const list = await (await fetch("/examples")).json();
  const labels = { ours: "Our examples", penrose: "Penrose's registry (MIT license)" };
  const groups = new Map();
  for (const ex of list) {
    if (!groups.has(ex.group)) {
      const group = document.createElement("optgroup");
      group.label = labels[ex.group] || ex.group;
      groups.set(ex.group, group);
      $("example").append(group);
    }
    const option = document.createElement("option");
    option.value = ex.name;
    option.textContent = ex.title;
    option.title = ex.name;
    groups.get(ex.group).append(option);
  }
  return list;
}

async function loadExample(name) {
  const response = await fetch(`/examples/${encodeURIComponent(name)}`);
  if (!response.ok) return;
  loadTrio(await response.json(), { name, example: name });
  setStatus(`loaded example ${name}`);
  render();
}

$("example").addEventListener("change", (event) => { if (event.target.value) loadExample(event.target.value); });

function normalize(path) {
  const out = [];
  for (const part of path.replace(/\\/g, "/").split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") out.pop(); else out.push(part);
  }
  return out.join("/");
}
const dirOf = (path) => path.split("/").slice(0, -1).join("/");
const isImage = (path) => /\.(svg|png|jpe?g|gif|webp)$/i.test(path);
const readText = (file) => file.text();
const readDataUrl = (file) => new Promise((resolve, reject) => {
  const reader = new FileReader();
  reader.onload = () => resolve(reader.result);
  reader.onerror = () => reject(reader.error);
  reader.readAsDataURL(file);
});

// files: Map(path -> File). Opens its trio (the one chosen when there are several), or else the
// .domain/.substance/.style files it holds.
async function openFiles(files) {
  const trios = [...files.keys()].filter((p) => p.endsWith(".trio.json")).sort();
  state.folder = { files, trios };
  $("trio-choice").hidden = trios.length < 2;
  $("trio-select").replaceChildren(...trios.map((p) => new Option(p, p)));
  if (trios.length) return openTrioFile(trios[0]);
  const bySuffix = (suffix) => [...files.keys()].filter((p) => p.endsWith(suffix)).sort();
  const trio = {};
  for (const s of SOURCES) trio[s] = (await Promise.all(bySuffix(`.${s}`).map((p) => readText(files.get(p))))).join("\n");
  if (!SOURCES.some((s) => trio[s])) { setStatus("no .trio.json, .domain, .substance or .style file among them"); return; }
  const images = new Map();
  for (const p of [...files.keys()].filter(isImage)) images.set(p.split("/").pop(), await readDataUrl(files.get(p)));
  const name = (bySuffix(".substance")[0] || "diagram").split("/").pop().replace(/\.substance$/, "");
  loadTrio({ ...trio, variation: $("variation").value }, { name, images });
  setStatus(`opened ${files.size} files`);
  render();
}

async function openTrioFile(path) {
  const { files } = state.folder;
  const base = dirOf(path);
  let spec;
  try { spec = JSON.parse(await readText(files.get(path))); } catch (err) {
    setStatus(`${path}: not JSON (${err.message})`);
    metrics.result = { event: "error", message: `${path}: not JSON` };
    return;
  }
  const trio = { variation: spec.variation || "" };
  for (const s of SOURCES) {
    const refs = Array.isArray(spec[s]) ? spec[s] : [spec[s]];
    const parts = [];
    for (const ref of refs) {
      const file = files.get(normalize(`${base}/${ref}`));
      if (!file) {
        setStatus(`${path}: ${s} file ${ref} is not among the opened files (open the whole folder)`);
        metrics.result = { event: "error", message: `${s} file ${ref} is not among the opened files` };
        return;
      }
      parts.push(await readText(file));
    }
    trio[s] = parts.join("\n");
  }
  // Images resolve against the trio's folder and the folders of its Style files.
  const images = new Map();
  const roots = [base, ...(Array.isArray(spec.style) ? spec.style : [spec.style]).map((r) => dirOf(normalize(`${base}/${r}`)))];
  for (const p of [...files.keys()].filter(isImage)) {
    for (const root of roots) {
      if (root === "" || p.startsWith(`${root}/`)) {
        const rel = root === "" ? p : p.slice(root.length + 1);
        if (!images.has(rel)) images.set(rel, await readDataUrl(files.get(p)));
      }
    }
  }
  loadTrio(trio, { name: path.split("/").pop().replace(/\.trio\.json$/, ""), images });
  $("trio-select").value = path;
  $("trio-select").title = path;
  setStatus(`opened ${path}`);
  render();
}

$("trio-select").addEventListener("change", (e) => openTrioFile(e.target.value));
$("open-files").addEventListener("click", () => $("file-input").click());
$("open-folder").addEventListener("click", () => $("folder-input").click());
for (const id of ["file-input", "folder-input"]) {
  $(id).addEventListener("change", (event) => {
    const files = new Map([...event.target.files].map((f) => [normalize(f.webkitRelativePath || f.name), f]));
    event.target.value = "";
    if (files.size) openFiles(files);
  });
}

async function entriesOf(entry, prefix, out) {
  if (entry.isFile) {
    out.set(normalize(`${prefix}/${entry.name}`), await new Promise((res, rej) => entry.file(res, rej)));
  } else if (entry.isDirectory) {
    const reader = entry.createReader();
    for (;;) {
      const batch = await new Promise((res, rej) => reader.readEntries(res, rej));
      if (!batch.length) break;
      for (const child of batch) await entriesOf(child, `${prefix}/${entry.name}`, out);
    }
  }
}

document.addEventListener("dragover", (e) => { if (e.dataTransfer.types.includes("Files")) { e.preventDefault(); $("drop-hint").hidden = false; } });
document.addEventListener("dragleave", (e) => { if (!e.relatedTarget) $("drop-hint").hidden = true; });
document.addEventListener("drop", async (e) => {
  if (!e.dataTransfer.types.includes("Files")) return;
  e.preventDefault();
  $("drop-hint").hidden = true;
  const files = new Map();
  const entries = [...e.dataTransfer.items].map((i) => i.webkitGetAsEntry && i.webkitGetAsEntry()).filter(Boolean);
  if (entries.length) for (const entry of entries) await entriesOf(entry, "", files);
  else for (const f of e.dataTransfer.files) files.set(f.name, f);
  if (files.size) openFiles(files);
});

// -- persistence: localStorage and the shareable URL ---------------------------------------------------

const unb64url = (s) => Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));

function encodeTrio(trio) {
  const bytes = deflateSync(strToU8(JSON.stringify(trio)), { level: 9 });
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
const decodeTrio = (s) => JSON.parse(strFromU8(inflateSync(unb64url(s))));

let saveTimer = null;
function save() {
  clearTimeout(saveTimer);
  const trio = { ...trioRequest(), name: state.name };
  localStorage.setItem(STORAGE_KEY, JSON.stringify(trio));
  history.replaceState(null, "", `#trio=${encodeTrio(trio)}`);
}

function edited() {
  markStale("edited since it was rendered");
  clearTimeout(saveTimer);
  saveTimer = setTimeout(save, 300);
}
$("variation").addEventListener("input", edited);

// -- export -------------------------------------------------------------------------------------------

function download(blob, filename) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url; a.download = filename;
  document.body.append(a); a.click(); a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

function exportedSvg() {
  const svg = $("diagram").querySelector("svg");
  if (!svg) return null;
  const copy = svg.cloneNode(true); // with images inlined, at the canvas's own size
  const [w, h] = canvasSize(svg);
  copy.setAttribute("width", String(w)); copy.setAttribute("height", String(h));
  copy.querySelectorAll(".draggable, .dragging").forEach((el) => el.classList.remove("draggable", "dragging"));
  copy.querySelectorAll(".outlines").forEach((el) => el.remove());
  return new XMLSerializer().serializeToString(copy);
}

async function pngBlob(scale = 2) {
  const svgText = exportedSvg();
  const svg = $("diagram").querySelector("svg");
  const [w, h] = canvasSize(svg);
  const url = URL.createObjectURL(new Blob([svgText], { type: "image/svg+xml" }));
  try {
    const img = new Image();
    img.src = url;
    await img.decode();
    const canvas = document.createElement("canvas");
    canvas.width = Math.round(w * scale); canvas.height = Math.round(h * scale);
    const ctx = canvas.getContext("2d");
    ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, canvas.width, canvas.height);
    ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
    return await new Promise((resolve) => canvas.toBlob(resolve, "image/png"));
  } finally { URL.revokeObjectURL(url); }
}

function trioZip() {
  const n = state.name.replace(/[^\w.-]+/g, "_") || "diagram";
  const spec = { substance: `./${n}.substance`, style: [`./${n}.style`], domain: `./${n}.domain`, variation: $("variation").value };
  const files = {
    [`${n}/${n}.trio.json`]: strToU8(JSON.stringify(spec, null, 2) + "\n"),
    [`${n}/${n}.domain`]: strToU8(text("domain")),
    [`${n}/${n}.substance`]: strToU8(text("substance")),
    [`${n}/${n}.style`]: strToU8(text("style")),
  };
  for (const [path, dataUrl] of state.images) {
    const bytes = Uint8Array.from(atob(dataUrl.split(",")[1] || ""), (c) => c.charCodeAt(0));
    files[`${n}/${normalize(path)}`] = bytes;
  }
  return new Blob([zipSync(files)], { type: "application/zip" });
}

// The server draws the PDF (vector, the bundled fonts) of the trio's layout, which is the one shown
// (same variation, same bytes); a dragged layout exists only here, so it prints through the browser.
async function exportPdf(n) {
  const frame = state.frames[state.shown];
  if (state.dragged || (frame && !frame.final)) {
    setStatus(`${state.dragged ? "a dragged layout" : "an earlier frame"} is printed by the browser: choose “Save as PDF”`);
    window.print();
    return;
  }
  setStatus("drawing the PDF…");
  const response = await fetch("/diagrams", {
    method: "POST", headers: { "content-type": "application/json", accept: "application/pdf" },
    body: JSON.stringify(trioRequest()),
  });
  if (!response.ok) { setStatus(`PDF failed: ${(await response.json()).message}`); return; }
  download(await response.blob(), `${n}.pdf`);
  setStatus("PDF saved");
}

async function exportAs(kind) {
  const needsDiagram = ["svg", "png", "pdf", "copy"].includes(kind);
  if (needsDiagram && !state.svg) { setStatus("render the diagram first"); return; }
  const frame = state.frames[state.shown];
  // the frame shown is what is exported; an earlier frame says which in its name
  const n = (state.name || "diagram") + (frame && !frame.final && ["svg", "png"].includes(kind) ? `-frame${state.shown + 1}` : "");
  if (kind === "svg") download(new Blob([exportedSvg()], { type: "image/svg+xml" }), `${n}.svg`);
  else if (kind === "png") download(await pngBlob(), `${n}.png`);
  else if (kind === "pdf") await exportPdf(n);
  else if (kind === "trio") download(trioZip(), `${n}.zip`);
  else if (kind === "copy") { await navigator.clipboard.writeText(exportedSvg()); setStatus("SVG copied to the clipboard"); }
  else if (kind === "link") { save(); await navigator.clipboard.writeText(location.href); setStatus("share link copied"); }
}

$("export").addEventListener("click", () => { $("export-menu").hidden = !$("export-menu").hidden; });
for (const item of document.querySelectorAll("[data-export]")) {
  item.addEventListener("click", () => {
    $("export-menu").hidden = true;
    exportAs(item.dataset.export).catch((err) => setStatus(`export failed: ${err}`));
  });
}
document.addEventListener("click", (e) => { if (!e.target.closest(".menu")) $("export-menu").hidden = true; });

// -- resizable panes ------------------------------------------------------------------------------------

$("vsplit").addEventListener("pointerdown", (event) => {
  event.preventDefault();
  const main = $("main");
  const move = (e) => {
    const box = main.getBoundingClientRect();
    const pct = Math.min(80, Math.max(20, ((e.clientX - box.left) / box.width) * 100));
    main.style.setProperty("--left", `${pct}%`);
  };
  const up = () => { window.removeEventListener("pointermove", move); window.removeEventListener("pointerup", up); };
  window.addEventListener("pointermove", move);
  window.addEventListener("pointerup", up);
});
for (const split of document.querySelectorAll(".hsplit")) {
  split.addEventListener("pointerdown", (event) => {
    event.preventDefault();
    const [a, b] = split.dataset.between.split(" ").map((s) => document.querySelector(`.editor[data-source='${s}']`));
    const total = a.getBoundingClientRect().height + b.getBoundingClientRect().height;
    const top = a.getBoundingClientRect().top;
    const grows = a.style.flexGrow && b.style.flexGrow ? Number(a.style.flexGrow) + Number(b.style.flexGrow) : 2;
    const move = (e) => {
      const share = Math.min(0.9, Math.max(0.1, (e.clientY - top) / total));
      a.style.flexGrow = String(share * grows); b.style.flexGrow = String((1 - share) * grows);
    };
    const up = () => { window.removeEventListener("pointermove", move); window.removeEventListener("pointerup", up); };
    window.addEventListener("pointermove", move);
    window.addEventListener("pointerup", up);
  });
}

// -- start: the shared link, else the last edits, else the first example -----------------------------

async function start() {
  const examples = await loadExamples().catch((err) => { setStatus(`could not list examples: ${err}`); return []; });
  const shared = location.hash.startsWith("#trio=") ? location.hash.slice(6) : null;
  let trio = null;
  if (shared) {
    try { trio = decodeTrio(shared); } catch (err) { setStatus(`the link's trio could not be read: ${err.message}`); }
  }
  if (!trio) {
    try { trio = JSON.parse(localStorage.getItem(STORAGE_KEY) || "null"); } catch { trio = null; }
  }
  if (trio && SOURCES.some((s) => trio[s])) {
    loadTrio(trio, { name: trio.name || "diagram" });
    setStatus(shared ? "opened the shared trio" : "restored your last edits");
    render();
  } else if (examples.length) {
    $("example").value = examples[0].name;
    loadExample(examples[0].name);
  }
}
start();

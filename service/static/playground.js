// The playground: edit a trio, POST it to /diagrams, show the SVG, timings and located errors.
// Plain browser JavaScript, no build step, no third-party code.
"use strict";

const SOURCES = ["domain", "substance", "style"];
const $ = (id) => document.getElementById(id);
const editor = (source) => $(source);
const gutterOf = (source) => editor(source).parentElement.querySelector(".gutter");
let badLines = { domain: new Set(), substance: new Set(), style: new Set() };
let currentSvgUrl = null;

function drawGutter(source) {
  const lines = editor(source).value.split("\n").length;
  const gutter = gutterOf(source);
  gutter.replaceChildren();
  for (let i = 1; i <= lines; i++) {
    const span = document.createElement("span");
    span.textContent = String(i);
    if (badLines[source].has(i)) span.className = "bad";
    gutter.append(span, "\n");
  }
  gutter.scrollTop = editor(source).scrollTop;
}

function setStatus(text) { $("status").textContent = text; }

function clearErrors() {
  badLines = { domain: new Set(), substance: new Set(), style: new Set() };
  $("errors").hidden = true;
  $("errors").replaceChildren();
  SOURCES.forEach(drawGutter);
}

function goTo(source, line, column) {
  const area = editor(source);
  const lines = area.value.split("\n");
  let offset = 0;
  for (let i = 0; i < Math.min(line - 1, lines.length); i++) offset += lines[i].length + 1;
  offset += Math.max(0, column - 1);
  area.focus();
  area.setSelectionRange(offset, offset);
}

function showErrors(body) {
  const box = $("errors");
  box.replaceChildren();
  const diagnostics = body.diagnostics || [];
  if (diagnostics.length === 0) box.append(body.message || "error");
  for (const d of diagnostics) {
    badLines[d.source].add(d.line);
    const link = document.createElement("a");
    link.className = "diagnostic";
    link.textContent = `${d.source}:${d.line}:${d.column}: ${d.message}`;
    link.addEventListener("click", () => goTo(d.source, d.line, d.column));
    const excerpt = document.createElement("div");
    excerpt.textContent = d.excerpt || "";
    box.append(link, excerpt);
  }
  box.hidden = false;
  SOURCES.forEach(drawGutter);
}

function showTimings(report) {
  const body = $("timings").querySelector("tbody");
  body.replaceChildren();
  const rows = [
    ["status", report.status],
    ["energy", report.energy === null ? "–" : report.energy.toPrecision(4)],
    ["iterations", report.iterations],
    ...Object.entries(report.timings).map(([k, v]) => [`${k} (ms)`, v.toFixed(1)]),
    ["cached", report.resultCached ? "whole result" : report.cacheHit ? "compiled energy" : "no"],
  ];
  if (report.warnings.length) rows.push(["warnings", report.warnings.join("\n")]);
  for (const [k, v] of rows) {
    const tr = document.createElement("tr");
    const a = document.createElement("td");
    const b = document.createElement("td");
    a.textContent = k;
    b.textContent = String(v);
    tr.append(a, b);
    body.append(tr);
  }
  $("timings").hidden = false;
}

function showSvg(svg) {
  // An <img> shows the SVG without running anything it might contain.
  if (currentSvgUrl) URL.revokeObjectURL(currentSvgUrl);
  currentSvgUrl = URL.createObjectURL(new Blob([svg], { type: "image/svg+xml" }));
  const img = document.createElement("img");
  img.alt = "rendered diagram";
  img.src = currentSvgUrl;
  $("diagram").replaceChildren(img);
}

async function render() {
  clearErrors();
  setStatus("rendering…");
  $("render").disabled = true;
  const request = {
    domain: editor("domain").value,
    substance: editor("substance").value,
    style: editor("style").value,
    variation: $("variation").value,
  };
  const t0 = performance.now();
  try {
    const response = await fetch("/diagrams", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(request),
    });
    const body = await response.json();
    const seconds = ((performance.now() - t0) / 1000).toFixed(2);
    if (response.ok) {
      showSvg(body.svg);
      showTimings(body);
      setStatus(`rendered in ${seconds} s`);
    } else {
      showErrors(body);
      setStatus(`error ${response.status} (${body.error})`);
    }
  } catch (err) {
    showErrors({ message: `request failed: ${err}` });
    setStatus("request failed");
  } finally {
    $("render").disabled = false;
  }
}

function loadTrio(trio) {
  for (const s of SOURCES) {
    const text = Array.isArray(trio[s]) ? trio[s].join("\n") : trio[s];
    editor(s).value = text || "";
  }
  $("variation").value = trio.variation || "";
  clearErrors();
}

async function loadExamples() {
  const list = await (await fetch("/examples")).json();
  for (const ex of list) {
    const option = document.createElement("option");
    option.value = ex.name;
    option.textContent = ex.title;
    $("example").append(option);
  }
}

$("example").addEventListener("change", async (event) => {
  const name = event.target.value;
  if (!name) return;
  const response = await fetch(`/examples/${encodeURIComponent(name)}`);
  if (response.ok) {
    loadTrio(await response.json());
    setStatus(`loaded example ${name}`);
  }
});

$("paste").addEventListener("click", () => {
  $("paste-error").textContent = "";
  $("paste-dialog").showModal();
});

$("paste-ok").addEventListener("click", (event) => {
  try {
    const trio = JSON.parse($("paste-text").value);
    if (typeof trio !== "object" || trio === null) throw new Error("expected a JSON object");
    loadTrio(trio);
  } catch (err) {
    event.preventDefault();
    $("paste-error").textContent = String(err);
  }
});

$("render").addEventListener("click", render);
document.addEventListener("keydown", (event) => {
  if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
    event.preventDefault();
    render();
  }
});

for (const s of SOURCES) {
  editor(s).addEventListener("input", () => drawGutter(s));
  editor(s).addEventListener("scroll", () => { gutterOf(s).scrollTop = editor(s).scrollTop; });
  drawGutter(s);
}
loadExamples().catch((err) => setStatus(`could not list examples: ${err}`));

// Run one Penrose trio with Penrose's published @penrose/core and print one JSON row.
//
//   node run.mjs [TRIO.json]        (the trio is read from standard input when no file is given)
//
// Input: {key?, domain, substance, style, variation, excludeWarnings?, baseDir?, textSizes?} with
// program texts; images named by the Style resolve against baseDir (the trio file's folder);
// textSizes, [{font, text, width, ascent, descent}], are Text label sizes to use instead of measuring
// (keyed by the canvas font rule Penrose sets; the row counts them in `givenTextSizes`).
// Output: the last line of standard output is one JSON object with the fields of
// ../../shared/penrose-reference/results.jsonl (status, compileMs, optimizeMs, optFirstGradMs,
// nGradEvals, gradEvalWarmMs, renderMs, totalMs, sizes, optimizer state, energies, violations) and
// the diagram as "svg". Everything Penrose itself prints goes to standard error.
// Timings use performance.now(): compile = compile() (parse, check, label measurement, gradient
// built), optimize = optimize() over all layout stages (its first energy+gradient call, where the
// engine finishes preparing the WebAssembly, is also reported alone), render = toSVG + serialize.

import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { JSDOM } from "jsdom";
import { FontBook, installCanvasStandIn } from "./measure_text.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const VIOLATION_TOLERANCE = 1e-3; // a constraint counts as violated above this (as in the reference)
const WARM_REPEATS = 11; // warm energy+gradient evaluations timed; their median is reported

// Penrose logs through console; keep standard output for the row alone.
const writeRow = (row) => process.stdout.write(`${JSON.stringify(row)}\n`);
console.log = console.info = console.debug = console.warn = console.error;

function installDom(textSizes) {
  const dom = new JSDOM("<!doctype html><html><head></head><body></body></html>", { pretendToBeVisual: true });
  const { window } = dom;
  for (const name of ["window", "document", "DOMParser", "XMLSerializer", "Node", "Element",
    "HTMLElement", "SVGElement", "SVGSVGElement", "HTMLCanvasElement", "DocumentFragment", "getComputedStyle"]) {
    if (!(name in globalThis) || name === "window" || name === "document") {
      globalThis[name] = name === "window" ? window : window[name];
    }
  }
  const fontDirs = [
    process.env.PENROSE_RUNNER_FONT_DIR,
    path.resolve(HERE, "..", "..", "energies", "fonts"), // the DejaVu fonts our own pipeline ships
    "/usr/share/fonts/truetype/dejavu",
  ].filter(Boolean);
  const book = new FontBook(fontDirs, textSizes ?? []);
  installCanvasStandIn(window, book);
  return book;
}

async function readTrio() {
  const file = process.argv[2];
  let text = "";
  if (file) text = await readFile(file, "utf8");
  else for await (const chunk of process.stdin) text += chunk;
  const trio = JSON.parse(text);
  for (const field of ["domain", "substance", "style"]) {
    if (typeof trio[field] !== "string") throw new Error(`trio field ${field} must be a string`);
  }
  return trio;
}

function pathResolver(baseDir) {
  return async (href) => {
    if (!baseDir || /^[a-z]+:/i.test(href)) return undefined; // no network: URLs stay unresolved
    try {
      return await readFile(path.resolve(baseDir, href), "utf8");
    } catch {
      return undefined;
    }
  };
}

/** The state's gradient, wrapped to count calls and time the first. */
function instrument(state, counter) {
  const inner = state.gradient;
  const gradient = (...args) => {
    if (!counter.counting) return inner(...args);
    const start = performance.now();
    const out = inner(...args);
    if (counter.calls === 0) counter.firstMs = performance.now() - start;
    counter.calls += 1;
    return out;
  };
  return { ...state, gradient };
}

/** Every constraint's value at the state's point, also those outside the current (last) stage. */
function allConstraintValues(state) {
  const stage = state.optStages[state.currentStageIndex];
  const masks = state.constraintSets.get(stage);
  const everything = { ...masks, constrMask: masks.constrMask.map(() => true) };
  const x = new Float64Array(state.varyingValues);
  return state.gradient(everything, x, state.params.weight, new Float64Array(x.length)).constraints;
}

/** The largest value, at least 0 (a masked-out constraint counts as 0, as in the reference). */
function maxOrZero(values) {
  return values.reduce((a, b) => (b > a || Number.isNaN(b) ? b : a), 0);
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function describeFailure(penrose, error) {
  try {
    return penrose.showError(error);
  } catch {
    return String(error?.message ?? error);
  }
}

async function main() {
  const trio = await readTrio();
  const book = installDom(trio.textSizes);
  const penrose = await import("@penrose/core"); // after the DOM exists: MathJax looks for it
  const row = { status: "ok", error: null, variation: trio.variation ?? "" };
  const program = {
    domain: trio.domain,
    substance: trio.substance,
    style: trio.style,
    variation: trio.variation ?? "",
    excludeWarnings: trio.excludeWarnings ?? [],
  };

  let start = performance.now();
  let compiled;
  try {
    compiled = await penrose.compile(program);
  } catch (error) {
    compiled = { isErr: () => true, error: String(error?.stack ?? error) };
  }
  row.compileMs = performance.now() - start;
  if (compiled.isErr()) {
    const error = typeof compiled.error === "string" ? compiled.error : describeFailure(penrose, compiled.error);
    return { ...row, status: "compile-error", error, totalMs: row.compileMs };
  }
  const counter = { calls: 0, firstMs: null, counting: true };
  const initial = instrument(compiled.value, counter);
  Object.assign(row, {
    nConstraints: initial.constrFns.length,
    nObjectives: initial.objFns.length,
    nVarying: initial.varyingValues.length,
    nShapes: initial.shapes.length,
    optStages: initial.optStages,
  });

  start = performance.now();
  let optimized;
  try {
    optimized = penrose.optimize(initial);
  } catch (error) {
    optimized = { isErr: () => true, error: String(error?.stack ?? error) };
  }
  row.optimizeMs = performance.now() - start;
  counter.counting = false;
  row.optFirstGradMs = counter.firstMs;
  row.nGradEvals = counter.calls;
  if (optimized.isErr()) {
    const error = typeof optimized.error === "string" ? optimized.error : describeFailure(penrose, optimized.error);
    return { ...row, status: "optimize-error", error, totalMs: row.compileMs + row.optimizeMs };
  }
  const state = optimized.value;

  start = performance.now();
  // The reference named each diagram after its key ("a/b" -> "a_b"); ids in the SVG carry it.
  const namespace = (trio.key ?? "").replaceAll("/", "_");
  const svgElement = await penrose.toSVG(state, pathResolver(trio.baseDir), namespace);
  const svg = svgElement.outerHTML;
  row.renderMs = performance.now() - start;
  row.totalMs = row.compileMs + row.optimizeMs + row.renderMs;

  const warm = [];
  for (let i = 0; i < WARM_REPEATS; i++) {
    const t = performance.now();
    penrose.evalEnergy(state);
    warm.push(performance.now() - t);
  }
  row.gradEvalWarmMs = median(warm);
  // As in the reference: constraints of the last stage (the others evaluate to 0 under its mask).
  const constraints = penrose.evalFns(state).constrEngs;
  const everyConstraint = allConstraintValues(state);
  const energy = penrose.evalEnergy(state);
  Object.assign(row, {
    optStatus: state.params.optStatus,
    EProunds: state.params.EPround,
    energyInitial: penrose.evalEnergy(initial),
    energy,
    maxConstrViolation: maxOrZero(constraints),
    nViolated: constraints.filter((c) => c > VIOLATION_TOLERANCE).length,
    // Penrose's optimizer study (PR #1900) calls a sample a success when this is below 0.1.
    constraintSum: constraints.reduce((sum, c) => sum + Math.max(c, 0) ** 2, 0),
    maxConstrViolationAllStages: maxOrZero(everyConstraint),
    nViolatedAllStages: everyConstraint.filter((c) => c > VIOLATION_TOLERANCE).length,
    nan: [energy, ...state.varyingValues, ...constraints].some((v) => !Number.isFinite(v)),
    svgBytes: Buffer.byteLength(svg, "utf8"),
    approximateTextMeasurements: book.approximated,
    givenTextSizes: book.given,
    svg,
  });
  return row;
}

try {
  writeRow(await main());
} catch (error) {
  // A bug here or in Penrose outside compile/optimize (rendering, DOM): say so and exit non-zero.
  writeRow({ status: "crash", error: String(error?.stack ?? error) });
  process.exitCode = 1;
}

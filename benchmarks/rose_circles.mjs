// The circles energy of energy_circles.py built with Rose (npm `rose`) the way Penrose builds its
// energies: one Rose function per goal kind (`disjoint`, `onCanvas`, `minimal`, and Penrose's
// `penalty` max(g, 0)²), an energy function that calls them once per goal instance, its gradient by
// `vjp`, and the whole compiled to WebAssembly by `compile`; evaluated from JS as Penrose does.
//
//   echo '{"n": 50, "x": [...], "canvas": [800, 700], "weight": 1000, "pad": 1, "repeat": 100}' \
//     | node benchmarks/rose_circles.mjs
//
// x holds the 3n unknowns (c0.x, c0.y, c0.r, c1.x, ...). Prints one JSON line:
//   {n, build_ms, fn_ms, compile_ms, us, cold_us, energy, grad?, grad_sum, grad_abs_sum} (the full
//   gradient when n <= 200), or
//   {n, stage, error, ms} when Rose or V8 fails (ms: time spent until the failure).
// Build = fn construction + vjp + compile (Rust-side codegen, then V8's WebAssembly.compile and
// instantiate). A tiny problem is built first so that the process's one-time costs (loading
// Rose's own WebAssembly, warming its JS glue) are not counted, as in energy_circles.py.
// Unlike Penrose's library, whose onCanvas adds the four edge hinges before squaring, the onCanvas
// here returns the four edge values and each is penalized, to match numpy_energy exactly.

import { createRequire } from "node:module";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";

// Rose is installed with the Penrose runner; resolve it from there, not from this folder.
const require = createRequire(new URL("../registry/penrose_runner/package.json", import.meta.url));
const rose = await import(pathToFileURL(require.resolve("rose")).href);
const { Real, Vec, add, compile, fn, gt, mul, select, sqrt, sub, vjp } = rose;

// V8 first runs WebAssembly from its baseline compiler (Liftoff) and recompiles hot functions with
// TurboFan in the background; the first few hundred calls are several times slower. `us` is timed
// after this warm-up (an optimizer makes thousands of calls), `cold_us` right after the build.
const WARM_CALLS = 2000;
const WARM_MS = 1000;

const Circle = { x: Real, y: Real, r: Real };
const max = (a, b) => select(gt(a, b), Real, a, b); // as Penrose's builtins define it

const penalty = fn([Real], Real, (g) => {
  const h = max(g, 0);
  return mul(h, h);
});
const disjoint = fn([Circle, Circle, Real], Real, (a, b, pad) => {
  const dx = sub(a.x, b.x);
  const dy = sub(a.y, b.y);
  return sub(add(add(a.r, b.r), pad), sqrt(add(mul(dx, dx), mul(dy, dy))));
});
// How far each edge of the circle's box is past the canvas edge (x right, x left, y top, y bottom).
const onCanvas = fn([Circle, Real, Real], Vec(4, Real), (s, width, height) => {
  const hw = mul(width, 0.5);
  const hh = mul(height, 0.5);
  return [
    sub(add(s.x, s.r), hw),
    sub(sub(s.r, s.x), hw),
    sub(add(s.y, s.r), hh),
    sub(sub(s.r, s.y), hh),
  ];
});
const minimal = fn([Real], Real, (r) => r);

/** Penrose's `sum`: a chain of additions, one per term. */
const chain = (terms) => terms.reduce((acc, t) => add(acc, t));

/** The compiled value-and-gradient function for n circles (Penrose's `problem` shape), and the
 * milliseconds spent constructing the functions (with the vjp) and compiling them. */
const build = async (n, [width, height], pad) => {
  const t0 = performance.now();
  const basic = fn([{ inputs: Vec(3 * n, Real), weight: Real }], Real, ({ inputs, weight }) => {
    const circles = [];
    for (let k = 0; k < n; k++) circles.push({ x: inputs[3 * k], y: inputs[3 * k + 1], r: inputs[3 * k + 2] });
    const objectives = circles.map((c) => minimal(c.r));
    const penalties = [];
    for (let a = 0; a < n; a++) {
      for (let b = a + 1; b < n; b++) penalties.push(penalty(disjoint(circles[a], circles[b], pad)));
    }
    for (const c of circles) {
      const edges = onCanvas(c, width, height);
      for (let e = 0; e < 4; e++) penalties.push(penalty(edges[e]));
    }
    return add(chain(objectives), mul(weight, chain(penalties)));
  });
  const full = fn([Vec(3 * n, Real), Real], { phi: Real, gradient: Vec(3 * n, Real) }, (v, weight) => {
    const { ret, grad } = vjp(basic)({ inputs: v, weight });
    return { phi: ret, gradient: grad(1).inputs };
  });
  const t1 = performance.now();
  const f = await compile(full);
  return { f, fnMs: t1 - t0, compileMs: performance.now() - t1 };
};

/** Median over samples of 20 calls, in µs per call, as `timed` in energy_circles.py. */
const timed = (f, repeat) => {
  const samples = [];
  for (let s = 0; s < Math.max(3, Math.floor(repeat / 20)); s++) {
    const t = performance.now();
    for (let i = 0; i < 20; i++) f();
    samples.push((performance.now() - t) / 20);
  }
  samples.sort((a, b) => a - b);
  const m = samples.length;
  const median = m % 2 ? samples[(m - 1) / 2] : (samples[m / 2 - 1] + samples[m / 2]) / 2;
  return median * 1e3;
};

const readStdin = async () => {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
};

const main = async () => {
  const { n, x, canvas, weight, pad, repeat } = await readStdin();
  if (x.length !== 3 * n) throw Error(`expected ${3 * n} unknowns, got ${x.length}`);
  await build(2, canvas, pad); // one-time costs, as the tiny problem in energy_circles.py
  let stage = "build";
  const t0 = performance.now();
  try {
    const { f, fnMs, compileMs } = await build(n, canvas, pad);
    stage = "evaluate";
    const xs = Float64Array.from(x);
    const call = () => f(Array.from(xs), weight); // as Penrose calls it
    const { phi, gradient } = call();
    if (!Number.isFinite(phi) || !gradient.every(Number.isFinite)) throw Error("non-finite energy or gradient");
    const coldUs = timed(call, repeat);
    const warm = performance.now();
    for (let i = 0; i < WARM_CALLS || performance.now() - warm < WARM_MS; i++) call();
    const us = timed(call, repeat);
    const out = { n, build_ms: fnMs + compileMs, fn_ms: fnMs, compile_ms: compileMs, us, cold_us: coldUs, energy: phi };
    if (n <= 200) out.grad = gradient;
    out.grad_sum = gradient.reduce((a, b) => a + b, 0);
    out.grad_abs_sum = gradient.reduce((a, b) => a + Math.abs(b), 0);
    console.log(JSON.stringify(out));
  } catch (e) {
    const ms = performance.now() - t0;
    console.log(JSON.stringify({ n, stage, error: `${e?.name ?? "Error"}: ${e?.message ?? e}`, ms }));
  }
};

await main();

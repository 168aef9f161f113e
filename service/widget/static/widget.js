// The diagram widget's frontend (anywidget): draws the kernel's SVG and drags its shapes.
//
// A shape is the SVG element with a <title> child naming it (service/render/svg.py). Pointer
// positions are mapped into the SVG's user units (its viewBox is the canvas) with the inverse of
// getScreenCTM, so the drag is right at any zoom; y is flipped to Penrose's (up). While the kernel
// re-optimizes, the dragged element follows the pointer by a transform (relative to the move whose
// layout is drawn); the next move is sent only when the kernel has answered the last one
// ("settled"), keeping the newest move.

function titleOf(el) {
  for (const child of el.children) if (child.tagName.toLowerCase() === "title") return child.textContent;
  return null;
}

function render({ model, el }) {
  const box = document.createElement("div");
  box.className = "penrose-widget";
  const status = document.createElement("div");
  status.className = "penrose-widget-status";
  el.append(box, status);

  let drag = null; // {name, element, start: {x, y}, shown: the offset of the layout drawn, begin}
  let pending = null; // the newest move not yet sent
  let waiting = false; // a move is with the kernel
  let seq = 0;

  function draw() {
    box.innerHTML = model.get("svg");
    status.textContent = model.get("status");
    const names = new Set(model.get("draggable"));
    for (const t of box.querySelectorAll("title")) {
      if (!names.has(t.textContent)) continue;
      t.parentElement.classList.add("penrose-draggable");
      if (drag !== null && t.textContent === drag.name) drag.element = t.parentElement;
    }
  }

  function follow(dx, dy) {
    const s = drag.shown;
    drag.element.setAttribute("transform", `translate(${dx - s.dx} ${s.dy - dy})`);
  }

  function point(evt) {
    const svg = box.querySelector("svg");
    const p = new DOMPoint(evt.clientX, evt.clientY).matrixTransform(svg.getScreenCTM().inverse());
    return { x: p.x, y: -p.y };
  }

  function flush() {
    if (waiting || pending === null) return;
    model.send(pending);
    pending = null;
    waiting = true;
  }

  function onDown(evt) {
    const names = new Set(model.get("draggable"));
    for (let e = evt.target; e && e !== box; e = e.parentElement) {
      const name = titleOf(e);
      if (name !== null && names.has(name)) {
        const start = point(evt);
        drag = { name, element: e, start, shown: { dx: 0, dy: 0 }, begin: true, moves: {} };
        box.setPointerCapture(evt.pointerId);
        evt.preventDefault();
        return;
      }
    }
  }

  function onMove(evt) {
    if (drag === null) return;
    const p = point(evt);
    const dx = p.x - drag.start.x;
    const dy = p.y - drag.start.y;
    follow(dx, dy);
    pending = { type: "drag", shape: drag.name, dx, dy, begin: drag.begin, seq: ++seq };
    drag.moves[seq] = { dx, dy };
    drag.begin = false;
    flush();
  }

  function onUp(evt) {
    if (drag === null) return;
    onMove(evt);
    drag = null;
  }

  function onMessage(msg) {
    if (msg && msg.type === "settled") {
      waiting = false;
      if (drag !== null && drag.moves[msg.seq]) {
        drag.shown = drag.moves[msg.seq]; // the drawn layout has the shape where this move put it
        const last = drag.moves[seq];
        follow(last.dx, last.dy);
      }
      flush();
    }
  }

  box.addEventListener("pointerdown", onDown);
  box.addEventListener("pointermove", onMove);
  box.addEventListener("pointerup", onUp);
  model.on("msg:custom", onMessage);
  model.on("change:svg", draw);
  model.on("change:status", () => (status.textContent = model.get("status")));
  draw();
  return () => {
    model.off("msg:custom", onMessage);
    model.off("change:svg", draw);
  };
}

export default { render };

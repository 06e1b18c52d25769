// ptm viewer: our own front end (no third-party code).
// Receives py_trees_js-style snapshots over Server-Sent Events (/events) and draws the tree
// (top-down or left-to-right, whichever shows more of it), the blackboard, the activity log and
// a timeline to scrub back through ticks.
//
// Fitting: the tree opens whole in view at a readable size. "Fit" (and the first snapshot) picks
// the orientation with the larger scale; while that scale is below MIN_ZOOM (node names under
// 10 px) it collapses the deepest expanded subtree and tries again; the zoom never goes below
// MIN_ZOOM (a tree still too big is then shown from its root; pan to see the rest). Pan: drag
// the background; zoom: the wheel (around the pointer) or the + / - buttons.
"use strict";

(function () {
  const NODE_W = 160, NODE_H = 58;
  const GAP = { td: { breadth: 18, depth: 44 }, lr: { breadth: 10, depth: 48 } };
  const MARGIN = 16;
  const MIN_ZOOM = 10 / 13, MAX_ZOOM = 2.5; // node names are 13 px at zoom 1
  const ACTIVITY_MAX = 200;

  const state = {
    snaps: [],          // {seq, snap} in sequence order
    index: -1,          // index into snaps shown
    live: true,         // follow the newest snapshot
    mode: "connecting", // live | replay (from server meta)
    ended: false,
    summary: null,
    collapsed: new Set(),
    orientation: "td",  // td: top-down, lr: left-to-right
    zoom: 1,
    pan: { x: MARGIN, y: MARGIN },
    fitted: false,      // fitted to the first snapshot yet
    selected: null,     // behaviour id
    events: [],
    renderQueued: false,
  };

  const $ = (sel) => document.querySelector(sel);
  const treeEl = $("#tree"), edgesEl = $("#edges"), timeline = $("#timeline");
  const nodeEls = new Map(); // id -> element

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    if (attrs) for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function current() {
    return state.index >= 0 && state.index < state.snaps.length ? state.snaps[state.index].snap : null;
  }

  // ---------------------------------------------------------------- layout (tidy)
  // Leaves take consecutive slots along the breadth axis; a parent sits at the middle of its
  // children; depth is the level. top-down: x = breadth, y = depth; left-to-right: the other way.
  function layout(snap, orientation, collapsed) {
    const o = orientation || state.orientation;
    const hidden = collapsed || state.collapsed;
    const td = o === "td";
    const bStep = (td ? NODE_W : NODE_H) + GAP[o].breadth;
    const dStep = (td ? NODE_H : NODE_W) + GAP[o].depth;
    const pos = new Map();
    let next = 0, maxDepth = 0;
    function place(id, depth) {
      const b = snap.behaviours[id];
      if (!b) return null;
      const kids = hidden.has(id) ? [] : (b.children || []).filter((c) => snap.behaviours[c]);
      let at;
      if (kids.length === 0) {
        at = next;
        next += bStep;
      } else {
        const xs = kids.map((c) => place(c, depth + 1));
        at = (xs[0] + xs[xs.length - 1]) / 2;
      }
      maxDepth = Math.max(maxDepth, depth);
      pos.set(id, td ? { x: at, y: depth * dStep } : { x: depth * dStep, y: at });
      return at;
    }
    if (snap.root) place(snap.root, 0);
    const breadth = Math.max(0, next - GAP[o].breadth);
    const depthSize = maxDepth * dStep + (td ? NODE_H : NODE_W);
    pos.width = td ? breadth : depthSize;
    pos.height = td ? depthSize : breadth;
    return pos;
  }

  // ---------------------------------------------------------------- fit, pan and zoom
  const pane = () => $("#tree-scroll");

  function applyTransform() {
    treeEl.style.transform = `translate(${state.pan.x}px, ${state.pan.y}px) scale(${state.zoom})`;
  }

  function fitScale(pos) {
    const p = pane();
    const w = Math.max(1, p.clientWidth - 2 * MARGIN), h = Math.max(1, p.clientHeight - 2 * MARGIN);
    return Math.min(1, w / Math.max(1, pos.width), h / Math.max(1, pos.height));
  }

  function depthOf(snap, id) {
    let d = 0;
    for (let b = snap.behaviours[id]; b && b.parent; b = snap.behaviours[b.parent]) d += 1;
    return d;
  }

  // Collapse deepest subtrees until the whole tree fits at a readable zoom; then centre it.
  function fit() {
    const snap = current();
    if (!snap) return;
    state.collapsed.clear();
    const composites = Object.values(snap.behaviours)
      .filter((b) => (b.children || []).length && b.id !== snap.root)
      .sort((a, b) => depthOf(snap, b.id) - depthOf(snap, a.id) || (b.children.length - a.children.length));
    let best = null;
    for (let i = 0; ; i++) {
      for (const o of ["td", "lr"]) {
        const pos = layout(snap, o, state.collapsed);
        const scale = fitScale(pos);
        if (!best || scale > best.scale + 1e-9) best = { o, pos, scale };
      }
      if (best.scale >= MIN_ZOOM || i >= composites.length) break;
      // the deepest expanded composite that is not inside an already collapsed one
      const next = composites.find((b) => !state.collapsed.has(b.id) && !hasCollapsedAncestor(snap, b.id));
      if (!next) break;
      state.collapsed.add(next.id);
      best = null;
    }
    state.orientation = best.o;
    state.zoom = Math.max(MIN_ZOOM, best.scale);
    const p = pane();
    const w = best.pos.width * state.zoom, h = best.pos.height * state.zoom;
    state.pan = {
      x: w <= p.clientWidth - 2 * MARGIN ? (p.clientWidth - w) / 2 : MARGIN,
      y: h <= p.clientHeight - 2 * MARGIN ? (p.clientHeight - h) / 2 : MARGIN,
    };
    if (w > p.clientWidth - 2 * MARGIN && best.o === "td") {
      // too wide even so: show the root and its first children (pan for the rest)
      const r = best.pos.get(snap.root);
      state.pan.x = Math.min(MARGIN, p.clientWidth / 2 - (r.x + NODE_W / 2) * state.zoom);
    }
    state.fitted = true;
    applyTransform();
    queueRender();
  }

  function hasCollapsedAncestor(snap, id) {
    for (let b = snap.behaviours[id]; b && b.parent; b = snap.behaviours[b.parent]) {
      if (state.collapsed.has(b.parent)) return true;
    }
    return false;
  }

  function zoomAt(factor, cx, cy) {
    const z = Math.min(MAX_ZOOM, Math.max(0.2, state.zoom * factor));
    const k = z / state.zoom;
    state.pan.x = cx - (cx - state.pan.x) * k;
    state.pan.y = cy - (cy - state.pan.y) * k;
    state.zoom = z;
    applyTransform();
  }

  function countHidden(snap, id) {
    let n = 0;
    const stack = [...(snap.behaviours[id].children || [])];
    while (stack.length) {
      const b = snap.behaviours[stack.pop()];
      if (!b) continue;
      n += 1;
      stack.push(...(b.children || []));
    }
    return n;
  }

  function tooltip(b) {
    const lines = [
      `${b.name} (${b.type || b.data && b.data.Type || "Behaviour"})`,
      `status: ${b.status}${b.visited ? " (visited)" : ""}`,
      `class: ${b.class_name || (b.data && b.data.Class) || ""}`,
      `id: ${b.id}`,
    ];
    if (b.details) lines.push(`feedback: ${b.details}`);
    const params = b.parameters || (b.data && b.data.Parameters) || {};
    for (const [k, v] of Object.entries(params)) lines.push(`${k}: ${withUnit(v, (b.units || {})[k])}`);
    return lines.join("\n");
  }

  // A parameter value with its declared unit: 0.05 m/s, [0, 0, 0.1] m, "{object_pose}".
  function withUnit(v, unit) {
    const text = typeof v === "string" ? v : JSON.stringify(v);
    return unit && (typeof v === "number" || Array.isArray(v)) ? `${text} ${unit}` : text;
  }

  // ---------------------------------------------------------------- tree rendering
  function renderTree(snap) {
    const pos = layout(snap);
    const seen = new Set();
    let maxX = 0, maxY = 0;
    for (const [id, p] of pos) {
      const b = snap.behaviours[id];
      seen.add(id);
      let n = nodeEls.get(id);
      if (!n) {
        n = el("div", { class: "node", "data-node-id": id });
        n.appendChild(el("div", { class: "stripe" }));
        n.appendChild(el("div", { class: "name" }));
        n.appendChild(el("div", { class: "type" }));
        n.appendChild(el("div", { class: "feedback" }));
        n.appendChild(el("span", { class: "badge" }));
        const t = el("span", { class: "toggle", title: "collapse / expand subtree" });
        t.addEventListener("click", (ev) => { ev.stopPropagation(); toggle(id); });
        n.appendChild(t);
        n.addEventListener("click", () => select(id));
        n.addEventListener("dblclick", (ev) => { ev.preventDefault(); toggle(id); });
        treeEl.appendChild(n);
        nodeEls.set(id, n);
      }
      const hasKids = (b.children || []).length > 0;
      const collapsed = state.collapsed.has(id);
      n.style.left = p.x + "px";
      n.style.top = p.y + "px";
      n.dataset.nodeName = b.name;
      n.dataset.status = b.status;
      n.dataset.visited = String(!!b.visited);
      n.dataset.type = b.type || (b.data && b.data.Type) || "Behaviour";
      n.dataset.collapsed = String(hasKids && collapsed);
      n.classList.toggle("selected", state.selected === id);
      n.querySelector(".stripe").style.background = b.colour || "#555555";
      n.querySelector(".name").textContent = b.name;
      const cls = (b.class_name || (b.data && b.data.Class) || "").split(".").pop();
      const typeText = n.dataset.type === cls ? cls : `${n.dataset.type} · ${cls}`;
      n.querySelector(".type").textContent = hasKids && collapsed
        ? `${typeText} (+${countHidden(snap, id)} hidden)` : typeText;
      n.querySelector(".feedback").textContent = b.details || "";
      n.querySelector(".badge").textContent = b.status;
      n.querySelector(".toggle").textContent = hasKids ? (collapsed ? "\u25B8" : "\u25BE") : "";
      n.title = tooltip(b);
      maxX = Math.max(maxX, p.x + NODE_W);
      maxY = Math.max(maxY, p.y + NODE_H);
    }
    for (const [id, n] of nodeEls) {
      if (!seen.has(id)) { n.remove(); nodeEls.delete(id); }
    }
    // edges: parent bottom-centre to child top-centre, coloured by the child's status if visited
    const parts = [];
    for (const [id, p] of pos) {
      const b = snap.behaviours[id];
      if (state.collapsed.has(id)) continue;
      for (const c of b.children || []) {
        const q = pos.get(c);
        if (!q) continue;
        const child = snap.behaviours[c];
        let d;
        if (state.orientation === "td") {
          const x1 = p.x + NODE_W / 2, y1 = p.y + NODE_H, x2 = q.x + NODE_W / 2, y2 = q.y;
          const ym = (y1 + y2) / 2;
          d = `M${x1},${y1} V${ym} H${x2} V${y2}`;
        } else {
          const x1 = p.x + NODE_W, y1 = p.y + NODE_H / 2, x2 = q.x, y2 = q.y + NODE_H / 2;
          const xm = (x1 + x2) / 2;
          d = `M${x1},${y1} H${xm} V${y2} H${x2}`;
        }
        parts.push(`<path d="${d}" data-status="${child.status}"` +
          ` class="${child.visited ? "visited" : ""}"></path>`);
      }
    }
    edgesEl.innerHTML = parts.join("");
    edgesEl.setAttribute("width", maxX);
    edgesEl.setAttribute("height", maxY);
    treeEl.style.width = maxX + "px";
    treeEl.style.height = maxY + "px";
  }

  // ---------------------------------------------------------------- side panels
  function renderDetails(snap) {
    const box = $("#details");
    const b = state.selected && snap.behaviours[state.selected];
    if (!b) return;
    box.innerHTML = "";
    const dl = el("dl");
    const add = (k, v) => { dl.appendChild(el("dt", null, k)); dl.appendChild(el("dd", { "data-field": k }, v)); };
    add("name", b.name);
    add("type", b.type || (b.data && b.data.Type) || "");
    add("class", b.class_name || (b.data && b.data.Class) || "");
    add("status", b.status);
    add("visited", b.visited ? "yes (this tick)" : "no");
    add("feedback", b.details || "");
    add("id", b.id);
    box.appendChild(dl);
    const params = b.parameters || (b.data && b.data.Parameters) || {};
    if (Object.keys(params).length) {
      box.appendChild(el("h3", null, "Parameters"));
      const t = el("table", { id: "parameters" });
      const units = b.units || {};
      for (const [k, v] of Object.entries(params)) {
        const tr = el("tr", { "data-param": k });
        tr.appendChild(el("td", null, k));
        tr.appendChild(el("td", { class: "value" }, withUnit(v, units[k])));
        t.appendChild(tr);
      }
      box.appendChild(t);
    }
    const access = (snap.blackboard && snap.blackboard.behaviours && snap.blackboard.behaviours[b.id]) || {};
    if (Object.keys(access).length) {
      box.appendChild(el("h3", null, "Blackboard access"));
      const t = el("table");
      const names = { r: "read", w: "write", x: "exclusive write" };
      for (const [k, a] of Object.entries(access)) {
        const tr = el("tr");
        tr.appendChild(el("td", null, k));
        tr.appendChild(el("td", null, names[a] || a));
        t.appendChild(tr);
      }
      box.appendChild(t);
    }
  }

  function renderBlackboard(snap) {
    const body = $("#blackboard tbody");
    body.innerHTML = "";
    const bb = snap.blackboard || {};
    const data = bb.data || {};
    const clients = bb.clients || {};
    const touched = new Set((snap.activity_items || [])
      .filter((a) => a.activity_type === "WRITE" || a.activity_type === "INITIALISED").map((a) => a.key));
    const selAccess = (state.selected && bb.behaviours && bb.behaviours[state.selected]) || {};
    for (const key of Object.keys(data).sort()) {
      const tr = el("tr", { "data-key": key });
      if (touched.has(key)) tr.classList.add("touched");
      if (key in selAccess) tr.classList.add("selected-access");
      tr.appendChild(el("td", { class: "key" }, key));
      const v = el("td", { class: "value" }, data[key]);
      if (bb.values && key in bb.values) v.title = JSON.stringify(bb.values[key], null, 1);
      tr.appendChild(v);
      const c = clients[key] || {};
      tr.appendChild(el("td", { class: "readers" }, (c.read || []).join(", ")));
      tr.appendChild(el("td", { class: "writers" }, [...(c.write || []), ...(c.exclusive || [])].join(", ")));
      body.appendChild(tr);
    }
  }

  function renderActivity() {
    const list = $("#activity");
    list.innerHTML = "";
    let n = 0;
    for (let i = state.index; i >= 0 && n < ACTIVITY_MAX; i--) {
      const s = state.snaps[i].snap;
      const acts = s.activity || [];
      for (let j = acts.length - 1; j >= 0 && n < ACTIVITY_MAX; j--, n++) {
        const li = el("li");
        li.appendChild(el("span", { class: "tickno" }, "#" + s.tick));
        const span = el("span");
        span.innerHTML = acts[j]; // produced (HTML-escaped) by py_trees_manipulation.viewer.snapshot
        li.appendChild(span);
        list.appendChild(li);
      }
    }
  }

  function renderEvents(snap) {
    const list = $("#events");
    list.innerHTML = "";
    const t = snap ? snap.timestamp : Infinity;
    for (const e of state.events) {
      if (e.time_s > t + 1e-9) continue;
      const li = el("li");
      li.appendChild(el("span", { class: "tickno" }, Number(e.time_s).toFixed(3) + " s"));
      li.appendChild(document.createTextNode(` ${e.source ? "[" + e.source + "] " : ""}${e.text}`));
      list.appendChild(li);
    }
  }

  function renderChrome(snap) {
    const mode = state.mode === "replay" ? (state.live ? "replay" : "paused")
      : state.ended && state.live ? "ended" : state.live ? "live" : "paused";
    const m = $("#mode");
    m.dataset.mode = mode;
    m.textContent = mode;
    $("#live").classList.toggle("active", state.live);
    timeline.max = String(Math.max(0, state.snaps.length - 1));
    timeline.value = String(Math.max(0, state.index));
    $("#tick-label").textContent = snap
      ? `tick ${snap.tick} · t = ${Number(snap.timestamp).toFixed(3)} s · ${state.index + 1}/${state.snaps.length}`
      : "no ticks yet";
    if (state.summary) {
      const s = state.summary;
      $("#summary").textContent = `run: ${s.status || s.outcome || "?"}` + (s.ticks !== undefined ? `, ${s.ticks} ticks` : "")
        + (s.error ? ` — ${s.error}` : "");
    }
  }

  function render() {
    state.renderQueued = false;
    const snap = current();
    renderChrome(snap);
    if (!snap) return;
    if (!state.fitted) { fit(); return; }
    renderTree(snap);
    renderDetails(snap);
    renderBlackboard(snap);
    renderActivity();
    renderEvents(snap);
  }

  function queueRender() {
    if (!state.renderQueued) {
      state.renderQueued = true;
      requestAnimationFrame(render);
    }
  }

  // ---------------------------------------------------------------- interaction
  function toggle(id) {
    if (state.collapsed.has(id)) state.collapsed.delete(id); else state.collapsed.add(id);
    queueRender();
  }

  function select(id) {
    state.selected = state.selected === id ? null : id;
    if (!state.selected) $("#details").innerHTML = '<p class="hint">Click a behaviour for details.</p>';
    queueRender();
  }

  function show(index, live) {
    state.live = !!live;
    state.index = Math.max(0, Math.min(index, state.snaps.length - 1));
    queueRender();
  }

  timeline.addEventListener("input", () => {
    show(Number(timeline.value), false);
  });
  $("#live").addEventListener("click", () => show(state.snaps.length - 1, true));
  $("#step-back").addEventListener("click", () => show(state.index - 1, false));
  $("#step-forward").addEventListener("click", () => show(state.index + 1, false));
  $("#expand-all").addEventListener("click", () => { state.collapsed.clear(); queueRender(); });
  $("#collapse-all").addEventListener("click", () => {
    const snap = current();
    if (!snap) return;
    for (const [id, b] of Object.entries(snap.behaviours)) {
      if ((b.children || []).length && id !== snap.root) state.collapsed.add(id);
    }
    queueRender();
  });
  $("#fit").addEventListener("click", fit);
  $("#zoom-in").addEventListener("click", () => zoomAt(1.25, pane().clientWidth / 2, pane().clientHeight / 2));
  $("#zoom-out").addEventListener("click", () => zoomAt(0.8, pane().clientWidth / 2, pane().clientHeight / 2));
  $("#orientation").addEventListener("click", () => {
    state.orientation = state.orientation === "td" ? "lr" : "td";
    queueRender();
  });
  pane().addEventListener("wheel", (ev) => {
    ev.preventDefault();
    const r = pane().getBoundingClientRect();
    zoomAt(Math.exp(-ev.deltaY * 0.0015), ev.clientX - r.left, ev.clientY - r.top);
  }, { passive: false });
  let drag = null;
  pane().addEventListener("pointerdown", (ev) => {
    if (ev.button !== 0 || ev.target.closest(".node")) return;
    drag = { x: ev.clientX, y: ev.clientY, px: state.pan.x, py: state.pan.y };
    pane().setPointerCapture(ev.pointerId);
    pane().classList.add("panning");
  });
  pane().addEventListener("pointermove", (ev) => {
    if (!drag) return;
    state.pan.x = drag.px + ev.clientX - drag.x;
    state.pan.y = drag.py + ev.clientY - drag.y;
    applyTransform();
  });
  const endDrag = () => { drag = null; pane().classList.remove("panning"); };
  pane().addEventListener("pointerup", endDrag);
  pane().addEventListener("pointercancel", endDrag);
  const dim = $("#show-unvisited");
  const applyDim = () => treeEl.classList.toggle("dim-unvisited", dim.checked);
  dim.addEventListener("change", applyDim);
  applyDim();
  document.addEventListener("keydown", (ev) => {
    if (ev.target && ev.target.tagName === "INPUT" && ev.target.type !== "range") return;
    if (ev.key === "ArrowLeft") { show(state.index - 1, false); ev.preventDefault(); }
    else if (ev.key === "ArrowRight") { show(state.index + 1, false); ev.preventDefault(); }
    else if (ev.key === "End") { show(state.snaps.length - 1, true); ev.preventDefault(); }
  });

  // ---------------------------------------------------------------- stream
  function addSnapshot(seq, snap) {
    const last = state.snaps.length ? state.snaps[state.snaps.length - 1].seq : -1;
    if (seq <= last) return;
    state.snaps.push({ seq: seq, snap: snap });
    if (state.live) state.index = state.snaps.length - 1;
    queueRender();
  }

  function connect() {
    const last = state.snaps.length ? state.snaps[state.snaps.length - 1].seq : -1;
    const src = new EventSource("events?from=" + (last + 1));
    src.addEventListener("meta", (ev) => {
      const m = JSON.parse(ev.data);
      state.mode = m.mode || "live";
      $("#source").textContent = m.source || "";
      state.events = [];
      queueRender();
    });
    src.addEventListener("snapshot", (ev) => {
      const snap = JSON.parse(ev.data);
      addSnapshot(Number(ev.lastEventId), snap);
    });
    src.addEventListener("runevent", (ev) => { state.events.push(JSON.parse(ev.data)); queueRender(); });
    src.addEventListener("end", (ev) => {
      state.ended = true;
      state.summary = JSON.parse(ev.data);
      src.close();
      queueRender();
    });
    src.onerror = () => {
      if (state.ended) return;
      const m = $("#mode");
      m.dataset.mode = "disconnected";
      m.textContent = "disconnected";
    };
  }

  // Test and scripting hook: read-only view of what the page holds.
  window.ptmViewer = {
    count: () => state.snaps.length,
    index: () => state.index,
    live: () => state.live,
    snapshot: (i) => (i === undefined ? current() : state.snaps[i] && state.snaps[i].snap),
    zoom: () => state.zoom,
    orientation: () => state.orientation,
    collapsed: () => [...state.collapsed],
    fit: fit,
  };

  connect();
})();

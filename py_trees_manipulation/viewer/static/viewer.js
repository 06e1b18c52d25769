// ptm viewer: our own front end (no third-party code).
// Receives py_trees_js-style snapshots over Server-Sent Events (/events) and draws the tree
// top-down, the blackboard, the activity log and a timeline to scrub back through ticks.
"use strict";

(function () {
  const NODE_W = 160, NODE_H = 58, GAP_X = 18, GAP_Y = 44;
  const ACTIVITY_MAX = 200;

  const state = {
    snaps: [],          // {seq, snap} in sequence order
    index: -1,          // index into snaps shown
    live: true,         // follow the newest snapshot
    mode: "connecting", // live | replay (from server meta)
    ended: false,
    summary: null,
    collapsed: new Set(),
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

  // ---------------------------------------------------------------- layout (tidy, top-down)
  function layout(snap) {
    const pos = new Map();
    let nextX = 0;
    function place(id, depth) {
      const b = snap.behaviours[id];
      if (!b) return null;
      const kids = state.collapsed.has(id) ? [] : (b.children || []).filter((c) => snap.behaviours[c]);
      let x;
      if (kids.length === 0) {
        x = nextX;
        nextX += NODE_W + GAP_X;
      } else {
        const xs = kids.map((c) => place(c, depth + 1));
        x = (xs[0] + xs[xs.length - 1]) / 2;
      }
      pos.set(id, { x: x, y: depth * (NODE_H + GAP_Y) });
      return x;
    }
    if (snap.root) place(snap.root, 0);
    return pos;
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
    for (const [k, v] of Object.entries(params)) lines.push(`${k}: ${JSON.stringify(v)}`);
    return lines.join("\n");
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
        const x1 = p.x + NODE_W / 2, y1 = p.y + NODE_H, x2 = q.x + NODE_W / 2, y2 = q.y;
        const ym = (y1 + y2) / 2;
        parts.push(`<path d="M${x1},${y1} V${ym} H${x2} V${y2}" data-status="${child.status}"` +
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
      for (const [k, v] of Object.entries(params)) {
        const tr = el("tr", { "data-param": k });
        tr.appendChild(el("td", null, k));
        tr.appendChild(el("td", null, typeof v === "string" ? v : JSON.stringify(v)));
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
  $("#fit").addEventListener("click", () => {
    const pane = $("#tree-scroll");
    const w = treeEl.offsetWidth, h = treeEl.offsetHeight;
    const s = Math.min(1, (pane.clientWidth - 32) / w, (pane.clientHeight - 32) / h);
    treeEl.style.transform = treeEl.style.transform ? "" : `scale(${s})`;
  });
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
  };

  connect();
})();

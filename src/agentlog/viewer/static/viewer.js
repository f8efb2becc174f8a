// agentlog viewer: the log of one session as a timeline, with its surface overlaid.
// Hand-written, dependency-free, offline. Rows are rendered lazily (only those in view), so
// sessions of 10^5 events open fast. Session data is only ever inserted as text, never as HTML.
(function () {
  "use strict";

  const ROW = 26;
  const raw = JSON.parse(document.getElementById("data").textContent);
  const TYPES = raw.types;
  const E = raw.events; // [typeIndex, time, op, cites, data]; the index is the seq
  const N = E.length;
  const STORED = raw.session.storedEvents;
  const $ = (id) => document.getElementById(id);

  // --- what the log says, derived once ------------------------------------------------------
  const typeOf = (seq) => TYPES[E[seq][0]];
  const dataOf = (seq) => E[seq][4];
  const onSurface = new Uint8Array(N);
  for (const seq of raw.surface) onSurface[seq] = 1;
  const shadowedBy = new Int32Array(N).fill(-1);
  const replaced = new Map(); // replacement seq -> the nodes it shadowed
  for (const [seq, nodes] of raw.replacements) {
    replaced.set(seq, nodes);
    for (const node of nodes) shadowedBy[node] = seq;
  }
  const turnOf = new Int32Array(N);
  const stepOf = new Int32Array(N);
  const callOf = new Map(); // tool call id -> tool/call seq
  const resultsOf = new Map(); // tool call id -> tool/result seqs
  const usage = new Map(); // "turn:step" -> {input, output}
  const typeCounts = new Map();
  {
    let turn = 0, step = 0;
    for (let seq = 0; seq < N; seq++) {
      const type = typeOf(seq), data = dataOf(seq) || {};
      typeCounts.set(type, (typeCounts.get(type) || 0) + 1);
      if (type === "turn/start") { turn = num(data.turn); step = 0; }
      else if (type === "step/start") step = num(data.step);
      turnOf[seq] = turn;
      stepOf[seq] = step;
      if (type === "step/end") step = 0;
      else if (type === "turn/end") { turn = 0; step = 0; }
      if (type === "tool/call" && data.callId !== undefined) callOf.set(data.callId, seq);
      if (type === "tool/result" && data.message) {
        const id = data.message.toolCallId;
        if (!resultsOf.has(id)) resultsOf.set(id, []);
        resultsOf.get(id).push(seq);
      }
      if (type === "assistant/message" && data.usage && typeof data.usage === "object") {
        const key = turnOf[seq] + ":" + stepOf[seq];
        const sum = usage.get(key) || { input: 0, output: 0 };
        sum.input += num(data.usage.inputTokens);
        sum.output += num(data.usage.outputTokens);
        usage.set(key, sum);
      }
    }
  }
  function num(value) { return typeof value === "number" ? value : 0; }

  function severity(seq) {
    const type = typeOf(seq), data = dataOf(seq) || {};
    if (type === "tool/result" && data.message && data.message.isError === true) return "error";
    if (type === "llm/error" || type === "agent/error") return "error";
    if (type === "turn/end" && data.reason && ["error", "aborted", "interrupted"].includes(data.reason.kind)) return "error";
    if (type.startsWith("llm/retry") || type === "assistant/attempt") return "retry";
    return "";
  }

  function messageText(message) {
    const parts = [];
    for (const block of (message && message.content) || []) {
      if (!block || typeof block !== "object") continue;
      if (block.type === "text" || block.type === "reasoning") parts.push(block.text || "");
      else if (block.type === "tool-call") parts.push("→ " + block.name + "(" + block.arguments + ")");
      else if (block.type === "tool-result") parts.push(messageText(block));
      else parts.push("[" + block.type + "]");
    }
    return parts.join(" ");
  }

  function summary(seq) {
    const type = typeOf(seq), data = dataOf(seq);
    if (!data || typeof data !== "object") return "";
    if (type === "user/message") return messageText(data);
    if (data.message && typeof data.message === "object") return messageText(data.message);
    if (type === "turn/start" || type === "turn/end" || type === "step/start" || type === "step/end") {
      let text = "turn " + data.turn + (data.step !== undefined ? " step " + data.step : "");
      if (data.reason && data.reason.kind) text += " (" + data.reason.kind + ")";
      return text;
    }
    if (type === "tool/call") return data.name + "(" + data.arguments + ")";
    if (type === "request/header" && data.header) {
      const tools = (data.header.tools || []).map((t) => t.name).join(", ");
      return data.reason + ": " + (tools || "no tools");
    }
    if (data.compactionId !== undefined) return "compaction " + data.compactionId;
    if (type === "session/end-seed") return data.inherited ? "inherited prefix ends here" : "resumed here";
    const text = JSON.stringify(data);
    return text.length > 200 ? text.slice(0, 200) + "…" : text;
  }

  // --- view state ---------------------------------------------------------------------------
  const state = {
    expanded: new Set(), // replacements whose shadowed nodes are shown under them
    collapsedTurns: new Set(),
    hiddenTypes: new Set(),
    showShadowed: false,
    onlyMatches: false,
    query: "",
    matches: [],
    matchSet: new Set(),
    current: -1,
    selected: -1,
  };
  let rows = []; // [seq, depth] of the rows in display order
  const texts = new Array(N); // lower-cased searchable text, built on the first search

  function buildRows() {
    rows = [];
    const filtered = state.onlyMatches && state.query;
    for (let seq = 0; seq < N; seq++) {
      const type = typeOf(seq);
      if (state.hiddenTypes.has(type)) continue;
      if (filtered && !state.matchSet.has(seq)) continue;
      if (!filtered && shadowedBy[seq] >= 0 && !state.showShadowed) continue;
      if (type !== "turn/start" && state.collapsedTurns.has(turnOf[seq])) continue;
      rows.push([seq, 0]);
      if (!filtered && replaced.has(seq) && state.expanded.has(seq)) pushShadowed(seq, 1);
    }
  }

  function pushShadowed(replacement, depth) {
    for (const node of replaced.get(replacement)) {
      rows.push([node, depth]);
      if (replaced.has(node) && state.expanded.has(node)) pushShadowed(node, depth + 1);
    }
  }

  // --- rendering (only the rows in view) ----------------------------------------------------
  const timeline = $("timeline"), spacer = $("spacer"), rowsEl = $("rows");

  function render() {
    spacer.style.height = rows.length * ROW + "px";
    const top = timeline.scrollTop, height = timeline.clientHeight || 800;
    const first = Math.max(0, Math.floor(top / ROW) - 8);
    const last = Math.min(rows.length, Math.ceil((top + height) / ROW) + 8);
    rowsEl.style.transform = "translateY(" + first * ROW + "px)";
    const fragment = document.createDocumentFragment();
    for (let i = first; i < last; i++) fragment.appendChild(rowElement(rows[i][0], rows[i][1]));
    rowsEl.replaceChildren(fragment);
  }

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function seqLink(seq, label) {
    const link = el("a", "", label === undefined ? "#" + seq : label);
    link.href = "#seq=" + seq;
    return link;
  }

  function rowElement(seq, depth) {
    const type = typeOf(seq), op = E[seq][2];
    const row = el("div", "row");
    row.dataset.seq = seq;
    const classes = [];
    let mark = "·";
    if (onSurface[seq]) { classes.push("on"); mark = "●"; }
    else if (shadowedBy[seq] >= 0) { classes.push("shadowed"); mark = "○"; }
    else if (op === 0) classes.push("log");
    if (seq >= STORED) classes.push("view");
    const level = severity(seq);
    if (level) classes.push(level);
    if (Array.isArray(op)) classes.push("replacement");
    if (depth > 0) classes.push("nested");
    if (type === "turn/start") classes.push("turn-head");
    if (type === "step/start") classes.push("step-head");
    if (state.matchSet.has(seq)) classes.push("hit");
    if (seq === state.selected) classes.push("selected");
    row.classList.add(...classes);
    const indent = depth * 2 + (stepOf[seq] ? 1 : 0) + (turnOf[seq] && type !== "turn/start" ? 1 : 0);

    const seqCell = seqLink(seq, seq >= STORED ? seq + "*" : String(seq));
    seqCell.className = "seq";
    row.appendChild(seqCell);
    row.appendChild(el("span", "mark-cell", mark));
    const pad = el("span", "indent");
    pad.style.width = indent * 12 + "px";
    row.appendChild(pad);
    if (type === "turn/start") {
      const toggle = el("button", "turn-toggle", state.collapsedTurns.has(turnOf[seq]) ? "▸" : "▾");
      toggle.title = "collapse or expand this turn";
      toggle.dataset.turn = turnOf[seq];
      row.appendChild(toggle);
    }
    row.appendChild(el("span", "type", type));
    row.appendChild(el("span", "text", summary(seq)));
    const extra = el("span", "extra");
    if (Array.isArray(op)) {
      const count = replaced.has(seq) ? replaced.get(seq).length : 0;
      const toggle = el("button", "toggle", (state.expanded.has(seq) ? "▾ " : "▸ ") + "replaced " + count);
      toggle.dataset.replacement = seq;
      toggle.title = "show the events this replacement shadowed";
      extra.appendChild(toggle);
    }
    if (shadowedBy[seq] >= 0) {
      extra.appendChild(document.createTextNode(" shadowed by "));
      extra.appendChild(seqLink(shadowedBy[seq]));
    }
    const data = dataOf(seq) || {};
    if (type === "tool/call") {
      for (const result of resultsOf.get(data.callId) || []) {
        extra.appendChild(document.createTextNode(" → result "));
        extra.appendChild(seqLink(result));
      }
    }
    if (type === "tool/result" && data.message && callOf.has(data.message.toolCallId)) {
      extra.appendChild(document.createTextNode(" ← call "));
      extra.appendChild(seqLink(callOf.get(data.message.toolCallId)));
    }
    if (type === "step/start") {
      const spent = usage.get(turnOf[seq] + ":" + stepOf[seq]);
      if (spent) extra.appendChild(el("span", "usage", " tokens in " + spent.input + " · out " + spent.output));
    }
    row.appendChild(extra);
    return row;
  }

  function refresh() {
    buildRows();
    render();
  }

  // --- details of the selected event ---------------------------------------------------------
  const detail = $("detail");

  function select(seq, scroll) {
    state.selected = seq;
    if (scroll) scrollTo(seq);
    render();
    showDetail(seq);
    if (location.hash !== "#seq=" + seq) history.replaceState(null, "", "#seq=" + seq);
  }

  function scrollTo(seq) {
    const index = rows.findIndex((r) => r[0] === seq);
    if (index < 0) return;
    const top = index * ROW, height = timeline.clientHeight || 800;
    if (top < timeline.scrollTop || top + ROW > timeline.scrollTop + height) {
      timeline.scrollTop = Math.max(0, top - height / 3);
    }
  }

  function reveal(seq) {
    for (let r = shadowedBy[seq]; r >= 0 && !state.showShadowed; r = shadowedBy[r]) state.expanded.add(r);
    state.collapsedTurns.delete(turnOf[seq]);
    state.hiddenTypes.delete(typeOf(seq));
    syncTypeBoxes();
    buildRows();
  }

  function showDetail(seq) {
    const type = typeOf(seq), [, time, op, cites, data] = E[seq];
    const parts = [el("h2", "", "#" + seq + " " + type)];
    let where = new Date(time).toISOString() + " · ";
    where += op === 0 ? "log-only" : op === 1 ? "appended to the surface" : "replaces " + op[0] + "–" + op[1];
    where += onSurface[seq] ? " · on the surface" : shadowedBy[seq] >= 0 ? " · shadowed" : "";
    if (seq >= STORED) where += " · not stored: added by this read-only view";
    parts.push(el("div", "meta", where));
    if (cites && cites.length) parts.push(linkLine("cites ", cites));
    if (shadowedBy[seq] >= 0) parts.push(linkLine("shadowed by ", [shadowedBy[seq]]));
    if (replaced.has(seq)) {
      parts.push(el("div", "", "replaced (through nested replacements):"));
      parts.push(tree(seq));
    }
    const d = data || {};
    if (type === "tool/call") parts.push(linkLine("result ", resultsOf.get(d.callId) || []));
    if (type === "tool/result" && d.message && callOf.has(d.message.toolCallId)) {
      parts.push(linkLine("call ", [callOf.get(d.message.toolCallId)]));
    }
    if (type === "assistant/message" && d.message) {
      for (const block of d.message.content || []) {
        if (block && block.type === "tool-call") {
          parts.push(linkLine("tool call " + block.name + " " + block.id + ": call ", callOf.has(block.id) ? [callOf.get(block.id)] : []));
          parts.push(linkLine("  result ", resultsOf.get(block.id) || []));
        }
      }
    }
    const message = type === "user/message" ? d : d.message;
    if (message && typeof message === "object" && message.content) parts.push(el("div", "message", messageText(message)));
    parts.push(el("pre", "", JSON.stringify(data, null, 2)));
    detail.replaceChildren(...parts);
  }

  function linkLine(label, seqs) {
    const line = el("div", "links", label);
    if (!seqs.length) line.appendChild(document.createTextNode("none"));
    for (const seq of seqs) line.appendChild(seqLink(seq));
    return line;
  }

  function tree(seq) {
    const list = el("ul", "tree");
    for (const node of replaced.get(seq)) {
      const item = el("li");
      item.appendChild(seqLink(node));
      item.appendChild(document.createTextNode(" " + typeOf(node) + " " + summary(node).slice(0, 120)));
      if (replaced.has(node)) item.appendChild(tree(node));
      list.appendChild(item);
    }
    return list;
  }

  // --- search ---------------------------------------------------------------------------------
  const searchBox = $("search"), searchCount = $("search-count");

  function textOf(seq) {
    let text = texts[seq];
    if (text === undefined) {
      text = texts[seq] = (typeOf(seq) + "\n" + JSON.stringify(dataOf(seq))).toLowerCase();
    }
    return text;
  }

  function runSearch() {
    state.query = searchBox.value.trim().toLowerCase();
    state.matches = [];
    if (state.query) {
      for (let seq = 0; seq < N; seq++) if (textOf(seq).includes(state.query)) state.matches.push(seq);
    }
    state.matchSet = new Set(state.matches);
    state.current = -1;
    searchCount.textContent = state.query ? state.matches.length + " match" + (state.matches.length === 1 ? "" : "es") : "";
    refresh();
    if (state.matches.length) step(1);
  }

  function step(direction) {
    if (!state.matches.length) return;
    state.current = (state.current + direction + state.matches.length) % state.matches.length;
    const seq = state.matches[state.current];
    searchCount.textContent = state.current + 1 + " of " + state.matches.length;
    reveal(seq);
    select(seq, true);
  }

  let searchTimer = 0;
  searchBox.addEventListener("input", () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(runSearch, 150);
  });
  searchBox.addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      clearTimeout(searchTimer);
      if (searchBox.value.trim().toLowerCase() !== state.query) runSearch();
      else step(event.shiftKey ? -1 : 1);
    }
  });
  $("search-next").addEventListener("click", () => step(1));
  $("search-prev").addEventListener("click", () => step(-1));
  $("only-matches").addEventListener("change", (event) => { state.onlyMatches = event.target.checked; refresh(); });
  $("show-shadowed").addEventListener("change", (event) => { state.showShadowed = event.target.checked; refresh(); });
  document.addEventListener("keydown", (event) => {
    if (event.key === "/" && document.activeElement !== searchBox) { event.preventDefault(); searchBox.focus(); }
  });

  // --- event-type filter ----------------------------------------------------------------------
  const typesEl = $("types");
  for (const type of [...typeCounts.keys()].sort()) {
    const label = el("label");
    const box = el("input");
    box.type = "checkbox";
    box.checked = true;
    box.dataset.type = type;
    box.addEventListener("change", () => {
      if (box.checked) state.hiddenTypes.delete(type); else state.hiddenTypes.add(type);
      refresh();
    });
    label.appendChild(box);
    label.appendChild(document.createTextNode(" " + type + " (" + typeCounts.get(type) + ")"));
    typesEl.appendChild(label);
  }
  function syncTypeBoxes() {
    for (const box of typesEl.querySelectorAll("input")) box.checked = !state.hiddenTypes.has(box.dataset.type);
  }
  $("types-all").addEventListener("click", () => { state.hiddenTypes.clear(); syncTypeBoxes(); refresh(); });
  $("types-none").addEventListener("click", () => { for (const t of typeCounts.keys()) state.hiddenTypes.add(t); syncTypeBoxes(); refresh(); });

  // --- clicks, deep links, scrolling ------------------------------------------------------------
  rowsEl.addEventListener("click", (event) => {
    const target = event.target;
    if (target.dataset && target.dataset.replacement !== undefined) {
      const seq = Number(target.dataset.replacement);
      if (state.expanded.has(seq)) state.expanded.delete(seq); else state.expanded.add(seq);
      refresh();
      return;
    }
    if (target.dataset && target.dataset.turn !== undefined) {
      const turn = Number(target.dataset.turn);
      if (state.collapsedTurns.has(turn)) state.collapsedTurns.delete(turn); else state.collapsedTurns.add(turn);
      refresh();
      return;
    }
    if (target.tagName === "A") return; // a deep link: the hash change selects it
    const row = target.closest(".row");
    if (row) select(Number(row.dataset.seq), false);
  });

  function followHash() {
    const match = /^#seq=(\d+)$/.exec(location.hash);
    if (!match) return;
    const seq = Number(match[1]);
    if (seq >= N) return;
    reveal(seq);
    select(seq, true);
  }
  window.addEventListener("hashchange", followHash);
  detail.addEventListener("click", (event) => {
    if (event.target.tagName === "A" && event.target.getAttribute("href") === location.hash) followHash();
  });

  let pending = false;
  timeline.addEventListener("scroll", () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; render(); });
  });
  window.addEventListener("resize", render);

  // --- start ----------------------------------------------------------------------------------------
  $("session-id").textContent = "Session " + raw.session.id;
  document.title = "agentlog · " + raw.session.id;
  const virtual = N - STORED;
  $("summary").textContent =
    STORED + " events stored" + (virtual ? " (+" + virtual + " view only)" : "") + " · " +
    raw.surface.length + " on the surface · " + raw.replacements.length + " replacements · format v" +
    raw.session.storedVersion + (raw.session.location ? " · " + raw.session.location : "");
  refresh();
  followHash();
  document.body.dataset.ready = "1";
  window.agentlogViewer = { rows: () => rows.length, events: N };
})();

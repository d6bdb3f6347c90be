// The dashboard page (`GET /__admin/dashboard`), kept as Swift string literals so the binary carries it
// with no resource bundle. Rules for editing: no external URL of any kind (the Content-Security-Policy
// allows only this script and style, by hash, and connections to the page's own origin); untrusted text
// (requests, stubs) only ever through `textContent`, never `innerHTML`; no `style` attributes (the policy
// refuses them). See docs/dashboard.md.

/// The page's parts: ``head`` and ``body`` markup, the inline ``style`` and ``script``.
enum DashboardPageSource {
  static let head = """
    <!doctype html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <meta name="color-scheme" content="light dark">
    <meta name="referrer" content="no-referrer">
    <link rel="icon" href="data:,">
    <title>MockServer dashboard</title>

    """

  static let body = """
    <body>
    <a class="skip" href="#log">Skip to the request log</a>
    <header>
      <h1>MockServer <span class="muted" id="version"></span></h1>
      <p id="conn" role="status" aria-live="polite" class="badge">connecting…</p>
      <nav aria-label="Sections"><ul>
        <li><a href="#log">Requests</a></li><li><a href="#stubs">Stubs</a></li>
        <li><a href="#scenarios">Scenarios</a></li><li><a href="#state">State</a></li><li><a href="#server">Settings and reload</a></li>
      </ul></nav>
    </header>
    <main>
      <div id="reload-alert" role="alert" class="bad" hidden></div>
      <div class="split">
        <section id="log" aria-labelledby="log-h">
          <h2 id="log-h">Requests <span class="muted" id="log-count"></span></h2>
          <p class="muted" id="log-help">Newest first, live. Click a request, or move with the arrow keys and press Enter.</p>
          <p id="dropped" class="warn" hidden></p>
          <div class="scroll">
          <table id="requests" aria-describedby="log-help">
            <thead><tr><th scope="col">Time</th><th scope="col">Method</th><th scope="col">Path</th>
            <th scope="col">Status</th><th scope="col">Stub</th><th scope="col">Latency</th>
            <th scope="col">Fault / delay</th></tr></thead>
            <tbody></tbody>
          </table>
          </div>
        </section>
        <section id="detail" aria-labelledby="detail-h" tabindex="-1">
          <h2 id="detail-h">Request detail</h2>
          <div id="detail-body"><p class="muted">Select a request.</p></div>
        </section>
      </div>
      <section id="stubs" aria-labelledby="stubs-h">
        <h2 id="stubs-h">Stubs <span class="muted" id="stub-count"></span></h2>
        <label for="stub-filter">Filter</label>
        <input id="stub-filter" type="search" placeholder="text in name, path, file, body…" autocomplete="off">
        <div id="stub-groups"></div>
      </section>
      <section id="scenarios" aria-labelledby="scen-h">
        <h2 id="scen-h">Scenarios</h2>
        <div id="scenario-list"></div>
      </section>
      <section id="state" aria-labelledby="state-h">
        <h2 id="state-h">State contexts <span class="muted" id="state-count"></span></h2>
        <div id="state-list"></div>
      </section>
      <section id="channels" aria-labelledby="chan-h">
        <h2 id="chan-h">WebSocket channels <span class="muted" id="channel-count"></span></h2>
        <div id="channel-list"></div>
        <h3>Messages <span class="muted" id="message-count"></span></h3>
        <div id="message-list"></div>
      </section>
      <section id="server" aria-labelledby="server-h">
        <h2 id="server-h">Settings and reload</h2>
        <div id="settings"></div>
        <h3>Last fixtures load</h3>
        <div id="reload"></div>
      </section>
    </main>

    """

  static let style = """
    :root{color-scheme:light dark;--bg:#fff;--fg:#1b1f24;--mut:#57606a;--line:#d0d7de;--hi:#fff3b0;
    --sel:#dbeafe;--ok:#1a7f37;--bad:#cf222e;--warn:#9a6700;--code:#f6f8fa;--link:#0550ae}
    @media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--mut:#9198a1;--line:#30363d;
    --hi:#5a4a00;--sel:#1f3a5f;--ok:#3fb950;--bad:#f85149;--warn:#d29922;--code:#161b22;--link:#79c0ff}}
    *{box-sizing:border-box}
    body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;background:var(--bg);color:var(--fg)}
    a{color:var(--link)}
    .skip{position:absolute;left:-999px}.skip:focus{left:8px;top:8px;background:var(--bg);padding:4px}
    header{display:flex;flex-wrap:wrap;align-items:center;gap:12px;padding:8px 16px;border-bottom:1px solid var(--line)}
    h1{font-size:18px;margin:0}h2{font-size:16px;margin:8px 0}h3{font-size:14px;margin:8px 0 4px}
    nav ul{display:flex;gap:12px;list-style:none;margin:0;padding:0}
    main{padding:8px 16px}
    .muted{color:var(--mut);font-weight:normal}
    .badge{margin:0;padding:2px 8px;border:1px solid var(--line);border-radius:10px}
    .badge.live{color:var(--ok);border-color:var(--ok)}.badge.down{color:var(--bad);border-color:var(--bad)}
    .warn{color:var(--warn)}.bad{color:var(--bad)}.ok{color:var(--ok)}
    .split{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:16px}
    @media (max-width:900px){.split{grid-template-columns:1fr}}
    .scroll{max-height:60vh;overflow:auto;border:1px solid var(--line)}
    table{border-collapse:collapse;width:100%}
    th,td{text-align:left;padding:3px 6px;border-bottom:1px solid var(--line);vertical-align:top}
    thead th{position:sticky;top:0;background:var(--bg)}
    #requests tbody tr{cursor:pointer}
    #requests tbody tr:hover{background:var(--code)}
    #requests tbody tr[aria-selected=true]{background:var(--sel)}
    tr:focus,summary:focus,button:focus,input:focus,select:focus,a:focus{outline:2px solid var(--link);outline-offset:-2px}
    td.path{word-break:break-all}
    pre{background:var(--code);padding:6px;margin:4px 0;overflow:auto;max-height:40vh;white-space:pre-wrap;word-break:break-all}
    code{background:var(--code)}
    mark{background:var(--hi);color:inherit}
    .pair{display:grid;grid-template-columns:1fr 1fr;gap:8px}
    details{border:1px solid var(--line);margin:6px 0;padding:4px 8px}
    summary{cursor:pointer;font-weight:600}
    input,select,button{font:inherit;color:inherit;background:var(--bg);border:1px solid var(--line);padding:2px 6px}
    button{cursor:pointer}
    #detail{min-width:0}
    """

  static let script = #"""
    "use strict";
    const $ = (s) => document.querySelector(s);
    function el(tag, props, ...kids) {
      const e = document.createElement(tag);
      for (const [k, v] of Object.entries(props || {})) {
        if (v === undefined || v === null || v === false) continue;
        if (k === "text") e.textContent = v;
        else if (k === "cls") e.className = v;
        else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
        else e.setAttribute(k, v === true ? "" : String(v));
      }
      for (const kid of kids.flat()) {
        if (kid === null || kid === undefined || kid === false) continue;
        e.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
      }
      return e;
    }
    const state = { stubs: new Map(), rows: 0, selected: null, dropped: 0, stubsRaw: [] };
    const MAX_ROWS = 500;
    async function getJSON(path, init) {
      const r = await fetch(path, Object.assign({ cache: "no-store", credentials: "same-origin" }, init || {}));
      const text = await r.text();
      let body = null;
      try { body = text ? JSON.parse(text) : null; } catch (e) { body = text; }
      return { ok: r.ok, status: r.status, body };
    }
    function pretty(v) { return JSON.stringify(v, null, 2); }
    function fmtTime(iso) { const t = iso.indexOf("T"); return t >= 0 ? iso.slice(t + 1, t + 13) : iso; }

    // ---- live request log (Server-Sent Events) ----
    function addRow(ev) {
      const tbody = $("#requests tbody");
      const stub = ev.matched ? (ev.stubName || ev.stubId) : "no match";
      const extra = [ev.fault, ev.delayMs ? "delay " + ev.delayMs + " ms" : null, ev.served ? null : "not served"]
        .filter(Boolean).join(", ");
      const status = ev.status === null ? "—" : String(ev.status);
      const tr = el("tr", { tabindex: "-1", "aria-selected": "false", "data-id": ev.id,
          onclick: () => select(tr), onkeydown: rowKey },
        el("td", { text: fmtTime(ev.time) }), el("td", { text: ev.method }),
        el("td", { cls: "path", text: ev.url }),
        el("td", { cls: ev.status >= 500 || ev.status === null ? "bad" : ev.status >= 400 ? "warn" : "ok", text: status }),
        el("td", { cls: ev.matched ? "" : "bad", text: stub }),
        el("td", { text: ev.latencyMs + " ms" }), el("td", { text: extra }));
      tr.dataset.matched = ev.matched ? "1" : "0";
      tbody.prepend(tr);
      if (!tbody.querySelector("tr[tabindex='0']")) tr.tabIndex = 0;
      while (tbody.rows.length > MAX_ROWS) tbody.lastElementChild.remove();
      state.rows++;
      $("#log-count").textContent = "(" + state.rows + ")";
    }
    function rowKey(e) {
      const tr = e.currentTarget;
      let next = null;
      if (e.key === "ArrowDown") next = tr.nextElementSibling;
      else if (e.key === "ArrowUp") next = tr.previousElementSibling;
      else if (e.key === "Home") next = tr.parentElement.firstElementChild;
      else if (e.key === "End") next = tr.parentElement.lastElementChild;
      else if (e.key === "Enter" || e.key === " ") { e.preventDefault(); select(tr); return; }
      if (next) { e.preventDefault(); tr.tabIndex = -1; next.tabIndex = 0; next.focus(); }
    }
    function connect() {
      const source = new EventSource("/__admin/events");
      const conn = $("#conn");
      source.onopen = () => { conn.textContent = "live"; conn.className = "badge live"; };
      source.onerror = () => { conn.textContent = "reconnecting…"; conn.className = "badge down"; };
      source.addEventListener("request", (m) => {
        let ev;
        try { ev = JSON.parse(m.data); } catch (e) { return; }
        addRow(ev);
        scheduleState();
      });
      source.addEventListener("dropped", (m) => {
        let d;
        try { d = JSON.parse(m.data); } catch (e) { return; }
        state.dropped += d.count || 0;
        const p = $("#dropped");
        p.hidden = false;
        p.textContent = state.dropped + " request(s) not shown: this page fell behind or reconnected after they left the buffer.";
      });
    }

    // ---- request detail ----
    function b64bytes(b64) {
      const bin = atob(b64 || "");
      const out = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
      return out;
    }
    function hexdump(bytes) {
      const lines = [];
      for (let i = 0; i < bytes.length && i < 65536; i += 16) {
        const row = Array.from(bytes.slice(i, i + 16));
        const hex = row.map((b) => b.toString(16).padStart(2, "0")).join(" ");
        const ascii = row.map((b) => (b >= 32 && b < 127 ? String.fromCharCode(b) : ".")).join("");
        lines.push(i.toString(16).padStart(8, "0") + "  " + hex.padEnd(48) + " " + ascii);
      }
      return lines.join("\n");
    }
    function bodyView(bytes, label) {
      if (!bytes.length) return el("p", { cls: "muted", text: label + ": no content" });
      let text = null;
      try { text = new TextDecoder("utf-8", { fatal: true }).decode(bytes); } catch (e) { text = null; }
      if (text === null || /[\u0000-\u0008\u000e-\u001f]/.test(text))
        return [el("h4", { text: label + " (binary, " + bytes.length + " bytes, hex)" }), el("pre", { text: hexdump(bytes) })];
      try { return [el("h4", { text: label + " (JSON)" }), el("pre", { text: pretty(JSON.parse(text)) })]; }
      catch (e) { return [el("h4", { text: label }), el("pre", { text: text })]; }
    }
    function headerTable(headers) {
      const rows = [];
      for (const [k, v] of Object.entries(headers || {}))
        for (const one of Array.isArray(v) ? v : [v]) rows.push(el("tr", {}, el("th", { scope: "row", text: k }), el("td", { text: one })));
      return rows.length ? el("table", {}, el("tbody", {}, rows)) : el("p", { cls: "muted", text: "no header fields" });
    }
    // Marks where a and b differ: common prefix and suffix plain, the middle marked.
    function diffPair(a, b) {
      let p = 0;
      while (p < a.length && p < b.length && a[p] === b[p]) p++;
      let s = 0;
      while (s < a.length - p && s < b.length - p && a[a.length - 1 - s] === b[b.length - 1 - s]) s++;
      if (p + s < 3) { p = 0; s = 0; }  // little in common (GET / POST): mark the whole values
      const mk = (t) => [t.slice(0, p), el("mark", { text: t.slice(p, t.length - s) }), t.slice(t.length - s)];
      return [mk(a), mk(b)];
    }
    // The stub's request pattern, pretty-printed, with the lines of the parts that failed marked.
    function patternView(pattern, mismatches) {
      const keys = [];
      for (const m of mismatches) {
        const [kind, ...rest] = String(m.part).split(" ");
        const name = rest.join(" ");
        if (name) keys.push('"' + name + '"');
        else if (kind === "method") keys.push('"method"');
        else if (kind === "url" || kind === "path") keys.push('"url', '"urlPath');
        else if (kind === "body") keys.push('"bodyPatterns"');
        else keys.push('"' + kind);
      }
      const lines = pretty(pattern).split("\n");
      return el("pre", {}, lines.map((line, i) => {
        const text = line + (i < lines.length - 1 ? "\n" : "");
        return keys.some((k) => line.trimStart().startsWith(k)) ? el("mark", { text }) : text;
      }));
    }
    function nearMissView(miss, request) {
      const st = miss.stub || {};
      const stub = state.stubs.get(st.id);
      const where = st.file ? st.file + " " + st.location : "runtime";
      const rows = (miss.mismatches || []).map((m) => {
        const [exp, act] = diffPair(String(m.expected), String(m.actual));
        return el("tr", {}, el("th", { scope: "row", text: m.part }), el("td", {}, el("code", {}, exp)), el("td", {}, el("code", {}, act)));
      });
      return el("details", { open: true, cls: "nearmiss" },
        el("summary", { text: (st.name || st.id) + " — score " + miss.score + " (" + where + ")" }),
        el("table", { cls: "mismatches" },
          el("caption", { cls: "muted", text: "Parts that did not match" }),
          el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "Part" }), el("th", { scope: "col", text: "Stub expects" }),
            el("th", { scope: "col", text: "Request has" }))),
          el("tbody", {}, rows)),
        el("div", { cls: "pair" },
          el("div", {}, el("h4", { text: "Stub request pattern" }), stub ? patternView(stub.request, miss.mismatches || []) : el("pre", { text: "(stub not loaded)" })),
          el("div", {}, el("h4", { text: "Request" }), el("pre", { text: request.method + " " + request.url + "\n" + pretty(request.headers || {}) }))));
    }
    async function select(tr) {
      for (const r of document.querySelectorAll("#requests tbody tr[aria-selected=true]")) r.setAttribute("aria-selected", "false");
      tr.setAttribute("aria-selected", "true");
      for (const r of document.querySelectorAll("#requests tbody tr[tabindex='0']")) r.tabIndex = -1;
      tr.tabIndex = 0;
      const id = tr.dataset.id;
      state.selected = id;
      const box = $("#detail-body");
      box.replaceChildren(el("p", { cls: "muted", text: "Loading…" }));
      const r = await getJSON("/__admin/requests/" + encodeURIComponent(id));
      if (state.selected !== id) return;
      if (!r.ok) { box.replaceChildren(el("p", { cls: "warn", text: "This request is no longer in the journal (" + r.status + ")." })); return; }
      box.replaceChildren(...detailView(r.body));
    }
    function detailView(e) {
      const q = e.request || {};
      const out = [el("h3", { text: q.method + " " + q.url })];
      out.push(el("p", { cls: "muted", text: (q.loggedDateString || "") + " from " + (q.clientIp || "?") }));
      out.push(el("h3", { text: "Request head" }), headerTable(q.headers));
      out.push(...[].concat(bodyView(b64bytes(q.bodyAsBase64), "Request content")));
      if (q.bodyTruncated) out.push(el("p", { cls: "warn", text: "Content cut to its first bytes; full size " + q.bodySize + " bytes, SHA-256 " + q.bodySha256 }));
      out.push(el("h3", { text: "Response" }));
      const status = e.response && e.response.status !== null ? e.response.status : "no status";
      const extra = [e.fault, e.timing && e.timing.addedDelay ? "delay " + e.timing.addedDelay + " ms" : null,
        e.served === false ? "not served (the client went away)" : null].filter(Boolean).join(", ");
      out.push(el("p", {}, el("strong", { text: "Status " + status }), extra ? " — " + extra : "",
        e.timing ? " — " + e.timing.totalTime + " ms" : ""));
      if (e.wasMatched && e.stubMapping) {
        const sm = e.stubMapping;
        const stub = state.stubs.get(sm.id);
        out.push(el("p", {}, "Answered by ", el("strong", { text: sm.name || sm.id }),
          stub && stub.origin.file ? " (" + stub.origin.file + " " + stub.origin.path + ")" : ""));
        const resp = sm.response || {};
        out.push(el("h4", { text: "Response header fields (as the stub defines them)" }), headerTable(resp.headers));
        if (resp.body !== undefined) out.push(...[].concat(bodyView(new TextEncoder().encode(String(resp.body)), "Response content")));
        else if (resp.jsonBody !== undefined) out.push(el("h4", { text: "Response content (JSON)" }), el("pre", { text: pretty(resp.jsonBody) }));
        else if (resp.base64Body !== undefined) out.push(...[].concat(bodyView(b64bytes(resp.base64Body), "Response content")));
        else if (resp.bodyFileName) out.push(el("p", {}, "Content from file ", el("code", { text: resp.bodyFileName })));
      } else if (!e.wasMatched) {
        out.push(el("p", { cls: "bad", text: "No stub matched: the server answered 404 with the near misses below." }));
        const misses = e.nearMisses || [];
        out.push(el("h3", { text: "Near misses (" + misses.length + ")" }));
        if (!misses.length) out.push(el("p", { cls: "muted", text: "No stubs are loaded." }));
        for (const m of misses) out.push(nearMissView(m, q));
      }
      return out;
    }

    // ---- stubs, scenarios, settings, reload ----
    let stateTimer = null;
    function scheduleState() {
      if (stateTimer) return;
      stateTimer = setTimeout(() => { stateTimer = null; loadState(); }, 1000);
    }
    function describePattern(req) {
      const url = req.url || req.urlPath || req.urlPattern || req.urlPathPattern || req.urlPathTemplate || "(any URL)";
      const kind = ["url", "urlPath", "urlPattern", "urlPathPattern", "urlPathTemplate"].find((k) => req[k] !== undefined) || "";
      const parts = [(req.method || "ANY") + " " + url + (kind && kind !== "url" ? " (" + kind + ")" : "")];
      for (const k of ["headers", "queryParameters", "cookies", "bodyPatterns"]) if (req[k]) parts.push(k + ": " + JSON.stringify(req[k]));
      return parts.join("\n");
    }
    function describeResponse(stub) {
      const r = stub.response || {};
      const bits = [];
      if (r.fault) bits.push("fault " + r.fault); else bits.push(String(r.status || 200));
      if (r.fixedDelayMilliseconds) bits.push("delay " + r.fixedDelayMilliseconds + " ms");
      if (r.delayDistribution) bits.push("random delay");
      if (r.jsonBody !== undefined) bits.push("JSON content");
      else if (r.body !== undefined) bits.push(String(r.body).length + " characters");
      else if (r.base64Body !== undefined) bits.push("binary content");
      else if (r.bodyFileName) bits.push("file " + r.bodyFileName);
      if (stub["x-responseSequence"]) bits.push("response sequence");
      return bits.join(", ");
    }
    function renderStubs() {
      const filter = $("#stub-filter").value.trim().toLowerCase();
      const groups = new Map();
      let shown = 0;
      for (const s of state.stubsRaw) {
        if (filter && !JSON.stringify(s).toLowerCase().includes(filter)) continue;
        shown++;
        const key = s.origin.kind === "file" ? s.origin.file : s.origin.kind === "recording" ? "Recorded" : "Runtime (admin API or test code)";
        if (!groups.has(key)) groups.set(key, []);
        groups.get(key).push(s);
      }
      const box = $("#stub-groups");
      const open = new Set(Array.from(box.querySelectorAll("details:not([open])"), (d) => d.dataset.key));
      box.replaceChildren(...Array.from(groups, ([key, list]) =>
        el("details", { open: !open.has(key), "data-key": key },
          el("summary", { text: key + " (" + list.length + ")" }),
          el("table", {},
            el("thead", {}, el("tr", {}, ["Stub", "Request pattern", "Response", "Hits", "From"].map((h) => el("th", { scope: "col", text: h })))),
            el("tbody", {}, list.map((s) => el("tr", {},
              el("td", { text: s.name || s.id }),
              el("td", {}, el("pre", { text: describePattern(s.request) })),
              el("td", { text: describeResponse(s) }),
              el("td", { text: String(s.hits) }),
              el("td", { text: s.origin.kind === "file" ? s.origin.file + " " + s.origin.path : s.origin.kind }))))))));
      if (!shown) box.replaceChildren(el("p", { cls: "muted", text: state.stubsRaw.length ? "No stub matches the filter." : "No stubs are loaded." }));
      $("#stub-count").textContent = "(" + (filter ? shown + " of " : "") + state.stubsRaw.length + ")";
    }
    function renderScenarios(list) {
      const box = $("#scenario-list");
      if (!list.length) { box.replaceChildren(el("p", { cls: "muted", text: "No stub names a scenario." })); return; }
      box.replaceChildren(el("table", {},
        el("thead", {}, el("tr", {}, ["Scenario", "Current state", "Set state"].map((h) => el("th", { scope: "col", text: h })))),
        el("tbody", {}, list.map((sc, i) => {
          const sel = el("select", { id: "scen-" + i, "aria-label": "New state of " + sc.name },
            sc.possibleStates.map((p) => el("option", { value: p, selected: p === sc.state, text: p })));
          const msg = el("span", { role: "status", cls: "muted" });
          const btn = el("button", { type: "button", text: "Set", onclick: async () => {
            const r = await getJSON("/__admin/scenarios/" + encodeURIComponent(sc.name) + "/state", {
              method: "PUT", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ state: sel.value }) });
            msg.textContent = r.ok ? " set" : " failed: " + (r.body && r.body.errors ? r.body.errors[0].detail : r.status);
            loadState();
          } });
          return el("tr", {}, el("th", { scope: "row", text: sc.name }), el("td", { cls: "scen-state", text: sc.state }),
            el("td", {}, sel, " ", btn, msg));
        }))));
    }
    function renderContexts(list, count) {
      const box = $("#state-list");
      $("#state-count").textContent = "(" + (count > list.length ? list.length + " of " : "") + count + ")";
      if (!list.length) { box.replaceChildren(el("p", { cls: "muted", text: "No contexts (recordState writes them)." })); return; }
      box.replaceChildren(el("table", {},
        el("thead", {}, el("tr", {}, ["Context", "Properties", "List", "Updates"].map((h) => el("th", { scope: "col", text: h })))),
        el("tbody", {}, list.map((c) => el("tr", {},
          el("th", { scope: "row", text: c.contextName }),
          el("td", {}, el("code", { text: JSON.stringify(c.properties) })),
          el("td", {}, el("code", { text: JSON.stringify(c.list) })),
          el("td", { text: String(c.updateCount) }))))));
    }
    function renderChannels(channels, messages) {
      $("#channel-count").textContent = "(" + channels.length + ")";
      $("#channel-list").replaceChildren(channels.length ? el("table", {},
        el("thead", {}, el("tr", {}, ["Channel", "Upgrade request", "Open"].map((h) => el("th", { scope: "col", text: h })))),
        el("tbody", {}, channels.map((c) => el("tr", {},
          el("th", { scope: "row" }, el("code", { text: c.id })),
          el("td", {}, el("code", { text: (c.initiatingRequest && (c.initiatingRequest.method + " " + c.initiatingRequest.url)) || "" })),
          el("td", { text: c.open === false ? "closed" : "open" })))))
        : el("p", { cls: "muted", text: "No WebSocket connections." }));
      // The newest messages first (the page asks for the newest 50).
      const shown = messages.slice().reverse();
      $("#message-count").textContent = "(newest " + shown.length + ")";
      $("#message-list").replaceChildren(shown.length ? el("table", {},
        el("thead", {}, el("tr", {}, ["Time", "Direction", "Channel (upgrade URL)", "Message", "Message stub mapping"].map((h) => el("th", { scope: "col", text: h })))),
        el("tbody", {}, shown.map((m) => el("tr", {},
          el("td", { text: fmtTime(String(m.timestamp || "")) }),
          el("td", { text: m.eventType === "sent" ? "sent" : "received" }),
          el("td", {}, el("code", { text: (m.channel && m.channel.initiatingRequest && m.channel.initiatingRequest.url) || "" })),
          el("td", {}, el("code", { text: typeof m.message === "string" ? m.message : JSON.stringify(m.message) })),
          el("td", { text: m.stubMapping ? (m.stubMapping.name || m.stubMapping.id || "") : (m.eventType === "received" ? (m.wasMatched ? "matched" : "no match") : "") })))))
        : el("p", { cls: "muted", text: "No messages." }));
    }
    function renderServer(s) {
      const dl = el("dl", {});
      const add = (k, v) => dl.append(el("dt", { text: k }), el("dd", { text: v }));
      add("Global fixed delay", (s.settings.fixedDelay || 0) + " ms");
      add("Journal", s.journal.retained + " kept of " + s.journal.total + " since reset (capacity " + s.journal.capacity + "), " + s.journal.unmatched + " unmatched");
      add("Dashboard viewers", s.events.viewers + ", " + s.events.dropped + " event(s) dropped for slow viewers");
      $("#settings").replaceChildren(dl);
      const box = $("#reload");
      const r = s.reload;
      // A failed reload is shown at the top of the page too, where it is seen.
      const alert = $("#reload-alert");
      alert.hidden = !r || r.succeeded;
      if (r && !r.succeeded) {
        alert.replaceChildren(el("p", { text: "Reload of " + r.directory + " failed at " + r.time +
          "; still serving the last good set. " }), el("a", { href: "#server", text: "Problems" }));
      }
      if (!r) { box.replaceChildren(el("p", { cls: "muted", text: "No fixtures folder." })); return; }
      const head = el("p", { cls: r.succeeded ? "ok" : "bad",
        text: (r.initial ? "Loaded at start-up" : r.succeeded ? "Reloaded" : "Reload failed; still serving the last good set") +
          " — " + r.time + " — " + r.directory + (r.succeeded ? ", " + r.stubCount + " stub(s)" : "") });
      const problems = r.problems.map((p) => el("li", { cls: p.severity === "error" ? "bad" : "warn" },
        el("code", { text: p.file + ": " + p.path }), ": " + p.message + " (" + p.severity + ")"));
      box.replaceChildren(head, problems.length ? el("ul", { cls: "problems" }, problems) : el("p", { cls: "muted", text: "No problems." }));
    }
    async function loadState() {
      const r = await getJSON("/__admin/dashboard/state");
      if (!r.ok || !r.body) return;
      const s = r.body;
      $("#version").textContent = s.version;
      state.stubsRaw = s.stubs;
      state.stubs = new Map(s.stubs.map((x) => [x.id, x]));
      renderStubs();
      renderScenarios(s.scenarios);
      renderContexts(s.stateContexts || [], s.stateContextCount || 0);
      renderServer(s);
      const [channels, messages] = await Promise.all([getJSON("/__admin/channels"), getJSON("/__admin/messages?limit=50")]);
      renderChannels(channels.ok && channels.body ? channels.body.channels || [] : [],
        messages.ok && messages.body ? messages.body.messageServeEvents || [] : []);
    }
    $("#stub-filter").addEventListener("input", renderStubs);
    loadState().then(connect, connect);
    // What changes without a request to a stub (contexts deleted through the admin API or expired, stubs
    // edited through it) shows within 5 s while the page is visible.
    setInterval(() => { if (!document.hidden) scheduleState(); }, 5000);
    """#
}

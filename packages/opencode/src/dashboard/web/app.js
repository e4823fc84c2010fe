// The AirCoding dashboard: a read-only picture of a run, live over server-sent events.
// solid-js with `solid-js/html` tagged templates, so the page needs no build step.
import { batch, createEffect, createSignal, For, Show } from "solid-js"
import { render } from "solid-js/web"
import html from "solid-js/html"

const token = new URLSearchParams(location.search).get("token")
const api = (path) => (token ? `${path}${path.includes("?") ? "&" : "?"}token=${encodeURIComponent(token)}` : path)

const COLORS = {
  pending: "#8a94a6",
  running: "#2f6fed",
  gating: "#0891b2",
  debugging: "#d97706",
  reviewing: "#7c3aed",
  consulting: "#db2777",
  merge_queued: "#0d9488",
  merging: "#059669",
  merged: "#15803d",
  blocked: "#dc2626",
  invalidated: "#6b7280",
}

const [run, setRun] = createSignal(null)
const [events, setEvents] = createSignal([])
const [live, setLive] = createSignal(false)
const [selected, setSelected] = createSignal(null)
const [evidence, setEvidence] = createSignal(null)

function L(key, params = {}) {
  const labels = run()?.labels
  if (!labels) return "" // never paint a raw key: the page has its words from the first HTML
  const text = labels[key] ?? key
  return text.replace(/\{(\w+)\}/g, (whole, name) => (name in params ? String(params[name]) : whole))
}
const stateLabel = (state) => L(`state.${state}`)
const gateLabel = (gate) => (run()?.labels?.[`gate.${gate}`] ?? gate)

function duration(ms) {
  if (ms === null || ms === undefined) return "—"
  const s = Math.round(ms / 1000)
  if (s < 60) return `${s}s`
  const m = Math.floor(s / 60)
  if (m < 60) return `${m}m${String(s % 60).padStart(2, "0")}s`
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`
}

/** The last executor or debugger session of a task that has none working on it now. */
function lastWorker(task) {
  const workers = task.sessions.filter((s) => s.role !== "reviewer")
  return workers.length ? workers[workers.length - 1].sessionId : null
}

function connect() {
  const source = new EventSource(api("api/stream"))
  source.addEventListener("full", (message) => {
    const payload = JSON.parse(message.data)
    batch(() => {
      setRun(payload)
      setEvents(payload.events)
    })
    refreshEvidence()
  })
  source.addEventListener("update", (message) => {
    const update = JSON.parse(message.data)
    batch(() => {
      setRun({ ...run(), view: update.view, graph: update.graph, warnings: update.warnings, waiting: update.waiting, budgets: update.budgets, progress: update.progress, gateLines: update.gateLines, torn: update.torn })
      setEvents([...events(), ...update.events])
    })
    refreshEvidence()
  })
  source.onopen = () => setLive(true)
  source.onerror = () => setLive(false) // EventSource reconnects by itself and gets a full payload again
}

async function openTask(id) {
  batch(() => {
    setSelected(id)
    setEvidence(null)
  })
  await refreshEvidence()
}

async function refreshEvidence() {
  const id = selected()
  if (!id) return
  const response = await fetch(api(`api/tasks/${encodeURIComponent(id)}`))
  if (response.ok && selected() === id) setEvidence(await response.json())
}

// ── the task graph: drawn with the DOM's SVG API (an html template cannot create SVG children) ──

const NS = "http://www.w3.org/2000/svg"
const NODE_W = 210
const NODE_H = 62
const GAP_X = 80
const GAP_Y = 22
const PAD = 14

function el(name, attrs = {}, parent) {
  const node = document.createElementNS(NS, name)
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v))
  if (parent) parent.appendChild(node)
  return node
}

function clip(text, max) {
  return text.length > max ? text.slice(0, max - 1) + "…" : text
}

function drawGraph(svg, graph, chosen) {
  while (svg.firstChild) svg.removeChild(svg.firstChild)
  if (!graph || graph.nodes.length === 0) {
    svg.setAttribute("viewBox", "0 0 400 60")
    const t = el("text", { x: 16, y: 34, class: "empty" }, svg)
    t.textContent = L("tasks.none")
    return
  }
  const rows = Math.max(...graph.nodes.map((n) => n.row + 1))
  const width = PAD * 2 + graph.layers * NODE_W + (graph.layers - 1) * GAP_X
  const height = PAD * 2 + rows * NODE_H + (rows - 1) * GAP_Y
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`)
  svg.setAttribute("width", String(width))
  svg.setAttribute("height", String(height))
  const defs = el("defs", {}, svg)
  const marker = el("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" }, defs)
  el("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: "#64748b" }, marker)
  const pos = new Map(graph.nodes.map((n) => [n.id, { x: PAD + n.layer * (NODE_W + GAP_X), y: PAD + n.row * (NODE_H + GAP_Y) }]))
  const edges = el("g", { class: "edges" }, svg)
  for (const e of graph.edges) {
    const a = pos.get(e.from)
    const b = pos.get(e.to)
    if (!a || !b) continue
    const x1 = a.x + NODE_W
    const y1 = a.y + NODE_H / 2
    const x2 = b.x - 2
    const y2 = b.y + NODE_H / 2
    const mid = (x1 + x2) / 2
    el("path", { class: "edge", "data-from": e.from, "data-to": e.to, d: `M ${x1} ${y1} C ${mid} ${y1}, ${mid} ${y2}, ${x2} ${y2}`, "marker-end": "url(#arrow)" }, edges)
  }
  for (const n of graph.nodes) {
    const p = pos.get(n.id)
    const g = el("g", { class: `node${n.id === chosen ? " selected" : ""}`, "data-task": n.id, "data-state": n.state, transform: `translate(${p.x} ${p.y})`, tabindex: 0, role: "button" }, svg)
    const title = el("title", {}, g)
    title.textContent = `${n.id} ${n.title} — ${stateLabel(n.state)}`
    el("rect", { width: NODE_W, height: NODE_H, rx: 9, fill: COLORS[n.state] ?? "#8a94a6", "stroke-dasharray": n.state === "invalidated" ? "5 4" : "" }, g)
    const id = el("text", { x: 12, y: 21, class: "node-id" }, g)
    id.textContent = n.id
    const state = el("text", { x: NODE_W - 12, y: 21, class: "node-state", "text-anchor": "end" }, g)
    state.textContent = stateLabel(n.state)
    const label = el("text", { x: 12, y: 45, class: "node-title" }, g)
    label.textContent = clip(n.title, 28)
    g.addEventListener("click", () => openTask(n.id))
    g.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" || ev.key === " ") openTask(n.id)
    })
  }
}

function Graph() {
  const svg = el("svg", { id: "graph", role: "img" })
  createEffect(() => drawGraph(svg, run()?.graph, selected()))
  return svg
}

// ── panels ──────────────────────────────────────────────────────────────────────────────────────

function Header() {
  return html`<header>
    <h1>AirCoding</h1>
    <span class="run-id">${() => run()?.view.runId ?? ""}</span>
    <span class=${() => `badge status-${run()?.view.status ?? "idle"}`} id="run-status">${() => (run() ? L(`status.${run().view.status}`) : "…")}</span>
    <span class=${() => `live ${live() ? "on" : "off"}`} id="live">${() => (live() ? L("ui.live") : L("ui.offline"))}</span>
  </header>`
}

function Waiting() {
  return html`<section class="panel" id="waiting">
    <h2>${() => L("waiting.heading")}</h2>
    <ul>
      <${For} each=${() => run()?.waiting ?? []}>${(line) => html`<li>${line}</li>`}<//>
    </ul>
  </section>`
}

function Budgets() {
  return html`<section class="panel" id="budgets">
    <h2>${() => L("budgets.heading")}</h2>
    <ul>
      <${For} each=${() => run()?.budgets ?? []}>${(line) => html`<li>${line}</li>`}<//>
    </ul>
  </section>`
}

// ── deploy: per target what runs there (absent when the run deployed nothing) ──

const DEPLOY_STATUS = { running: "running", passed: "ok", failed: "bad", asked: "warn" }

function deployWords(d) {
  const none = L("deploy.unknown")
  const cause = d.cause ? (run()?.labels?.[`deploy.cause.${d.cause}`] ?? d.cause) : none
  return {
    status: L(`deploy.status.${d.status}`, { cause }),
    commit: d.commit ? d.commit.slice(0, 12) : none,
    hash: d.hashMatch === null ? none : L(d.hashMatch ? "deploy.hash.match" : "deploy.hash.mismatch"),
    service: d.service === null ? none : d.service === "active" ? L("deploy.service.active") : d.service,
    smoke: d.smoke === null ? none : (run()?.labels?.[`deploy.smoke.${d.smoke}`] ?? d.smoke),
    rolled: L(d.rolledBack ? "deploy.yes" : "deploy.no"),
  }
}

function Deploy() {
  const targets = () => run()?.view.deploy ?? []
  const phase = () => targets()[0]?.phase
  return html`<${Show} when=${() => targets().length > 0}>
    <section class="panel" id="deploy">
      <h2>${() => (phase() !== null && phase() !== undefined ? L("deploy.heading.phase", { phase: phase() }) : L("deploy.heading"))}</h2>
      <table>
        <thead>
          <tr>
            <th>${() => L("deploy.col.target")}</th>
            <th>${() => L("deploy.col.status")}</th>
            <th>${() => L("deploy.col.commit")}</th>
            <th>${() => L("deploy.col.hashes")}</th>
            <th>${() => L("deploy.col.service")}</th>
            <th>${() => L("deploy.col.smoke")}</th>
            <th>${() => L("deploy.col.rolledBack")}</th>
          </tr>
        </thead>
        <tbody>
          <${For} each=${targets}>${(d) => {
            const w = deployWords(d)
            return html`<tr data-target=${d.target} data-status=${d.status} title=${d.evidencePath ?? ""}>
              <td class="mono">${d.target} #${d.n}</td>
              <td><span class=${`badge ${DEPLOY_STATUS[d.status] ?? ""}`}>${w.status}</span></td>
              <td class="mono">${w.commit}</td>
              <td class=${d.hashMatch === false ? "bad" : ""}>${w.hash}</td>
              <td>${w.service}</td>
              <td class=${d.smoke === "failed" ? "bad" : ""}>${w.smoke}</td>
              <td>${w.rolled}</td>
            </tr>`
          }}<//>
        </tbody>
      </table>
    </section>
  <//>`
}

function Tasks() {
  return html`<table id="tasks">
    <thead>
      <tr>
        <th>${() => L("col.task")}</th>
        <th>${() => L("col.title")}</th>
        <th>${() => L("col.state")}</th>
        <th>${() => L("col.session")}</th>
        <th>${() => L("col.elapsed")}</th>
        <th>${() => L("col.attempts")}</th>
        <th>${() => L("col.gates")}</th>
      </tr>
    </thead>
    <tbody>
      <${For} each=${() => run()?.view.tasks ?? []}>${(task) => html`<tr data-task=${task.id} data-state=${task.state} onClick=${() => openTask(task.id)}>
          <td class="mono">${task.id}</td>
          <td>${task.title}</td>
          <td><span class="chip" style=${`background:${COLORS[task.state] ?? "#8a94a6"}`}>${stateLabel(task.state)}</span></td>
          <td class=${task.session ? "mono" : "mono muted"}>${task.session ?? lastWorker(task) ?? "—"}</td>
          <td>${duration(task.elapsedMs)}</td>
          <td>${task.repairs ? `${task.attempts} (${task.repairs}↻)` : String(task.attempts)}</td>
          <td>${() => run()?.progress?.[task.id] ?? run()?.gateLines?.[task.id] ?? "—"}</td>
        </tr>`}<//>
    </tbody>
  </table>`
}

function Timeline() {
  return html`<section class="panel" id="timeline-panel">
    <h2>${() => L("ui.timeline")} <span class="count">${() => events().length}</span></h2>
    <ol id="timeline">
      <${For} each=${() => [...events()].reverse()}>${(e) => html`<li data-seq=${e.seq} data-type=${e.type} class=${e.refused ? "refused" : ""}>
          <time datetime=${e.at}>${e.clock}</time>
          <span class="type">${e.type}</span>
          <span class="task">${e.taskId ?? ""}</span>
          <span class="text">${e.text}</span>
        </li>`}<//>
    </ol>
  </section>`
}

/** A gate's log by its own word (`ui.log.<file>`), else by its gate's name: a new gate's log needs no line here. */
const logLabel = (log) => run()?.labels?.[`ui.log.${log.key}`] ?? gateLabel(log.gate ?? log.key)

/** An evidence file of a gate run, served by the dashboard (only the files program-evidence.ts names). */
const fileUrl = (taskId, attempt, rel) => api(`api/tasks/${encodeURIComponent(taskId)}/files/${attempt}/${rel.split("/").map(encodeURIComponent).join("/")}`)

/** A ui task's before and after pictures, the changed share and the windows; a service task's network summary. */
function Program(taskId, a) {
  const p = a.program
  if (!p) return ""
  const file = (part, kind) => part?.files.find((f) => f.kind === kind)
  const picture = (f, label) =>
    f ? html`<figure class=${`shot shot-${f.kind}`}><img src=${fileUrl(taskId, a.attempt, f.rel)} alt=${label} /><figcaption>${label}</figcaption></figure>` : ""
  const links = (files) => html`<p class="files">${files.map((f) => html`<a href=${fileUrl(taskId, a.attempt, f.rel)} target="_blank" rel="noopener">${L(`evidence.${f.kind}`)}</a> `)}</p>`
  return html`<div class="program">
    ${p.ui
      ? html`<section class="capture">
          <h5>${L("ui.capture")}${p.ui.changedShare !== null ? html` <small class="changed">${L("ui.capture.changed", { share: (p.ui.changedShare * 100).toFixed(1) })}</small>` : ""}</h5>
          <div class="shots">${picture(file(p.ui, "before"), L("ui.capture.before"))}${picture(file(p.ui, "screenshot"), L("ui.capture.after"))}</div>
          ${p.ui.note ? html`<p class="muted">${p.ui.note}</p>` : ""}
          ${p.ui.windows.length ? html`<p class="windows">${L("ui.capture.windows")}: ${p.ui.windows.map((w) => `${w.title ?? "?"} ${w.width}×${w.height}`).join(", ")}</p>` : ""}
          ${links(p.ui.files)}
        </section>`
      : ""}
    ${p.service
      ? html`<section class="network">
          <h5>${L("ui.network")}</h5>
          <pre class="summary">${p.service.summary.join("\n")}</pre>
          ${links(p.service.files)}
        </section>`
      : ""}
  </div>`
}

function Attempt(a) {
  const failed = a.report?.failedGate
  return html`<section class="attempt" data-attempt=${a.attempt}>
    <h4>
      ${L("ui.attempt", { n: a.attempt })}
      <span class=${`badge ${a.report ? (a.report.passed ? "ok" : "bad") : ""}`}>${a.report ? (a.report.passed ? L("ui.passed") : L("ui.failed")) : "?"}</span>
    </h4>
    ${a.report && !a.report.passed ? html`<pre class="message">${a.report.message}</pre>` : ""}
    <ul class="gates">
      ${(a.report?.gates ?? []).map((g) => html`<li class=${g.passed ? "ok" : "bad"} title=${g.summary ?? ""}>${gateLabel(g.gate)} ${g.passed ? "✓" : "✗"} <small>${g.summary ?? ""}</small></li>`)}
    </ul>
    ${Program(a.report?.taskId ?? selected(), a)}
    ${a.inherited > 0 ? html`<p class="inherited"><span class="badge">${L("ui.inherited", { count: a.inherited })}</span></p>` : ""}
    ${a.logs.map((log) => {
      const text = log.text
      return html`<details class=${`log log-${log.key}`} open=${failed === log.gate ? true : undefined}>
        <summary>${logLabel(log)}${text === null ? html` <small>${L("ui.log.missing")}</small>` : ""}</summary>
        <pre>${text === null ? L("ui.log.missing") : text || L("ui.log.empty")}</pre>
      </details>`
    })}
  </section>`
}

function Review(review) {
  if (!review) return html`<p class="muted">${L("ui.review.none")}</p>`
  return html`<div class="review" data-verdict=${review.verdict}>
    <p><span class=${`badge ${review.verdict === "pass" ? "ok" : "bad"}`}>${L(`verdict.${review.verdict}`)}</span></p>
    <table>
      <thead><tr><th>${L("ui.design")}</th><th>${L("ui.code")}</th><th></th><th>${L("ui.note")}</th></tr></thead>
      <tbody>
        ${review.rows.map((r) => html`<tr class=${r.status}><td>${r.designRef}</td><td class="mono">${r.code}</td><td>${r.status}</td><td>${r.note ?? ""}</td></tr>`)}
      </tbody>
    </table>
    ${(review.findings ?? []).length ? html`<h5>${L("ui.findings")}</h5><ul>${review.findings.map((f) => html`<li>${f}</li>`)}</ul>` : ""}
  </div>`
}

function Evidence() {
  return html`<aside id="evidence" data-task=${() => selected() ?? ""} class=${() => (selected() ? "open" : "")}>
    <${Show} when=${() => selected()} fallback=${html`<p class="muted">${() => L("ui.evidence.pick")}</p>`}>
      ${() => {
        const ev = evidence()
        const id = selected()
        if (!ev || ev.task.id !== id) return html`<h2>${id}</h2><p class="muted">…</p>`
        const attempts = [...ev.attempts].reverse()
        return html`<div>
          <div class="evidence-head">
            <h2>${L("ui.evidence")}: ${ev.task.id} <span class="chip" style=${`background:${COLORS[ev.task.state] ?? "#8a94a6"}`}>${stateLabel(ev.task.state)}</span></h2>
            <button id="close-evidence" onClick=${() => setSelected(null)}>${L("ui.close")}</button>
          </div>
          <p class="task-title">${ev.task.title}</p>
          <h3>${L("ui.sessions")}</h3>
          <table class="sessions">
            <tbody>
              ${ev.task.sessions.map((s) => html`<tr><td class="mono">${s.sessionId}</td><td>${L(`role.${s.role}`)}</td><td>${s.attempt ?? ""}</td><td>${s.at.slice(11, 19)}</td><td>${s.requests === null ? "" : `${s.requests} ${L("ui.requests")}`}</td></tr>`)}
            </tbody>
          </table>
          <h3>${L("ui.review")}</h3>
          ${Review(ev.review)}
          <h3>${L("ui.evidence")}</h3>
          ${attempts.length ? attempts.map(Attempt) : html`<p class="muted">${L("ui.evidence.none")}</p>`}
        </div>`
      }}
    <//>
  </aside>`
}

function App() {
  return html`<div class="page">
    ${Header()}
    <main>
      <div class="left">
        <section class="panel" id="graph-panel">
          <h2>${() => L("ui.graph")}</h2>
          <div class="graph-scroll">${Graph()}</div>
          <ul class="legend">
            <${For} each=${() => [...new Set((run()?.graph.nodes ?? []).map((n) => n.state))]}>${(state) => html`<li><span class="swatch" style=${`background:${COLORS[state] ?? "#8a94a6"}`}></span>${stateLabel(state)} <small>${() => (run()?.graph.nodes ?? []).filter((n) => n.state === state).length}</small></li>`}<//>
          </ul>
          ${Tasks()}
        </section>
        ${Timeline()}
      </div>
      <div class="right">${Waiting()} ${Deploy()} ${Budgets()} ${Evidence()}</div>
    </main>
  </div>`
}

// The server embeds the catalogue and the run in the page, so the first paint is already right.
const initial = JSON.parse(document.getElementById("initial")?.textContent || "null")
if (initial) {
  batch(() => {
    setRun(initial)
    setEvents(initial.events)
  })
}

render(App, document.getElementById("app"))
connect()

import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Png } from "../../src/scheduler/runtime/verify/png"

/**
 * A ui or service task's gate run on disk as the gates leave it (gates/ui-capture.ts, ui-before.ts,
 * service-probe.ts; verify/README.md lists the files), for the readers' tests: the Reviewer's and the final
 * review's prompts, `aircoding status`, the dashboard. The pictures are real PNGs of one colour each.
 */
export const WINDOW_TITLE = "Air UI demo"

export function solidPng(path: string, rgb: readonly [number, number, number], width = 32, height = 24): void {
  const data = Buffer.alloc(width * height * 4)
  for (let i = 0; i < width * height; i++) data.set([rgb[0], rgb[1], rgb[2], 255], i * 4)
  Png.write(path, { width, height, data })
}

function attemptDir(root: string, taskId: string, attempt: number): string {
  const dir = join(root, ".air", "local", "evidence", taskId, `attempt-${attempt}`)
  mkdirSync(dir, { recursive: true })
  return dir
}

function report(dir: string, taskId: string, attempt: number, kind: string, gate: { gate: string; summary: string; logPath: string }): void {
  const gates = [{ gate: "build", passed: true, ran: true, ms: 10, summary: "built" }, { ...gate, passed: true, ran: true, ms: 900 }]
  writeFileSync(join(dir, "report.json"), JSON.stringify({ taskId, attempt, kind, passed: true, message: "passed", gates, changedFiles: [], findings: [], requires: [], evidenceDir: dir }, null, 2))
}

/** A ui task's passed capture: after (green) and before (blue) pictures, the window tree, the comparison. */
export function plantUiCapture(root: string, taskId: string, attempt = 1, opts: { before?: boolean } = {}): string {
  const dir = attemptDir(root, taskId, attempt)
  const capture = join(dir, "capture")
  mkdirSync(join(capture, "before"), { recursive: true })
  solidPng(join(capture, "screenshot.png"), [0x2e, 0x8b, 0x57])
  solidPng(join(capture, "screen.png"), [0, 0, 0], 64, 48)
  const window = { id: "0x200001", title: WINDOW_TITLE, wmClass: "", width: 320, height: 240, x: 0, y: 0, mapped: true, children: [] }
  const hidden = { ...window, id: "0x200002", title: "hidden", mapped: false }
  writeFileSync(join(capture, "windows.json"), JSON.stringify({ screen: { width: 800, height: 600 }, shown: 1, windows: [window, hidden] }))
  writeFileSync(join(capture, "program.log"), "$ .air-build/app\ncwd: .\nstatus: still running: stopped by the capture\n")
  const base = "0123456789abcdef0123456789abcdef01234567"
  if (opts.before !== false) {
    solidPng(join(capture, "before", "screenshot.png"), [0x33, 0x66, 0xcc])
    writeFileSync(join(capture, "compare.json"), JSON.stringify({ base, before: join(capture, "before", "screenshot.png"), after: join(capture, "screenshot.png"), changedShare: 0.98958 }))
  } else writeFileSync(join(capture, "compare.json"), JSON.stringify({ base, note: "no before picture: the base does not build" }))
  report(dir, taskId, attempt, "ui", { gate: "ui-capture", summary: `window shown and checked: 1 window(s), screenshot ${join(capture, "screenshot.png")}; before picture of the base 0123456789ab: 99.0% of the pixels changed`, logPath: join(capture, "screenshot.png") })
  return dir
}

export const SUMMARY_TXT = [
  "capture: capture.pcap: 10 packets on the service's loopback (at most 10000 packets of 1024 bytes, 120 s)",
  "network: the service's own namespace, interfaces: lo; no route leads anywhere else, so nothing it sends can leave it",
  "addresses seen: 127.0.0.1",
  "connections: 1",
  "  #1 127.0.0.1:40000 → 127.0.0.1:7000: closed (FIN), 10 packets",
  "     client → server: 5 bytes",
  "       | PING",
  "     server → client: 5 bytes",
  "       | PONG",
  "other packets: none",
]

/** A service task's passed probe: pcap, summary (text and json), the probe's and the service's logs. */
export function plantServiceProbe(root: string, taskId: string, attempt = 1): string {
  const dir = attemptDir(root, taskId, attempt)
  const probe = join(dir, "probe")
  mkdirSync(probe, { recursive: true })
  writeFileSync(join(probe, "capture.pcap"), Buffer.from([0xd4, 0xc3, 0xb2, 0xa1]))
  writeFileSync(join(probe, "summary.txt"), SUMMARY_TXT.join("\n") + "\n")
  const verdict = { ok: true, kind: "passed", cause: "none", reason: "the probe's output holds 'PONG'; the service listened on port 7000 after 0.1 s" }
  writeFileSync(join(probe, "summary.json"), JSON.stringify({ verdict, timings: { totalMs: 480 } }))
  writeFileSync(join(probe, "probe.log"), "$ nc -N 127.0.0.1 7000\nstdin: \"PING\\n\"\nexit: 0\n--- output ---\nPONG\n")
  writeFileSync(join(probe, "service.log"), "$ build/server\nstatus: still running at the end, then stopped\n")
  writeFileSync(join(dir, "service-probe.log"), "$ nc -N 127.0.0.1 7000\n")
  report(dir, taskId, attempt, "service", { gate: "service-probe", summary: `probe passed: ${verdict.reason}`, logPath: join(dir, "service-probe.log") })
  return dir
}

/**
 * A copy of the recorded run (test/fixtures/recorded-run) made into one with program tasks: T-1 becomes a ui task
 * and T-3 a service task in its graph, each with its gate run's capture or probe on disk; T-2 stays a code task.
 */
export function makeProgramRun(root: string): void {
  const file = join(root, ".air", "local", "state", "events.jsonl")
  const lines = readFileSync(file, "utf8").trimEnd().split("\n")
  const at = lines.findIndex((l) => l.includes('"type":"graph.accepted"'))
  const event = JSON.parse(lines[at]!)
  for (const t of event.graph.tasks) {
    if (t.id === "T-1") Object.assign(t, { kind: "ui", ui: { command: ".air-build/app", checks: { title: WINDOW_TITLE } } })
    if (t.id === "T-3") Object.assign(t, { kind: "service", service: { service: { command: "build/server" }, ports: [7000], probe: { command: "nc", expect: { contains: "PONG" } } } })
  }
  lines[at] = JSON.stringify(event)
  // The gates' evidence of each, as its kind requires it (gates.passed carries it).
  const provided: Record<string, Record<string, string>> = { "T-1": { screenshot: "capture/screenshot.png" }, "T-3": { probe: "service-probe.log", analysis: "cppcheck.log" } }
  for (const [i, line] of lines.entries()) {
    const e = JSON.parse(line)
    if (e.type !== "gates.passed" || !provided[e.taskId]) continue
    for (const [kind, file] of Object.entries(provided[e.taskId]!)) e.evidence[kind] = join(root, ".air", "local", "evidence", e.taskId, "attempt-1", file)
    lines[i] = JSON.stringify(e)
  }
  writeFileSync(file, lines.join("\n") + "\n")
  rmSync(join(root, ".air", "local", "state", "scheduler-state.json"), { force: true })
  plantUiCapture(root, "T-1", 1)
  plantServiceProbe(root, "T-3", 1)
}

import { appendFileSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, test } from "vitest"
import { eventsCommand, followEvents } from "../../src/cli/events"
import { renderStatus, statusCommand, statusText } from "../../src/cli/status"
import { RunData } from "../../src/scheduler/runtime/store/run-data"
import { RunView } from "../../src/read/view"
import { ViewRender } from "../../src/read/view-render"
import { EventText } from "../../src/read/event-text"
import { isRefused, transition } from "../../src/scheduler/core/machine"
import { RunReport } from "../../src/scheduler/runtime/report/run-report"
import { recordedEvents } from "../fixtures/recorded-run/generate"
import { capture, copyFixture, FIXTURE, golden } from "./helpers"

const cleanups: (() => void)[] = []
afterEach(() => {
  while (cleanups.length) cleanups.pop()!()
})
function fixture() {
  const copy = copyFixture()
  cleanups.push(copy.cleanup)
  return copy.root
}

describe("the recorded run fixture", () => {
  test("is a log the real machine accepts, and the snapshot is its fold", () => {
    const loaded = RunData.load(FIXTURE)
    expect(loaded.warnings).toEqual([])
    expect(loaded.entries.filter((e) => e.refused)).toEqual([])
    expect(loaded.state.finished).toEqual({ status: "done" })
    expect(loaded.state.tasks.map((t) => t.status)).toEqual(["merged", "merged", "merged"])
    const snapshot = JSON.parse(readFileSync(RunData.snapshotFile(FIXTURE), "utf8"))
    expect(snapshot.seq).toBe(32)
    expect(snapshot.state).toEqual(JSON.parse(JSON.stringify(loaded.state)))
  })

  test("the real Store opens it without a warning and folds the same state", async () => {
    const root = fixture()
    const { Store } = await import("../../src/scheduler/runtime/store/store")
    const store = await Store.open(join(root, ".air"))
    try {
      expect(store.warnings).toEqual([])
      expect(store.seq).toBe(32)
      expect(store.state).toEqual(RunData.load(FIXTURE).state)
    } finally {
      await store.close()
    }
  })

  test("matches its generator, so regenerating it changes nothing", () => {
    const lines = readFileSync(RunData.eventsFile(FIXTURE), "utf8").trimEnd().split("\n")
    expect(lines).toEqual(recordedEvents().events.map((e) => JSON.stringify(e)))
  })

  test("T-2 failed cppcheck on its first gate run and passed after the debugger", () => {
    const [first, second] = RunData.attempts(FIXTURE, "T-2")
    expect(first!.report!.failedGate).toBe("analysis")
    expect(first!.logs.find((log) => log.key === "cppcheck")).toMatchObject({ gate: "analysis", text: expect.stringContaining("uninitvar") })
    expect(second!.report!.passed).toBe(true)
  })
})

describe("aircoding status", () => {
  test("golden: the finished run in English", async () => {
    const r = await capture(() => statusCommand([FIXTURE]))
    expect(r.code).toBe(0)
    expect(r.stderr).toBe("")
    golden("status.en.txt", r.stdout)
  })

  test("golden: the finished run in Chinese (--lang zh-CN)", async () => {
    const r = await capture(() => statusCommand([FIXTURE, "--lang", "zh-CN"]))
    expect(r.code).toBe(0)
    golden("status.zh-CN.txt", r.stdout)
  })

  test("the project's config.json language picks Chinese without a flag", async () => {
    const root = fixture()
    writeFileSync(join(root, ".air", "shared", "config.json"), JSON.stringify({ language: "zh-CN" }))
    const r = await capture(() => statusCommand([root]))
    expect(r.stdout).toBe(readFileSync(join(FIXTURE, "..", "..", "cli-view", "golden", "status.zh-CN.txt"), "utf8"))
  })

  test("golden: --json is the status view", async () => {
    const r = await capture(() => statusCommand([FIXTURE, "--json"]))
    expect(r.code).toBe(0)
    const view = JSON.parse(r.stdout) as RunView.Status
    expect(view.kind).toBe("aircoding.status")
    expect(view.tasks.find((t) => t.id === "T-2")!.sessions.map((s) => s.sessionId)).toEqual(["ses_t2_exec1", "ses_t2_dbg2", "ses_t2_rev1"])
    golden("status.json", r.stdout)
  })

  for (const lang of ["en", "zh-CN"] as const) {
    test(`golden: mid-run, T-2 debugging after cppcheck and T-3 merging (${lang})`, () => {
      const { events, states } = recordedEvents()
      const n = events.findIndex((e) => e.type === "merge.started" && e.taskId === "T-3") + 1
      const state = states[n - 1]!
      // The gate reports the state knows of, as `aircoding status` reads them from evidence/.
      const gateReports = Object.fromEntries(state.tasks.map((rt) => [rt.id, RunData.lastGateReport(FIXTURE, rt.id, rt.gateRuns)]))
      const view = RunView.build({ state, entries: events.slice(0, n).map((event) => ({ event })), gateReports, now: "2026-11-29T09:08:30.000Z" })
      golden(`status-mid.${lang}.txt`, ViewRender.render(view, lang))
    })

    test(`golden: waiting for the user's confirmation of the plan (${lang})`, () => {
      const { states } = recordedEvents()
      golden(`status-confirming.${lang}.txt`, renderStatus(states[1]!, lang))
    })
  }

  for (const lang of ["en", "zh-CN"] as const) {
    test(`golden: a worker blocked on a question, and the run waiting for the answer (${lang})`, () => {
      const { events, states } = recordedEvents()
      const n = events.findIndex((e) => e.type === "task.dispatched" && e.taskId === "T-1") + 1
      const blocked = {
        type: "worker.reported" as const,
        at: "2026-11-29T09:02:10.000Z",
        seq: n + 1,
        taskId: "T-1",
        sessionId: "ses_t1_exec1",
        result: { taskId: "T-1", role: "executor" as const, summary: "", blocked: { reason: "should unary minus be a token or part of a number?" } },
      }
      const consulted = transition(states[n - 1]!, blocked)
      if (isRefused(consulted)) throw new Error(consulted.refused)
      // A worker's "blocked" reaches the Architect first; the user is asked only when the Architect cannot decide.
      const architect = { type: "consult.answered" as const, at: "2026-11-29T09:02:20.000Z", seq: n + 2, taskId: "T-1", choice: "block", by: "architect" as const, reason: "the user owns the grammar" }
      const result = transition(consulted.state, architect)
      if (isRefused(result)) throw new Error(result.refused)
      const entries = [...events.slice(0, n), blocked, architect].map((event) => ({ event }))
      golden(`status-question.${lang}.txt`, ViewRender.render(RunView.build({ state: result.state, entries }), lang))
      golden(`events-question.${lang}.txt`, entries.slice(-3).map((e) => EventText.eventLine(e, lang) + "\n").join(""))
    })
  }

  test("renderStatus takes a SchedulerState or a RunReport summary, purely", () => {
    const { states } = recordedEvents()
    const state = states[states.length - 1]!
    const fromState = renderStatus(state, "en")
    expect(fromState).toMatch(/T-2  merged ×2 \(1↻\) · \S+ · Recursive-descent parser and evaluator/)
    expect(fromState).toContain("nothing: the run is finished")
    const summary = RunReport.summary(FIXTURE, state)
    const fromSummary = renderStatus(summary, "en")
    expect(fromSummary).toContain("Run run-20261129-0900 — done")
    expect(fromSummary).toContain("Model requests: 35")
  })

  test("statusText gives the same text as the command, for the air_status tool", async () => {
    expect(statusText(FIXTURE, "zh-CN")).toBe((await capture(() => statusCommand([FIXTURE, "--lang", "zh-CN"]))).stdout)
  })

  test("a directory with no run says so and exits 1", async () => {
    const root = fixture()
    rmSync(join(root, ".air"), { recursive: true })
    const r = await capture(() => statusCommand([root]))
    expect(r.code).toBe(1)
    expect(r.stdout).toContain("No AirCoding run in")
  })

  test("with no log, the snapshot is read", async () => {
    const root = fixture()
    rmSync(RunData.eventsFile(root))
    const r = await capture(() => statusCommand([root]))
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/T-3  merged · \S+ · Unit tests for the tokenizer/)
  })

  test("a corrupt line is named and skipped; a torn last line is ignored", async () => {
    const root = fixture()
    const file = RunData.eventsFile(root)
    const lines = readFileSync(file, "utf8").trimEnd().split("\n")
    writeFileSync(file, [lines[0], "{not json", ...lines.slice(1)].join("\n") + '\n{"type":"run.pau')
    const r = await capture(() => statusCommand([root]))
    expect(r.code).toBe(0)
    expect(r.stderr).toMatch(/events\.jsonl:2: not valid JSON/)
    expect(r.stdout).toContain("run-20261129-0900 — done")
  })

  test("--help prints the usage; an unknown flag or language is a usage error", async () => {
    expect((await capture(() => statusCommand(["--help"]))).stdout).toContain("aircoding status [dir] [--json]")
    expect((await capture(() => statusCommand(["--bogus"]))).code).toBe(1)
    const bad = await capture(() => statusCommand([FIXTURE, "--lang", "fr"]))
    expect(bad.code).toBe(1)
    expect(bad.stderr).toContain('unknown language "fr"')
  })
})

describe("aircoding events", () => {
  test("golden: the log as readable lines in English", async () => {
    const r = await capture(() => eventsCommand([FIXTURE]))
    expect(r.code).toBe(0)
    golden("events.en.txt", r.stdout)
  })

  test("golden: the log as readable lines in Chinese", async () => {
    const r = await capture(() => eventsCommand([FIXTURE, "--lang", "zh-CN"]))
    expect(r.code).toBe(0)
    golden("events.zh-CN.txt", r.stdout)
  })

  test("--json prints the raw events as JSON lines", async () => {
    const r = await capture(() => eventsCommand([FIXTURE, "--json"]))
    expect(r.stdout).toBe(readFileSync(RunData.eventsFile(FIXTURE), "utf8"))
  })

  test("--follow prints appended events, a torn line only once it is complete", async () => {
    const root = fixture()
    const file = RunData.eventsFile(root)
    const out: string[] = []
    const controller = new AbortController()
    const done = followEvents(root, { follow: true, lang: "en", write: (s) => out.push(s), signal: controller.signal, pollMs: 20 })
    await until(() => out.length === 32)
    const line = JSON.stringify({ seq: 33, type: "change.requested", at: "2026-11-29T09:20:00.000Z", text: "Also support the ^ operator" })
    appendFileSync(file, line.slice(0, 30))
    await new Promise((r) => setTimeout(r, 120))
    expect(out.length).toBe(32)
    appendFileSync(file, line.slice(30) + "\n")
    await until(() => out.length === 33)
    expect(out[32]).toBe("09:20:00  change.requested    -       requirement change: Also support the ^ operator\n")
    controller.abort()
    expect(await done).toBe(0)
  })

  test("no log: exit 1 with a message", async () => {
    const root = fixture()
    rmSync(RunData.eventsFile(root))
    const r = await capture(() => eventsCommand([root]))
    expect(r.code).toBe(1)
    expect(r.stderr).toContain("No events yet")
  })

  test("--help prints the usage", async () => {
    const r = await capture(() => eventsCommand(["-h"]))
    expect(r.code).toBe(0)
    expect(r.stdout).toContain("aircoding events [dir] [--follow] [--json]")
  })
})

async function until(check: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms
  while (!check()) {
    if (Date.now() > end) throw new Error("timed out waiting")
    await new Promise((r) => setTimeout(r, 10))
  }
}

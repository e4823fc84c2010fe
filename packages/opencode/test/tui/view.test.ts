import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { catalog, KEYS, LANGS } from "../../src/text/words"
import { readStatus } from "../../src/read/status-read"
import { RunData } from "../../src/scheduler/runtime/store/run-data"
import { isRefused, transition } from "../../src/scheduler/core/machine"
import { initialState, type SchedulerState } from "../../src/scheduler/core/state"
import { TuiView } from "../../src/tui/view"
import { RunView } from "../../src/read/view"
import { ViewRender } from "../../src/read/view-render"
import { EventText } from "../../src/read/event-text"
import { TerminalText } from "../../src/text/terminal-text"
import { PlanView } from "../../src/text/plan-view"
import { SCHEMA_VERSION, TaskGraph } from "../../src/scheduler/core/task.schema"
import { copyFixture } from "../cli-view/helpers"
import { golden } from "./golden"

/** The sidebar, dialogs and toasts of the TUI plugin, from the recorded run (test/fixtures/recorded-run). */
let fixture: { root: string; cleanup: () => void }
let loaded: RunData.Loaded

beforeAll(() => {
  fixture = copyFixture()
  loaded = RunData.load(fixture.root)
})
afterAll(() => fixture.cleanup())

const render = (s: TuiView.Sidebar) => [s.heading, ...s.tasks, { text: s.waitingHeading, tone: "muted" }, ...s.waiting].map((l) => `${l.tone.padEnd(7)} ${l.text}`).join("\n") + "\n"

/** The state after the first n accepted events of the recorded run. */
function stateAt(n: number): SchedulerState {
  let state = initialState()
  for (const entry of loaded.entries.filter((e) => !e.refused).slice(0, n)) {
    const r = transition(state, entry.event)
    if (!isRefused(r)) state = r.state
  }
  return state
}

describe("the sidebar", () => {
  for (const lang of LANGS)
    test(`the finished recorded run, ${lang} (golden)`, () => {
      const v = readStatus(fixture.root, loaded.state, loaded.entries)
      const s = TuiView.sidebar(v, lang)
      expect(s.tasks.filter((l) => /^T-/.test(l.text)).length).toBe(loaded.state.tasks.length)
      golden(`sidebar-recorded.${lang}.txt`, render(s))
    })

  test("a project with no run says how to start one", () => {
    const empty = RunData.load("/nonexistent-air-project")
    const s = TuiView.sidebar(readStatus("/nonexistent-air-project", empty.state, []), "en")
    expect(s.tasks).toEqual([])
    expect(s.waiting[0]!.text).toMatch(/describe what to build/)
  })

  test("each task line names its state; long lists end with how many more", () => {
    const v = readStatus(fixture.root, loaded.state, loaded.entries)
    const s = TuiView.sidebar(v, "en", 1)
    expect(s.tasks[0]!.text).toMatch(new RegExp(`^${loaded.state.tasks[0]!.id} merged`))
    expect(s.tasks.at(-1)!.text).toBe(`… ${loaded.state.tasks.length - 1} more`)
  })
})

describe("the home screen", () => {
  test("a run waiting for the plan's confirmation says so; a finished one says every task merged; no run, what AirCoding is and what to type", () => {
    const waiting = readStatus(fixture.root, stateAt(2), [])
    const lines = TuiView.home(waiting, "zh-CN")
    expect(lines[0]!.text).toBe("AirCoding · 等待中")
    expect(lines[1]!.text).toMatch(/^等待 · 你对计划的确认：/)
    const done = readStatus(fixture.root, loaded.state, loaded.entries)
    const n = loaded.state.tasks.length
    expect(TuiView.home(done, "en")[0]!.text).toBe(`AirCoding · ${TuiView.statusWord("en", done)} · ${n} of ${n} tasks merged`)
    const empty = RunData.load("/nonexistent-air-project")
    const intro = TuiView.home(readStatus("/nonexistent-air-project", empty.state, []), "en", 76)
    expect(intro[0]!.text).toMatch(/^AirCoding is loaded/)
    expect(intro.map((l) => l.text).join(" ")).toContain("/air-status")
    for (const line of intro) expect(TerminalText.displayWidth(line.text)).toBeLessThanOrEqual(76)
    const zh = TuiView.home(readStatus("/nonexistent-air-project", empty.state, []), "zh-CN", 40)
    expect(zh[0]!.text).toMatch(/^AirCoding 已加载/)
    for (const line of zh) expect(TerminalText.displayWidth(line.text)).toBeLessThanOrEqual(40)
  })
})

describe("what waits on the user", () => {
  test("a proposed plan asks for confirmation; a revised proposal gets a new key, other events do not", () => {
    const proposed = stateAt(2)
    expect(proposed.stage).toBe("confirming")
    const a = TuiView.ask(proposed)
    expect(a).toMatchObject({ kind: "plan", summary: proposed.planSummary })
    expect(TuiView.ask({ ...proposed, eventCount: proposed.eventCount + 2 })!.key).toBe(a!.key)
    const revised = TuiView.ask({ ...proposed, planSummary: "Two tasks instead." })
    expect(revised!.key).not.toBe(a!.key)
  })

  test("an open question asks for an answer; nothing asks once the run runs on", () => {
    const running = stateAt(4)
    expect(TuiView.ask(running)).toBeNull()
    const asked = { ...running, questions: [{ questionId: "Q-1", taskId: "T-2", text: "Which rounding?" }] }
    expect(TuiView.ask(asked)).toEqual({ kind: "question", key: "question:Q-1", questionId: "Q-1", text: "Which rounding?" })
  })
})

describe("toasts", () => {
  test("merges, the graph, the end of the run: one toast each, none for a state that did not move", () => {
    const first = stateAt(2)
    const last = loaded.state
    const toasts = TuiView.toasts(first, last, "en").map((t) => t.message)
    expect(toasts).toContain(`Plan accepted: ${last.graph!.tasks.length} tasks`)
    for (const rt of last.tasks) expect(toasts.some((m) => m.startsWith(`${rt.id} merged`))).toBe(true)
    expect(toasts).toContain("Run finished: every task merged")
    expect(TuiView.toasts(last, last, "en")).toEqual([])
    // A fold that is behind the last one shown (a re-read log) never brings an old toast back.
    expect(TuiView.toasts(last, first, "en")).toEqual([])
  })

  test("a blocked task and a pause are said in the user's language", () => {
    const s = stateAt(4)
    const blocked = {
      ...s,
      eventCount: s.eventCount + 1,
      paused: true,
      tasks: s.tasks.map((rt, i) => (i === 0 ? { ...rt, status: "blocked" as const, lastFailure: { source: "build", message: "no such file", evidencePath: null } } : rt)),
    }
    const zh = TuiView.toasts(s, blocked, "zh-CN").map((t) => t.message)
    expect(zh).toContain(`${s.tasks[0]!.id} 受阻：no such file`)
    expect(zh).toContain("运行已暂停")
  })
})

test("the TUI's words are the one catalogue's tui.* keys, in both languages", () => {
  const tuiKeys = KEYS.filter((k) => k.startsWith("tui."))
  expect(tuiKeys.length).toBeGreaterThan(30)
  for (const lang of LANGS) for (const key of tuiKeys) expect(catalog(lang)[key], `${lang} ${key}`).toBeTruthy()
})

describe("the plan a person confirms", () => {
  const draft = TaskGraph.parse({
    schemaVersion: SCHEMA_VERSION,
    tasks: [
      { id: "T-1", title: "Add calc::mul", kind: "code", doneWhen: "mul works", writeSet: [{ path: "include/calc.h", action: "modify", region: "multiplicative" }, { path: "src/calc.cpp", action: "modify" }] },
      { id: "T-2", title: "Tests for mul", kind: "test", phase: 2, deps: ["T-1"], doneWhen: "tests pass", writeSet: [{ path: "tests/test_mul.cpp", action: "create" }, { path: "tests/old.cpp", action: "delete" }] },
    ],
  })

  test("a proposal with drafted tasks is stored in the state and offered to the dialog; a later one without tasks drops them", () => {
    const step = (s: SchedulerState, e: Parameters<typeof transition>[1]): SchedulerState => {
      const r = transition(s, e)
      if (isRefused(r)) throw new Error(r.refused)
      return r.state
    }
    let s = step(initialState(), { type: "run.started", at: "2026-12-01T10:00:00.000Z", runId: "run-x", requirement: "mul", config: stateAt(2).config! })
    s = step(s, { type: "plan.proposed", at: "2026-12-01T10:00:01.000Z", summary: "Two tasks.", graph: draft })
    expect(s.proposedGraph?.tasks.map((n) => n.id)).toEqual(["T-1", "T-2"])
    const a = TuiView.ask(s)
    expect(a).toMatchObject({ kind: "plan", summary: "Two tasks." })
    expect(a?.kind === "plan" && a.graph?.tasks.length).toBe(2)
  })

  test("each task shows its kind, phase, dependencies and the files it creates, modifies or deletes; the ADRs by title", () => {
    const en = PlanView.lines(draft, ["ADR-1 Integer arithmetic stays in namespace calc"], "en", 60).map((l) => l.text)
    expect(en).toEqual([
      "Tasks (2)",
      "T-1  Add calc::mul",
      "     code · phase 1 · no dependencies",
      "     modifies include/calc.h (multiplicative), src/calc.cpp",
      "T-2  Tests for mul",
      "     test · phase 2 · after T-1",
      "     creates tests/test_mul.cpp",
      "     deletes tests/old.cpp",
      "Decisions (ADRs)",
      "  ADR-1 Integer arithmetic stays in namespace calc",
    ])
    const zh = PlanView.lines(draft, [], "zh-CN", 30).map((l) => l.text)
    expect(zh).toContain("     测试 · 阶段 2 · 依赖 T-1")
    for (const line of zh) expect(TerminalText.displayWidth(line)).toBeLessThanOrEqual(30)
  })
})

describe("retries and rate-limit pauses", () => {
  test("a retry or pause in the log shows in the sidebar with the time of the next attempt, until the work moves on", () => {
    const s = stateAt(6)
    const at = s.lastAt!
    const later = new Date(Date.parse(at) + 30_000).toISOString()
    const taskId = s.tasks[0]!.id
    // The events as the runtime writes them (ports.ts: runLimiter and retryingEvent).
    const entries = [
      { event: { type: "rate.limited", at, seq: 1, until: later, cap: 1, sessionId: "ses-a", message: "Rate limit reached" } },
      { event: { type: "model.retrying", at, seq: 2, sessionId: "ses-b", role: "executor", taskId, attempt: 1, nextAt: later, message: "Overloaded" } },
      { event: { type: "model.retrying", at, seq: 3, sessionId: "ses-c", role: "architect", attempt: 2, nextAt: later, message: "Bad gateway" } },
    ] as unknown as RunData.Entry[]
    const view = RunView.build({ state: s, entries, now: at })
    const clock = later.slice(11, 19)
    expect(TuiView.sidebar(view, "en").waiting.map((w) => w.text)).toEqual(
      expect.arrayContaining([`model calls paused until ${clock} (rate limit)`, `${taskId}: the executor's model call retries at ${clock}`, `the architect's model call retries at ${clock}`]),
    )
    expect(TuiView.sidebar(view, "zh-CN").waiting.map((w) => w.text)).toEqual(expect.arrayContaining([`${taskId}：执行者的模型请求将于 ${clock} 重试`, `架构师的模型请求将于 ${clock} 重试`]))
    expect(ViewRender.render(view, "en")).toContain(`- ${taskId}: the executor's model call retries at ${clock}`)
    // The task reported (work moved on), the rate limit eased: only the Architect's retry is left, until its time passes.
    const moved = [
      ...entries,
      { event: { type: "worker.reported", at, seq: 4, taskId } },
      { event: { type: "rate.eased", at, seq: 5, cap: 2 } },
    ] as unknown as RunData.Entry[]
    expect(RunView.build({ state: s, entries: moved, now: at }).retries?.map((r) => r.role)).toEqual(["architect"])
    expect(RunView.build({ state: s, entries: moved, now: new Date(Date.parse(later) + 1000).toISOString() }).retries).toEqual([])
  })

  test("the event line says the attempt, the provider's words and the time of the next one", () => {
    const entry = { event: { type: "model.retrying", at: "2026-12-01T10:00:00.000Z", seq: 9, sessionId: "ses-b", role: "debugger", taskId: "T-2", attempt: 3, nextAt: "2026-12-01T10:00:08.000Z", message: "Service Unavailable" } } as unknown as RunData.Entry
    expect(EventText.describe(entry, "en")).toBe("the debugger's model call failed (attempt 3: Service Unavailable); the engine tries again at 10:00:08")
  })
})

describe("the compact run view (below the sidebar's 120 columns)", () => {
  const accepted = () => loaded.entries.filter((e) => !e.refused)
  const viewAt = (n: number) => readStatus(fixture.root, stateAt(n), accepted().slice(0, n))

  for (const lang of LANGS)
    test(`the finished run in two lines of at most 80 columns, ${lang}`, () => {
      const lines = TuiView.compact(readStatus(fixture.root, loaded.state, loaded.entries), lang, 80)
      const total = loaded.state.tasks.length
      expect(lines[0]!.text).toContain(catalog(lang)["tui.home.merged"]!.replace("{merged}", String(total)).replace("{total}", String(total)))
      expect(lines.length).toBeLessThanOrEqual(2)
      for (const l of lines) expect(TerminalText.displayWidth(l.text)).toBeLessThanOrEqual(80)
    })

  test("what waits on the person comes first: the plan's confirmation, as a warning", () => {
    const n = accepted().findIndex((e) => e.event.type === "plan.proposed") + 1
    expect(n).toBeGreaterThan(0)
    const v = viewAt(n)
    expect(v.waitingFor.map((w) => w.kind)).toContain("confirm")
    const lines = TuiView.compact(v, "en", 60)
    expect(lines[1]).toMatchObject({ tone: "warning" })
    expect(lines[1]!.text).toMatch(/^Waiting for · /)
    for (const l of lines) expect(TerminalText.displayWidth(l.text)).toBeLessThanOrEqual(60)
  })

  test("no run: nothing (the first screen says what to type)", () => {
    const empty = RunData.load("/nonexistent-air-project")
    expect(TuiView.compact(readStatus("/nonexistent-air-project", empty.state, []), "en")).toEqual([])
  })
})

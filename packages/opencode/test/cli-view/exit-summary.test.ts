import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, test } from "vitest"
import { ExitSummary } from "../../src/cli/exit-summary"
import { printSummary } from "../../src/cli/run"
import { capture } from "./helpers"
import { PlanView } from "../../src/text/plan-view"
import { RunReport } from "../../src/scheduler/runtime/report/run-report"
import { transition } from "../../src/scheduler/core/machine"
import { initialState, type SchedulerState } from "../../src/scheduler/core/state"
import type { Event } from "../../src/scheduler/core/event.schema"
import { graphOf, steps, task, type EventInput } from "../scheduler/fixtures"
import { TEST_CONFIG } from "../scheduler/simulate"

/**
 * What `aircoding run` prints and writes in --json when the run stops for a person (issue 39 items 7 and 8):
 * each open question with the command that answers it, what merged while the questions waited, and a plan to
 * confirm with its tasks' files and its decisions (ADRs), as the TUI's dialog shows it.
 */
const roots: string[] = []
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true })
})

/** A project with two ADRs, one whose heading repeats its id. */
function project(): string {
  const root = mkdtempSync(join(tmpdir(), "air-exit-summary-"))
  roots.push(root)
  const adr = join(root, ".air", "shared", "plan", "adr")
  mkdirSync(adr, { recursive: true })
  writeFileSync(join(adr, "ADR-2.md"), "# ADR-2: Errors are return codes\n\nStatus: accepted\n")
  writeFileSync(join(adr, "ADR-1.md"), "# Integer arithmetic stays in namespace calc\n\nStatus: accepted\n")
  return root
}

/** Applies events one second apart (the histories' times are what "meanwhile" is read from). */
function run(...events: EventInput[]): SchedulerState {
  let state = initialState()
  events.forEach((event, i) => {
    const result = transition(state, { ...event, at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString() } as Event)
    if ("refused" in result) throw new Error(`${event.type} refused: ${result.refused}`)
    state = result.state
  })
  return state
}

const graph = graphOf(
  task("T-1"),
  task("T-2", { writeSet: [{ path: "include/calc.h", action: "modify" }, { path: "src/mul.cpp", action: "create" }] }),
  task("T-3", { deps: ["T-1"] }),
  task("T-4"),
)
const begin: EventInput[] = [
  { type: "run.started", runId: "r1", requirement: "req", config: { ...TEST_CONFIG, concurrency: 3 } },
  { type: "plan.proposed", summary: "Four tasks.", graph },
  { type: "plan.confirmed" },
  { type: "graph.accepted", graph },
  steps.dispatched("T-1"),
  steps.dispatched("T-2"),
  steps.dispatched("T-4"),
]
const merge = (id: string): EventInput[] => [steps.reported(id), steps.gatesPassed(id), steps.reviewPass(id), steps.merged(id)]
const ask: EventInput[] = [
  { type: "worker.reported", taskId: "T-1", sessionId: "s-T-1-1", result: { taskId: "T-1", role: "executor", summary: "", blocked: { reason: "which API?" } } },
  { type: "consult.answered", taskId: "T-1", choice: "block", by: "architect", reason: "the user must pick the API" },
]
const resume = "aircoding run /p --resume --yes"

describe("what merged while the questions waited", () => {
  test("the tasks merged after the questioned task was blocked, not those merged before", () => {
    const state = run(...begin, ...merge("T-4"), ...ask, ...merge("T-2"))
    expect([state.stage, state.finished?.status]).toEqual(["finished", "blocked"])
    expect(RunReport.mergedMeanwhile(state)).toEqual(["T-2"])
  })

  test("nothing while no task question is open", () => {
    expect(RunReport.mergedMeanwhile(run(...begin, ...merge("T-4")))).toEqual([])
  })
})

describe("the exit summary's waits", () => {
  test("each question with the command that answers it by its id, and what merged meanwhile", () => {
    const state = run(...begin, ...merge("T-4"), ...ask, ...merge("T-2"))
    const waits = ExitSummary.waits(project(), state, resume)
    expect(waits).toEqual({
      waitingFor: [expect.objectContaining({ kind: "question", questionId: "T-1:blocked:1" })],
      answerWith: [{ questionId: "T-1:blocked:1", command: `${resume} --answer "T-1:blocked:1: <your answer>"` }],
      meanwhile: { merged: ["T-2"] },
    })
  })

  test("in words: the question, its command under it, then what merged — in English and Chinese", () => {
    const state = run(...begin, ...ask)
    const shown = { questions: RunReport.summary(project(), state).questions, ...ExitSummary.waits(project(), state, resume) }
    const en = ExitSummary.questionLines(shown, "en")
    expect(en).toEqual([
      expect.stringMatching(/^Question T-1:blocked:1: Task T-1 \(Add T-1\) is blocked: .*How should it continue\?$/),
      `  answer with: ${resume} --answer "T-1:blocked:1: <your answer>"`,
      "Nothing merged while the questions waited.",
    ])
    const zh = ExitSummary.questionLines({ ...shown, meanwhile: { merged: ["T-2", "T-4"] } }, "zh-CN")
    expect(zh[0]).toMatch(/^问题 T-1:blocked:1：/)
    expect(zh[1]).toBe(`  回答方式：${resume} --answer "T-1:blocked:1: <your answer>"`)
    expect(zh[2]).toMatch(/^等待回答期间已合并：T-2.*T-4。$/)
  })

  test("aircoding run's text output: the tasks, then each question with its command, then what merged meanwhile", async () => {
    const root = project()
    const state = run(...begin, ...merge("T-4"), ...ask, ...merge("T-2"))
    const summary = { ...RunReport.summary(root, state), ...ExitSummary.waits(root, state, resume), answer: "", wallTimeMs: 1000, errors: [] }
    const out = await capture(async () => (printSummary({ exitCode: 2, summary }, false, root), 0))
    const lines = out.stdout.split("\n")
    const asked = lines.findIndex((l) => l.startsWith("Question T-1:blocked:1: "))
    expect(lines.slice(asked + 1, asked + 3)).toEqual([`  answer with: ${resume} --answer "T-1:blocked:1: <your answer>"`, "Merged while the questions waited: T-2."])
    // The commands by id replace the one generic "Answer with" line.
    expect(out.stdout).not.toContain("Answer with:")
  })

  test("a run that needs nobody adds nothing", () => {
    expect(ExitSummary.waits(project(), run(...begin), resume)).toEqual({})
  })
})

describe("the plan everywhere: --json plan, the text output and plan.md carry each task's files and the ADRs", () => {
  const confirming = () => run(...begin.slice(0, 2))

  test("--json: the plan's graph (files in each task's writeSet) and its ADRs, with their titles and files", () => {
    const waits = ExitSummary.waits(project(), confirming(), resume) as ExitSummary.Waits
    expect(waits.plan).toEqual({
      summary: "Four tasks.",
      file: ".air/shared/plan/plan.md",
      graph,
      adrs: [
        { id: "ADR-1", title: "Integer arithmetic stays in namespace calc", file: ".air/shared/plan/adr/ADR-1.md" },
        { id: "ADR-2", title: "Errors are return codes", file: ".air/shared/plan/adr/ADR-2.md" },
      ],
    })
  })

  test("the text output: the summary, each task with its files, then the decisions", () => {
    const waits = ExitSummary.waits(project(), confirming(), resume) as ExitSummary.Waits
    const lines = ExitSummary.planLines(waits.plan, "en")
    expect(lines[0]).toBe("The plan waits for your confirmation (.air/shared/plan/plan.md): Four tasks.")
    expect(lines).toContain("  T-2  Add T-2")
    expect(lines).toContain("       creates src/mul.cpp")
    expect(lines).toContain("       modifies include/calc.h")
    expect(lines.slice(-3)).toEqual(["  Decisions (ADRs)", "    ADR-1 Integer arithmetic stays in namespace calc", "    ADR-2 Errors are return codes"])
    expect(ExitSummary.planLines(waits.plan, "zh-CN")).toContain("       新建 src/mul.cpp")
  })

  test("plan.md: the tasks with their files under one heading, the decisions under another", () => {
    const md = PlanView.markdown("Four tasks.", graph, PlanView.adrTitles(project()))
    expect(md).toMatch(/^# Plan\n\nFour tasks\.\n\n## Tasks \(4\)\n\nT-1  Add T-1\n/)
    expect(md).toContain("     creates src/mul.cpp\n")
    expect(md).toMatch(/\n\n## Decisions \(ADRs\)\n\n {2}ADR-1 Integer arithmetic stays in namespace calc\n {2}ADR-2 Errors are return codes\n$/)
    expect(PlanView.markdown("Just a summary.", null, [])).toBe("# Plan\n\nJust a summary.\n")
  })
})

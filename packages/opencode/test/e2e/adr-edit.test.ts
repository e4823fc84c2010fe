import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { passingReviewer, readJsonl, runScenario, shellStep, trivialProject, type RunResult, submittingMain } from "../support/runs"

/**
 * An accepted ADR edited by hand in the middle of a run. The Architect writes ADR-1 ("version 1") and
 * three tasks: T-1 and T-3 cite it, T-2 sits between them. While T-2 works, the test rewrites ADR-1
 * ("version 2"), as a person would. The runtime notices at T-2's gates (the hash in the log no longer
 * matches), T-3 is held, the Architect classifies the edit as a decision change, and the Scheduler
 * re-verifies the merged T-1 (T-1.rv) and lets T-3 start on the edited ADR.
 */
const requirement = "Write the core notes, link them, and write the usage notes."
const adrV1 = "Notes describe version 1 of the core."
const adrV2 = "Notes describe version 2 of the core."
const tasks = [
  { id: "T-1", title: "Write the core notes", kind: "docs", adrRefs: ["ADR-1"], writeSet: [{ path: "docs/core.md", action: "create" }], doneWhen: "docs/core.md follows ADR-1" },
  { id: "T-2", title: "Link the core notes from the README", kind: "docs", deps: ["T-1"], writeSet: [{ path: "README.md", action: "modify" }], doneWhen: "README.md links docs/core.md" },
  { id: "T-3", title: "Write the usage notes", kind: "docs", deps: ["T-2"], adrRefs: ["ADR-1"], writeSet: [{ path: "docs/usage.md", action: "create" }], doneWhen: "docs/usage.md follows ADR-1" },
]
const report = [{ tool: "air_report", args: { summary: "done" } }, { text: "Reported." }]
const scenario = {
  name: "adr-edit",
  scripts: [
    submittingMain(requirement),
    {
      agent: "architect",
      match: "^Requirement:",
      steps: [
        { tool: "air_adr", args: { id: "ADR-1", title: "Notes describe one version", status: "accepted", body: adrV1 } },
        { tool: "air_propose", args: { summary: "Three docs tasks." } },
        { tool: "air_plan", args: { tasks } },
        { text: "Planned." },
      ],
    },
    {
      agent: "architect",
      match: "^ADR-1 was edited",
      steps: [
        { tool: "air_decide", args: { choice: "decision-change", reason: "the notes now describe version 2" }, expect: { lastUserIncludes: ["As accepted:", "version 1", "As it is now:", "version 2", "T-1 · merged", "T-3 · pending"] } },
        { text: "Classified." },
      ],
    },
    { agent: "executor", match: "^Task T-1:", steps: [shellStep("mkdir -p docs && printf 'Core: version 1\\n' > docs/core.md && git add -A && git commit -q -m core"), ...report] },
    // Slow enough for the test to edit ADR-1 while T-2 works.
    { agent: "executor", match: "^Task T-2:", steps: [{ ...shellStep("printf 'See docs/core.md\\n' >> README.md && git add -A && git commit -q -m link"), delayMs: 8000 }, ...report] },
    {
      agent: "executor",
      match: "^Task T-3:",
      steps: [{ ...shellStep("printf 'Usage: version 2\\n' > docs/usage.md && git add -A && git commit -q -m usage"), expect: { lastUserIncludes: [adrV2] } }, ...report],
    },
    {
      agent: "executor",
      match: "^Task T-1\\.rv:",
      steps: [{ ...shellStep("grep -q 'version' docs/core.md"), expect: { lastUserIncludes: ["verify task", "edited ADR-1", adrV2] } }, { tool: "air_report", args: { summary: "docs/core.md checked against ADR-1 as edited." } }, { text: "Reported." }],
    },
    passingReviewer,
  ],
}

let sandbox: Sandbox
let project: string
let r: RunResult
let edited = false

beforeAll(async () => {
  sandbox = makeSandbox("air-adr-edit-")
  project = trivialProject(sandbox, { "README.md": "# Core\n" })
  const log = join(project, ".air/local/state/events.jsonl")
  const adr = join(project, ".air/shared/plan/adr/ADR-1.md")
  // The person: once T-2 is dispatched, ADR-1 is rewritten by hand.
  const watcher = setInterval(() => {
    if (edited || !existsSync(log)) return
    if (!readJsonl(log).some((e) => e.type === "task.dispatched" && e.taskId === "T-2")) return
    writeFileSync(adr, readFileSync(adr, "utf8").replace(adrV1, adrV2))
    edited = true
  }, 200)
  try {
    r = await runScenario(sandbox, project, scenario, { input: requirement })
  } finally {
    clearInterval(watcher)
  }
}, 900_000)

afterAll(() => sandbox?.cleanup())

const at = (pred: (e: any) => boolean) => r.events.findIndex(pred)

describe("an accepted ADR edited by hand mid-run", () => {
  test("the run ends done, with T-1 re-verified", () => {
    expect(edited).toBe(true)
    expect(r.code, r.stderr.slice(-3000)).toBe(0)
    expect(r.summary.status).toBe("done")
    expect(r.summary.tasks.map((t: any) => [t.id, t.state])).toEqual([
      ["T-1", "merged"],
      ["T-2", "merged"],
      ["T-3", "merged"],
      ["T-1.rv", "merged"],
    ])
  })

  test("the edit is noticed by its hash, classified by the Architect, and cascades to the tasks citing ADR-1", () => {
    const recorded = r.events.find((e) => e.type === "adr.recorded")
    const edit = r.events.find((e) => e.type === "adr.edited")
    expect(recorded).toMatchObject({ adr: "ADR-1" })
    expect(edit).toMatchObject({ adr: "ADR-1" })
    expect(edit.hash).not.toBe(recorded.hash)
    expect(r.events.find((e) => e.type === "adr.classified")).toMatchObject({ adr: "ADR-1", hash: edit.hash, kind: "decision-change" })
    const classified = at((e) => e.type === "adr.classified")
    // T-3 cites ADR-1: it starts only after the classification; the verify task of T-1 too.
    expect(at((e) => e.type === "task.dispatched" && e.taskId === "T-3")).toBeGreaterThan(classified)
    expect(at((e) => e.type === "task.dispatched" && e.taskId === "T-1.rv")).toBeGreaterThan(classified)
    expect(at((e) => e.type === "adr.edited")).toBeGreaterThan(at((e) => e.type === "merge.succeeded" && e.taskId === "T-1"))
    // T-1 is not redone: its merged work is checked again.
    expect(r.events.filter((e) => e.type === "merge.succeeded" && e.taskId === "T-1")).toHaveLength(1)
  })

  test("the accepted text is kept for the next comparison", () => {
    expect(readFileSync(join(project, ".air/local/adr-accepted/ADR-1.md"), "utf8")).toContain(adrV2)
  })
})

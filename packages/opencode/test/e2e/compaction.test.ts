import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { passingReviewer, runScenario, trivialProject, writeAndReport, type RunResult, planningArchitect } from "../support/runs"

/**
 * Issue 38, items 4 and 8, with the real binary: Main's conversation outgrows the model's context (its first
 * request reports 190 000 prompt tokens of the scripted model's 200 000), so the engine compacts it. The
 * compaction agent's summary drops the file paths the requirement named; the check sees it, and the summary
 * is redone once with a prompt naming them; the redone summary drops them again, so they are appended from
 * the record. Main's next requests carry them after the summary, the log has `context.compacted` with the
 * counts, and the user is told (Main hears it in air_listen).
 */
const PATHS = ["src/calc.cpp", "include/calc.h", "test/calc_test.cpp"]
const requirement = `Write notes.md describing ${PATHS.join(", ")} (see ADR-1).`
const tasks = [{ id: "T-1", title: "Write the notes", kind: "docs", writeSet: [{ path: "notes.md", action: "create" }], doneWhen: "notes.md exists" }]
const LOSSY = "## Goal\nThe user asked for notes about the calculator's sources; the run was submitted and is under way."
const scenario = {
  name: "compaction-drops-paths",
  // The engine's compaction agent (its built-in prompt), for the engine's summary and for the retry alike.
  agents: { compaction: { systemMatch: "context summarization agent" } },
  scripts: [
    {
      agent: "main",
      steps: [
        { tool: "air_submit", args: { requirement }, usage: { promptTokens: 190_000, completionTokens: 20 } },
        // After the compaction: the summary the engine sends carries the paths the record kept.
        { tool: "air_listen", args: {}, until: "appended from the record", expect: { assistantIncludes: [...PATHS, "Kept from the conversation before it was compacted"] } },
        { tool: "air_listen", args: {}, until: "RUN ENDED" },
        { text: "Done." },
      ],
    },
    {
      name: "retried-summary",
      agent: "compaction",
      match: "^Summarise the conversation below",
      // The retry is told what the first summary lost, and loses it all the same.
      steps: [{ text: LOSSY, expect: { lastUserIncludes: PATHS.map((p) => `- ${p}`) } }],
    },
    { name: "engine-summary", agent: "compaction", steps: [{ text: LOSSY }] },
    planningArchitect("One note.", tasks),
    { agent: "executor", match: "^Task T-1:", steps: writeAndReport("notes.md", "notes\n", "notes") },
    passingReviewer,
  ],
}

let sandbox: Sandbox
let r: RunResult

beforeAll(async () => {
  sandbox = makeSandbox("air-compaction-")
  const project = trivialProject(sandbox, { "README.md": "# Calc\n" })
  r = await runScenario(sandbox, project, scenario, { input: requirement })
}, 600_000)

afterAll(() => sandbox?.cleanup())

describe("a compaction whose summary drops the file paths", () => {
  test("the run still ends done with T-1 merged", () => {
    expect(r.code, r.stderr.slice(-3000)).toBe(0)
    expect(r.summary.tasks.map((t: any) => [t.id, t.state])).toEqual([["T-1", "merged"]])
  })

  test("the summary was made twice: the engine's, then the retry naming what it lost", () => {
    const compactions = r.modelLog.filter((l) => l.agent === "compaction")
    expect(compactions.map((l) => l.script)).toEqual(["engine-summary", "retried-summary"])
    expect(compactions.map((l) => l.failure ?? null)).toEqual([null, null])
  })

  test("context.compacted: repaired after two attempts, with the counts kept and lost, the paths appended", () => {
    const events = r.events.filter((e) => e.type === "context.compacted")
    expect(events).toHaveLength(1)
    const e = events[0]
    expect([e.role, e.outcome, e.attempts]).toEqual(["main", "repaired", 2])
    expect(e.counts.path.kept).toBe(0)
    expect(e.counts.path.lost).toBeGreaterThanOrEqual(PATHS.length)
    expect(e.counts.adr).toEqual({ kept: 0, lost: 1 })
    expect(e.appended).toEqual(expect.arrayContaining([...PATHS, "ADR-1"]))
  })

  test("Main's requests after the compaction were answered as scripted (the paths were in what the engine sent)", () => {
    const main = r.modelLog.filter((l) => l.agent === "main")
    expect(main.filter((l) => l.failure)).toEqual([])
    expect(main.some((l) => l.step === 1)).toBe(true)
  })

  test("the user was told: Main's listen returned the notice (its step waited for it)", () => {
    const told = r.modelLog.find((l) => l.agent === "main" && l.step === 2)
    expect(told?.lastToolResult).toContain("Main's conversation was compacted")
  })
})

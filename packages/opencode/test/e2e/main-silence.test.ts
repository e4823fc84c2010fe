import { execFileSync } from "node:child_process"
import { beforeAll, expect, test } from "vitest"
import { MainSilence } from "../../src/cli/main-silence"
import { passingReviewer, planningArchitect, runScenario, trivialProject, writeAndReport, type RunResult } from "../support/runs"
import { makeSandbox } from "../support/sandbox"

/**
 * Before a run begins, Main's own model request is all that is at work, and the pinned engine waits 300 s for
 * an answer that never comes, then sends it again in silence (src/scheduler/runtime/README.md). A real
 * `aircoding run` (scripted model, real engine and git) whose provider holds Main's first request for longer
 * than the run's silence and the engine's start-up allowance: Main is stopped, given the requirement again,
 * and the run ends merged before the held answer (ten times the bound) would have come.
 */
const requirement = "Write docs/usage.md."
const task = { id: "T-1", title: "Write the usage notes", kind: "docs", writeSet: [{ path: "docs/usage.md", action: "create" }], doneWhen: "docs/usage.md exists" }
const SILENCE_MS = 10_000
/** The held answer: ten times the bound under test (the silence plus the start-up allowance), far past this file's 600 s. */
const STALL_MS = 10 * (SILENCE_MS + MainSilence.BOOT_MS)

const stalled = {
  name: "main-stalls",
  // Main's first request only; every other request is answered at once.
  inject: [{ fault: "stall", agent: "main", times: 1, stallMs: STALL_MS }],
  scripts: [
    { agent: "main", match: "^Write docs", steps: [{ tool: "air_submit", args: { requirement } }, { tool: "air_listen", args: {}, until: "RUN ENDED" }, { text: "Done." }] },
    planningArchitect("One task: T-1 writes docs/usage.md.", [task]),
    { agent: "executor", match: "^Task T-1:", steps: writeAndReport("docs/usage.md", "Run the app.\n", "usage notes") },
    passingReviewer,
  ],
}

let silent: RunResult
let project: string

beforeAll(async () => {
  const sandbox = makeSandbox("air-main-silence-")
  project = trivialProject(sandbox, { "README.md": "# App\n" }, {}, "silent")
  silent = await runScenario(sandbox, project, stalled, { input: requirement, name: "silent", env: { AIRCODING_INACTIVITY_MS: String(SILENCE_MS) } })
}, 600_000)

test("the provider never answers Main's first request: Main is stopped after its silence, asked again, and the run merges", () => {
  expect(silent.code, silent.stderr.slice(-2000)).toBe(0)
  expect(silent.summary.tasks.map((t: { id: string; state: string }) => [t.id, t.state])).toEqual([["T-1", "merged"]])
  expect(silent.summary.notes).toContain(
    "the main agent's model gave no answer for 10 s, before any run began; no run had started, so the main agent was given the requirement again",
  )
  expect(execFileSync("git", ["show", "main:docs/usage.md"], { cwd: project, encoding: "utf8" })).toBe("Run the app.\n")
  // Without the bound, Main would have waited for the held answer; with it, the run ended before the stall did:
  // the scripted model logs a stalled request only when it answers it, and it never did.
  expect(silent.modelLog.filter((l) => l.fault === "stall")).toEqual([])
})

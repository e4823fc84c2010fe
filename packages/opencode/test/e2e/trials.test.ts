import { cpSync, readdirSync, readFileSync } from "node:fs"
import { execFileSync } from "node:child_process"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { Paths } from "../../src/engine"
import { aircoding, writeScenario } from "../support/engine"
import { makeSandbox, type Sandbox } from "../support/sandbox"

/**
 * What the peers' users complain of, as one real run of three independent tasks in parallel:
 * - T-1's executor says "done" with no commit: the gates refuse it and it is sent back;
 * - T-2's code fails its own test: the Debugger gets the failing test's evidence and fixes it;
 * - T-3's executor stalls: the inactivity timer (code, not a model) aborts it and dispatches it again.
 * Every task still ends merged, and the Scheduler itself never asked a model what to do next.
 */
/** The Debugger's reproduction and verification: the test gate's command. */
const CTEST = "ctest --test-dir .air-build --output-on-failure"
/** The gates build in a slot of their own: the Debugger builds its worktree before it runs the failing test. */
const REPRODUCE = `cmake -S . -B .air-build && cmake --build .air-build && ${CTEST}`
const commit = (msg: string) => ({ tool: "bash", args: { command: `git add -A && git commit -q -m "${msg}"`, description: "commit" } })
const review = {
  agent: "reviewer",
  match: "^Review task (?<id>T-\\d+):",
  steps: [
    { tool: "air_diff", args: {} },
    { tool: "air_review", args: { verdict: "pass", rows: [{ designRef: "{{id}}: done when", code: "the diff of {{id}}", status: "match", note: "" }], findings: [], checklist: { lifetimes: { status: "not-applicable" }, rawPointers: { status: "not-applicable" }, concurrency: { status: "not-applicable" }, exceptions: { status: "not-applicable" }, integerOverflow: { status: "checked" }, undefinedBehaviour: { status: "checked" }, loggingKeyPaths: { status: "not-applicable" }, loggingFormat: { status: "not-applicable" } } } },
    { text: "Reviewed {{id}}." },
  ],
}
const requirement = "Add calc::mul and calc::neg (with a test), and document calc in the README."
const tasks = [
  { id: "T-1", title: "Add calc::mul", kind: "code", writeSet: [{ path: "include/calc.h", action: "modify", region: "multiplicative" }, { path: "src/calc.cpp", action: "modify", region: "multiplicative" }, { path: "tests/test_calc.cpp", action: "modify", region: "multiplicative" }], keep: ["add and sub unchanged"], doneWhen: "calc::mul(a, b) returns a * b" },
  { id: "T-2", title: "Add calc::neg with a test", kind: "code", writeSet: [{ path: "include/calc.h", action: "modify", region: "statistics" }, { path: "src/calc.cpp", action: "modify", region: "statistics" }, { path: "tests/test_calc.cpp", action: "modify", region: "main" }], keep: ["add and sub unchanged"], doneWhen: "calc::neg(a) returns -a and a test checks it" },
  { id: "T-3", title: "Document calc in the README", kind: "docs", writeSet: [{ path: "README.md", action: "modify" }], keep: ["the build instructions stay"], doneWhen: "README.md lists the operations of calc" },
]
const scenario = {
  name: "trials",
  scripts: [
    { agent: "main", steps: [{ tool: "air_submit", args: { requirement } }, { tool: "air_listen", args: {}, until: "RUN ENDED" }, { text: "All three tasks are merged." }] },
    { agent: "architect", steps: [{ tool: "air_propose", args: { summary: "Three independent tasks, in parallel." } }, { tool: "air_plan", args: { tasks } }, { text: "Planned." }] },
    // T-1: a "done" with nothing done, then the real work once the gates sent it back.
    { agent: "executor", match: "^Task T-1:[\\s\\S]*\\(attempt 1\\)", steps: [{ tool: "air_report", args: { summary: "Done." } }, { text: "Reported." }] },
    {
      agent: "executor",
      match: "^Task T-1:[\\s\\S]*\\(attempt 2\\)",
      steps: [
        { tool: "edit", args: { filePath: "include/calc.h", oldString: "// multiplicative\n", newString: "// multiplicative\nint mul(int a, int b);\n" }, expect: { lastUserIncludes: ["What failed before (commit)"] } },
        { tool: "edit", args: { filePath: "src/calc.cpp", oldString: "// multiplicative\n", newString: "// multiplicative\nint mul(int a, int b) { return a * b; }\n" } },
        commit("Add calc::mul"),
        { tool: "air_report", args: { summary: "Added calc::mul; committed." } },
        { text: "Reported." },
      ],
    },
    // T-2: a wrong implementation that its own test catches.
    {
      agent: "executor",
      match: "^Task T-2:",
      steps: [
        { tool: "edit", args: { filePath: "include/calc.h", oldString: "// statistics\n", newString: "// statistics\nint neg(int a);\n" } },
        { tool: "edit", args: { filePath: "src/calc.cpp", oldString: "// statistics\n", newString: "// statistics\nint neg(int a) { return a; }\n" } },
        { tool: "edit", args: { filePath: "tests/test_calc.cpp", oldString: "  // more checks\n", newString: "  CHECK(calc::neg(3) == -3);\n  // more checks\n" } },
        commit("Add calc::neg"),
        { tool: "air_report", args: { summary: "Added calc::neg and its test." } },
        { text: "Reported." },
      ],
    },
    {
      agent: "debugger",
      match: "^Task T-2:",
      steps: [
        { tool: "edit", args: { filePath: "src/calc.cpp", oldString: "return a; }", newString: "return -a; }" }, expect: { lastUserIncludes: ["What failed before (test)"] } },
        { tool: "bash", args: { command: REPRODUCE, description: "reproduce the failing test" }, expect: { lastToolResultIncludes: ["AirCoding guard", "evidence"] } },
        { tool: "edit", args: { filePath: "src/calc.cpp", oldString: "return a; }", newString: "return -a; }" } },
        { tool: "bash", args: { command: `cmake --build .air-build && ${CTEST}`, description: "verify: rebuild and run the failing test again" } },
        commit("Fix calc::neg"),
        {
          tool: "air_report",
          args: {
            summary: "The test showed neg(3) == 3; neg now returns -a.",
            debug: {
              symptom: "the test calc fails: CHECK(calc::neg(3) == -3)",
              reproduction: { command: REPRODUCE, output: "The following tests FAILED: calc (Failed)" },
              rootCause: { file: "src/calc.cpp", line: 12, explanation: "neg returns its argument unchanged instead of -a" },
              fix: "neg returns -a",
              verification: { command: CTEST, output: "100% tests passed" },
              pattern: "none",
            },
          },
        },
        { text: "Fixed." },
      ],
    },
    // T-3: the first executor starts, then goes silent; the second one does the work. (It stalls after its first
    // answer: a session whose model never answered gets the engine's start-up allowance of two minutes first.)
    {
      agent: "executor",
      match: "^Task T-3:[\\s\\S]*\\(attempt 1\\)",
      steps: [{ tool: "read", args: { filePath: "README.md" } }, { tool: "read", args: { filePath: "README.md" }, delayMs: 180_000 }, { text: "never reached" }],
    },
    {
      agent: "executor",
      match: "^Task T-3:[\\s\\S]*\\(attempt 2\\)",
      steps: [
        { tool: "edit", args: { filePath: "README.md", oldString: "# cpp-calc", newString: "# cpp-calc\n\nOperations: add, sub, mul, neg." } },
        commit("Document calc"),
        { tool: "air_report", args: { summary: "Documented the operations." } },
        { text: "Reported." },
      ],
    },
    review,
  ],
}

let sandbox: Sandbox
let project: string
let summary: any
let code: number
let stderr: string
let events: any[]
let modelLog: { agent: string }[]

beforeAll(async () => {
  sandbox = makeSandbox("air-trials-")
  project = sandbox.project("calc")
  cpSync(join(Paths.samples, "cpp-calc"), project, { recursive: true })
  execFileSync("git", ["add", "-A"], { cwd: project, env: sandbox.env })
  execFileSync("git", ["commit", "-qm", "sample"], { cwd: project, env: sandbox.env })
  const log = join(sandbox.root, "model.jsonl")
  const out = await aircoding(["run", project, "--yes", "--json", "--scripted", writeScenario(sandbox, scenario)], {
    cwd: project,
    input: requirement,
    env: { ...sandbox.env, AIRCODING_SCRIPTED_LOG: log, AIRCODING_INACTIVITY_MS: "15000", AIRCODING_LISTEN_MS: "600000" },
  })
  code = out.code
  stderr = out.stderr
  try {
    summary = JSON.parse(out.stdout)
  } catch {
    throw new Error(`aircoding run printed no JSON summary (exit ${out.code}):\n${out.stdout}\n${out.stderr.slice(-3000)}`)
  }
  events = readFileSync(join(project, ".air/local/state/events.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l))
  modelLog = readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l))
}, 900_000)

afterAll(() => { if (!process.env.AIR_KEEP) sandbox?.cleanup() })

const report = (task: string, attempt: number) =>
  JSON.parse(readFileSync(join(project, `.air/local/evidence/${task}/attempt-${attempt}/report.json`), "utf8"))

describe("a run survives what workers do wrong", () => {
  test("the run ends with every task merged and exit code 0", () => {
    expect(code, stderr).toBe(0)
    expect(summary.status).toBe("done")
    expect(summary.tasks.map((t: any) => t.state)).toEqual(["merged", "merged", "merged"])
    expect(summary.final.passed).toBe(true)
  })

  test('a "done" with no commit and no diff is refused by the gates and sent back to an executor', () => {
    expect(report("T-1", 1).failedGate).toBe("commit")
    expect(events.filter((e) => e.type === "task.dispatched" && e.taskId === "T-1").map((e) => e.role)).toEqual(["executor", "executor"])
    expect(execFileSync("git", ["show", "main:src/calc.cpp"], { cwd: project, encoding: "utf8" })).toContain("int mul(int a, int b)")
  })

  test("a failing test goes to the Debugger with its evidence; its edit before evidence is refused", () => {
    const first = report("T-2", 1)
    expect(first.failedGate).toBe("test")
    expect(first.message).toMatch(/calc/)
    expect(events.filter((e) => e.type === "task.dispatched" && e.taskId === "T-2").map((e) => e.role)).toEqual(["executor", "debugger"])
    expect(report("T-2", 2).passed).toBe(true)
    const guard = readFileSync(join(project, ".air/local/state/guard.jsonl"), "utf8")
    expect(guard).toMatch(/"type":"guard.refused".*"agent":"debugger".*"tool":"edit"/)
    expect(execFileSync("git", ["show", "main:src/calc.cpp"], { cwd: project, encoding: "utf8" })).toContain("return -a; }")
  })

  test("the Debugger's report went through its steps: the test failing before the edit, green after it, the verdict kept as evidence", () => {
    const dir = join(project, ".air/local/evidence/T-2")
    const files = readdirSync(dir).filter((f) => /^debug-.*\.json$/.test(f))
    expect(files).toHaveLength(1)
    const kept = JSON.parse(readFileSync(join(dir, files[0]!), "utf8"))
    expect(kept.verdict).toEqual({ ok: true, route: "gates" })
    expect(kept.report.rootCause).toMatchObject({ file: "src/calc.cpp", line: 12 })
    const steps = kept.steps.map((s: any) => (s.kind === "edit" ? "edit" : `${s.command} → ${s.exit === 0 ? "ok" : "failed"}`))
    expect(steps).toEqual([`${REPRODUCE} → failed`, "edit", `cmake --build .air-build && ${CTEST} → ok`, 'git add -A && git commit -q -m "Fix calc::neg" → ok'])
  })

  test("a stalled executor is caught by the inactivity timer, aborted and dispatched again", () => {
    expect(events.some((e) => e.type === "timer.fired" && e.taskId === "T-3" && e.kind === "inactivity")).toBe(true)
    expect(events.filter((e) => e.type === "task.dispatched" && e.taskId === "T-3").length).toBe(2)
    expect(execFileSync("git", ["show", "main:README.md"], { cwd: project, encoding: "utf8" })).toContain("Operations: add, sub, mul, neg.")
  })

  test("zero model requests for routine scheduling", () => {
    const byAgent: Record<string, number> = {}
    for (const r of modelLog) byAgent[r.agent] = (byAgent[r.agent] ?? 0) + 1
    expect(byAgent.scheduler).toBeUndefined()
    expect(byAgent.main).toBe(3)
  })
})

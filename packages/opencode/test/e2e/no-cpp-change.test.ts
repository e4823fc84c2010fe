import { cpSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { Paths } from "../../src/engine"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { passingReviewer, planningArchitect, runScenario, shellStep, trivialProject, type RunResult } from "../support/runs"

/**
 * Issue 44: tasks whose change holds no C/C++ source. Changing CMakeLists.txt alone is among the commonest tasks a
 * C++ team has; so are a README, a Python script beside the C++ code, a header, a test data file. Each passed every
 * gate and then hung: the analysis had nothing to check, the machine refused `gates.passed` for want of its evidence,
 * and the refusal ended the gates' command in no event at all. Here all five merge on the sample, with real cmake,
 * ctest and cppcheck, and each report says the analysis was not applicable rather than run.
 */
const requirement = "Small housekeeping on the calc library."
const tasks = [
  { id: "T-1", title: "Note the minimum CMake", kind: "code", writeSet: [{ path: "CMakeLists.txt", action: "modify" }], doneWhen: "CMakeLists.txt says why 3.16" },
  { id: "T-2", title: "Describe the operations", kind: "code", writeSet: [{ path: "README.md", action: "modify" }], doneWhen: "README.md lists add and sub" },
  { id: "T-3", title: "Add the case generator", kind: "code", writeSet: [{ path: "tools/gen_cases.py", action: "create" }], doneWhen: "tools/gen_cases.py prints cases" },
  { id: "T-4", title: "Document calc.h", kind: "code", writeSet: [{ path: "include/calc.h", action: "modify" }], doneWhen: "calc.h has a header comment" },
  { id: "T-5", title: "Add test cases data", kind: "test", deps: ["T-4"], writeSet: [{ path: "tests/data/cases.txt", action: "create" }], doneWhen: "tests/data/cases.txt holds cases" },
]
const change: Record<string, string> = {
  "T-1": "sed -i '1i # 3.16: the oldest CMake our CI still runs' CMakeLists.txt",
  "T-2": "printf '\\nOperations: add, sub.\\n' >> README.md",
  "T-3": "mkdir -p tools && printf 'print(\"2 3 5\")\\n' > tools/gen_cases.py",
  "T-4": "sed -i '1i // calc.h: integer helpers, no state.' include/calc.h",
  "T-5": "mkdir -p tests/data && printf '2 3 5\\n5 3 2\\n' > tests/data/cases.txt",
}
const scenario = {
  name: "no-cpp-change",
  scripts: [
    { agent: "main", steps: [{ tool: "air_submit", args: { requirement } }, { tool: "air_listen", args: {}, until: "RUN ENDED" }, { text: "Done." }] },
    planningArchitect("Five small tasks.", tasks),
    ...tasks.map((t) => ({
      agent: "executor",
      match: `^Task ${t.id}:`,
      steps: [shellStep(`${change[t.id]} && git add -A && git commit -qm '${t.title}'`), { tool: "air_report", args: { summary: t.title } }, { text: "Reported." }],
    })),
    passingReviewer,
  ],
}

let sandbox: Sandbox
let project: string
let r: RunResult

beforeAll(async () => {
  sandbox = makeSandbox("air-nocpp-")
  project = sandbox.project("calc")
  cpSync(join(Paths.samples, "cpp-calc"), project, { recursive: true })
  // cppcheck stays on (its default): the analysis is required of code tasks and has nothing to check here.
  trivialProject(sandbox, {
    ".air/shared/rules/toolchain.json": JSON.stringify({
      schemaVersion: 1,
      build: ["cmake -S . -B .air-build -G Ninja", "cmake --build .air-build"],
      test: ["ctest --test-dir .air-build --output-on-failure"],
    }),
  }, {}, "calc")
  // A hang is the failure this test exists for: bounded well under the suite's own timeout.
  r = await runScenario(sandbox, project, scenario, { input: requirement, timeoutMs: 420_000, env: { AIRCODING_CONCURRENCY: "4" } })
}, 900_000)

afterAll(() => sandbox?.cleanup())

describe("tasks that change no C/C++ source (issue 44)", () => {
  test("each merges: CMakeLists.txt, a Markdown file, a Python file, a header, a test data file", () => {
    expect(r.code, r.stderr.slice(-3000)).toBe(0)
    expect(r.summary.tasks.map((t: any) => [t.id, t.state])).toEqual(tasks.map((t) => [t.id, "merged"]))
    expect(r.summary.final.passed).toBe(true)
    expect(r.events.filter((e) => e.type === "gates.errored" || e.type === "runtime.fault")).toEqual([])
  })

  test("a report says the analysis was not applicable, and gates.passed carries it as such", () => {
    for (const id of ["T-1", "T-2", "T-3"]) {
      const report = JSON.parse(readFileSync(join(project, `.air/local/evidence/${id}/attempt-1/report.json`), "utf8"))
      expect(report.passed, id).toBe(true)
      expect(report.gates.find((g: any) => g.gate === "analysis"), id).toMatchObject({ passed: true, ran: false, notApplicable: true })
      const passed = r.events.find((e) => e.type === "gates.passed" && e.taskId === id)
      expect(passed.notApplicable, id).toMatchObject({ analysis: expect.stringMatching(/no C\/C\+\+ file/) })
    }
    // The header is C/C++: cppcheck ran on it.
    const header = JSON.parse(readFileSync(join(project, ".air/local/evidence/T-4/attempt-1/report.json"), "utf8"))
    expect(header.gates.find((g: any) => g.gate === "analysis")).toMatchObject({ passed: true, ran: true })
  })
})

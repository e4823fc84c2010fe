import { cpSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { Paths } from "../../src/engine"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { commitStep, passingReviewer, runScenario, shellStep, trivialProject, type RunResult } from "../support/runs"

/**
 * Issue 40, the logging house rule end to end on the calc sample, which logs with nothing: the rules name spdlog
 * (as `aircoding init` writes them for such a project), so a plan that does not integrate it first is refused;
 * the plan that does merges its integration (find_package(spdlog), Debian's libspdlog-dev, offline), and a task
 * that adds std::cout fails the logging gate with file:line, goes back to the executor, and merges once it logs
 * through spdlog instead. Real opencode binary, scripted model, real cmake, git and gates.
 */
const requirement = "Trace the additions of the calc library."
const integrate = { id: "T-1", title: "Integrate spdlog", kind: "build", phase: 1, writeSet: [{ path: "CMakeLists.txt", action: "modify" }], doneWhen: "the library links spdlog::spdlog found with find_package" }
const trace = { id: "T-2", title: "Trace add", kind: "code", phase: 1, deps: ["T-1"], writeSet: [{ path: "src/calc.cpp", action: "modify" }], doneWhen: "add logs its operands and the tests pass" }
// A new module (a directory the branch lacks) with no test task and no test file: refused by the boundary rule, naming it.
const sink = { id: "T-3", title: "Trace sink", kind: "code", phase: 1, deps: ["T-1"], writeSet: [{ path: "src/trace/sink.cpp", action: "create" }], doneWhen: "the sink writes lines and its tests pass" }

const calc = (include: string, line: string) => `#include "calc.h"
${include}

namespace calc {

// additive
int add(int a, int b) {
  ${line}
  return a + b;
}
int sub(int a, int b) { return a - b; }

}  // namespace calc
`

const scenario = {
  name: "house-logging",
  scripts: [
    { agent: "main", steps: [{ tool: "air_submit", args: { requirement } }, { tool: "air_listen", args: {}, until: "RUN ENDED" }, { text: "Done." }] },
    {
      agent: "architect",
      match: "^Requirement:",
      steps: [
        { tool: "air_propose", args: { summary: "Trace add." } },
        // Without the integration task: refused by the plan rule, nothing changes.
        { tool: "air_plan", args: { tasks: [{ ...trace, deps: [] }] } },
        { tool: "air_plan", args: { tasks: [integrate, trace, sink] } },
        { tool: "air_plan", args: { tasks: [integrate, trace] } },
        { text: "Planned." },
      ],
    },
    {
      agent: "executor",
      match: "^Task T-1:",
      steps: [shellStep("printf 'find_package(spdlog REQUIRED)\\ntarget_link_libraries(calc PUBLIC spdlog::spdlog)\\ntarget_compile_definitions(calc PUBLIC $<IF:$<CONFIG:Debug>,SPDLOG_ACTIVE_LEVEL=SPDLOG_LEVEL_DEBUG,SPDLOG_ACTIVE_LEVEL=SPDLOG_LEVEL_INFO>)\\n' >> CMakeLists.txt && git add -A && git commit -qm 'Integrate spdlog'"), { tool: "air_report", args: { summary: "spdlog found and linked" } }, { text: "Reported." }],
    },
    {
      agent: "executor",
      match: "^Task T-2:[\\s\\S]*\\(attempt 1\\)",
      steps: [{ tool: "write", args: { filePath: "src/calc.cpp", content: calc("#include <iostream>", 'std::cout << "add " << a << " " << b << std::endl;') } }, commitStep("trace add"), { tool: "air_report", args: { summary: "add traced" } }, { text: "Reported." }],
    },
    {
      agent: "executor",
      match: "^Task T-2:[\\s\\S]*\\(attempt 2\\)",
      steps: [{ tool: "write", args: { filePath: "src/calc.cpp", content: calc("#include <spdlog/spdlog.h>", 'spdlog::debug("add {} {}", a, b);') } }, commitStep("trace add through spdlog"), { tool: "air_report", args: { summary: "add traced through spdlog" } }, { text: "Reported." }],
    },
    passingReviewer,
  ],
}

let sandbox: Sandbox
let project: string
let r: RunResult

beforeAll(async () => {
  sandbox = makeSandbox("air-house-")
  project = sandbox.project("calc")
  cpSync(join(Paths.samples, "cpp-calc"), project, { recursive: true })
  trivialProject(
    sandbox,
    {
      ".air/shared/rules/toolchain.json": JSON.stringify({
        schemaVersion: 1,
        build: ["cmake -S . -B .air-build -G Ninja", "cmake --build .air-build"],
        test: ["ctest --test-dir .air-build --output-on-failure"],
      }),
      ".air/shared/rules/house.json": JSON.stringify({ schemaVersion: 1, logging: { library: "spdlog" } }),
    },
    {},
    "calc",
  )
  r = await runScenario(sandbox, project, scenario, { input: requirement, timeoutMs: 420_000 })
}, 900_000)

afterAll(() => sandbox?.cleanup())

describe("the logging house rule, end to end (issue 40)", () => {
  test("the plan without the integration task is refused with the reason, the one adding an untested module too; the one with it is accepted", () => {
    expect(r.code, r.stderr.slice(-3000)).toBe(0)
    const refusal = r.modelLog.find((l) => l.agent === "architect" && String(l.lastToolResult).includes("The task graph was refused"))
    expect(refusal?.lastToolResult).toContain("name spdlog as the logging library and the project does not use it yet")
    const module = r.modelLog.find((l) => l.agent === "architect" && String(l.lastToolResult).includes("adds the module"))
    expect(module?.lastToolResult).toContain("task T-3 adds the module src/trace but no test task depends on it and it writes no test file")
    const accepted = r.events.filter((e) => e.type === "graph.accepted")
    expect(accepted).toHaveLength(1)
    expect(accepted[0].graph.tasks.map((t: any) => t.id)).toEqual(["T-1", "T-2"])
  })

  test("the integration merges with spdlog found offline; std::cout fails the logging gate with file:line; the repair through spdlog merges", () => {
    expect(r.summary.tasks.map((t: any) => [t.id, t.state])).toEqual([["T-1", "merged"], ["T-2", "merged"]])
    // The build-type switch, checked from the integration's own Debug and Release configures.
    const integration = JSON.parse(readFileSync(join(project, ".air/local/evidence/T-1/attempt-1/report.json"), "utf8"))
    expect(integration.gates.find((g: any) => g.gate === "log-levels")).toMatchObject({ passed: true, ran: true, summary: "SPDLOG_ACTIVE_LEVEL: Debug SPDLOG_LEVEL_DEBUG, Release SPDLOG_LEVEL_INFO" })
    const first = JSON.parse(readFileSync(join(project, ".air/local/evidence/T-2/attempt-1/report.json"), "utf8"))
    expect(first.failedGate).toBe("logging")
    expect(first.message).toContain('src/calc.cpp:8: std::cout: std::cout << "add " << a << " " << b << std::endl;')
    expect(first.message).toContain("spdlog::info")
    // The failure, with where and what, is in the log the executor's next attempt is told from; routed back to it.
    const failed = r.events.find((e) => e.type === "gates.failed" && e.taskId === "T-2")
    expect(failed).toMatchObject({ gate: "logging", route: "executor" })
    expect(JSON.stringify(failed)).toContain("src/calc.cpp:8: std::cout")
    expect(r.events.filter((e) => e.type === "gates.failed" && e.taskId === "T-2")).toHaveLength(1)
    const merged = readFileSync(join(project, "src/calc.cpp"), "utf8")
    expect(merged).toContain('spdlog::debug("add {} {}", a, b);')
    expect(merged).not.toContain("std::cout")
    expect(r.summary.final.passed).toBe(true)
  })
})

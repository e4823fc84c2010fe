import { execFileSync, spawn, type ChildProcess } from "node:child_process"
import { randomUUID } from "node:crypto"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { hostname } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { buildAndTestAt, commitStep, passingReviewer, readJsonl, runScenario, trivialProject, type RunResult, submittingMain, planningArchitect } from "../support/runs"

/**
 * Merge batches and their bisection with the real binary (issue 12, item 4). Three tasks each add a source
 * file to a program that links every src/*.cpp; T-1 and T-2 both define `helper()`, so each builds alone
 * and the two together do not link. A live process holds the merge lock until all three passed review, so
 * the first to pass waits on the lock and the other two queue behind it: once the lock goes, the first
 * merges alone and the other two go as one batch. Whichever order the reviews came in, the batch holds one
 * task that cannot land on the new head: the batch fails its merge build and blames nobody
 * (merge.batch-rejected), its halves are merged in turn, and only the half of one that fails goes to the
 * Debugger, who renames its helper. Every commit on the integration branch's first-parent line builds.
 */
const requirement = "Add three parts to the program."
const CMAKE = `cmake_minimum_required(VERSION 3.16)
project(parts CXX)
enable_testing()
file(GLOB PARTS CONFIGURE_DEPENDS src/*.cpp)
add_executable(parts main.cpp \${PARTS})
add_test(NAME parts COMMAND parts)
`
const part = (id: string, file: string) => ({
  id,
  title: `Add ${file}`,
  kind: "test",
  writeSet: [{ path: file, action: "create" }],
  doneWhen: `${file} is part of the program`,
})
const tasks = [part("T-1", "src/a.cpp"), part("T-2", "src/b.cpp"), part("T-3", "src/c.cpp")]
const SOURCES: Record<string, [string, string]> = {
  "T-1": ["src/a.cpp", "int helper() { return 1; }\n"],
  "T-2": ["src/b.cpp", "int helper() { return 2; }\n"],
  "T-3": ["src/c.cpp", "int third() { return 3; }\n"],
}
const executor = (id: string) => {
  const [file, content] = SOURCES[id]!
  return {
    agent: "executor",
    match: `^Task ${id}:`,
    steps: [{ tool: "write", args: { filePath: file, content } }, commitStep(`add ${file}`), { tool: "air_report", args: { summary: `Added ${file}.` } }, { text: "Reported." }],
  }
}
/** The Debugger's reproduction and verification: the merge build's commands. */
const BUILD = "cmake -S . -B .air-build -G Ninja >/dev/null && cmake --build .air-build"
/** Whichever of T-1 and T-2 is found to break the build on the new head renames its own helper. */
const debugger_ = (id: string) => {
  const [file] = SOURCES[id]!
  const own = `helper_${id.slice(2)}`
  return {
    agent: "debugger",
    match: `^Task ${id}:`,
    steps: [
      { tool: "bash", args: { command: BUILD, description: "reproduce the merge build" }, expect: { lastUserIncludes: ["What failed before (merge-build)", "multiple definition of"] } },
      { tool: "edit", args: { filePath: file, oldString: "int helper()", newString: `int ${own}()` } },
      { tool: "bash", args: { command: BUILD, description: "verify: the failing build links" } },
      commitStep(`rename helper to ${own}`),
      {
        tool: "air_report",
        args: {
          summary: `Both parts defined helper(); this one is now ${own}().`,
          debug: {
            symptom: "the merge build does not link: multiple definition of helper()",
            reproduction: { command: BUILD, output: "multiple definition of `helper()'" },
            rootCause: { file, line: 1, explanation: "this part and the other both define helper(), so the program has it twice" },
            fix: `this part's helper() is now ${own}()`,
            verification: { command: BUILD, output: "the build links" },
            pattern: "none",
          },
        },
      },
      { text: "Fixed." },
    ],
  }
}
const scenario = {
  name: "merge-batch",
  scripts: [
    submittingMain(requirement),
    planningArchitect("Three independent parts.", tasks),
    executor("T-1"),
    executor("T-2"),
    executor("T-3"),
    debugger_("T-1"),
    debugger_("T-2"),
    passingReviewer,
  ],
}

let sandbox: Sandbox
let project: string
let r: RunResult
let holder: ChildProcess | undefined

beforeAll(async () => {
  sandbox = makeSandbox("air-merge-batch-")
  project = trivialProject(
    sandbox,
    { "CMakeLists.txt": CMAKE, "main.cpp": "int main() { return 0; }\n", "src/base.cpp": "int base() { return 0; }\n" },
    { build: ["cmake -S . -B .air-build -G Ninja", "cmake --build .air-build"], test: ["ctest --test-dir .air-build --output-on-failure"] },
  )
  const events = join(project, ".air/local/state/events.jsonl")
  const lockFile = join(project, ".air/local/state/merge.lock")
  // Taken once the tasks are at work (a run does not start while it is held), let go once all three passed review.
  holder = spawn("sleep", ["900"], { stdio: "ignore" })
  let taken = false
  const watch = setInterval(() => {
    const log = existsSync(events) ? readJsonl(events) : []
    if (!taken && log.some((e) => e.type === "task.dispatched")) {
      writeFileSync(lockFile, JSON.stringify({ pid: holder!.pid, host: hostname(), at: new Date().toISOString(), token: randomUUID(), what: "a person's merge" }))
      taken = true
    }
    const reviewed = new Set(log.filter((e) => e.type === "review.reported" && e.report?.verdict === "pass").map((e) => e.taskId))
    if (taken && reviewed.size === 3) {
      holder!.kill("SIGKILL")
      clearInterval(watch)
    }
  }, 100)
  try {
    r = await runScenario(sandbox, project, scenario, { input: requirement, env: { AIRCODING_MERGE_LOCK_MS: "600000", AIRCODING_MERGE_BATCH: "4" } })
  } finally {
    clearInterval(watch)
    holder.kill("SIGKILL")
  }
}, 900_000)

afterAll(() => sandbox?.cleanup())

const git = (args: string[]) => execFileSync("git", args, { cwd: project, encoding: "utf8", env: sandbox.env })

describe("a batch that fails together is bisected: only the task that breaks it is repaired", () => {
  test("the run finishes done with all three merged", () => {
    expect(r.code, r.stderr.slice(-3000)).toBe(0)
    expect(r.summary.status).toBe("done")
    expect(r.summary.tasks.map((t: any) => [t.id, t.state])).toEqual([["T-1", "merged"], ["T-2", "merged"], ["T-3", "merged"]])
  })

  test("the first merge waited on the lock alone; the two queued behind it went as one batch, which failed and blamed nobody", () => {
    const started = r.events.filter((e) => e.type === "merge.started").map((e) => e.taskId)
    const [first] = started
    const batch = r.events.find((e) => e.type === "merge.batch-rejected")
    expect(batch, JSON.stringify(r.events.map((e) => [e.type, e.taskId ?? e.taskIds]))).toBeDefined()
    expect(batch.taskIds).toHaveLength(2)
    expect(batch.taskIds).not.toContain(first)
    expect(batch.message).toMatch(/merge build failed/)
    expect(readFileSync(batch.evidencePath, "utf8")).toMatch(/multiple definition of .helper/)
    expect(batch.evidencePath).toContain(join(".air", "local", "evidence", "_merge"))
  })

  test("bisection: the half that breaks the build goes to the Debugger; the other half lands with no repair", () => {
    const batch = r.events.find((e) => e.type === "merge.batch-rejected")
    const rejected = r.events.filter((e) => e.type === "merge.rejected")
    expect(rejected).toHaveLength(1)
    const blamed = rejected[0].taskId
    expect(["T-1", "T-2"]).toContain(blamed)
    expect(batch.taskIds).toContain(blamed)
    const innocent = batch.taskIds.find((id: string) => id !== blamed)
    const debuggers = r.events.filter((e) => e.type === "task.dispatched" && e.role === "debugger").map((e) => e.taskId)
    expect(debuggers).toEqual([blamed])
    expect(r.events.filter((e) => e.type === "task.dispatched" && e.taskId === innocent).map((e) => e.role)).toEqual(["executor"])
    // Nothing of the failed batch landed: its tasks' only landings come after it.
    const at = r.events.indexOf(batch)
    expect(r.events.slice(0, at).some((e) => e.type === "merge.succeeded" && batch.taskIds.includes(e.taskId))).toBe(false)
  })

  test("every commit on the integration branch's first-parent line builds and passes its tests", () => {
    // The empty first commit has nothing to build; then the sample, and the landings.
    const commits = git(["rev-list", "--first-parent", "main"]).trim().split("\n").slice(0, -1)
    expect(commits.length).toBeGreaterThanOrEqual(4)
    for (const commit of commits) expect(buildAndTestAt(project, commit, sandbox.env)).toMatch(/100% tests passed/)
    for (const id of ["T-1", "T-2", "T-3"]) expect(git(["log", "--format=%H", `--grep=^Air-Task: ${id}$`, "main"]).trim().split("\n")).toHaveLength(1)
  })

  test("the run leaves no helper worktree behind: the merge build's worktree is gone", () => {
    expect(git(["worktree", "list", "--porcelain"]).split("\n").filter((line) => line.startsWith("worktree "))).toEqual([`worktree ${project}`])
  })
})

import { execFileSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { commitStep, passingReviewer, planningArchitect, readJsonl, trivialProject } from "../support/runs"
import { writeScenario } from "../support/engine"
import { runOnce } from "../../scripts/kill-loop"

/**
 * An interrupted attempt leaves nothing behind: the whole process tree is killed (SIGKILL) between two edits
 * of T-1's executor, its first edit uncommitted in the worktree. On resume the next session starts on the
 * task branch's last commit (the edit saved as a patch in the evidence, the prompt saying so), makes the
 * edit again, and the task merges with the function present once. Before the fix the second session built
 * on the first one's edit: `redefinition of 'int calc::avg3'`.
 * The user has uncommitted changes to a tracked file no task names (README.md): the run starts and ends all
 * the same, the file untouched, and `git status` shows only that file (`.air/local/` is ignored).
 */
const requirement = "Add calc::avg3."
const CALC = "namespace calc {\nint add(int a, int b) { return a + b; }\n}  // namespace calc\n"
const appendAvg3 = {
  tool: "bash",
  args: { command: "printf 'namespace calc {\\nint avg3(int a, int b, int c) { return (a + b + c) / 3; }\\n}\\n' >> src/calc.cpp", description: "add avg3" },
}
const tasks = [{ id: "T-1", title: "Add calc::avg3", kind: "build", writeSet: [{ path: "src/calc.cpp", action: "modify" }], doneWhen: "calc::avg3 compiles" }]

const scenario = {
  name: "interrupted-attempt",
  scripts: [
    { agent: "main", match: "^Resume the AirCoding run", steps: [{ tool: "air_listen", args: {}, until: "RUN ENDED" }, { text: "Resumed to the end." }] },
    { agent: "main", steps: [{ tool: "air_submit", args: { requirement } }, { tool: "air_listen", args: {}, until: "RUN ENDED" }, { text: "Done." }] },
    planningArchitect("One function.", tasks),
    // The next session is matched only if its prompt says what happened to the earlier one's changes.
    { name: "fresh", agent: "executor", match: "^Task T-1:[\\s\\S]*uncommitted changes to 1 file\\(s\\); they are saved in ", steps: [appendAvg3, commitStep("avg3"), { tool: "air_report", args: { summary: "Added avg3." } }, { text: "Reported." }] },
    // The first session: one edit, then killed while it waits before the next.
    { name: "killed", agent: "executor", match: "^Task T-1:", steps: [appendAvg3, { tool: "bash", args: { command: "true", description: "second edit" }, delayMs: 120_000 }, { text: "never reached" }] },
    passingReviewer,
  ],
}

let sandbox: Sandbox
let project: string
let killed: Awaited<ReturnType<typeof runOnce>>
let resumed: Awaited<ReturnType<typeof runOnce>>

beforeAll(async () => {
  sandbox = makeSandbox("air-interrupted-")
  project = trivialProject(sandbox, { "src/calc.cpp": CALC, "README.md": "# calc\n" }, { build: ["g++ -std=c++17 -fsyntax-only src/calc.cpp"], test: ["true"] })
  // The user's own work in progress, in a tracked file no task names: it stops nothing and is left alone.
  writeFileSync(join(project, "README.md"), "# calc\nmy notes, not committed yet\n")
  const file = writeScenario(sandbox, scenario)
  const args = ["run", project, "--yes", "--json", "--scripted", file]
  const worktreeFile = join(project, ".air/local/worktrees/T-1/src/calc.cpp")
  killed = await runOnce(sandbox, project, args, requirement, 0, 240_000, { kind: "file", path: worktreeFile, contains: "avg3" }, 480_000)
  resumed = await runOnce(sandbox, project, [...args, "--resume"], null, null, 600_000)
}, 1_500_000)

afterAll(() => sandbox?.cleanup())

describe("a session killed between two edits", () => {
  test("the run was killed with the first edit uncommitted in the worktree", () => {
    expect(killed.killed, killed.stderr.slice(-2000)).toBe(true)
  })

  test("on resume T-1 merges with avg3 defined once (exit 0)", () => {
    const seen = readJsonl(join(project, ".air/local/state/events.jsonl")).map((e) => `${e.type}${e.taskId ? ` ${e.taskId}` : ""}${e.attempt ? ` #${e.attempt}` : ""}`)
    expect(resumed.killed, `${resumed.stderr.slice(-3000)}\n${seen.join("\n")}`).toBe(false)
    expect(resumed.code, resumed.stderr.slice(-3000)).toBe(0)
    const events = readJsonl(join(project, ".air/local/state/events.jsonl"))
    expect(events.filter((e) => e.type === "merge.succeeded").map((e) => e.taskId)).toEqual(["T-1"])
    expect(events.filter((e) => e.type === "gates.failed")).toEqual([])
    const merged = execFileSync("git", ["show", "main:src/calc.cpp"], { cwd: project, encoding: "utf8" })
    expect(merged.match(/int avg3\(/g)).toHaveLength(1)
  })

  test("the user's uncommitted README.md stopped nothing and is as they left it; git status shows only it", () => {
    expect(readFileSync(join(project, "README.md"), "utf8")).toBe("# calc\nmy notes, not committed yet\n")
    const status = execFileSync("git", ["status", "--porcelain", "--untracked-files=all"], { cwd: project, encoding: "utf8" })
    expect(status.split("\n").filter(Boolean).filter((l) => !l.includes(".air/shared/"))).toEqual([" M README.md"])
  })

  test("the killed session's edit is kept as a patch in the task's evidence", () => {
    const dir = join(project, ".air/local/evidence/T-1")
    const patches = existsSync(dir) ? readdirSync(dir).filter((f) => f.startsWith("uncommitted-before-attempt-")) : []
    expect(patches).toHaveLength(1)
    expect(readFileSync(join(dir, patches[0]!), "utf8")).toMatch(/^\+int avg3\(int a, int b, int c\)/m)
  })
})

import { execFileSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { SandboxLeftovers } from "../../src/scheduler/runtime/sandbox/leftovers"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { passingReviewer, planningArchitect, readJsonl, trivialProject } from "../support/runs"
import { writeScenario } from "../support/engine"
import { runOnce } from "../../scripts/kill-loop"

/**
 * Issue 44 item 5: a killed attempt's leftovers never reach the next attempt. `aircoding run` is killed with SIGKILL
 * — the process alone, as `kill -9 <pid>`, an OOM killer or a CI job's timeout kill it, not its process group —
 * between an edit of T-1's executor and its commit (its one command: append a line, wait, append another, commit).
 * Before the fix the engine went on as an orphan (its Scheduler logging, its sessions retrying), and the worker's
 * sandboxed command went on too, appending its second line and committing after the kill. Now the engine ends with
 * its launcher, the sandbox with the engine; on resume the uncommitted first line is set aside as a patch, the next
 * session writes both lines once, and the test command (the file is exactly those two lines) passes.
 */
const requirement = "Write the two-line notes file."
const tasks = [{ id: "T-1", title: "Write notes.txt", kind: "build", writeSet: [{ path: "notes.txt", action: "create" }], doneWhen: "notes.txt holds one and two" }]
const write = (wait: number) => ({
  tool: "bash",
  args: { command: `printf 'one\\n' >> notes.txt && sleep ${wait} && printf 'two\\n' >> notes.txt && git add -A && git commit -qm notes`, description: "write and commit" },
})
const scenario = {
  name: "killed-launcher",
  scripts: [
    { agent: "main", match: "^Resume the AirCoding run", steps: [{ tool: "air_listen", args: {}, until: "RUN ENDED" }, { text: "Resumed to the end." }] },
    { agent: "main", steps: [{ tool: "air_submit", args: { requirement } }, { tool: "air_listen", args: {}, until: "RUN ENDED" }, { text: "Done." }] },
    planningArchitect("One file.", tasks),
    { name: "fresh", agent: "executor", match: "^Task T-1:[\\s\\S]*uncommitted changes to 1 file\\(s\\)", steps: [write(1), { tool: "air_report", args: { summary: "Wrote notes." } }, { text: "Reported." }] },
    // The first session: killed while its command waits between the two lines.
    { name: "killed", agent: "executor", match: "^Task T-1:", steps: [write(8), { tool: "air_report", args: { summary: "Wrote notes." } }, { text: "Reported." }] },
    passingReviewer,
  ],
}

let sandbox: Sandbox
let project: string
let killed: Awaited<ReturnType<typeof runOnce>>
let leftAfterKill: number[] = []
let commitsAfterKill = ""
let resumed: Awaited<ReturnType<typeof runOnce>>
const worktree = () => join(project, ".air/local/worktrees/T-1")

beforeAll(async () => {
  sandbox = makeSandbox("air-killed-launcher-")
  project = trivialProject(sandbox, { "README.md": "# notes\n" }, { build: ["true"], test: ["test ! -e notes.txt || test \"$(cat notes.txt)\" = \"$(printf 'one\\ntwo')\""] })
  const file = writeScenario(sandbox, scenario)
  const args = ["run", project, "--yes", "--json", "--scripted", file]
  killed = await runOnce(sandbox, project, args, requirement, 0, 240_000, { kind: "file", path: join(worktree(), "notes.txt"), contains: "one" }, 480_000, { killProcessOnly: true })
  leftAfterKill = SandboxLeftovers.find(worktree())
  // Past the killed command's wait: had it survived, its second line and its commit would be in the worktree now.
  await new Promise((resolve) => setTimeout(resolve, 9_000))
  commitsAfterKill = execFileSync("git", ["log", "--format=%s", "main..air/T-1"], { cwd: project, encoding: "utf8", env: sandbox.env }).trim()
  resumed = await runOnce(sandbox, project, [...args, "--resume"], null, null, 600_000)
}, 1_500_000)

afterAll(() => sandbox?.cleanup())

describe("aircoding killed alone between an edit and its commit (issue 44)", () => {
  test("nothing it started outlives it: no engine, no sandbox still at work in the worktree", () => {
    expect(killed.killed, killed.stderr.slice(-2000)).toBe(true)
    expect(killed.survivors).toEqual([])
    expect(leftAfterKill).toEqual([])
    // The killed command never reached its commit: the branch holds no commit of T-1.
    expect(commitsAfterKill).toBe("")
  })

  test("on resume T-1 merges with the file written once, the killed edit kept as a patch", () => {
    const events = readJsonl(join(project, ".air/local/state/events.jsonl"))
    expect(resumed.code, `${resumed.stderr.slice(-3000)}\n${events.map((e) => e.type).join(" ")}`).toBe(0)
    expect(events.filter((e) => e.type === "merge.succeeded").map((e) => e.taskId)).toEqual(["T-1"])
    expect(events.filter((e) => e.type === "gates.failed")).toEqual([])
    expect(execFileSync("git", ["show", "main:notes.txt"], { cwd: project, encoding: "utf8", env: sandbox.env })).toBe("one\ntwo\n")
    const dir = join(project, ".air/local/evidence/T-1")
    const patches = existsSync(dir) ? readdirSync(dir).filter((f) => f.startsWith("uncommitted-before-attempt-")) : []
    expect(patches).toHaveLength(1)
    expect(readFileSync(join(dir, patches[0]!), "utf8")).toMatch(/^\+one$/m)
  })
})

import { execFileSync } from "node:child_process"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { openRun } from "../../src/cli/run"
import { Preflight } from "../../src/scheduler/runtime/preflight"
import { copyFixture } from "../cli-view/helpers"

/**
 * The door of a new headless run (issue 21 item 3): a run that waits for the user or was interrupted is
 * never silently continued by a new requirement; --new archives it with nothing lost.
 */
let cleanups: (() => void)[] = []
afterEach(() => {
  for (const c of cleanups) c()
  cleanups = []
})

/** The recorded run's log cut right after the first event of `type`: the run as a crash left it there. */
function cutAt(type: string): string {
  const { root, cleanup } = copyFixture()
  cleanups.push(cleanup)
  const file = join(root, ".air/local/state/events.jsonl")
  const lines = readFileSync(file, "utf8").trim().split("\n")
  const at = lines.findIndex((l) => JSON.parse(l).type === type)
  writeFileSync(file, lines.slice(0, at + 1).join("\n") + "\n")
  return root
}

describe("a new run where the last one did not settle", () => {
  it("a finished run lets a new one start", () => {
    const { root, cleanup } = copyFixture()
    cleanups.push(cleanup)
    expect(openRun(root)).toBeUndefined()
  })

  it("a plan waiting for confirmation: refused, naming the run, the plan and both commands", () => {
    const root = cutAt("plan.proposed")
    const open = openRun(root)!
    expect(open.problem.code).toBe("run-open")
    expect(open.problem.message).toMatch(new RegExp(`^the run run-20261129-0900 in ${root} waits for your answer: .*Three tasks`))
    expect(open.problem.fix).toContain(`aircoding run ${root} --resume --answer "yes" (or --answer "change: <what to change>")`)
    expect(open.problem.fix).toContain(`aircoding run ${root} --new < requirement.txt (its log and evidence are kept under .air/local/archive/run-20261129-0900/)`)
  })

  it("a run interrupted while its tasks ran: refused, saying where it stood, with --resume and --new", () => {
    const root = cutAt("task.dispatched")
    const open = openRun(root)!
    expect(open.problem.message).toBe(`the run run-20261129-0900 in ${root} was interrupted (running, 0 of 3 tasks merged); a new requirement would not reach it`)
    expect(open.problem.fix).toContain(`go on with it: aircoding run ${root} --resume`)
    expect(open.problem.fix).toContain("--new")
  })

  it("--new moves the log and evidence under .air/local/archive/<run-id>/ and renames the task branches", async () => {
    const root = cutAt("task.dispatched")
    const git = (...args: string[]) => execFileSync("git", args, { cwd: root, encoding: "utf8", env: { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" } })
    git("init", "-q")
    writeFileSync(join(root, "a.txt"), "a\n")
    git("add", "a.txt")
    git("commit", "-qm", "a")
    git("branch", "air/T-1")
    const said = await Preflight.archiveRun(root, "run-20261129-0900", ["T-1", "T-2"])
    expect(said).toBe("archived the run run-20261129-0900 under .air/local/archive/run-20261129-0900/ (its task branches as air/archive/run-20261129-0900/<task-id>)")
    expect(existsSync(join(root, ".air/local/state"))).toBe(false)
    expect(existsSync(join(root, ".air/local/archive/run-20261129-0900/state/events.jsonl"))).toBe(true)
    expect(git("branch", "--format=%(refname:short)").trim().split("\n")).toContain("air/archive/run-20261129-0900/T-1")
    expect(openRun(root)).toBeUndefined()
  })
})

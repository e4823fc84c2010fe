import { execFileSync } from "node:child_process"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { passingReviewer, runScenario, trivialProject, writeAndReport, type RunResult, submittingMain } from "../support/runs"

/**
 * A machine with no git identity (issue 12, item 5): no user.name or user.email anywhere git looks, and
 * none in the environment. Before, every executor's commit failed and every task blocked after four
 * attempts with a message that named no cause. Now the run says so before it starts, and the workers'
 * commits are made as AirCoding's own identity, as the Scheduler's merges are.
 */
const requirement = "Write a note."
const scenario = {
  name: "no-identity",
  scripts: [
    submittingMain(requirement),
    {
      agent: "architect",
      match: "^Requirement:",
      steps: [
        { tool: "air_propose", args: { summary: "One note." } },
        { tool: "air_plan", args: { tasks: [{ id: "T-1", title: "Write the note", kind: "docs", writeSet: [{ path: "NOTE.md", action: "create" }], doneWhen: "NOTE.md exists" }] } },
        { text: "Planned." },
      ],
    },
    { agent: "executor", match: "^Task T-1:", steps: writeAndReport("NOTE.md", "a note\n", "Wrote NOTE.md") },
    passingReviewer,
  ],
}

let sandbox: Sandbox
let project: string
let r: RunResult

beforeAll(async () => {
  sandbox = makeSandbox("air-no-identity-")
  project = trivialProject(sandbox, { "README.md": "# notes\n" })
  // From here on the machine has no identity: the sandbox's HOME has no .gitconfig, the system's is ignored.
  for (const key of ["GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"]) delete sandbox.env[key]
  sandbox.env.GIT_CONFIG_NOSYSTEM = "1"
  r = await runScenario(sandbox, project, scenario, { input: requirement })
}, 600_000)

afterAll(() => sandbox?.cleanup())

const git = (args: string[]) => execFileSync("git", args, { cwd: project, encoding: "utf8", env: sandbox.env })

describe("no git identity on the machine", () => {
  test("git itself would refuse to commit here", () => {
    expect(() => git(["var", "GIT_AUTHOR_IDENT"])).toThrow()
  })

  test("the run says so before it starts, with the command that sets one", () => {
    expect(r.stderr).toContain("no git identity: commits in this run are made as AirCoding <aircoding@localhost>")
    expect(r.stderr).toContain('git config --global user.name "Your Name"')
  })

  test("the executor's commit works: the task merges on its first attempt", () => {
    expect(r.code, r.stderr.slice(-3000)).toBe(0)
    expect(r.summary.tasks.map((t: any) => [t.id, t.state])).toEqual([["T-1", "merged"]])
    expect(r.events.filter((e) => e.type === "task.dispatched").map((e) => e.role)).toEqual(["executor"])
    const author = git(["log", "-1", "--format=%an <%ae>", "air/done/T-1"]).trim()
    expect(author).toBe("AirCoding <aircoding@localhost>")
    expect(git(["show", "main:NOTE.md"])).toBe("a note\n")
  })
})

import { execFileSync } from "node:child_process"
import { existsSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { Sandbox as OsSandbox } from "../../src/scheduler/runtime/sandbox/sandbox"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { passingReviewer, runScenario, trivialProject, type RunResult, submittingMain, planningArchitect } from "../support/runs"

/**
 * The wiring, with the real binary: an executor's bash calls run inside bwrap (rewritten in
 * tool.execute.before, the task branch settled in tool.execute.after). Its first command tries what the
 * text checks cannot see — a forged done tag, the integration branch, the project's git config, a file
 * planted through /proc/self/root, the provider key — and is contained; its second commits the work,
 * which lands on the task branch, passes the gates (sandboxed too) and merges.
 */
const requirement = "Write the notes."
const tasks = [{ id: "T-1", title: "Write the notes", kind: "docs", writeSet: [{ path: "notes.md", action: "create" }], doneWhen: "notes.md exists" }]

let sandbox: Sandbox
let project: string
let r: RunResult
const git = (args: string[]) => execFileSync("git", args, { cwd: project, encoding: "utf8" }).trim()

beforeAll(async () => {
  sandbox = makeSandbox("air-sbx-e2e-")
  // A committed .env next to a source file: the engine's grep (ripgrep in its own process, outside bwrap)
  // would find both; the guard makes it skip the .env and cleans what it returns.
  project = trivialProject(sandbox, { "README.md": "# Notes\n", "cfg/.env": "DB_TOKEN=SECRET-ENV-VALUE-42\n", "cfg/settings.cpp": "// SECRET: read from the vault\n" })
  // The model sees only the first few hundred characters: the answer that matters comes first, and
  // everything goes to stdout so the order is the order of the commands.
  const attack = [
    "echo secrets=$(env | grep -c PROVIDER-SECRET)",
    "git tag air/done/T-9 2>&1",
    "git update-ref refs/heads/main HEAD 2>&1",
    "git config core.fsmonitor 'touch /tmp/pwned' 2>&1",
    `p=/proc/self; (echo x > $p/root${project}/planted.txt) 2>&1`,
  ].join("; ")
  const scenario = {
    name: "sandbox",
    scripts: [
      submittingMain(requirement),
      planningArchitect("One task.", tasks),
      {
        agent: "executor",
        match: "^Task T-1:",
        steps: [
          { tool: "grep", args: { pattern: "SECRET", path: "cfg" } },
          { tool: "grep", args: { pattern: "SECRET", include: ".env*" } },
          { tool: "read", args: { filePath: "cfg/.env" } },
          { tool: "bash", args: { command: attack, description: "try" } },
          { tool: "bash", args: { command: "echo notes > notes.md && git add -A && git commit -q -m notes && git log --oneline -1", description: "write" } },
          { tool: "air_report", args: { summary: "Wrote the notes." } },
          { text: "Reported." },
        ],
      },
      passingReviewer,
    ],
  }
  r = await runScenario(sandbox, project, scenario, { input: requirement, env: { ANTHROPIC_API_KEY: "sk-PROVIDER-SECRET" } })
}, 600_000)

afterAll(() => sandbox?.cleanup())

describe.skipIf(!OsSandbox.check().ok)("workers' shell commands in the OS sandbox (real binary)", () => {
  test("the run finishes done: the sandboxed commit reached the task branch and was merged", () => {
    expect(r.code, r.stderr.slice(-3000)).toBe(0)
    expect(r.summary.status).toBe("done")
    expect(r.summary.tasks.map((t: any) => [t.id, t.state])).toEqual([["T-1", "merged"]])
    expect(git(["show", "main:notes.md"])).toBe("notes")
  })

  test("the attack was contained: no forged tag, no git config, nothing planted, no provider key", () => {
    expect(git(["tag", "-l", "air/done/T-9"])).toBe("")
    expect(() => git(["config", "--get", "core.fsmonitor"])).toThrow()
    expect(existsSync(join(project, "planted.txt"))).toBe(false)
    const results = r.modelLog.filter((e) => e.agent === "executor").map((e) => String(e.lastToolResult ?? ""))
    const first = results.find((t) => t.includes("secrets=")) ?? JSON.stringify(results)
    expect(first).toMatch(/cannot lock ref .refs\/tags\/air\/done\/T-9/)
    expect(first).toContain("secrets=0")
  })

  test("the engine's grep and read never hand the model a .env: grep skipped it, a .env include and the read were refused", () => {
    const results = r.modelLog.filter((e) => e.agent === "executor").map((e) => String(e.lastToolResult ?? ""))
    expect(results.join("\n")).not.toContain("SECRET-ENV-VALUE-42")
    const grep = results.find((t) => t.startsWith("Found")) ?? JSON.stringify(results)
    expect(grep).toMatch(/^Found 1 matches/)
    expect(grep).toContain("cfg/settings.cpp:")
    expect(results.filter((t) => /may not use `(grep|read)` on (\.env\*|cfg\/\.env)/.test(t))).toHaveLength(2)
  })
})

import { execFileSync } from "node:child_process"
import { cpSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { Paths } from "../../src/engine"
import { aircoding } from "../support/engine"
import { makeSandbox, type Sandbox } from "../support/sandbox"

/**
 * The README's headless flow with the shipped demo.json, unmodified (issue 39 item 1): `run` stops at the
 * plan (exit 2), `--resume --answer "change: …"` stops again at the revised plan (exit 2), and
 * `--resume --answer yes` runs it to the end (exit 0). Each resume is a new process, so the Architect
 * answers in a fresh session; before the scenario had its scripts, a confirmation proposed the plan again.
 */
let sandbox: Sandbox
let dir: string
const scenario = join(Paths.scenarios, "demo.json")

beforeAll(() => {
  sandbox = makeSandbox("air-demo-paths-")
  dir = join(sandbox.root, "calc")
  cpSync(join(Paths.samples, "cpp-calc"), dir, { recursive: true })
  const git = (...args: string[]) => execFileSync("git", args, { cwd: dir, env: sandbox.env })
  git("init", "-q")
  git("add", "-A")
  git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "baseline")
})

afterAll(() => sandbox?.cleanup())

const run = (args: string[], input?: string) => aircoding(["run", dir, ...args, "--json", "--scripted", scenario], { cwd: sandbox.root, env: sandbox.env, input })

describe("the headless demo.json paths", () => {
  test("plan → change → revised plan → yes → done", async () => {
    const first = await run([], "Extend calc with mul and avg3")
    expect(first.code, first.stderr).toBe(2)
    expect(JSON.parse(first.stdout).stage).toBe("confirming")

    const changed = await run(["--resume", "--answer", "change: split the tests"])
    expect(changed.code, changed.stderr).toBe(2)
    const revised = JSON.parse(changed.stdout)
    expect(revised.stage).toBe("confirming")
    expect(revised.plan.summary).toContain("Revised plan")

    const yes = await run(["--resume", "--answer", "yes"])
    expect(yes.code, yes.stderr).toBe(0)
    const done = JSON.parse(yes.stdout)
    expect(done.status).toBe("done")
    expect(done.tasks.map((t: { id: string }) => t.id)).toEqual(["T-1", "T-2", "T-3"])
  }, 900_000)
})

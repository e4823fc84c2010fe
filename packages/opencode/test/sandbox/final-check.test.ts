import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { homedir, tmpdir } from "node:os"
import { join, relative } from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest"
import { FinalCheck } from "../../src/scheduler/runtime/integration/final-check"
import { Sandbox } from "../../src/scheduler/runtime/sandbox/sandbox"
import { Toolchain } from "../../src/scheduler/runtime/toolchain/index"

/**
 * The final check builds and tests the merged tree — the tasks' own CMakeLists.txt and tests — in the
 * gates' sandbox: the project root is writable (its build dir), its .git and .air and everything outside
 * it are not, .env is hidden; no sandbox means no build unless the user allowed the fallback.
 */
const available = Sandbox.check().ok
let dir: string
let root: string
// Outside the project and outside /tmp (the sandbox's /tmp is its own: a write there would land nowhere).
const outside = join(homedir(), `air-final-outside-${process.pid}.txt`)

function rules(build: string[]): void {
  const file = join(root, Toolchain.RULES_PATH)
  mkdirSync(join(file, ".."), { recursive: true })
  writeFileSync(file, JSON.stringify({ schemaVersion: 1, build, test: [], timeoutMs: 60_000, cache: { tool: "none" } }))
}

/** Everything outside the project root, plus its .git, its run state and its shared rules. */
function hashOutside(): string {
  const h = createHash("sha256")
  // The run's job budget (jobs.json) and the running command's progress (progress/) are written by AirCoding itself,
  // outside the sandbox, for the views.
  const skip = new Set([root, join(root, ".air", "local", "state", "jobs.json"), join(root, ".air", "local", "state", "progress")])
  const walk = (p: string) => {
    if (skip.has(p)) return
    const st = lstatSync(p)
    h.update(relative(dir, p) + "\0" + st.mode + "\0")
    if (st.isDirectory()) for (const e of readdirSync(p).sort()) walk(join(p, e))
    else if (!st.isSymbolicLink()) h.update(readFileSync(p))
  }
  walk(dir)
  skip.delete(root)
  for (const p of [join(root, ".git"), join(root, ".air", "local", "state"), join(root, ".air", "shared")]) walk(p)
  return h.digest("hex")
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "air-final-sbx-"))
  root = join(dir, "project")
  mkdirSync(join(root, ".air", "local", "state"), { recursive: true })
  writeFileSync(join(root, ".air", "local", "state", "events.jsonl"), "{}\n")
  writeFileSync(join(root, ".env"), "DB_PASSWORD=ENV-SECRET\n")
  writeFileSync(join(root, "README.md"), "x\n")
  const git = (args: string[]) => execFileSync("git", args, { cwd: root, env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null" } })
  git(["init", "-q", "-b", "main"])
  git(["-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "--allow-empty", "-m", "init"])
})
afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
  rmSync(outside, { force: true })
})
afterEach(() => Sandbox.setCheck(undefined))

describe.skipIf(!available)("the final check in the OS sandbox", () => {
  test("a build that writes outside its tree, into .git or .air, or reads .env, is contained; its own build dir is writable", async () => {
    const attempts = [
      `(echo pwn > ${outside}) 2>&1`,
      "(echo pwn > .air/local/state/planted) 2>&1",
      "(echo pwn > .git/hooks/pre-commit) 2>&1",
      "(echo pwn > .air/shared/rules/toolchain.json) 2>&1",
      "echo env=[$(cat .env)]",
      "mkdir -p build && echo built > build/out",
    ]
    rules([attempts.join("; ")])
    const before = hashOutside()
    const result = await FinalCheck.run(root, { sandbox: "on" })
    expect(result.passed, result.summary).toBe(true)
    expect(readFileSync(join(root, "build", "out"), "utf8")).toBe("built\n")
    expect(hashOutside()).toBe(before)
    expect(existsSync(outside)).toBe(false)
    const log = readFileSync(join(FinalCheck.dir(root), "final.log"), "utf8")
    expect(log).toContain("env=[]")
    expect(log).not.toContain("ENV-SECRET")
    expect(log.match(/Read-only file system/g)?.length).toBe(4)
  })

  test("a build command whose only step writes outside the tree fails the check", async () => {
    rules([`echo pwn > ${outside}`])
    const result = await FinalCheck.run(root, { sandbox: "on" })
    expect(result.passed).toBe(false)
    expect(result.commands.map((c) => [c.command, c.code !== 0])).toEqual([[`echo pwn > ${outside}`, true]])
    expect(existsSync(outside)).toBe(false)
  })
})

describe("the final check without a sandbox", () => {
  test("refused to run (nothing built) unless the user allowed the fallback; with it, it runs", async () => {
    rules(["touch ran.marker"])
    Sandbox.setCheck({ ok: false, message: "bubblewrap (bwrap) is not installed" })
    const refused = await FinalCheck.run(root, { sandbox: "on" })
    expect(refused.passed).toBe(false)
    expect(refused.commands).toEqual([])
    expect(refused.summary).toMatch(/only inside the OS sandbox.*bwrap\) is not installed.*sandboxFallback/)
    expect(existsSync(join(root, "ran.marker"))).toBe(false)
    const allowed = await FinalCheck.run(root, { sandbox: "fallback" })
    expect(allowed.passed).toBe(true)
    expect(existsSync(join(root, "ran.marker"))).toBe(true)
    expect(readFileSync(join(FinalCheck.dir(root), "final.log"), "utf8")).toMatch(/without the OS sandbox/)
  })
})

import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest"
import { Baseline } from "../../src/scheduler/runtime/integration/baseline"
import { Sandbox } from "../../src/scheduler/runtime/sandbox/sandbox"
import { Toolchain } from "../../src/scheduler/runtime/toolchain/index"
import { createCppRepo, type CppRepo } from "../runtime/cpp-repo"

/**
 * The run's baseline builds and tests the integration head — the project's own CMakeLists.txt and tests —
 * in the gates' sandbox: its baseline worktree is writable (its build dir), the user's checkout, its .git,
 * the run's .air and HOME are not, .env is hidden; no sandbox means no build unless the user allowed the
 * fallback (the baseline then errors, and the run asks).
 */
const available = Sandbox.check().ok
let repo: CppRepo
let home: string
let env: NodeJS.ProcessEnv

const rules = (build: string[], test: string[] = []) => Toolchain.Rules.parse({ schemaVersion: 1, build, test, timeoutMs: 60_000, cache: { tool: "none" } })
/** A new integration head: the baseline is taken once per commit. */
const advance = async (what: string) => {
  await repo.git(["commit", "-q", "--allow-empty", "-m", what])
  return (await repo.git(["rev-parse", "main"])).trim()
}
const logOf = (commit: string, name: string) => readFileSync(join(Baseline.evidenceDir(repo.root, commit), name), "utf8")

beforeAll(async () => {
  // A .env committed by mistake (in the baseline's tree) and one only in the user's checkout.
  repo = await createCppRepo({ empty: true, files: { "src/main.cpp": "int main() { return 0; }\n", ".env": "TRACKED_PASSWORD=TRACKED-SECRET\n" } })
  writeFileSync(join(repo.root, ".env.local"), "DB_PASSWORD=ENV-SECRET\n")
  mkdirSync(join(repo.root, ".air", "local", "state"), { recursive: true })
  writeFileSync(join(repo.root, ".air", "local", "state", "events.jsonl"), "{}\n")
  home = join(repo.root, "..", `${repo.root.split("/").pop()}-home`)
  mkdirSync(home, { recursive: true })
  env = { ...process.env, HOME: home }
})
afterAll(async () => {
  await repo?.cleanup()
  rmSync(home, { recursive: true, force: true })
})
afterEach(() => Sandbox.setCheck(undefined))

describe.skipIf(!available)("the baseline in the OS sandbox", () => {
  test("a build that writes into HOME, .air, .git or the user's checkout, or reads .env, is contained; its own build dir is writable", async () => {
    const commit = await advance("contained build")
    const attempts = [
      "(echo pwn > $HOME/planted) 2>&1",
      `(echo pwn > ${repo.root}/.air/local/state/planted) 2>&1`,
      `(echo pwn > ${repo.root}/.git/hooks/pre-commit) 2>&1`,
      `(echo pwn > ${repo.root}/src/planted.cpp) 2>&1`,
      "echo env=[$(cat .env)][$(cat ../../../../.env.local)]",
      "mkdir -p build && echo built > build/out && echo out=$(cat build/out)",
    ]
    const record = await Baseline.run(repo.root, "main", { rules: rules([attempts.join("; ")]), env, sandbox: "on" })
    expect(record).toMatchObject({ commit, status: "passed", build: { ran: true, passed: true } })
    const log = logOf(commit, "build.log")
    expect(log.match(/Read-only file system/g)?.length, log).toBe(4)
    expect(log).toContain("env=[][]")
    expect(log).not.toMatch(/TRACKED-SECRET|ENV-SECRET/)
    expect(log).toContain("out=built")
    for (const file of [join(home, "planted"), join(repo.root, ".air/local/state/planted"), join(repo.root, ".git/hooks/pre-commit"), join(repo.root, "src/planted.cpp")])
      expect(existsSync(file), file).toBe(false)
  })

  test("a test command that writes into HOME or .air fails the baseline; the others still run", async () => {
    const commit = await advance("tests that write outside")
    const record = await Baseline.run(repo.root, "main", {
      rules: rules(["true"], ["echo pwn > $HOME/test-planted", `echo pwn > ${repo.root}/.air/local/state/test-planted`, "echo still-ran"]),
      env,
      sandbox: "on",
    })
    expect(record).toMatchObject({ commit, status: "failed", build: { passed: true }, test: { ran: true, passed: false, command: "echo pwn > $HOME/test-planted" } })
    const log = logOf(commit, "test.log")
    expect(log.match(/Read-only file system/g)?.length, log).toBe(2)
    expect(log).toContain("still-ran")
    expect(existsSync(join(home, "test-planted"))).toBe(false)
    expect(existsSync(join(repo.root, ".air/local/state/test-planted"))).toBe(false)
  })
})

describe("the baseline without a sandbox", () => {
  test("refused before anything runs unless the user allowed the fallback; with it, it runs and says so", async () => {
    const marker = join(repo.root, "ran.marker")
    Sandbox.setCheck({ ok: false, message: "bubblewrap (bwrap) is not installed" })
    const refusedAt = await advance("no sandbox")
    await expect(Baseline.run(repo.root, "main", { rules: rules([`touch ${marker}`]), env, sandbox: "on" })).rejects.toThrow(
      /only inside the OS sandbox.*bwrap\) is not installed.*sandboxFallback/,
    )
    expect(existsSync(marker)).toBe(false)
    expect(await Baseline.read(repo.root, refusedAt)).toBeUndefined()
    // The settings decide by default: sandboxFallback lets it run without the sandbox.
    mkdirSync(join(repo.root, ".air", "shared"), { recursive: true })
    writeFileSync(join(repo.root, ".air", "shared", "config.json"), JSON.stringify({ sandboxFallback: true }))
    const allowed = await Baseline.run(repo.root, "main", { rules: rules([`touch ${marker}`]), env })
    expect(allowed).toMatchObject({ commit: refusedAt, status: "passed" })
    expect(existsSync(marker)).toBe(true)
    expect(logOf(refusedAt, "build.log")).toMatch(/^# without the OS sandbox \(allowed by sandboxFallback\): bubblewrap/)
  })
})

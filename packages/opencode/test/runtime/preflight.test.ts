import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest"
import { Preflight } from "../../src/scheduler/runtime/preflight"

/** Pre-flight on temp repositories: each problem found before anything starts, with its exact fix. */
const root = mkdtempSync(join(tmpdir(), "air-preflight-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))

const IDENTITY = { GIT_AUTHOR_NAME: "T", GIT_AUTHOR_EMAIL: "t@x.invalid", GIT_COMMITTER_NAME: "T", GIT_COMMITTER_EMAIL: "t@x.invalid" }
let n = 0
function dir(): string {
  const d = join(root, `p${n++}`)
  mkdirSync(d, { recursive: true })
  return d
}
function sh(cwd: string, ...args: string[]) {
  return execFileSync("git", args, { cwd, env: { ...process.env, ...IDENTITY }, encoding: "utf8" })
}
function repo(): string {
  const d = dir()
  sh(d, "init", "-q", "-b", "main")
  writeFileSync(join(d, "a.cpp"), "int a;\n")
  sh(d, "add", "-A")
  sh(d, "commit", "-qm", "first")
  return d
}
const codes = (r: Preflight.Report) => r.problems.map((p) => p.code)

describe("Preflight.check", () => {
  it("a clean repository on a branch passes", async () => {
    const r = await Preflight.check(repo())
    expect(r.problems).toEqual([])
    expect(r.ok).toBe(true)
  })

  it("a submodule the user never initialised is said once, before anything starts, with the command that fixes it", async () => {
    const lib = repo()
    const app = repo()
    sh(app, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "third_party/lib")
    sh(app, "commit", "-qm", "add lib")
    const clone = join(root, `clone${n++}`)
    sh(root, "clone", "-q", app, clone)
    const r = await Preflight.check(clone)
    expect(r.ok).toBe(true)
    const notes = r.notes.filter((note) => note.includes("submodule"))
    expect(notes).toHaveLength(1)
    expect(notes[0]).toContain("third_party/lib is not initialised")
    expect(notes[0]).toContain("submodule update --init --recursive -- third_party/lib")
    // Once initialised from the user's own copy, nothing more is said.
    sh(clone, "-c", "protocol.file.allow=always", "submodule", "update", "-q", "--init")
    expect((await Preflight.check(clone)).notes.filter((note) => note.includes("submodule"))).toEqual([])
  })

  it("not a git repository: the init commands and --init-git", async () => {
    const r = await Preflight.check(dir())
    expect(codes(r)).toEqual(["not-a-repo"])
    expect(r.problems[0]!.fix).toContain("git init && git add -A && git commit -m baseline && git tag air/baseline")
    expect(r.problems[0]!.fix).toContain("aircoding run --init-git")
  })

  it("a repository without a commit", async () => {
    const d = dir()
    sh(d, "init", "-q")
    const r = await Preflight.check(d)
    expect(codes(r)).toEqual(["no-commit"])
    expect(r.problems[0]!.fix).toContain("git commit -m baseline")
  })

  it("a detached HEAD", async () => {
    const d = repo()
    sh(d, "checkout", "-q", "--detach")
    const r = await Preflight.check(d)
    expect(codes(r)).toEqual(["detached-head"])
    expect(r.problems[0]!.fix).toContain("git switch")
  })

  it("a tracked file with uncommitted changes stops nothing: it is named in a note; untracked files and .air/ do not count", async () => {
    const d = repo()
    writeFileSync(join(d, "a.cpp"), "int a = 1;\n")
    writeFileSync(join(d, "new.txt"), "untracked\n")
    mkdirSync(join(d, ".air", "shared"), { recursive: true })
    writeFileSync(join(d, ".air", "shared", "config.json"), "{}")
    sh(d, "add", ".air")
    sh(d, "commit", "-qm", "air")
    writeFileSync(join(d, ".air", "shared", "config.json"), '{"concurrency":2}')
    const r = await Preflight.check(d)
    expect(codes(r)).toEqual([])
    expect(r.ok).toBe(true)
    expect(r.notes.filter((n) => n.includes("uncommitted"))).toEqual([
      "1 tracked file(s) have uncommitted changes: a.cpp; they stay as they are, and a task that must change one of them waits to merge until you commit or stash it",
    ])
    expect(await Preflight.refusal(d)).toBeUndefined()
  })

  it("a bad config.json: one line naming the file and the key", async () => {
    const d = repo()
    mkdirSync(join(d, ".air", "shared"), { recursive: true })
    writeFileSync(join(d, ".air", "shared", "config.json"), '{"concurency": 2}')
    const r = await Preflight.check(d)
    expect(codes(r)).toEqual(["config"])
    expect(r.problems[0]!.message).toBe(".air/shared/config.json: concurency: unknown key; did you mean concurrency?")
  })

  it("config.json with a BOM is read; with an invalid byte it is refused at its offset", async () => {
    const d = repo()
    mkdirSync(join(d, ".air", "shared"), { recursive: true })
    writeFileSync(join(d, ".air", "shared", "config.json"), Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"concurrency": 2}')]))
    expect(codes(await Preflight.check(d))).toEqual([])
    writeFileSync(join(d, ".air", "shared", "config.json"), Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]))
    const r = await Preflight.check(d)
    expect(codes(r)).toEqual(["config"])
    expect(r.problems[0]!.message).toContain(".air/shared/config.json: not valid UTF-8 at byte 2")
  })

  it.each([
    ["truncated", '{"schemaVersion": 1, "build": ["make"', "not valid JSON"],
    ["a misspelt key", '{"schemaVersion": 1, "tests": []}', "tests: unknown key; did you mean test?"],
  ])("a toolchain.json %s is refused naming the file", async (_name, text, expected) => {
    const d = repo()
    mkdirSync(join(d, ".air", "shared", "rules"), { recursive: true })
    writeFileSync(join(d, ".air", "shared", "rules", "toolchain.json"), text)
    const r = await Preflight.check(d)
    expect(codes(r)).toEqual(["toolchain"])
    expect(r.problems[0]!.message).toContain(".air/shared/rules/toolchain.json: ")
    expect(r.problems[0]!.message).toContain(expected)
  })

  it("a merge lock held by a live process on this host; a dead holder is not a problem", async () => {
    const d = repo()
    mkdirSync(join(d, ".air", "local", "state"), { recursive: true })
    const lock = join(d, ".air", "local", "state", "merge.lock")
    const sleeper = execFileSync("sh", ["-c", "sleep 60 >/dev/null 2>&1 & echo $!"], { encoding: "utf8" }).trim()
    try {
      writeFileSync(lock, JSON.stringify({ pid: Number(sleeper), host: hostname(), what: "merge of T-1", since: "2026-01-01T00:00:00Z" }))
      const r = await Preflight.check(d, process.env, 300)
      expect(codes(r)).toEqual(["lock-held"])
      expect(r.problems[0]!.message).toContain(`.air/local/state/merge.lock is held by process ${sleeper}`)
      expect(r.problems[0]!.fix).toContain(`kill ${sleeper}`)
    } finally {
      process.kill(Number(sleeper))
    }
    writeFileSync(lock, JSON.stringify({ pid: 999_999_999, host: hostname(), what: "merge of T-1", since: "x" }))
    expect(codes(await Preflight.check(d))).toEqual([])
  })
})

describe("identity", () => {
  const saved: Record<string, string | undefined> = {}
  const keys = ["HOME", "XDG_CONFIG_HOME", ...Object.keys(IDENTITY), "EMAIL"]
  beforeEach(() => {
    for (const k of keys) saved[k] = process.env[k]
    for (const k of keys) delete process.env[k]
    process.env.HOME = mkdtempSync(join(root, "home-"))
  })
  afterEach(() => {
    for (const k of keys) if (saved[k] === undefined) delete process.env[k]
    else process.env[k] = saved[k]
  })

  it("no identity (HOME an empty dir): a note, AirCoding's identity for the engine, and commits that work", async () => {
    const d = dir()
    const r = await Preflight.check(d)
    expect(r.notes.join("\n")).toContain("no git identity: commits in this run are made as AirCoding <aircoding@localhost>")
    const env = await Preflight.identityEnv(d)
    expect(env).toEqual({ GIT_AUTHOR_NAME: "AirCoding", GIT_COMMITTER_NAME: "AirCoding", GIT_AUTHOR_EMAIL: "aircoding@localhost", GIT_COMMITTER_EMAIL: "aircoding@localhost" })
    expect((await Preflight.identityCheck(d)).detail).toContain("none configured")
    // --init-git commits with it; a worker's own commit with the engine's environment works too.
    expect(await Preflight.initGit(d)).toContain("tagged air/baseline")
    expect(execFileSync("git", ["log", "--format=%an <%ae>"], { cwd: d, encoding: "utf8" }).trim()).toBe("AirCoding <aircoding@localhost>")
    expect(execFileSync("git", ["tag"], { cwd: d, encoding: "utf8" }).trim()).toBe("air/baseline")
    writeFileSync(join(d, "b.txt"), "b\n")
    execFileSync("git", ["add", "-A"], { cwd: d })
    execFileSync("git", ["commit", "-qm", "worker"], { cwd: d, env: { ...process.env, ...env } })
    expect((await Preflight.check(d)).problems).toEqual([])
  })

  it("a configured identity wins: nothing added to the engine's environment", async () => {
    const d = repo()
    sh(d, "config", "user.name", "Ada")
    sh(d, "config", "user.email", "ada@example.com")
    expect(await Preflight.identityEnv(d)).toEqual({})
    expect((await Preflight.check(d)).notes).toEqual([])
    expect((await Preflight.identityCheck(d)).detail).toBe("Ada <ada@example.com>")
  })
})

describe("Preflight.refusal (the runtime's submit)", () => {
  it("says every problem with its fix, or nothing when the run may start", async () => {
    expect(await Preflight.refusal(repo())).toBeUndefined()
    const d = repo()
    sh(d, "checkout", "-q", "--detach")
    const text = await Preflight.refusal(d)
    expect(text).toContain("nothing was dispatched")
    expect(text).toContain("HEAD is detached")
    expect(text).toContain("fix: git switch")
  })
})

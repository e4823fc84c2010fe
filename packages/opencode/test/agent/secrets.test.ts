import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { homedir, tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeEach, describe, expect, it } from "vitest"
import { Guard, Sessions } from "../../src/agent"
import { SecretPaths } from "../../src/agent/secrets"

/**
 * The engine's read, grep, glob and list run in its own process, outside the OS sandbox: secret files are
 * fenced by the guard (refused paths, grep made to skip them) and cleaned from what the tools return.
 */
const base = realpathSync(mkdtempSync(join(tmpdir(), "air-secrets-")))
const project = join(base, "project")
const worktree = join(project, ".air", "local", "worktrees", "T1")
mkdirSync(join(worktree, "src"), { recursive: true })
writeFileSync(join(worktree, ".env"), "DB_PASSWORD=hunter2-ENV-SECRET\nexport API_TOKEN='tok-ENV-SECRET-2'\nSHORT=x\n")
afterAll(() => rmSync(base, { recursive: true, force: true }))

const executor: Guard.SessionView = { worktree, directory: worktree, evidenceCount: 1 }
const decide = (tool: string, args: Record<string, unknown>, agent = "executor", session = executor) => Guard.evaluate({ agent, tool, args, session })

describe("file tools on secret paths", () => {
  it("refuses read, grep, glob and list that name a secret file or directory, for workers and readers alike", () => {
    const home = homedir()
    const refused: [string, Record<string, unknown>][] = [
      ["read", { filePath: join(worktree, ".env") }],
      ["read", { filePath: "config/.env.production" }],
      ["read", { filePath: ".envrc" }],
      ["read", { filePath: "certs/server.pem" }],
      ["read", { filePath: "deploy/id_rsa" }],
      ["grep", { pattern: "KEY", path: ".env" }],
      ["grep", { pattern: "KEY", include: ".env*" }],
      ["grep", { pattern: "KEY", include: "*.{cpp,env,pem}" }],
      ["grep", { pattern: "KEY", include: "**/id_*" }],
      ["glob", { pattern: "**/.env" }],
      ["glob", { pattern: "**/*.pem" }],
      ["glob", { pattern: ".env*" }],
      ["list", { path: "keys/.ssh" }],
    ]
    for (const [tool, args] of refused) {
      const d = decide(tool, args)
      expect([tool, args, d.allow, d.allow ? "" : d.reason]).toEqual([tool, args, false, "secret"])
    }
    // Roles that are not confined to a worktree (the reviewer, the architect) meet the same fence.
    for (const [tool, args] of [
      ["read", { filePath: join(home, ".ssh", "id_ed25519") }],
      ["read", { filePath: join(home, ".aws", "credentials") }],
      ["read", { filePath: join(home, ".local", "share", "opencode", "auth.json") }],
      ["read", { filePath: join(project, ".git", "config") }],
      ["list", { path: join(home, ".ssh") }],
      ["grep", { pattern: "token", path: join(home, ".config", "opencode") }],
    ] as [string, Record<string, unknown>][]) {
      const d = decide(tool, args, "reviewer", { directory: project, evidenceCount: 0 })
      expect([tool, args, d.allow]).toEqual([tool, args, false])
    }
  })

  it("lets ordinary files through: environment.cpp, env.h, .env.example, a key-named header", () => {
    for (const filePath of ["src/environment.cpp", "include/env.h", ".env.example", "src/key_value.hpp", "docs/ssh.md", "src/keys.cpp"]) {
      const d = decide("read", { filePath })
      expect([filePath, d.allow]).toEqual([filePath, true])
    }
    expect(decide("glob", { pattern: "src/**/*.cpp" }).allow).toBe(true)
    expect(decide("glob", { pattern: "**/*" }).allow).toBe(true)
    expect(decide("list", { path: "src" }).allow).toBe(true)
  })

  it("makes grep skip secret files: no include (or one meaning everything) becomes the exclusion glob; a narrow include is kept", () => {
    for (const include of [undefined, "*", "**/*"]) {
      const d = decide("grep", { pattern: "SECRET", ...(include ? { include } : {}) })
      expect(d.allow).toBe(true)
      expect(d.allow && d.args?.include).toBe(SecretPaths.EXCLUDE_GLOB)
      expect(d.allow && d.args?.path).toBe(worktree)
    }
    const narrow = decide("grep", { pattern: "SECRET", include: "*.{cpp,h}", path: "src" })
    expect(narrow.allow && narrow.args).toEqual({ pattern: "SECRET", include: "*.{cpp,h}", path: join(worktree, "src") })
    // The reviewer's grep too.
    const reviewer = decide("grep", { pattern: "x" }, "reviewer", { directory: project, evidenceCount: 0 })
    expect(reviewer.allow && reviewer.args?.include).toBe(SecretPaths.EXCLUDE_GLOB)
  })

  it("the exclusion glob names every probe a secret include would be refused for", () => {
    const re = SecretPaths.globRegex(SecretPaths.EXCLUDE_GLOB.slice(1))
    for (const name of [".env", ".env.local", ".envrc", "server.pem", "tls.key", "id_rsa", "id_ed25519", ".netrc", ".git-credentials"]) expect([name, re.test(name)]).toEqual([name, true])
    for (const name of ["main.cpp", "environment.cpp", "CMakeLists.txt"]) expect([name, re.test(name)]).toEqual([name, false])
  })
})

describe("what grep, glob and list return, cleaned", () => {
  beforeEach(() => Sessions.clear())

  const grepOutput = [
    "Found 4 matches",
    `${join(worktree, ".env")}:`,
    "  Line 1: DB_PASSWORD=hunter2-ENV-SECRET",
    "",
    `${join(worktree, "src", "a.cpp")}:`,
    "  Line 3: // SECRET handling lives in vault.cpp",
    '  Line 9: const char* k = "tok-ENV-SECRET-2"; // copied from the env',
    "",
    `${join(worktree, "src", "b.cpp")}:`,
    "  Line 2: int SECRET = 0;",
  ].join("\n")

  it("drops a secret file's block and any line carrying a .env value; the count follows", () => {
    const c = SecretPaths.clean("grep", grepOutput, [worktree])
    expect(c.removed).toBe(2)
    expect(c.output).not.toMatch(/ENV-SECRET|\.env/)
    expect(c.output).toContain("Found 2 matches")
    expect(c.output).toContain("  Line 3: // SECRET handling lives in vault.cpp")
    expect(c.output).toContain("  Line 2: int SECRET = 0;")
  })

  it("leaves clean output exactly as it was, and says no files when nothing is left", () => {
    const clean = `Found 1 matches\n${join(worktree, "src", "b.cpp")}:\n  Line 2: int SECRET = 0;`
    expect(SecretPaths.clean("grep", clean, [worktree])).toEqual({ output: clean, removed: 0 })
    const only = `Found 1 matches\n${join(worktree, ".env")}:\n  Line 1: DB_PASSWORD=hunter2-ENV-SECRET`
    expect(SecretPaths.clean("grep", only, [worktree]).output).toBe("No files found")
  })

  it("drops secret names from glob and list output", () => {
    const glob = [join(worktree, "src", "a.cpp"), join(worktree, ".env"), join(worktree, "certs", "server.pem"), join(worktree, ".env.example")].join("\n")
    expect(SecretPaths.clean("glob", glob).output.split("\n")).toEqual([join(worktree, "src", "a.cpp"), join(worktree, ".env.example")])
    const list = `${worktree}/\n  .env\n  .envrc\n  src/\n    a.cpp\n  .ssh/\n`
    expect(SecretPaths.clean("list", list).output).toBe(`${worktree}/\n  src/\n    a.cpp\n`)
  })

  it("the after hook cleans a worker's grep result in place; a session that is not ours is left alone", async () => {
    Sessions.record("s1", { agent: "executor", worktree })
    const output = { output: grepOutput, metadata: {} }
    await Guard.after({ tool: "grep", sessionID: "s1", callID: "c1" }, output)
    expect(output.output).not.toContain("ENV-SECRET")
    Sessions.record("s2", { agent: "build" })
    const theirs = { output: grepOutput, metadata: {} }
    await Guard.after({ tool: "grep", sessionID: "s2", callID: "c2" }, theirs)
    expect(theirs.output).toBe(grepOutput)
  })
})

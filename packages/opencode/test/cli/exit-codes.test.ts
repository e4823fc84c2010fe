import { execFileSync } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { hostname } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { Args } from "../../src/cli/args"
import { aircoding } from "../support/engine"
import { makeSandbox } from "../support/sandbox"

/**
 * The CLI as a user meets it, run as a process (`bun bin/aircoding.ts …`): every error before the engine
 * starts exits 1 with one line saying what and the fix; nothing here starts a model.
 */
const sandbox = makeSandbox("air-cli-")
afterAll(() => sandbox.cleanup())

const cli = (args: string[], input?: string | Buffer, cwd = sandbox.root) =>
  aircoding(args, { cwd, env: sandbox.env, input: input as string | undefined, timeoutMs: 60_000 })

function git(cwd: string, ...args: string[]) {
  execFileSync("git", args, { cwd, env: sandbox.env })
}

describe("usage errors exit 1 with the message and the usage hint", () => {
  it.each([
    ["a mistyped command", ["stauts"], "unknown command 'stauts'; did you mean status?", "aircoding --help"],
    ["an unknown flag", ["run", "--bogus"], "unknown option --bogus", "aircoding run --help"],
    ["a misspelt flag", ["run", "--yse"], "unknown option --yse; did you mean --yes?", "aircoding run --help"],
    ["a missing directory", ["run", "/no/such/dir"], "directory not found: /no/such/dir", "aircoding run --help"],
    ["a word that is neither", ["frobnicate"], "'frobnicate' is neither a command nor a directory", "aircoding --help"],
    ["--init-git with --resume", ["run", ".", "--init-git", "--resume"], "--init-git starts a new run", "aircoding run --help"],
    ["an unknown flag of a view", ["status", "--bogus"], "unknown option --bogus", "aircoding status --help"],
    ["a mistyped command before a directory", ["staus", "."], "unknown command 'staus'; did you mean status?", "aircoding --help"],
  ])("%s", async (_name, args, message, hint) => {
    const r = await cli(args, "x")
    expect(r.code, r.stderr).toBe(1)
    expect(r.stderr).toContain(message)
    expect(r.stderr).toContain(hint)
    expect(r.stderr).not.toContain("unexpected error")
  })

  // Every command of the parser's list (main's table is typed by it), and none: the real process's exit code.
  it.each(["", ...Args.COMMANDS])("an unknown flag of `aircoding %s`: exit 1, one line and that command's help hint", async (name) => {
    const command = name ? [name] : []
    const r = await cli([...command, "--bogus"], "x")
    expect(r.code, r.stderr).toBe(Args.USAGE_EXIT)
    expect(r.stderr.trimEnd().split("\n")).toEqual(["aircoding: unknown option --bogus", `Run \`${["aircoding", ...command].join(" ")} --help\` for usage.`])
    expect(r.stdout).toBe("")
  })

  it("a file given as the directory", async () => {
    const file = join(sandbox.root, "file.txt")
    writeFileSync(file, "x")
    const r = await cli(["run", file], "x")
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`not a directory: ${file}`)
  })

  it("an empty stdin, a 5 MB one-line requirement, invalid UTF-8: refused at once", async () => {
    const project = sandbox.project("stdin")
    const empty = await cli(["run", project], "  \n")
    expect(empty.code).toBe(1)
    expect(empty.stderr).toContain("no requirement on stdin")
    const huge = await cli(["run", project], "x".repeat(5 * 1024 * 1024))
    expect(huge.code).toBe(1)
    expect(huge.stderr).toContain("the requirement on stdin is 5.0 MB; the limit is 256 KB")
    const bad = await cli(["run", project], Buffer.from([0x61, 0x62, 0xff, 0x0a]))
    expect(bad.code).toBe(1)
    expect(bad.stderr).toContain("stdin: not valid UTF-8 at byte 2")
  })

  it("--help for the CLI and every command", async () => {
    for (const [args, text] of [
      [["--help"], "aircoding <command> --help"],
      [["run", "--help"], "--init-git"],
      [["doctor", "--help"], "identity"],
      [["demo", "--help"], "aircoding demo"],
      [["status", "--help"], "aircoding status"],
      [["events", "--help"], "aircoding events"],
      [["dashboard", "--help"], "aircoding dashboard"],
    ] as const) {
      const r = await cli([...args])
      expect(r.code, args.join(" ")).toBe(0)
      expect(r.stdout).toContain(text)
    }
  })
})

describe("aircoding run: pre-flight stops before the engine starts (exit 1, one line and the fix)", () => {
  it("not a git repository", async () => {
    const dir = join(sandbox.root, "plain")
    mkdirSync(dir, { recursive: true })
    const r = await cli(["run", dir, "--json"], "add a feature")
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`${dir} is not a git repository`)
    const summary = JSON.parse(r.stdout)
    expect(summary.status).toBe("error")
    expect(summary.preflight.map((p: { code: string }) => p.code)).toEqual(["not-a-repo"])
    expect(r.stderr).toContain("fix: git init && git add -A && git commit -m baseline && git tag air/baseline")
    expect(r.stderr).toContain("aircoding run --init-git")
  })

  it("--init-git makes the repository, its baseline commit and tag (stopped here by a bad config.json)", async () => {
    const dir = join(sandbox.root, "to-init")
    mkdirSync(join(dir, ".air", "shared"), { recursive: true })
    writeFileSync(join(dir, "main.cpp"), "int main() {}\n")
    writeFileSync(join(dir, ".air", "shared", "config.json"), '{"repairBudgte": 1}')
    const r = await cli(["run", dir, "--init-git"], "x")
    expect(r.code).toBe(1)
    expect(r.stderr).toContain("commit \"baseline\", tagged air/baseline")
    expect(r.stderr).toContain("repairBudgte: unknown key; did you mean repairBudget?")
    expect(r.stderr).not.toContain("not a git repository")
    expect(execFileSync("git", ["log", "--format=%s %D"], { cwd: dir, env: sandbox.env, encoding: "utf8" }).trim()).toContain("baseline")
    expect(execFileSync("git", ["ls-files"], { cwd: dir, env: sandbox.env, encoding: "utf8" })).toContain("main.cpp")
    expect(execFileSync("git", ["tag"], { cwd: dir, env: sandbox.env, encoding: "utf8" }).trim()).toBe("air/baseline")
  })

  it("no commit; detached HEAD", async () => {
    const fresh = join(sandbox.root, "fresh")
    mkdirSync(fresh, { recursive: true })
    git(fresh, "init", "-q")
    const noCommit = await cli(["run", fresh], "x")
    expect(noCommit.code).toBe(1)
    expect(noCommit.stderr).toContain("has no commit yet")

    const detached = sandbox.project("detached")
    git(detached, "checkout", "-q", "--detach")
    const d = await cli(["run", detached], "x")
    expect(d.code).toBe(1)
    expect(d.stderr).toContain("HEAD is detached")
  })

  it("a bad config.json or toolchain.json: one line naming the file and key, also on --resume", async () => {
    const project = sandbox.project("config")
    mkdirSync(join(project, ".air", "shared", "rules"), { recursive: true })
    writeFileSync(join(project, ".air", "shared", "config.json"), '{"concurency": 2}')
    for (const args of [["run", project], ["run", project, "--resume"]]) {
      const r = await cli(args, "x")
      expect(r.code, args.join(" ")).toBe(1)
      expect(r.stderr).toContain(".air/shared/config.json: concurency: unknown key; did you mean concurrency?")
    }
    writeFileSync(join(project, ".air", "shared", "config.json"), '{"concurrency": "two"}')
    const wrongType = await cli(["run", project, "--resume"])
    expect(wrongType.code).toBe(1)
    expect(wrongType.stderr).toContain(".air/shared/config.json: concurrency:")
    expect(wrongType.stderr).not.toContain("engine stopped")

    writeFileSync(join(project, ".air", "shared", "config.json"), "{}")
    writeFileSync(join(project, ".air", "shared", "rules", "toolchain.json"), '{"schemaVersion": 1, "build": ["make"')
    const r = await cli(["run", project], "x")
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(".air/shared/rules/toolchain.json: not valid JSON")
  })

  it("a merge lock held by a live process: a clean message, no stack trace", async () => {
    const project = sandbox.project("locked")
    mkdirSync(join(project, ".air", "local", "state"), { recursive: true })
    const sleeper = execFileSync("sh", ["-c", "sleep 60 >/dev/null 2>&1 & echo $!"], { encoding: "utf8" }).trim()
    try {
      writeFileSync(join(project, ".air", "local", "state", "merge.lock"), JSON.stringify({ pid: Number(sleeper), host: hostname(), what: "merge of T-1", since: "2026-01-01T00:00:00Z" }))
      const r = await cli(["run", project], "x")
      expect(r.code).toBe(1)
      expect(r.stderr).toContain(`.air/local/state/merge.lock is held by process ${sleeper}`)
      expect(r.stderr).not.toContain("unexpected error")
      expect(r.stderr).not.toMatch(/\n\s+at /)
    } finally {
      process.kill(Number(sleeper))
    }
  })

  it("no git identity (HOME an empty dir): said before anything starts", async () => {
    const project = sandbox.project("anon")
    writeFileSync(join(project, "a.txt"), "a\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "a")
    writeFileSync(join(project, "a.txt"), "changed\n")
    const home = join(sandbox.root, "empty-home")
    mkdirSync(home, { recursive: true })
    const env: NodeJS.ProcessEnv = { ...sandbox.env, HOME: home, XDG_CONFIG_HOME: join(home, ".config") }
    for (const k of ["GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"]) delete env[k]
    const r = await aircoding(["run", project], { cwd: project, env, input: "x", timeoutMs: 60_000 })
    expect(r.code).toBe(1)
    expect(r.stderr).toContain("no git identity: commits in this run are made as AirCoding <aircoding@localhost>")
    expect(r.stderr).toContain("uncommitted changes: a.txt")
  })
})

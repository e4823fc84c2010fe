import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { git, GitCommandError, gitTry, gitYes } from "../../src/scheduler/runtime/git/git.ts"
import { beforeStallEnds } from "../support/stall.ts"
import { createCppRepo, type CppRepo } from "./cpp-repo.ts"

describe("git through the process runner", () => {
  let repo: CppRepo
  let elsewhere: string
  const saved = { ...process.env }
  beforeAll(async () => {
    repo = await createCppRepo()
    elsewhere = await mkdtemp(path.join(tmpdir(), "air-git-"))
  })
  afterAll(async () => {
    process.env = saved
    await repo?.cleanup()
    await rm(elsewhere, { recursive: true, force: true })
  })

  test("every non-zero exit is reported with its code; yes/no questions answer 0/1 and throw on anything else", async () => {
    const error = await git(repo.root, ["rev-parse", "--verify", "no-such-ref"]).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(GitCommandError)
    expect((error as GitCommandError).exitCode).toBe(128)
    expect((await gitTry(repo.root, ["rev-parse", "--verify", "-q", "no-such-ref"])).code).toBe(1)
    const head = (await git(repo.root, ["rev-parse", "HEAD"])).trim()
    expect(await gitYes(repo.root, ["merge-base", "--is-ancestor", head, head])).toBe(true)
    expect(await gitYes(repo.root, ["diff", "--quiet", "HEAD", "HEAD"])).toBe(true)
    await expect(gitYes(repo.root, ["merge-base", "--is-ancestor", "nope", head])).rejects.toBeInstanceOf(GitCommandError)
  })

  test("a worktree another git is still adding (its commondir written empty) delays a command, never fails it", async () => {
    const wt = path.join(elsewhere, "half-added")
    await git(repo.root, ["worktree", "add", "-q", "-b", "half-added", wt])
    const commondir = path.join(repo.root, ".git", "worktrees", "half-added", "commondir")
    const written = await readFile(commondir, "utf8")
    // The state `git worktree add` leaves for a moment: the file exists, empty. Git itself dies on it.
    await writeFile(commondir, "")
    const raw = await import("node:child_process").then((cp) => cp.spawnSync("git", ["worktree", "list"], { cwd: repo.root, encoding: "utf8" }))
    expect(raw.status).toBe(128)
    expect(raw.stderr).toContain("commondir")
    setTimeout(() => void writeFile(commondir, written), 60)
    expect(await git(repo.root, ["worktree", "list", "--porcelain"])).toContain(`branch refs/heads/half-added`)
    await git(repo.root, ["branch", "after-the-add"])
    // Any other failure is still reported at once.
    await expect(git(repo.root, ["branch", "-D", "no-such-branch"])).rejects.toBeInstanceOf(GitCommandError)
    await git(repo.root, ["worktree", "remove", "--force", wt])
  })

  test("no ambient GIT_* reaches git except the identity", async () => {
    process.env.GIT_DIR = path.join(elsewhere, "not-a-repo")
    process.env.GIT_INDEX_FILE = path.join(elsewhere, "index")
    process.env.GIT_AUTHOR_NAME = "Ambient Author"
    try {
      expect((await git(repo.root, ["rev-parse", "--show-toplevel"])).trim()).toBe(await realpathOf(repo.root))
      expect((await git(repo.root, ["var", "GIT_AUTHOR_IDENT"])).startsWith("Ambient Author <")).toBe(true)
    } finally {
      delete process.env.GIT_DIR
      delete process.env.GIT_INDEX_FILE
      delete process.env.GIT_AUTHOR_NAME
    }
  })

  test("the runtime's git port is bounded: a git that hangs (here a reference-transaction hook) is stopped and rejects", async () => {
    const { boundedGit } = await import("../../src/scheduler/runtime/ports.ts")
    const hook = path.join(repo.root, ".git", "hooks", "reference-transaction")
    await writeFile(hook, "#!/bin/sh\nsleep 30\n", { mode: 0o755 })
    try {
      // The hook's sleep is 60 times the bound: an answer before it ends means the bound stopped git.
      const bounded = boundedGit(500)(repo.root, ["update-ref", "refs/air/bounded", "HEAD"]).catch((e: unknown) => e)
      const error = await beforeStallEnds(bounded, { ms: 30_000, what: "the hook's sleep 30" })
      expect(error).toBeInstanceOf(GitCommandError)
      expect((error as GitCommandError).message).toMatch(/stopped after 500 ms/)
    } finally {
      await rm(hook, { force: true })
    }
    // Without the hook the same call goes through.
    await boundedGit(10_000)(repo.root, ["update-ref", "refs/air/bounded", "HEAD"])
    expect((await git(repo.root, ["rev-parse", "refs/air/bounded"])).trim()).toBe((await git(repo.root, ["rev-parse", "HEAD"])).trim())
  })
})

async function realpathOf(dir: string): Promise<string> {
  const { realpath } = await import("node:fs/promises")
  return realpath(dir)
}

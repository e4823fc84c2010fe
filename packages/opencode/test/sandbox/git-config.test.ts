import { spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Sandbox } from "../../src/scheduler/runtime/sandbox/sandbox"
import { GitConfigCopy } from "../../src/scheduler/runtime/sandbox/git-config"
import { GitSync } from "../../src/scheduler/runtime/git/git-sync"
import { makeSandboxRepo, type SandboxRepo } from "./repo"

/**
 * The user's `.git/config` may carry credentials (a token in a remote URL, http.extraHeader, a credential
 * helper): inside the sandbox it is a sanitised copy, and git in a task worktree still works.
 */
const available = Sandbox.check().ok

describe("the sanitised copy of a git config", () => {
  it("strips userinfo from URLs, drops credential sections, includes and secret-named keys; keeps the rest", () => {
    const text = [
      "[core]",
      "\tbare = false",
      '[remote "origin"]',
      "\turl = https://alice:ghp_URL-SECRET@github.com/acme/app.git",
      "\tpushurl = ssh://deploy:PUSH-SECRET@example.com/app",
      "\tfetch = +refs/heads/*:refs/remotes/origin/*",
      "[http]",
      "\textraHeader = Authorization: Bearer HEADER-SECRET",
      '[http "https://example.com/"]',
      "\textraheader = X-Token: \\",
      "\t  CONTINUED-SECRET",
      "\tsslVerify = true",
      "[credential]",
      "\thelper = store --file /root/CRED-SECRET",
      '[credential "https://example.com"]',
      "\tusername = bob",
      "[include]",
      "\tpath = ~/INCLUDE-SECRET.inc",
      '[url "https://bot:URLBASE-SECRET@example.com/"]',
      "\tinsteadOf = https://example.com/",
      '[submodule "lib"]',
      "\turl = git@github.com:acme/lib.git",
      "[github]",
      "\ttoken = GH-SECRET",
    ].join("\n")
    const clean = GitConfigCopy.sanitise(text)
    expect(clean).not.toMatch(/SECRET|alice|deploy:|bot:/)
    for (const kept of ["\tbare = false", "\turl = https://github.com/acme/app.git", "\tpushurl = ssh://example.com/app", "\tfetch = +refs/heads/*:refs/remotes/origin/*", "\tsslVerify = true", '[url "https://example.com/"]', "\turl = git@github.com:acme/lib.git"])
      expect(clean).toContain(kept)
  })
})

describe.skipIf(!available)("the user's .git/config inside the sandbox", () => {
  let repo: SandboxRepo
  let policy: Sandbox.Policy
  const run = async (command: string) => {
    await GitSync.detach(repo.worktree, policy.git!)
    try {
      const argv = Sandbox.wrap(["/bin/bash", "-c", command], policy)
      const r = spawnSync(argv[0]!, argv.slice(1), { cwd: repo.worktree, env: {}, encoding: "utf8" })
      return { code: r.status, out: (r.stdout ?? "") + (r.stderr ?? "") }
    } finally {
      await GitSync.settle(repo.worktree, policy.git!, "refs/heads/air/T-1")
    }
  }

  beforeAll(() => {
    repo = makeSandboxRepo()
    repo.git(["config", "remote.origin.url", "https://alice:ghp_URL-SECRET@github.com/acme/app.git"])
    repo.git(["config", "http.extraHeader", "Authorization: Bearer HEADER-SECRET"])
    repo.git(["config", "credential.helper", "store --file /root/CRED-SECRET"])
    policy = Sandbox.plan({ worktree: repo.worktree, project: repo.project, env: repo.env })
  })
  afterAll(() => repo?.cleanup())

  it("shows no credential: not by reading the file, not through git config", async () => {
    const before = repo.hashOutside()
    const config = join(repo.project, ".git", "config")
    const r = await run(`cat ${config}; git config --list --show-origin; git remote -v; cat /proc/self/root${config}`)
    expect(r.code).toBe(0)
    expect(r.out).not.toMatch(/SECRET|alice/)
    expect(r.out).toContain("https://github.com/acme/app.git")
    expect(r.out).toContain("air-test@example.invalid")
    expect(repo.hashOutside()).toBe(before)
    // Outside, the user's file is as it was.
    expect(readFileSync(config, "utf8")).toContain("ghp_URL-SECRET")
  })

  it("git status, diff and commit in the task worktree still work, and the commit lands on the task branch", async () => {
    const r = await run("echo 'int g() { return 2; }' >> src/format.cpp && git status --short && git diff --stat && git commit -qam 'g' && git log --oneline -1")
    expect(r.code, r.out).toBe(0)
    expect(r.out).toContain(" M src/format.cpp")
    expect(r.out).toContain("1 file changed")
    expect(repo.git(["log", "--format=%s", "-1", "air/T-1"]).trim()).toBe("g")
  })
})

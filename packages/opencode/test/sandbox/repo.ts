import { execFileSync, spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, lstatSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"
import { Sandbox } from "../../src/scheduler/runtime/sandbox/sandbox"
import { GitSync } from "../../src/scheduler/runtime/git/git-sync"

/**
 * A project with one task worktree (`.air/local/worktrees/T-1` on `air/T-1`, as the Scheduler makes them),
 * a second task's worktree, a fake HOME with secrets, and a way to run a command in T-1's sandbox.
 */
export type SandboxRepo = {
  dir: string
  project: string
  worktree: string
  other: string
  home: string
  env: Record<string, string>
  policy: Sandbox.Policy
  /** Runs `bash -c command` in the sandbox (cwd: the worktree), with the git detach/settle around it. */
  run(command: string, opts?: { cwd?: string; settle?: boolean }): Promise<{ code: number | null; out: string }>
  git(args: string[], cwd?: string): string
  /** A hash of everything outside T-1's working copy (and its git admin and object dirs). */
  hashOutside(): string
  cleanup(): void
}

export function makeSandboxRepo(): SandboxRepo {
  const dir = mkdtempSync(join(tmpdir(), "air-sbx-"))
  const project = join(dir, "project")
  const home = join(dir, "home")
  mkdirSync(project, { recursive: true })
  mkdirSync(join(home, ".ssh"), { recursive: true })
  writeFileSync(join(home, ".ssh", "id_rsa"), "PRIVATE-KEY-SECRET\n")
  mkdirSync(join(home, ".local", "share", "opencode"), { recursive: true })
  writeFileSync(join(home, ".local", "share", "opencode", "auth.json"), '{"key":"AUTH-SECRET"}\n')
  writeFileSync(join(home, ".gitconfig"), "[credential]\n\thelper = store\n# GITCONFIG-SECRET\n")
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    LANG: "C.UTF-8",
    ANTHROPIC_API_KEY: "sk-PROVIDER-SECRET",
    OPENCODE_SERVER_PASSWORD: "OPENCODE-SECRET",
    CMAKE_GITHUB_TOKEN: "TOKEN-SECRET",
    CCACHE_DIR: join(dir, "ccache"),
  }
  const git = (args: string[], cwd = project) =>
    execFileSync("git", args, { cwd, env: { ...env, GIT_CONFIG_GLOBAL: "/dev/null" }, encoding: "utf8" })
  git(["init", "-q", "-b", "main"])
  git(["config", "user.name", "Air Test"])
  git(["config", "user.email", "air-test@example.invalid"])
  mkdirSync(join(project, "src"))
  writeFileSync(join(project, "src", "format.cpp"), "int f() { return 1; }\n")
  writeFileSync(join(project, ".env"), "DB_PASSWORD=ENV-SECRET\n")
  writeFileSync(join(project, ".git", "info", "exclude"), ".air/local/\n.env\n")
  git(["add", "src"])
  git(["commit", "-qm", "init"])
  const worktree = join(project, ".air", "local", "worktrees", "T-1")
  const other = join(project, ".air", "local", "worktrees", "T-2")
  git(["worktree", "add", "-q", "-b", "air/T-1", worktree, "main"])
  git(["worktree", "add", "-q", "-b", "air/T-2", other, "main"])
  mkdirSync(join(project, ".air", "local", "state"), { recursive: true })
  writeFileSync(join(project, ".air", "local", "state", "events.jsonl"), "{}\n")
  const policy = Sandbox.plan({ worktree, project, env })
  const layout = policy.git!
  GitSync.ensureObjectDir(layout)

  const excluded = [worktree, layout.gitDir, layout.objectDir, join(dir, "ccache")]
  const hashOutside = () => {
    const h = createHash("sha256")
    const walk = (p: string) => {
      if (excluded.includes(p)) return
      const st = lstatSync(p)
      h.update(relative(dir, p) + "\0" + st.mode + "\0")
      if (st.isSymbolicLink()) h.update(readlinkSync(p))
      else if (st.isDirectory()) for (const e of readdirSync(p).sort()) walk(join(p, e))
      else h.update(readFileSync(p))
    }
    walk(dir)
    return h.digest("hex")
  }

  return {
    dir,
    project,
    worktree,
    other,
    home,
    env,
    policy,
    git,
    hashOutside,
    async run(command, opts = {}) {
      await GitSync.detach(worktree, layout)
      try {
        const argv = Sandbox.wrap(["/bin/bash", "-c", command], policy)
        const r = spawnSync(argv[0]!, argv.slice(1), { cwd: opts.cwd ?? worktree, env: {}, encoding: "utf8" })
        return { code: r.status, out: (r.stdout ?? "") + (r.stderr ?? "") }
      } finally {
        if (opts.settle !== false) await GitSync.settle(worktree, layout, "refs/heads/air/T-1")
      }
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

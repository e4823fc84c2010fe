import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Sandbox } from "../../src/scheduler/runtime/sandbox/sandbox"
import { makeSandboxRepo, type SandboxRepo } from "./repo"

/**
 * The sandbox itself, with real bwrap: each attack family of issue 14 run as a shell command of T-1's
 * worker ends refused or contained, with nothing changed outside T-1's working copy (hash before and
 * after); ordinary work and commits on the task branch go through.
 */
const available = Sandbox.check().ok
let repo: SandboxRepo

beforeAll(() => {
  repo = makeSandboxRepo()
})
afterAll(() => repo?.cleanup())

describe.skipIf(!available)("Sandbox: the fence holds", () => {
  const attacks: [string, (r: SandboxRepo) => string][] = [
    ["escaped dots", () => "echo x > \\.\\./\\.\\./\\.\\./\\.\\./x; echo x > \\.\\./T-2/x"],
    ["ANSI-C quoted dots", () => "echo x > $'\\x2e\\x2e/\\x2e\\x2e/\\x2e\\x2e/\\x2e\\x2e/x'"],
    ["/proc/self/root into the project", (r) => `echo x > /proc/self/root${r.project}/src/format.cpp`],
    ["/proc/self/root into the Scheduler's state", (r) => `echo '{}' >> /proc/self/root${r.project}/.air/local/state/events.jsonl`],
    ["another worktree", (r) => `echo x > ${r.other}/x; rm -rf ${r.other}/src`],
    ["the project checkout", (r) => `rm -rf ${r.project}/src; touch ${r.project}/planted`],
    ["a git tag", () => "git tag air/done/T-1"],
    ["the integration branch", () => "git update-ref refs/heads/main HEAD"],
    ["another task's branch", () => "git update-ref refs/heads/air/T-2 HEAD~0; git branch -f air/T-2 HEAD"],
    ["the project's git config", () => "git config core.fsmonitor 'touch /tmp/pwned'"],
    ["a hook", (r) => `printf '#!/bin/sh\\ntouch x\\n' > ${r.project}/.git/hooks/pre-commit`],
    ["the shared object store", (r) => `rm -rf ${r.project}/.git/objects/*`],
    ["the alternates list", (r) => `echo /tmp > ${r.project}/.git/objects/info/alternates`],
    ["HOME", (r) => `touch ${r.home}/.bashrc; echo x >> ~/.profile`],
    ["sort -o and find -delete", (r) => `sort -o ${r.project}/src/format.cpp /dev/null; find ${r.project}/src -delete`],
  ]
  for (const [name, command] of attacks) {
    it(`contains: ${name}`, async () => {
      const before = repo.hashOutside()
      const refs = repo.git(["for-each-ref"])
      await repo.run(command(repo))
      expect(repo.git(["for-each-ref"])).toBe(refs)
      expect(repo.hashOutside()).toBe(before)
    })
  }

  it("git push reaches no remote", async () => {
    const remote = join(repo.dir, "remote.git")
    repo.git(["init", "-q", "--bare", remote])
    repo.git(["remote", "add", "origin", remote])
    const before = repo.hashOutside()
    const r = await repo.run("git push origin HEAD:refs/heads/main; git push https://example.com/x.git HEAD")
    expect(r.out).toMatch(/Read-only|unable|Could not resolve|fatal/i)
    expect(repo.git(["for-each-ref"], remote)).toBe("")
    expect(repo.hashOutside()).toBe(before)
  })

  it("learns nothing secret: keys, auth, .env, provider variables", async () => {
    const r = await repo.run(
      `cat ~/.ssh/id_rsa /proc/self/root${repo.home}/.ssh/id_rsa ${repo.home}/.local/share/opencode/auth.json ~/.gitconfig ${repo.project}/.env; env; cat /proc/1/environ`,
    )
    expect(r.out).not.toMatch(/SECRET/)
    expect(r.out).toContain(`HOME=${repo.home}`)
  })

  it("has no network but loopback", async () => {
    const r = await repo.run("cat /proc/net/dev")
    expect(r.out).toContain("lo:")
    expect(r.out.split("\n").filter((l) => /^\s*\w+:/.test(l)).map((l) => l.trim().split(":")[0])).toEqual(["lo"])
  })

  it("ordinary work passes: edits, comments in printf and sed, heredocs, a private /tmp, the compiler cache", async () => {
    const r = await repo.run(
      [
        "printf '// reviewed\\n' >> src/format.cpp",
        "sed -i '1a // Owner: x' src/format.cpp",
        "cat > src/new.cpp <<'EOF'\n// see https://example.com/a/../b\nint g() { return 2; }\nEOF\n" +
          "echo tmp > /tmp/scratch && cat /tmp/scratch",
        'touch "$CCACHE_DIR/probe"',
        "echo done",
      ].join(" && "),
    )
    expect(r.code).toBe(0)
    expect(r.out).toContain("done")
    expect(readFileSync(join(repo.worktree, "src", "format.cpp"), "utf8")).toBe("int f() { return 1; }\n// Owner: x\n// reviewed\n")
    expect(existsSync(join(repo.worktree, "src", "new.cpp"))).toBe(true)
    expect(existsSync(join(repo.dir, "ccache", "probe"))).toBe(true)
  })

  it("a worker commits: its own branch moves, no other ref, the project still reads the commit", async () => {
    const refs = () => repo.git(["for-each-ref", "--format=%(refname) %(objectname)"]).split("\n").filter((l) => !l.startsWith("refs/heads/air/T-1 "))
    const others = refs()
    const r = await repo.run("git add -A && git commit -qm 'work' && git log --oneline -1")
    expect(r.out).toContain("work")
    expect(r.code).toBe(0)
    expect(refs()).toEqual(others)
    const tip = repo.git(["rev-parse", "air/T-1"]).trim()
    expect(repo.git(["rev-parse", "HEAD"], repo.worktree).trim()).toBe(tip)
    expect(repo.git(["symbolic-ref", "HEAD"], repo.worktree).trim()).toBe("refs/heads/air/T-1")
    expect(repo.git(["show", "--stat", "--format=%s", tip])).toContain("work")
    expect(repo.git(["status", "--porcelain"], repo.worktree).trim()).toBe("")
    // The project owns the objects: it does not depend on the Scheduler's state (no alternates entry).
    expect(existsSync(join(repo.project, ".git", "objects", "info", "alternates"))).toBe(false)
    expect(repo.git(["fsck", "--no-dangling", "--connectivity-only"]).trim()).toBe("")
  })

  it("a CMakeLists.txt that writes outside its tree fails inside the sandbox", async () => {
    writeFileSync(
      join(repo.worktree, "CMakeLists.txt"),
      `cmake_minimum_required(VERSION 3.10)\nproject(x NONE)\nfile(WRITE "${repo.project}/planted.txt" "x")\n`,
    )
    const before = repo.hashOutside()
    const r = await repo.run("cmake -S . -B .air-build")
    expect(r.code).not.toBe(0)
    expect(r.out).toMatch(/Read-only|failed to open|Permission|cannot/i)
    expect(existsSync(join(repo.project, "planted.txt"))).toBe(false)
    expect(repo.hashOutside()).toBe(before)
  })
})

describe("Sandbox.options", () => {
  it("hides, binds and reduces in the order bwrap needs", () => {
    const opts = Sandbox.options({
      worktree: "/p/wt",
      writable: ["/cache"],
      hidden: [
        { path: "/h/.ssh", kind: "dir" },
        { path: "/p/wt/.env", kind: "file" },
      ],
      env: { PATH: "/usr/bin" },
    })
    const line = opts.join(" ")
    expect(line).toContain("--unshare-all --die-with-parent")
    expect(line).not.toContain("--share-net")
    expect(line).toContain("--tmpfs /h/.ssh")
    // The .env inside the writable worktree is hidden again after the worktree's bind.
    expect(line.lastIndexOf("--ro-bind /dev/null /p/wt/.env")).toBeGreaterThan(line.indexOf("--bind /p/wt /p/wt"))
    expect(line).toContain("--clearenv --setenv PATH /usr/bin")
    expect(Sandbox.options({ worktree: "/p/wt", network: true })).toContain("--share-net")
  })

  it("gives back the model's command from the line the engine records", () => {
    for (const command of ["cmake --build .air-build", "printf '// it'\''s\n' >> a.cpp && echo \"$HOME\"", "a\nb"])
      expect(Sandbox.originalCommand(`bwrap --args 3 -- /bin/bash -c ${Sandbox.quote(command)} 3<${Sandbox.quote("/p/.air/local/sandbox/calls/c 1.args")}`)).toBe(command)
    expect(Sandbox.originalCommand("ls -la")).toBe("ls -la")
  })

  it("points ccache at the cache dir it binds writable, also when that comes from XDG_CACHE_HOME (not passed in)", () => {
    const dir = mkdtempSync(join(tmpdir(), "air-sandbox-cache-"))
    try {
      const worktree = join(dir, "wt")
      mkdirSync(worktree)
      const policy = Sandbox.plan({ worktree, env: { PATH: "/usr/bin", HOME: join(dir, "home"), XDG_CACHE_HOME: join(dir, "cache") }, git: false })
      expect(policy.env.CCACHE_DIR).toBe(join(dir, "cache", "ccache"))
      expect(policy.writable).toContain(join(dir, "cache", "ccache"))
      expect(policy.env.XDG_CACHE_HOME).toBeUndefined()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("rejects a relative worktree", () => {
    expect(() => Sandbox.options({ worktree: "wt" })).toThrow()
  })
})

describe.skipIf(!available)("the task branch when a command never ends", () => {
  it("a command aborted before its settle leaves no stuck state: the next one, or the report, settles", async () => {
    const { GitSync } = await import("../../src/scheduler/runtime/git/git-sync")
    const { SandboxShell } = await import("../../src/scheduler/runtime/sandbox/shell")
    const r = makeSandboxRepo()
    try {
      const layout = r.policy.git!
      // aborted: detached, committed, never settled
      await GitSync.detach(r.worktree, layout)
      writeFileSync(join(r.worktree, "a.txt"), "a\n")
      await r.run("git add a.txt && git commit -qm a", { settle: false })
      expect(r.git(["rev-parse", "air/T-1"]).trim()).toBe(r.git(["rev-parse", "main"]).trim())
      // the next command commits and settles: both commits land on the branch
      const next = await r.run("echo b > b.txt && git add b.txt && git commit -qm b && git log --format=%s")
      expect(next.out).toContain("b\na")
      expect(r.git(["log", "--format=%s", "air/T-1"]).trim().split("\n").slice(0, 2)).toEqual(["b", "a"])
      // aborted again: the report heals it
      await r.run("echo c > c.txt && git add c.txt && git commit -qm c", { settle: false })
      await SandboxShell.heal(r.worktree)
      expect(r.git(["log", "-1", "--format=%s", "air/T-1"]).trim()).toBe("c")
      expect(r.git(["symbolic-ref", "HEAD"], r.worktree).trim()).toBe("refs/heads/air/T-1")
    } finally {
      r.cleanup()
    }
  })
})

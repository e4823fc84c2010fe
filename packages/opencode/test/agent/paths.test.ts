import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { AgentPaths as Paths, Guard } from "../../src/agent"

const base = realpathSync(mkdtempSync(join(tmpdir(), "air-paths-")))
const project = join(base, "project")
const root = join(project, ".air", "local", "worktrees", "T1")
const outside = join(base, "outside")
mkdirSync(join(root, "src"), { recursive: true })
mkdirSync(join(project, ".air", "local", "evidence", "T1", "attempt-1"), { recursive: true })
mkdirSync(join(project, ".air", "shared", "plan"), { recursive: true })
mkdirSync(outside, { recursive: true })
writeFileSync(join(outside, "secret.txt"), "secret")
writeFileSync(join(root, "src", "a.cpp"), "int a;")
writeFileSync(join(project, ".air", "local", "evidence", "T1", "attempt-1", "build.log"), "error")
symlinkSync(outside, join(root, "out-dir"))
symlinkSync(join(outside, "secret.txt"), join(root, "out-file"))
symlinkSync(join(outside, "not-yet.txt"), join(root, "dangling"))
symlinkSync(join(root, "src"), join(root, "src-link"))
afterAll(() => rmSync(base, { recursive: true, force: true }))

const readRoots = [join(project, ".air", "local", "evidence", "T1"), join(project, ".air", "shared")]

function executor(tool: string, args: Record<string, unknown>) {
  return Guard.decide({ agent: "executor", tool, args, session: { worktree: root, directory: root, evidenceCount: 0, readRoots } })
}
function refusedBecause(tool: string, args: Record<string, unknown>): string | undefined {
  const d = executor(tool, args)
  return d.allow ? undefined : d.reason + ":" + d.detail
}

describe("path checks", () => {
  it("accepts paths inside the root, relative or absolute, and links that stay inside", () => {
    expect(Paths.check(root, "src/a.cpp")).toEqual({ ok: true, path: join(root, "src", "a.cpp") })
    expect(Paths.check(root, join(root, "src", "new.cpp"), { write: true })).toMatchObject({ ok: true })
    expect(Paths.check(root, "src/../src/a.cpp")).toMatchObject({ ok: true })
    expect(Paths.check(root, "src-link/a.cpp", { write: true })).toMatchObject({ ok: true })
    expect(Paths.check(root, "src/deep/new/file.cpp", { write: true })).toMatchObject({ ok: true })
  })

  it("refuses .. escapes, absolute paths outside, home, and symlinks that lead out", () => {
    expect(Paths.check(root, "../../../../outside/secret.txt")).toMatchObject({ ok: false, why: "dotdot" })
    expect(Paths.check(root, "src/../../T2/a.cpp")).toMatchObject({ ok: false, why: "dotdot" })
    expect(Paths.check(root, join(outside, "secret.txt"))).toMatchObject({ ok: false, why: "absolute" })
    expect(Paths.check(root, "/etc/passwd")).toMatchObject({ ok: false, why: "absolute" })
    expect(Paths.check(root, "~/.ssh/id_rsa")).toMatchObject({ ok: false, why: "home" })
    expect(Paths.check(root, "out-dir/secret.txt")).toMatchObject({ ok: false, why: "symlink" })
    expect(Paths.check(root, "out-dir/new.txt", { write: true })).toMatchObject({ ok: false, why: "symlink" })
    expect(Paths.check(root, "out-file")).toMatchObject({ ok: false, why: "symlink" })
    expect(Paths.check(root, "dangling", { write: true })).toMatchObject({ ok: false, why: "symlink" })
  })

  it("lets workers read, never write, their task's evidence and the shared plan", () => {
    const log = join(project, ".air", "local", "evidence", "T1", "attempt-1", "build.log")
    expect(Paths.check(root, log, { readRoots })).toMatchObject({ ok: true })
    expect(Paths.check(root, log, { readRoots, write: true })).toMatchObject({ ok: false, why: "air-local" })
    expect(Paths.check(root, join(project, ".air", "local", "evidence", "T2", "x.log"), { readRoots })).toMatchObject({ ok: false })
    expect(Paths.check(root, join(project, ".air", "shared", "plan", "plan.md"), { readRoots })).toMatchObject({ ok: true })
    expect(Paths.check(root, join(project, ".air", "shared", "plan", "plan.md"), { readRoots, write: true })).toMatchObject({ ok: false })
  })

  it("refuses writes to .air/local even inside the root", () => {
    expect(Paths.check(root, ".air/local/state/x.json", { write: true })).toMatchObject({ ok: false, why: "air-local" })
    expect(Paths.check(root, ".air/local/state/x.json")).toMatchObject({ ok: true })
  })

  it("names the project of a worktree", () => {
    expect(Paths.projectOfWorktree(root)).toEqual({ root: project, task: "T1" })
    expect(Paths.projectOfWorktree(project)).toBeUndefined()
  })
})

describe("the guard confines executor and debugger file tools", () => {
  it("refuses each kind of escape for every path-taking tool", () => {
    for (const tool of ["read", "edit", "write"]) {
      expect(refusedBecause(tool, { filePath: "../../../../outside/secret.txt" })).toMatch(/^path:/)
      expect(refusedBecause(tool, { filePath: join(outside, "secret.txt") })).toMatch(/^path:/)
      expect(refusedBecause(tool, { filePath: join(root, "out-dir", "secret.txt") })).toMatch(/^path:/)
    }
    expect(refusedBecause("glob", { pattern: "**/*", path: outside })).toMatch(/^path:/)
    expect(refusedBecause("glob", { pattern: "../../**/*.cpp" })).toMatch(/^path:/)
    expect(refusedBecause("glob", { pattern: "/etc/*" })).toMatch(/^path:/)
    expect(refusedBecause("grep", { pattern: "x", path: "/" })).toMatch(/^path:/)
    expect(refusedBecause("grep", { pattern: "x", path: "out-dir" })).toMatch(/^path:/)
    expect(refusedBecause("write", { filePath: ".air/local/state/scheduler-state.json", content: "{}" })).toMatch(/^air-local:/)
    expect(refusedBecause("apply_patch", { patchText: "*** Begin Patch\n*** Add File: ../../../../outside/x.txt\n+x\n*** End Patch" })).toMatch(/^path:/)
    expect(refusedBecause("apply_patch", { patchText: "*** Begin Patch\n*** Update File: src/a.cpp\n*** Move to: /tmp/a.cpp\n*** End Patch" })).toMatch(/^path:/)
  })

  it("names the agent, the tool, the root and the reason", () => {
    const d = executor("read", { filePath: "/etc/passwd" })
    expect(d.allow).toBe(false)
    if (!d.allow) {
      expect(d.message).toContain("the executor agent may only work inside its worktree")
      expect(d.message).toContain("`read`")
      expect(d.message).toContain(root)
      expect(d.message).toContain("/etc/passwd")
    }
  })

  it("makes relative paths absolute from the worktree and pins searches to it", () => {
    const r = executor("read", { filePath: "src/a.cpp" })
    expect(r).toMatchObject({ allow: true, args: { filePath: join(root, "src", "a.cpp") } })
    const g = executor("grep", { pattern: "int" })
    expect(g).toMatchObject({ allow: true, args: { pattern: "int", path: root } })
    const p = executor("apply_patch", { patchText: "*** Begin Patch\n*** Add File: src/b.cpp\n+int b;\n*** End Patch" })
    expect(p.allow).toBe(true)
    if (p.allow) expect(String(p.args?.patchText)).toContain(`*** Add File: ${join(root, "src", "b.cpp")}`)
    const same = executor("read", { filePath: join(root, "src", "a.cpp") })
    expect(same).toEqual({ allow: true })
  })
})

describe("bash confinement (best effort)", () => {
  function bash(command: string, workdir?: string) {
    return executor("bash", { command, description: "d", ...(workdir === undefined ? {} : { workdir }) })
  }

  it("forces the worktree as working directory", () => {
    expect(bash("cmake -S . -B build")).toMatchObject({ allow: true, args: { workdir: root } })
    expect(bash("ctest", join(root, "src"))).toEqual({ allow: true })
    expect(bash("ctest", "src")).toMatchObject({ allow: true, args: { workdir: join(root, "src") } })
    expect(bash("ls", "/")).toMatchObject({ allow: false, reason: "path" })
    expect(bash("ls", outside)).toMatchObject({ allow: false, reason: "path" })
    expect(bash("ls", "..")).toMatchObject({ allow: false, reason: "path" })
  })

  it("refuses commands that obviously reach outside", () => {
    for (const command of [
      "cd / && ls",
      "cd .. && ls",
      "cd",
      "cd ~",
      "cd $HOME",
      "cat ~/.bashrc",
      "cat $HOME/.bashrc",
      "ls ../..",
      "cat ../../../../outside/secret.txt",
      `cat ${join(outside, "secret.txt")}`,
      "echo x > /tmp/leak",
      "rm -rf /",
      "cat out-dir/secret.txt",
      "cat out-file",
      "g++ -I../../../../outside src/a.cpp",
      "cmake -DCMAKE_INSTALL_PREFIX=/srv/x ..",
      `git -C ${project} log`,
      "cd src && cat ../../../../../outside/secret.txt",
      "(cd build && cmake ..) && cat ../x",
      "cat <<< ../../../x",
      "cat > src/b.cpp <<EOF\nint b;\nEOF\ncat /etc/passwd",
      "find / -name '*.pem'",
    ])
      expect([command, bash(command).allow]).toEqual([command, false])
  })

  it("refuses anything naming .air/local, but not the worktree's own absolute path", () => {
    expect(bash("cat .air/local/state/events.jsonl")).toMatchObject({ allow: false, reason: "air-local" })
    expect(bash(`echo hi > ${project}/.air/local/state/x`)).toMatchObject({ allow: false, reason: "air-local" })
    expect(bash(`ls ${root}/src && cat ${join(root, "src", "a.cpp")}`)).toMatchObject({ allow: true })
  })

  it("allows ordinary build and test commands and system tools", () => {
    for (const command of [
      "cmake -S . -B build -DCMAKE_BUILD_TYPE=Debug && cmake --build build -j2",
      "ctest --test-dir build --output-on-failure 2>&1 | tail -n 50",
      "/usr/bin/g++ -std=c++17 -Isrc src/a.cpp -o build/a 2>/dev/null",
      "cppcheck --enable=warning --error-exitcode=1 src/",
      "git add -A && git commit -m 'feat: add a' && git log --oneline HEAD~1..HEAD",
      "cd src && ls",
      "sed -n '1,20p' src/a.cpp",
      "curl -s https://example.com/x/y || true",
      "make -C build VERBOSE=1",
      "mkdir -p build && cd build && cmake .. && make -j2 && ctest --output-on-failure",
      "(cd build && cmake ..) && ls src",
      "cat > src/b.cpp <<'EOF'\n// a comment with a / and /* c */ and ../../x\nint b;\nEOF\ngit add src/b.cpp",
      "cat <<-EOF > src/c.txt\n\t/etc/passwd is just text here\n\tEOF",
    ])
      expect([command, bash(command).allow]).toEqual([command, true])
  })
})

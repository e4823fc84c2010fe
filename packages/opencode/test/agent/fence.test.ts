import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeEach, describe, expect, it } from "vitest"
import { Guard, Permission, Sessions } from "../../src/agent"
import { Paths } from "../../src/agent/paths"

/**
 * Issue 14's text-level families: the guard's checks are early, friendly messages — they never refuse
 * ordinary C++ work — and what configuration or another agent could widen stays closed.
 */
const base = realpathSync(mkdtempSync(join(tmpdir(), "air-fence-")))
const project = join(base, "project")
const worktree = join(project, ".air", "local", "worktrees", "T-1")
mkdirSync(join(worktree, "src"), { recursive: true })
mkdirSync(join(worktree, "db"), { recursive: true })
afterAll(() => rmSync(base, { recursive: true, force: true }))

const executor = { worktree, directory: worktree, evidenceCount: 1 }
const bash = (command: string) => Guard.decide({ agent: "executor", tool: "bash", args: { command }, session: executor })

describe("legitimate C++ shell work passes the text checks", () => {
  const commands = [
    "printf '// reviewed\\n' >> src/format.cpp",
    "sed -i '1a // Owner: x' db/x.cc",
    `sed -i 's|//TODO|// TODO|' src/a.cpp`,
    `grep -rn "// FIXME" src`,
    `grep -nE '^\\s*//' src/a.cpp`,
    `echo "see https://example.com/docs/../x and http://a/b" >> src/notes.txt`,
    "curl_url='https://example.com/a' # a URL in a comment: /etc/passwd",
    "cat > src/a.cpp <<'EOF'\n// comment with ../../../etc and /etc/passwd\nint a;\nEOF",
    `printf "%s\\n" "/* block */" >> src/a.cpp`,
    "cmake -S . -B .air-build && cmake --build .air-build -j2 && ctest --test-dir .air-build",
  ]
  for (const c of commands) it(c.split("\n")[0]!, () => expect(bash(c).allow).toBe(true))
})

describe("shell spellings of an escape get an early message", () => {
  const attacks = [
    "echo x > \\.\\./\\.\\./\\.\\./\\.\\./x",
    "echo x > $'\\x2e\\x2e/\\x2e\\x2e/\\x2e\\x2e/\\x2e\\x2e/x'",
    "echo x > '../../../../x'",
    `head -n 2 /proc/self/root${project}/.git/config`,
    "cat /proc/self/root/etc/shadow",
  ]
  for (const c of attacks)
    it(c, () => {
      const d = bash(c)
      expect(d.allow).toBe(false)
    })
  it("decodes what the shell would decode", () => {
    expect(Paths.shellData("echo \\.\\./x $'\\x2e\\x2e/y' '../z' '// data'")).toBe("echo ../x ../y ../z _")
  })
})

describe("configuration cannot widen a row", () => {
  beforeEach(() => Sessions.clear())

  it("a permission.read allow for *.env in any channel does not re-open .env", () => {
    for (const channel of ["topLevel", "agentLevel"] as const) {
      const rules = Permission.toRules(Permission.rulesFor("executor", { [channel]: { read: { "*.env": "allow", ".env": "allow", "**/.env": "allow" } } }))
      for (const file of ["/p/.env", "/p/src/.env", "/p/.env.local"]) expect([channel, file, Permission.evaluate(rules, "read", file)]).toEqual([channel, file, "deny"])
      expect(Permission.evaluate(rules, "read", "/p/.env.example")).toBe("allow")
    }
  })

  it("the guard refuses .env to every role, whatever the engine's rules say", () => {
    for (const agent of ["main", "architect", "reviewer", "executor", "debugger"]) {
      const d = Guard.decide({ agent, tool: "read", args: { filePath: join(worktree, ".env") }, session: { ...executor, directory: project } })
      expect([agent, d.allow]).toEqual([agent, false])
    }
    expect(bash("cat .env").allow).toBe(false)
    expect(bash("cat .env.example").allow).toBe(true)
  })

  it("no agent but the Scheduler's code starts an AirCoding role: a build agent's task tool is refused", async () => {
    Sessions.record("b1", { agent: "build", directory: project })
    const output = { args: { subagent_type: "executor", prompt: "write src/x.cpp", description: "x" } }
    await expect(Guard.before({ tool: "task", sessionID: "b1", callID: "t1" }, output)).rejects.toThrow(/started only by AirCoding's Scheduler/)
    // unknown sessions too
    await expect(Guard.before({ tool: "task", sessionID: "nobody", callID: "t2" }, output)).rejects.toThrow(/Scheduler/)
    // the user's own subagents stay theirs
    await expect(Guard.before({ tool: "task", sessionID: "b1", callID: "t3" }, { args: { subagent_type: "general", prompt: "p" } })).resolves.toBeUndefined()
  })

  it("a build agent configured with \"*\": \"allow\" still has the task tool deny AirCoding's roles", () => {
    const cfg: { agent?: Record<string, unknown>; permission?: unknown; default_agent?: string } = {
      agent: { build: { tools: { task: true }, permission: { "*": "allow" } } },
      permission: { "*": "allow" },
    }
    Permission.apply(cfg, () => "prompt")
    const build = cfg.agent!.build as { permission: Permission.Rules }
    const rules = [...Permission.toRules(cfg.permission as Permission.Rules), ...Permission.toRules(build.permission)]
    for (const role of ["executor", "debugger", "architect", "main"]) expect([role, Permission.evaluate(rules, "task", role)]).toEqual([role, "deny"])
    expect(Permission.evaluate(rules, "task", "general")).toBe("allow")
  })
})

describe("apply_patch headers are read with the engine's grammar", () => {
  const patch = (header: string) => `*** Begin Patch\n${header}\n+int x;\n*** End Patch`
  const decide = (patchText: string) => Guard.decide({ agent: "executor", tool: "apply_patch", args: { patchText }, session: executor })

  it("refuses a path outside the worktree however the header is spelled", () => {
    for (const header of [
      "*** Add File:../../../shared/rules/toolchain.json",
      "*** Add File:   ../../../../x.cpp",
      "*** Add File:/etc/x",
      "*** Update File:src/a.cpp\n*** Move to:../../../../x.cpp",
      "*** Delete File:../T-2/src/a.cpp",
      "  *** Add File: ../../../../x\r",
    ])
      expect([header, decide(patch(header)).allow]).toEqual([header, false])
  })

  it("makes every path absolute inside the worktree: nothing resolves against the project root", () => {
    // The issue's attack: the engine resolved this from the project root and planted the gates' commands.
    // Made absolute, it names the worktree's copy — and the write-set gate keeps it out of the merge.
    const d = decide(patch("*** Add File:.air/shared/rules/toolchain.json") + "\n" + patch("*** Update File:src/a.cpp\n*** Move to:src/b.cpp"))
    expect(d.allow).toBe(true)
    const text = String((d.allow && d.args?.patchText) || "")
    expect(Paths.patchPaths(text)).toEqual([join(worktree, ".air/shared/rules/toolchain.json"), join(worktree, "src/a.cpp"), join(worktree, "src/b.cpp")])
  })
})

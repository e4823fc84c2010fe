import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, afterEach, describe, expect, test, vi } from "vitest"
import { knowledgeCommand } from "../../src/cli/knowledge"
import { Fingerprint } from "../../src/knowledge/fingerprint"
import { RepairPatterns } from "../../src/knowledge/patterns"
import { ContextPack } from "../../src/scheduler/runtime/sessions/context-pack"
import { TaskNode } from "../../src/scheduler/core/task.schema"

/**
 * A repair that passed its gates is kept as a pattern of the failure it fixed, and a second project that
 * hits a failure with the same fingerprint offers it to its Debugger.
 */
const base = mkdtempSync(join(tmpdir(), "air-knowledge-"))
const env = { XDG_DATA_HOME: join(base, "data"), HOME: base }
afterAll(() => rmSync(base, { recursive: true, force: true }))
afterEach(() => vi.restoreAllMocks())

/** A task's evidence as the gates and the Debugger leave it: a failed attempt, the accepted steps, a passing attempt. */
function repaired(root: string, taskId: string, file: string, name: string, session: string): void {
  const dir = join(root, ".air", "local", "evidence", taskId)
  mkdirSync(join(dir, "attempt-1"), { recursive: true })
  mkdirSync(join(dir, "attempt-2"), { recursive: true })
  const message =
    `task ${taskId}: build failed: \`cmake --build .air-build -j 2\` exit 1.\nFirst error:\n    ${file}:8:10: error: '${name}' was not declared in this scope\n` +
    `Full log: ${dir}/attempt-1/build.log\nFix the build, commit on air/${taskId}, and report again.`
  writeFileSync(join(dir, "attempt-1", "report.json"), JSON.stringify({ taskId, attempt: 1, passed: false, failedGate: "build", message, findings: [] }))
  writeFileSync(join(dir, "attempt-2", "report.json"), JSON.stringify({ taskId, attempt: 2, passed: true, message: "all gates passed" }))
  const report = {
    symptom: `${name} not declared`,
    reproduction: { command: "cmake --build .air-build", output: "error" },
    rootCause: { file, line: 8, explanation: "a misspelt function name" },
    fix: "call the declared function",
    verification: { command: "cmake --build .air-build", output: "ok" },
  }
  writeFileSync(join(dir, `debug-${session}.json`), JSON.stringify({ sessionID: session, report, verdict: { ok: true, route: "gates" }, steps: [] }))
}

function failing(root: string, taskId: string, file: string, name: string): void {
  const dir = join(root, ".air", "local", "evidence", taskId, "attempt-1")
  mkdirSync(dir, { recursive: true })
  const message = `task ${taskId}: build failed: \`cmake --build build\` exit 2.\nFirst error:\n    ${file}:31:5: error: '${name}' was not declared in this scope\n`
  writeFileSync(join(dir, "report.json"), JSON.stringify({ taskId, attempt: 1, passed: false, failedGate: "build", message, findings: [] }))
}

describe("repair patterns", () => {
  const a = join(base, "project-a")
  const b = join(base, "project-b")

  test("a fingerprint keeps the gate, the check, the error without names or places, and the kind of file", () => {
    const fp = Fingerprint.ofReport({ failedGate: "build", message: "task T-1: build failed.\nFirst error:\n  src/calc.cpp:8:10: error: 'sbu' was not declared in this scope" })
    expect(fp).toEqual({ gate: "build", check: "", error: "error: Q was not declared in this scope", fileKind: ".cpp" })
    const test = Fingerprint.ofReport({ failedGate: "test", message: "task T-2: tests failed.\nFailing tests: calc_test (Failed)\nOutput:\n  FAIL: sub(5, 3): expected 2, got 8" })
    expect(test).toMatchObject({ gate: "test", check: "calc_test", error: "FAIL: sub(N, N): expected N, got N" })
  })

  test("recorded in one project (once per fingerprint, counted) and offered to the Debugger of a second one", () => {
    repaired(a, "T-1", "src/calc.cpp", "sbu", "ses_a1")
    const first = RepairPatterns.learn(a, "T-1", { shared: true, env })!
    expect(first.count).toBe(1)
    // Learned once: the same accepted report does not count twice.
    expect(RepairPatterns.learn(a, "T-1", { shared: true, env })).toBeUndefined()
    repaired(a, "T-2", "src/parse.cpp", "tokn", "ses_a2")
    expect(RepairPatterns.learn(a, "T-2", { shared: true, env })!.count).toBe(2)
    expect(RepairPatterns.read(RepairPatterns.projectFile(a))).toHaveLength(1)
    expect(RepairPatterns.read(RepairPatterns.userFile(env))).toMatchObject([{ id: first.id, count: 2 }])

    failing(b, "T-9", "lib/net/socket.cpp", "conect")
    // Not shared: project B's own store is empty, so nothing is offered.
    expect(RepairPatterns.contextLines(b, "T-9", { shared: false, env })).toEqual([])
    const lines = RepairPatterns.contextLines(b, "T-9", { shared: true, env })
    expect(lines.join("\n")).toContain(`${first.id} (seen 2×): cause: a misspelt function name (.cpp); fix: call the declared function; verified with \`cmake --build .air-build\``)

    // Through the Debugger's context, with the user's permission in B's config.json.
    mkdirSync(join(b, ".air", "shared"), { recursive: true })
    writeFileSync(join(b, ".air", "shared", "config.json"), JSON.stringify({ shareKnowledge: true }))
    vi.stubEnv("XDG_DATA_HOME", env.XDG_DATA_HOME)
    const task = TaskNode.parse({ id: "T-9", title: "connect", kind: "code", doneWhen: "it connects" })
    const prompt = ContextPack.worker(b, "debugger", task, undefined, { path: join(b, "wt"), branch: "air/T-9" }, 2)
    expect(prompt).toContain(`- ${first.id} (seen 2×)`)
    expect(ContextPack.worker(b, "executor", task, undefined, { path: join(b, "wt"), branch: "air/T-9" }, 1)).not.toContain(first.id)
    vi.unstubAllEnvs()
  })

  test("old patterns are folded away, and the store stays bounded", () => {
    const file = join(base, "aging", "patterns.json")
    const entry = (n: number) => ({ fingerprint: { gate: "build", check: "", error: `e${n}`, fileKind: ".cpp" }, rootCause: "r", fix: "f", verify: "v" })
    RepairPatterns.add(file, entry(0), new Date("2020-01-01"))
    RepairPatterns.add(file, entry(1), new Date("2026-01-01"))
    expect(RepairPatterns.read(file).map((p) => p.fingerprint.error)).toEqual(["e1"])
    const many = Array.from({ length: RepairPatterns.MAX_PATTERNS + 5 }, (_, i) => ({ id: `p${i}`, ...entry(i), count: i === 0 ? 9 : 1, firstSeen: "2026-01-01T00:00:00Z", lastSeen: "2026-01-01T00:00:00Z" }))
    const kept = RepairPatterns.age(many, new Date("2026-01-02"))
    expect(kept).toHaveLength(RepairPatterns.MAX_PATTERNS)
    expect(kept[0]!.id).toBe("p0")
  })

  test("aircoding knowledge list, show and forget", async () => {
    const out: string[] = []
    vi.spyOn(process.stdout, "write").mockImplementation((chunk) => (out.push(String(chunk)), true))
    const [pattern] = RepairPatterns.read(RepairPatterns.projectFile(a))
    expect(await knowledgeCommand(["list", a])).toBe(0)
    expect(out.join("")).toContain(`${pattern!.id}  2×  build: error: Q was not declared in this scope`)
    out.length = 0
    expect(await knowledgeCommand(["show", pattern!.id.slice(0, 6), a])).toBe(0)
    expect(out.join("")).toContain("cause:   a misspelt function name (.cpp)")
    expect(await knowledgeCommand(["forget", pattern!.id, a])).toBe(0)
    expect(JSON.parse(readFileSync(RepairPatterns.projectFile(a), "utf8")).patterns).toEqual([])
    vi.spyOn(process.stderr, "write").mockImplementation(() => true)
    expect(await knowledgeCommand(["show", pattern!.id, a])).toBe(1)
    // A usage error is the CLI's one kind: thrown for main to report with exit 1.
    await expect(knowledgeCommand(["frobnicate"])).rejects.toThrow(/unknown verb 'frobnicate'/)
    await expect(knowledgeCommand(["lsit"])).rejects.toThrow(/did you mean list\?/)
  })
})

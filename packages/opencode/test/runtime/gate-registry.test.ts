import { existsSync } from "node:fs"
import { readFile } from "node:fs/promises"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { GateError } from "../../src/scheduler/runtime/errors.ts"
import { diffGate } from "../../src/scheduler/runtime/gates/diff.ts"
import { git } from "../../src/scheduler/runtime/git/git.ts"
import { evidenceGate } from "../../src/scheduler/runtime/gates/evidence.ts"
import { GATE_IDS, gatesFailedEvent, REGISTRY, routeOf, TOOL_MISSING, type Gate, type GateContext } from "../../src/scheduler/runtime/gates/index.ts"
import { nodeEvidenceFs, runGates, type EvidenceFs, type RunInput } from "../../src/scheduler/runtime/gates/pipeline.ts"
import type { FailureRoute } from "../../src/scheduler/core/gate-route.ts"
import { isKey, LANGS, t, type Key } from "../../src/text/words.ts"
import { GATE_DESCRIPTORS, SHIPPED_GATE_IDS } from "../../src/read/gate-descriptors.ts"
import { apply, graphOf, runtimeOf, started, steps, task } from "../scheduler/fixtures.ts"
import { createCppRepo, type CppRepo } from "./cpp-repo.ts"

/** A gate the registry does not ship: refuses any tracked file that contains "SECRET=". */
const secretScan = {
  id: "secret-scan",
  route: "user",
  logs: ["secrets.log"],
  async run(ctx: GateContext) {
    const result = await ctx.exec("git", ["grep", "-n", "SECRET="], { cwd: ctx.worktree, env: process.env, shell: false, timeoutMs: 15_000 })
    const logPath = await ctx.write("secrets.log", result.output)
    if (result.code === 1) return { ran: true, summary: "no secret found", logPath }
    const first = result.output.split("\n")[0] ?? ""
    return { ran: true, summary: `secret found: ${first}`, logPath, failure: { summary: `secret found`, message: `${ctx.label}: a secret is committed: ${first}` } }
  },
} as const satisfies Gate

/** A stand-in analysis (clang-tidy, say) that provides the `analysis` evidence instead of cppcheck. */
function tidy(ran: boolean): Gate {
  return {
    id: "tidy",
    provides: "analysis",
    route: "debugger",
    reportsNotRun: true,
    logs: ["tidy.log"],
    run: async (ctx) => (ran ? { ran, summary: "tidy: clean", logPath: await ctx.write("tidy.log", "clean\n") } : { ran, summary: "tidy: nothing to check" }),
  }
}

/** The gates that existed when `gates.failed` did not yet carry a route: only their ids can appear in such old logs. */
const GATES_BEFORE_ROUTES: readonly string[] = ["commit", "diff", "write-set", "secrets", "build", "test", "analysis", "clang-tidy", "evidence", TOOL_MISSING]

describe("gates as a registry", () => {
  let repo: CppRepo
  beforeAll(async () => {
    repo = await createCppRepo()
  })
  afterAll(async () => {
    await repo?.cleanup()
  })

  function input(taskId: string, extra: Partial<RunInput>): RunInput {
    return {
      root: repo.root,
      worktree: repo.root,
      taskId,
      base: "main",
      kind: "docs",
      attempt: 1,
      evidenceDir: path.join(repo.root, ".air", "local", "evidence", taskId, "attempt-1"),
      requires: [],
      toolchain: { schemaVersion: 1 },
      ...extra,
    }
  }

  test("the registry lists the gates in pipeline order", () => {
    expect(GATE_IDS).toEqual(["commit", "diff", "write-set", "secrets", "logging", "build", "log-levels", "test", "analysis", "clang-tidy", "mypy", "pylint", "tsc", "go-vet", "staticcheck", "clippy", "ui-capture", "service-probe", "evidence"])
    // The views know the shipped gates from their copy of the facts (they do not load the registry): every gate
    // they know is registered, in the same order, with the same facts. A gate they do not know is optional (shown by its id).
    expect(SHIPPED_GATE_IDS).toEqual(GATE_IDS.filter((id) => (SHIPPED_GATE_IDS as readonly string[]).includes(id)))
    for (const gate of REGISTRY as readonly Gate[])
      if (gate.id in GATE_DESCRIPTORS) expect({ id: gate.id, reportsNotRun: gate.reportsNotRun }).toEqual({ reportsNotRun: undefined, ...GATE_DESCRIPTORS[gate.id as keyof typeof GATE_DESCRIPTORS] })
    expect(new Set(REGISTRY.map((g) => g.id)).size).toBe(REGISTRY.length)
    // A failure no gate declares goes to a person, never to nothing; a missing tool blocks for one.
    expect(routeOf("no-such-gate")).toBe("user")
    expect(routeOf(TOOL_MISSING)).toBe("block-for-tool")
  })

  test("every shipped gate is named by the one word catalogue (text/words.ts), in every language", () => {
    // A tool's own name is the same in every language; any other name is translated.
    const TOOL_NAMES = new Set(["cppcheck", "clang-tidy", "mypy", "pylint", "tsc", "go vet", "staticcheck", "clippy"])
    for (const gate of REGISTRY) {
      const key = `gate.${gate.id}`
      expect(isKey(key), key).toBe(true)
      for (const lang of LANGS) expect(t(lang, key as Key), `${lang} ${key}`).not.toBe("")
      const zh = t("zh-CN", key as Key)
      expect(/[\u4e00-\u9fff]/.test(zh) || (TOOL_NAMES.has(zh) && zh === t("en", key as Key)), `zh-CN ${key}: ${zh}`).toBe(true)
    }
  })

  /** Where the machine sent the task: a worker role, or blocked for a person. */
  function routed(id: string, route: FailureRoute | undefined) {
    const graph = graphOf(task("T1"))
    let { state } = started(graph)
    ;({ state } = apply(state, steps.dispatched("T1"), steps.reported("T1"), steps.gatesFailed("T1", id, route)))
    const rt = runtimeOf(state, "T1")
    return rt.status === "blocked" ? "blocked" : `${rt.status}:${rt.role}`
  }
  const EXPECTED: Record<FailureRoute, string> = {
    debugger: "debugging:debugger",
    "debugger-unless-baseline-build-failed": "debugging:debugger",
    executor: "running:executor",
    user: "blocked",
    "block-for-tool": "blocked",
  }

  test("the machine routes each gate's failure where the gate declares, and an old log's event (no route) the same way", () => {
    for (const id of [...GATE_IDS, TOOL_MISSING]) {
      const route = routeOf(id)
      expect({ id, to: routed(id, route) }).toEqual({ id, to: EXPECTED[route] })
      // Logs written before events carried their route fold as they did: the legacy mapping agrees with every gate
      // that existed then (a gate added since never wrote an event without its route).
      if (GATES_BEFORE_ROUTES.includes(id)) expect({ id, old: routed(id, undefined) }).toEqual({ id, old: EXPECTED[route] })
    }
  })

  test("a new gate is one object: it runs in its place, fails under its own id, and the report says so", async () => {
    await repo.write("notes.txt", "SECRET=hunter2\n")
    await repo.commitAll("oops")
    const gates = [secretScan, evidenceGate]
    const report = await runGates(input("secret", { gates }))
    expect(report.passed).toBe(false)
    expect(report.failedGate).toBe("secret-scan")
    expect(report.message).toContain("notes.txt:1:SECRET=hunter2")
    expect(report.gates.map((g) => g.gate)).toEqual(["secret-scan"])
    expect(report.failedRoute).toBe("user")
    expect(await readFile(path.join(report.evidenceDir, "secrets.log"), "utf8")).toContain("hunter2")
    const onDisk = JSON.parse(await readFile(path.join(report.evidenceDir, "report.json"), "utf8"))
    expect(onDisk.failedGate).toBe("secret-scan")

    await repo.write("notes.txt", "nothing to see\n")
    await repo.commitAll("fixed")
    const again = await runGates(input("secret", { gates }))
    expect(again.passed).toBe(true)
    expect(again.gates.map((g) => g.gate)).toEqual(["secret-scan", "evidence"])
  })

  test("the evidence rule asks the gate that provides a requirement: another analysis gate can stand in for cppcheck", async () => {
    const passed = await runGates(input("tidy", { requires: ["analysis"], gates: [tidy(true), evidenceGate] }))
    expect(passed.passed).toBe(true)
    // Its log is the evidence, by the kind it provides: what the machine checks (the one rule, missingEvidence).
    expect(Object.keys(passed.evidence ?? {}).sort()).toEqual(["analysis", "report"])
    const notRun = await runGates(input("tidy", { requires: ["analysis"], gates: [tidy(false), evidenceGate] }))
    expect(notRun.failedGate).toBe("evidence")
    expect(notRun.message).toContain("analysis: the tidy gate did not run and pass")
    const nobody = await runGates(input("tidy", { requires: ["analysis"], gates: [evidenceGate] }))
    expect(nobody.message).toContain("analysis: no gate collects analysis evidence")
  })

  test("ENOSPC while writing evidence: the run rejects with EvidenceWriteFailed and no report says passed", async () => {
    const full = (what: keyof EvidenceFs): EvidenceFs => ({
      ...nodeEvidenceFs,
      [what]: async () => {
        throw Object.assign(new Error("no space left on device"), { code: "ENOSPC" })
      },
    })
    for (const what of ["writeFile", "writeFileAtomic"] as const) {
      const taskId = `enospc-${what.toLowerCase()}`
      const error = await runGates(input(taskId, { gates: [secretScan, evidenceGate], fs: full(what) })).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(GateError)
      expect((error as GateError).tag).toBe("EvidenceWriteFailed")
      expect((error as GateError).message).toMatch(/ENOSPC/)
      expect(existsSync(path.join(repo.root, ".air", "local", "evidence", taskId, "attempt-1", "report.json"))).toBe(false)
    }
  })

  test("a git failure inside a gate is GitFailed, not a verdict on the task", async () => {
    await git(repo.root, ["branch", "air/git-fails", "main"])
    const error = await runGates(input("git-fails", { requires: ["diff"], base: "no-such-branch", gates: [diffGate] })).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(GateError)
    expect((error as GateError).tag).toBe("GitFailed")
  })
})

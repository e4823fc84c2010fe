import { chmod, readFile } from "node:fs/promises"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { REGISTRY } from "../../src/scheduler/runtime/gates/index.ts"
import { Toolchain } from "../../src/scheduler/runtime/toolchain/index.ts"
import { createCppRepo, CALC_CPP, type CppRepo } from "../runtime/cpp-repo.ts"
import { firstGates, taskBranches } from "../runtime/task-branch.ts"

/**
 * The analysers' results keyed by content, on a real repository and the real analyser behind a wrapper that
 * counts its runs: the same tree again reuses the recorded pass and starts no analyser; a change to the
 * analyser's rules misses; a planted defect misses, fails, and is never reused.
 */
type Rules = { schemaVersion: number; build: string[]; test: string[]; analysis: Record<string, Record<string, unknown>>; cache: { tool: string } }

/**
 * One task worktree (src/calc.cpp reworded) gated by `gate` alone, with `binary` (the analyser's command in
 * `analysis[key]`) replaced by a wrapper that logs each run into the worktree's build dir: the one place the
 * gates' sandbox lets the analyser write.
 */
function countedAnalyser(opts: { gate: string; key: string; binary: string; rules: () => Rules; files?: Record<string, string> }) {
  const wrapper = `.air/local/${opts.binary}-counting.sh`
  const taskId = `T-${opts.binary}`
  let repo!: CppRepo
  let wt!: string
  let counter!: string
  let run = 0
  const tasks = taskBranches(() => repo, { commit: true })
  const gates = REGISTRY.filter((g) => ["commit", "diff", opts.gate, "evidence"].includes(g.id))

  beforeAll(async () => {
    repo = await createCppRepo({ files: { [Toolchain.RULES_PATH]: JSON.stringify(opts.rules()), ...opts.files } })
    const made = await tasks.task(taskId, (ws) => ws.write("src/calc.cpp", `// adds and subtracts\n${CALC_CPP}`))
    wt = made.wt.path
    counter = path.join(wt, Toolchain.BUILD_DIR, `${opts.binary}-runs.log`)
    await made.ws.write(path.join(Toolchain.BUILD_DIR, `${opts.binary}-runs.log`), "")
    await repo.write(wrapper, `#!/bin/sh\necho "$*" >> '${counter}' 2>/dev/null\nexec ${opts.binary} "$@"\n`)
    await chmod(path.join(repo.root, wrapper), 0o755)
  }, 60_000)
  afterAll(async () => {
    await repo?.cleanup()
  })

  return {
    repo: () => repo,
    wt: () => wt,
    /** The gates once more, with `toolchain` (the analyser swapped for the wrapper); the analyser's gate result beside the report. */
    async gate(toolchain = opts.rules()) {
      run++
      const analysis = { ...toolchain.analysis, [opts.key]: { ...toolchain.analysis[opts.key], binary: path.join(repo.root, wrapper) } }
      const report = await firstGates(repo.root, taskId, wt, {
        requires: ["diff"],
        gates,
        attempt: run,
        evidenceDir: path.join(repo.root, ".air", "local", "evidence", taskId, `attempt-${run}`),
        toolchain: Toolchain.Rules.parse({ ...toolchain, analysis }),
      })
      return { report, result: report.gates.find((g) => g.gate === opts.gate)! }
    },
    /** The analyser's runs so far (its `--version`, asked for the key, is not one). */
    runs: async () => (await readFile(counter, "utf8").catch(() => "")).split("\n").filter((line) => line.length > 0 && line !== "--version").length,
    /** Commits `content` as src/calc.cpp in the task's worktree. */
    async plant(content: string) {
      await repo.at(wt).write("src/calc.cpp", content)
      await repo.at(wt).commitAll("a defect")
    },
  }
}

describe("cppcheck results keyed by content", () => {
  const rules = (args: string[] = []): Rules => ({ schemaVersion: 1, build: [], test: [], analysis: { cppcheck: { binary: "cppcheck", args } }, cache: { tool: "none" } })
  const cppcheck = countedAnalyser({ gate: "analysis", key: "cppcheck", binary: "cppcheck", rules })

  test("the same analysed tree reuses the recorded pass: no cppcheck starts, and the evidence says what was reused", async () => {
    const first = await cppcheck.gate()
    expect(first.report.passed, first.report.message).toBe(true)
    expect(first.result).toMatchObject({ ran: true, passed: true })
    expect(first.result.reused).toBeUndefined()
    const ran = await cppcheck.runs()
    expect(ran).toBeGreaterThan(0)

    const second = await cppcheck.gate()
    expect(second.report.passed, second.report.message).toBe(true)
    expect(await cppcheck.runs()).toBe(ran)
    const commit = (await cppcheck.repo().at(cppcheck.wt()).git(["rev-parse", "HEAD"])).trim()
    expect(second.result.reused).toMatchObject({ commit, tests: 0, source: "local" })
    expect(second.result.summary).toMatch(new RegExp(`^reused: same analysed files, cppcheck and config as ${commit.slice(0, 12)} at .*, key [0-9a-f]{16}.*: cppcheck on 1 file\\(s\\)`))
    const log = await readFile(second.result.logPath!, "utf8")
    expect(log).toMatch(/^# reused: same analysed files, cppcheck and config as /)
    expect(log).toMatch(/no cppcheck ran on src\/calc\.cpp/)
  })

  test("another cppcheck argument in toolchain.json misses: cppcheck runs again", async () => {
    const before = await cppcheck.runs()
    const other = await cppcheck.gate(rules(["--std=c++17"]))
    expect(other.report.passed, other.report.message).toBe(true)
    expect(other.result.reused).toBeUndefined()
    expect(await cppcheck.runs()).toBeGreaterThan(before)
  })

  test("a planted defect in an analysed file misses and fails the gate; a failure is never reused", async () => {
    await cppcheck.plant(`${CALC_CPP}\nint third() {\n  int a[2] = {0, 1};\n  return a[2];\n}\n`)
    const before = await cppcheck.runs()
    const planted = await cppcheck.gate()
    expect(planted.report.passed).toBe(false)
    expect(planted.report.failedGate).toBe("analysis")
    expect(planted.result.reused).toBeUndefined()
    expect(planted.result.summary).toMatch(/arrayIndexOutOfBounds/)
    expect(await cppcheck.runs()).toBeGreaterThan(before)
    const again = await cppcheck.runs()
    const retried = await cppcheck.gate()
    expect(retried.report.failedGate).toBe("analysis")
    expect(await cppcheck.runs()).toBeGreaterThan(again)
  })
})

/** The same for clang-tidy, with the project's `.clang-tidy`: its pass is recorded under its own key. */
describe("clang-tidy results keyed by content", () => {
  const rules = (checks?: string): Rules => ({
    schemaVersion: 1,
    build: [],
    test: [],
    analysis: { cppcheck: { enabled: false }, clangTidy: { binary: "clang-tidy", ...(checks ? { args: [`--checks=${checks}`] } : {}) } },
    cache: { tool: "none" },
  })
  const tidy = countedAnalyser({ gate: "clang-tidy", key: "clangTidy", binary: "clang-tidy", rules, files: { ".clang-tidy": "Checks: '-*,modernize-use-nullptr'\n" } })

  test("the same tree reuses clang-tidy's recorded pass: no clang-tidy starts, and the evidence says so", async () => {
    const first = await tidy.gate()
    expect(first.report.passed, first.report.message).toBe(true)
    expect(first.result).toMatchObject({ ran: true, passed: true })
    expect(first.result.reused).toBeUndefined()
    const ran = await tidy.runs()
    expect(ran).toBeGreaterThan(0)

    const second = await tidy.gate()
    expect(second.report.passed, second.report.message).toBe(true)
    expect(await tidy.runs()).toBe(ran)
    const commit = (await tidy.repo().at(tidy.wt()).git(["rev-parse", "HEAD"])).trim()
    expect(second.result.reused).toMatchObject({ commit, tests: 0, source: "local" })
    expect(second.result.summary).toMatch(new RegExp(`^reused: same analysed files, clang-tidy and config as ${commit.slice(0, 12)} at .*, key [0-9a-f]{16}`))
  })

  test("another check list in toolchain.json misses: clang-tidy runs again", async () => {
    const before = await tidy.runs()
    const other = await tidy.gate(rules("-*,modernize-use-nullptr,bugprone-integer-division"))
    expect(other.report.passed, other.report.message).toBe(true)
    expect(other.result.reused).toBeUndefined()
    expect(await tidy.runs()).toBeGreaterThan(before)
  })

  test("new code with a finding misses and fails; the failure is not reused", async () => {
    await tidy.plant(`${CALC_CPP}\nint* fresh() {\n  int* q = 0;\n  return q;\n}\n`)
    const before = await tidy.runs()
    const planted = await tidy.gate()
    expect(planted.report.failedGate).toBe("clang-tidy")
    expect(planted.result.reused).toBeUndefined()
    expect(planted.report.message).toContain("modernize-use-nullptr")
    expect(await tidy.runs()).toBeGreaterThan(before)
    const again = await tidy.runs()
    expect((await tidy.gate()).report.failedGate).toBe("clang-tidy")
    expect(await tidy.runs()).toBeGreaterThan(again)
  })
})

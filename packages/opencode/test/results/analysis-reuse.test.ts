import { chmod, readFile } from "node:fs/promises"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { REGISTRY } from "../../src/scheduler/runtime/gates/index.ts"
import { Toolchain } from "../../src/scheduler/runtime/toolchain/index.ts"
import { createCppRepo, CALC_CPP, type CppRepo } from "../runtime/cpp-repo.ts"
import { firstGates, taskBranches } from "../runtime/task-branch.ts"

/**
 * The analysis gate's result keyed by content, on a real repository and the real cppcheck (through a wrapper
 * that counts its runs): the same tree again reuses the recorded pass and starts no cppcheck; a change to the
 * analyser's rules misses; a planted defect misses and is found.
 */
const WRAPPER = ".air/local/cppcheck-counting.sh"
const rules = (args: string[] = []) => ({
  schemaVersion: 1,
  build: [],
  test: [],
  analysis: { cppcheck: { binary: "cppcheck", args } },
  cache: { tool: "none" },
})

describe("analysis results keyed by content", () => {
  let repo: CppRepo
  const tasks = taskBranches(() => repo, { commit: true })
  const gates = REGISTRY.filter((g) => ["commit", "diff", "analysis", "evidence"].includes(g.id))
  let wt: string
  let counter: string
  let run = 0
  const analyse = async (toolchain = rules()) => {
    run++
    const withBinary = { ...toolchain, analysis: { cppcheck: { ...toolchain.analysis.cppcheck, binary: path.join(repo.root, WRAPPER) } } }
    const report = await firstGates(repo.root, "T-a", wt, {
      requires: ["diff", "analysis"],
      gates,
      attempt: run,
      evidenceDir: path.join(repo.root, ".air", "local", "evidence", "T-a", `attempt-${run}`),
      toolchain: Toolchain.Rules.parse(withBinary),
    })
    return { report, analysis: report.gates.find((g) => g.gate === "analysis")! }
  }
  /** cppcheck's analysis runs so far (its `--version`, asked for the key, is not one). */
  const runs = async () => (await readFile(counter, "utf8").catch(() => "")).split("\n").filter((line) => line.length > 0 && line !== "--version").length

  beforeAll(async () => {
    repo = await createCppRepo({ files: { [Toolchain.RULES_PATH]: JSON.stringify(rules()) } })
    const made = await tasks.task("T-a", (ws) => ws.write("src/calc.cpp", `// adds and subtracts\n${CALC_CPP}`))
    wt = made.wt.path
    // The count is kept in the worktree's build dir: the one place the gates' sandbox lets cppcheck write.
    counter = path.join(wt, Toolchain.BUILD_DIR, "cppcheck-runs.log")
    await made.ws.write(path.join(Toolchain.BUILD_DIR, "cppcheck-runs.log"), "")
    await repo.write(WRAPPER, `#!/bin/sh\necho "$*" >> '${counter}' 2>/dev/null\nexec cppcheck "$@"\n`)
    await chmod(path.join(repo.root, WRAPPER), 0o755)
  }, 60_000)
  afterAll(async () => {
    await repo?.cleanup()
  })

  test("the same analysed tree reuses the recorded pass: no cppcheck starts, and the evidence says what was reused", async () => {
    const first = await analyse()
    expect(first.report.passed, first.report.message).toBe(true)
    expect(first.analysis).toMatchObject({ ran: true, passed: true })
    expect(first.analysis.reused).toBeUndefined()
    const ran = await runs()
    expect(ran).toBeGreaterThan(0)

    const second = await analyse()
    expect(second.report.passed, second.report.message).toBe(true)
    expect(await runs()).toBe(ran)
    const commit = (await repo.at(wt).git(["rev-parse", "HEAD"])).trim()
    expect(second.analysis.reused).toMatchObject({ commit, tests: 0, source: "local" })
    expect(second.analysis.summary).toMatch(new RegExp(`^reused: same analysed files, cppcheck and config as ${commit.slice(0, 12)} at .*, key [0-9a-f]{16}.*: cppcheck on 1 file\\(s\\)`))
    const log = await readFile(second.analysis.logPath!, "utf8")
    expect(log).toMatch(/^# reused: same analysed files, cppcheck and config as /)
    expect(log).toMatch(/no cppcheck ran on src\/calc\.cpp/)
  })

  test("another cppcheck argument in toolchain.json misses: cppcheck runs again", async () => {
    const before = await runs()
    const other = await analyse(rules(["--std=c++17"]))
    expect(other.report.passed, other.report.message).toBe(true)
    expect(other.analysis.reused).toBeUndefined()
    expect(await runs()).toBeGreaterThan(before)
  })

  test("a planted defect in an analysed file misses and fails the gate; a failure is never reused", async () => {
    await repo.at(wt).write("src/calc.cpp", `${CALC_CPP}\nint third() {\n  int a[2] = {0, 1};\n  return a[2];\n}\n`)
    await repo.at(wt).commitAll("a defect")
    const before = await runs()
    const planted = await analyse()
    expect(planted.report.passed).toBe(false)
    expect(planted.report.failedGate).toBe("analysis")
    expect(planted.analysis.reused).toBeUndefined()
    expect(planted.analysis.summary).toMatch(/arrayIndexOutOfBounds/)
    expect(await runs()).toBeGreaterThan(before)
    const again = await runs()
    const retried = await analyse()
    expect(retried.report.failedGate).toBe("analysis")
    expect(await runs()).toBeGreaterThan(again)
  })
})

/**
 * The same for clang-tidy (the project's `.clang-tidy`, the real clang-tidy behind a counting wrapper): its
 * pass is recorded under its own key, the same tree starts no clang-tidy, another check list misses, and new
 * code with a finding misses and fails.
 */
describe("clang-tidy results keyed by content", () => {
  const TIDY_WRAPPER = ".air/local/clang-tidy-counting.sh"
  const tidyRules = (checks?: string) => ({
    schemaVersion: 1,
    build: [],
    test: [],
    analysis: { cppcheck: { enabled: false }, clangTidy: { binary: "clang-tidy", ...(checks ? { args: [`--checks=${checks}`] } : {}) } },
    cache: { tool: "none" },
  })
  let repo: CppRepo
  const tasks = taskBranches(() => repo, { commit: true })
  const gates = REGISTRY.filter((g) => ["commit", "diff", "clang-tidy", "evidence"].includes(g.id))
  let wt: string
  let counter: string
  let run = 0
  const tidy = async (toolchain: ReturnType<typeof tidyRules> = tidyRules()) => {
    run++
    const withBinary = { ...toolchain, analysis: { ...toolchain.analysis, clangTidy: { ...toolchain.analysis.clangTidy, binary: path.join(repo.root, TIDY_WRAPPER) } } }
    const report = await firstGates(repo.root, "T-t", wt, {
      requires: ["diff"],
      gates,
      attempt: run,
      evidenceDir: path.join(repo.root, ".air", "local", "evidence", "T-t", `attempt-${run}`),
      toolchain: Toolchain.Rules.parse(withBinary),
    })
    return { report, tidy: report.gates.find((g) => g.gate === "clang-tidy")! }
  }
  /** clang-tidy's analysis runs so far (its `--version`, asked for the key, is not one). */
  const runs = async () => (await readFile(counter, "utf8").catch(() => "")).split("\n").filter((line) => line.length > 0 && line !== "--version").length

  beforeAll(async () => {
    repo = await createCppRepo({ files: { [Toolchain.RULES_PATH]: JSON.stringify(tidyRules()), ".clang-tidy": "Checks: '-*,modernize-use-nullptr'\n" } })
    const made = await tasks.task("T-t", (ws) => ws.write("src/calc.cpp", `// adds and subtracts\n${CALC_CPP}`))
    wt = made.wt.path
    counter = path.join(wt, Toolchain.BUILD_DIR, "clang-tidy-runs.log")
    await made.ws.write(path.join(Toolchain.BUILD_DIR, "clang-tidy-runs.log"), "")
    await repo.write(TIDY_WRAPPER, `#!/bin/sh\necho "$*" >> '${counter}' 2>/dev/null\nexec clang-tidy "$@"\n`)
    await chmod(path.join(repo.root, TIDY_WRAPPER), 0o755)
  }, 60_000)
  afterAll(async () => {
    await repo?.cleanup()
  })

  test("the same tree reuses clang-tidy's recorded pass: no clang-tidy starts, and the evidence says so", async () => {
    const first = await tidy()
    expect(first.report.passed, first.report.message).toBe(true)
    expect(first.tidy).toMatchObject({ ran: true, passed: true })
    expect(first.tidy.reused).toBeUndefined()
    const ran = await runs()
    expect(ran).toBeGreaterThan(0)

    const second = await tidy()
    expect(second.report.passed, second.report.message).toBe(true)
    expect(await runs()).toBe(ran)
    const commit = (await repo.at(wt).git(["rev-parse", "HEAD"])).trim()
    expect(second.tidy.reused).toMatchObject({ commit, tests: 0, source: "local" })
    expect(second.tidy.summary).toMatch(new RegExp(`^reused: same analysed files, clang-tidy and config as ${commit.slice(0, 12)} at .*, key [0-9a-f]{16}`))
  })

  test("another check list in toolchain.json misses: clang-tidy runs again", async () => {
    const before = await runs()
    const other = await tidy(tidyRules("-*,modernize-use-nullptr,bugprone-integer-division"))
    expect(other.report.passed, other.report.message).toBe(true)
    expect(other.tidy.reused).toBeUndefined()
    expect(await runs()).toBeGreaterThan(before)
  })

  test("new code with a finding misses and fails; the failure is not reused", async () => {
    await repo.at(wt).write("src/calc.cpp", `${CALC_CPP}\nint* fresh() {\n  int* q = 0;\n  return q;\n}\n`)
    await repo.at(wt).commitAll("a finding")
    const before = await runs()
    const planted = await tidy()
    expect(planted.report.failedGate).toBe("clang-tidy")
    expect(planted.tidy.reused).toBeUndefined()
    expect(planted.report.message).toContain("modernize-use-nullptr")
    expect(await runs()).toBeGreaterThan(before)
    const again = await runs()
    expect((await tidy()).report.failedGate).toBe("clang-tidy")
    expect(await runs()).toBeGreaterThan(again)
  })
})

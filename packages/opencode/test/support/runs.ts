import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { basename, dirname, join } from "node:path"
import { aircoding, writeScenario } from "./engine"
import type { Sandbox } from "./sandbox"
import { uiSkillRef } from "../../src/scheduler/core/report.schema"
import { UiSkill } from "../../src/scheduler/runtime/sessions/ui-skill"

/**
 * A tiny project for orchestration tests: text files and a toolchain whose build and test are `true`
 * (plus any command given), so the gates cost milliseconds and a test pays only for the engine.
 */
export function trivialProject(sandbox: Sandbox, files: Record<string, string>, toolchain: { build?: string[]; test?: string[] } = {}, name = "proj"): string {
  const project = sandbox.project(name)
  const all: Record<string, string> = {
    ".air/shared/rules/toolchain.json": JSON.stringify({
      schemaVersion: 1,
      build: toolchain.build ?? ["true"],
      test: toolchain.test ?? ["true"],
      analysis: { cppcheck: { enabled: false } },
    }),
    ...files,
  }
  for (const [path, text] of Object.entries(all)) {
    const file = join(project, path)
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(file, text)
  }
  execFileSync("git", ["add", "-A"], { cwd: project, env: sandbox.env })
  execFileSync("git", ["commit", "-qm", "sample"], { cwd: project, env: sandbox.env })
  return project
}

/** A bash step of a scripted worker. */
export const shellStep = (command: string, description = "write and commit") => ({ tool: "bash", args: { command, description } })

export const commitStep = (msg: string) => ({ tool: "bash", args: { command: `git add -A && git commit -q -m "${msg}"`, description: "commit" } })

/** Main as the person's stand-in: submits the requirement, then listens until the run ends. */
export const submittingMain = (requirement: string) => ({
  agent: "main",
  steps: [{ tool: "air_submit", args: { requirement } }, { tool: "air_listen", args: {}, until: "RUN ENDED" }, { text: "Done." }],
})

/** The Architect: proposes `summary`, then writes `tasks` as the plan. */
export const planningArchitect = (summary: string, tasks: unknown[]) => ({
  agent: "architect",
  match: "^Requirement:",
  steps: [{ tool: "air_propose", args: { summary } }, { tool: "air_plan", args: { tasks } }, { text: "Planned." }],
})

/**
 * The rows a ui task's review must hold, one per section of the shipped UI design skill (the core refuses a ui review
 * without them); the scripted reviewer cannot tell a ui task from a code task, and a code task's review may carry them.
 */
export const uiSkillRows = UiSkill.sections(join(tmpdir(), "air-no-project"), "en").map((section) => ({ designRef: uiSkillRef(section), code: "the capture and the diff of {{id}}", status: "match", note: "" }))

/** A reviewer that passes every task. */
export const passingReviewer = {
  agent: "reviewer",
  match: "^Review task (?<id>[A-Za-z0-9_.-]+):",
  steps: [
    { tool: "air_diff", args: {} },
    { tool: "air_review", args: { verdict: "pass", rows: [{ designRef: "{{id}}: done when", code: "the diff of {{id}}", status: "match", note: "" }, ...uiSkillRows], findings: [], checklist: { lifetimes: { status: "not-applicable" }, rawPointers: { status: "not-applicable" }, concurrency: { status: "not-applicable" }, exceptions: { status: "not-applicable" }, integerOverflow: { status: "checked" }, undefinedBehaviour: { status: "checked" }, loggingKeyPaths: { status: "not-applicable" }, loggingFormat: { status: "not-applicable" } } } },
    { text: "Reviewed {{id}}." },
  ],
}

/** An executor step list that writes one file and reports. */
export function writeAndReport(path: string, content: string, msg: string) {
  return [
    { tool: "write", args: { filePath: path, content } },
    commitStep(msg),
    { tool: "air_report", args: { summary: msg } },
    { text: "Reported." },
  ]
}

export type RunResult = { code: number; stdout: string; stderr: string; summary: any; events: any[]; modelLog: any[] }

export async function runScenario(
  sandbox: Sandbox,
  project: string,
  scenario: Record<string, unknown>,
  /** yes: false runs without --yes (the plan waits for the user's confirmation). */
  opts: { input: string; env?: Record<string, string>; args?: string[]; timeoutMs?: number; name?: string; yes?: boolean },
): Promise<RunResult> {
  const log = join(sandbox.root, `${opts.name ?? "model"}.jsonl`)
  const out = await aircoding(["run", project, ...(opts.yes === false ? [] : ["--yes"]), "--json", "--scripted", writeScenario(sandbox, scenario, `${opts.name ?? "scenario"}.json`), ...(opts.args ?? [])], {
    cwd: project,
    input: opts.input,
    timeoutMs: opts.timeoutMs,
    // AIRCODING_HEADLESS_ANSWER_MS: in these scenarios Main answers questions for the user from the
    // requirement; on a loaded machine its answer may take seconds longer than the product's window.
    env: { ...sandbox.env, AIRCODING_SCRIPTED_LOG: log, AIRCODING_INACTIVITY_MS: "20000", AIRCODING_LISTEN_MS: "600000", AIRCODING_HEADLESS_ANSWER_MS: "30000", ...opts.env },
  })
  let summary: any
  try {
    summary = JSON.parse(out.stdout)
  } catch {
    throw new Error(`aircoding run printed no JSON summary (exit ${out.code}):\n${out.stdout}\n${out.stderr.slice(-4000)}`)
  }
  const events = readJsonl(join(project, ".air/local/state/events.jsonl"))
  const modelLog = readJsonl(log)
  // AIR_TEST_DUMP=<dir>: keep the log, the model's requests and stderr of the run, to read after the sandbox is gone.
  const dump = process.env.AIR_TEST_DUMP
  if (dump) {
    mkdirSync(dump, { recursive: true })
    const name = opts.name ?? basename(sandbox.root)
    writeFileSync(join(dump, `${name}.events.jsonl`), events.map((e) => JSON.stringify(e)).join("\n"))
    writeFileSync(join(dump, `${name}.model.jsonl`), modelLog.map((e) => JSON.stringify(e)).join("\n"))
    writeFileSync(join(dump, `${name}.stderr.txt`), out.stderr)
  }
  return { ...out, summary, events, modelLog }
}

export function readJsonl(file: string): any[] {
  if (!existsSync(file)) return []
  return readFileSync(file, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l))
}

/**
 * The CMake project at `commit`, configured, built and tested in a throwaway worktree of its own (Ninja,
 * as the e2e toolchains use): CTest's summary line, or the error thrown by the step that failed.
 */
export function buildAndTestAt(project: string, commit: string, env: NodeJS.ProcessEnv): string {
  const git = (args: string[]) => execFileSync("git", args, { cwd: project, encoding: "utf8", env })
  const dir = mkdtempSync(join(tmpdir(), "air-check-"))
  try {
    git(["worktree", "add", "--quiet", "--detach", dir, commit])
    const sh = (cmd: string, args: string[]) => execFileSync(cmd, args, { cwd: dir, encoding: "utf8", env, stdio: "pipe" })
    sh("cmake", ["-S", ".", "-B", "build", "-G", "Ninja"])
    sh("cmake", ["--build", "build"])
    return sh("ctest", ["--test-dir", "build"])
  } finally {
    git(["worktree", "remove", "--force", dir])
    rmSync(dir, { recursive: true, force: true })
  }
}

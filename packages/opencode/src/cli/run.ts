import { existsSync } from "node:fs"
import { join } from "node:path"
import { Preflight } from "../scheduler/runtime/preflight"
import { FinalCheck } from "../scheduler/runtime/integration/final-check"
import { RunReport } from "../read/run-report"
import { Store } from "../scheduler/runtime/store/store"
import type { SchedulerState } from "../scheduler/core/state"
import { runMainAgent, type EngineTranscript } from "./headless"
import { Launch } from "./launch"
import { followProgress } from "./progress"
import { UsageError, Ui } from "./ui"
import { Strict } from "../scheduler/core/strict"
import { Answer } from "./answer"

export type RunOutcome = { exitCode: number; summary: RunReport.Summary & { answer: string; wallTimeMs: number; errors: string[] } }

const MAX_REQUIREMENT_BYTES = Strict.MAX_REQUIREMENT_BYTES

async function readStdin(): Promise<Buffer> {
  if (process.stdin.isTTY) return Buffer.alloc(0)
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

/** The requirement from stdin's bytes: UTF-8, not empty, not too large — else a usage error saying which. */
export function requirementOf(bytes: Buffer): string {
  if (bytes.length > MAX_REQUIREMENT_BYTES)
    throw new UsageError(
      `the requirement on stdin is ${(bytes.length / 1024 / 1024).toFixed(1)} MB; the limit is ${MAX_REQUIREMENT_BYTES / 1024} KB. Put long material in a file of the repository and name that file in a short requirement`,
      "run",
    )
  let text: string
  try {
    text = Strict.decode(bytes, "stdin").trim()
  } catch (err) {
    throw new UsageError((err as Error).message.replace("save the file as UTF-8", "send the requirement as UTF-8"), "run")
  }
  if (!text) throw new UsageError("no requirement on stdin; usage: aircoding run [dir] < requirement.txt", "run")
  return text
}

/** The run stopped to ask the user something (plan confirmation or a question): exit 2, never "error". */
export function waitingForUser(state: SchedulerState | undefined): boolean {
  return Boolean(state && !state.finished && (state.questions.length > 0 || state.stage === "confirming"))
}

/** The run's state as the Scheduler left it on disk (the engine process has exited and released the lock). */
async function finalState(dir: string) {
  if (!existsSync(join(dir, ".air", "local", "state"))) return undefined
  const store = await Store.open(join(dir, ".air"))
  try {
    return store.state
  } finally {
    await store.close()
  }
}

/** The engine's exit code says little (0 even when tools failed): the Scheduler's state decides. */
function exitCodeOf(summary: RunReport.Summary, transcript: EngineTranscript, waiting: boolean): number {
  if (transcript.exitCode !== 0 || transcript.errors.length) return 1
  if (summary.final && !summary.final.passed) return 1
  if (waiting) return 2
  // idle: Main answered without starting a run (a question about the code); pre-flight already refused
  // what would have stopped a run at the door.
  if (summary.status === "done" || summary.status === "idle") return 0
  if (summary.status === "blocked" || summary.status === "waiting") return 2
  return 1
}

export async function headlessRun(
  dir: string,
  requirement: string,
  opts: { yes: boolean; scripted?: string; extra?: Record<string, string>; progress?: boolean },
): Promise<RunOutcome> {
  const started = Date.now()
  const prepared = await Launch.prepare(dir, {
    scripted: opts.scripted,
    extra: { ...(opts.yes ? { AIRCODING_AUTO_CONFIRM: "1" } : {}), ...opts.extra },
  })
  const stop = opts.progress === false ? () => {} : followProgress(dir)
  let transcript: EngineTranscript
  try {
    transcript = await runMainAgent(prepared, requirement)
  } finally {
    stop()
    await prepared.close()
  }
  const state = await finalState(dir)
  const base: RunReport.Summary = state
    ? RunReport.summary(dir, state)
    : { status: "idle", runId: null, stage: "idle", tasks: [], questions: [], modelRequests: {}, evidenceRoot: ".air/local/evidence", final: null }
  const errors = [...transcript.errors]
  if (transcript.exitCode !== 0) errors.push(`engine exited with code ${transcript.exitCode}: ${transcript.stderr.trim().split("\n").slice(-3).join(" | ")}`)
  const waiting = waitingForUser(state)
  if (base.status === "running" && !waiting) errors.push("the engine stopped before the run ended (see .air/local/state/events.jsonl)")
  if (base.final && !base.final.passed) errors.push(base.final.summary)
  const summary = { ...base, answer: transcript.text, wallTimeMs: Date.now() - started, errors }
  return { exitCode: exitCodeOf(base, transcript, waiting), summary: waiting && base.status === "running" ? { ...summary, status: "waiting" } : summary }
}

export function printSummary(outcome: RunOutcome, json: boolean): void {
  const s = outcome.summary
  if (json) {
    process.stdout.write(JSON.stringify(s, null, 2) + "\n")
    return
  }
  if (s.answer) process.stdout.write(s.answer.trim() + "\n")
  if (s.runId) {
    process.stdout.write(`\n${Ui.bold(`Run ${s.runId}: ${s.status}`)} in ${(s.wallTimeMs / 1000).toFixed(1)} s\n`)
    for (const t of s.tasks) process.stdout.write(`  ${t.id.padEnd(6)} ${t.state.padEnd(10)} ${t.attempts} attempt(s)  ${t.title}\n`)
    const requests = Object.entries(s.modelRequests).map(([a, n]) => `${a} ${n}`)
    if (requests.length) process.stdout.write(`  model requests: ${requests.join(", ")}\n`)
    if (s.final) process.stdout.write(`  final check: ${s.final.summary}\n`)
    process.stdout.write(`  evidence: ${s.evidenceRoot}/<task-id>/\n`)
  }
  for (const q of s.questions) process.stdout.write(Ui.yellow(`Question ${q.questionId}: ${q.text}\n`))
  if (s.stage === "confirming")
    process.stdout.write(
      Ui.yellow(
        `The plan waits for your confirmation (.air/shared/plan/plan.md). Answer with:\n` +
          `  ${Launch.command()} run --resume --answer "yes"\n  ${Launch.command()} run --resume --answer "change: <what to change>"\n`,
      ),
    )
  for (const e of s.errors) process.stderr.write(Ui.red(`error: ${e}\n`))
}

/** What Main is told when a run is resumed: the Scheduler resumes from its log when Main first listens. */
export const RESUME_PROMPT =
  "Resume the AirCoding run in this project: it was interrupted. Call air_listen now, and again after each answer, until it says RUN ENDED."

/** Pre-flight: every problem on stderr with its fix, exit 1 before the engine starts; notes as steps. */
async function preflight(dir: string, resume: boolean, json: boolean): Promise<number | undefined> {
  // A resumed run is past the door: only what would stop it again (its files, a live holder of its locks).
  const report = resume ? { problems: [...Preflight.files(dir), ...(await Preflight.locks(dir))], notes: [] } : await Preflight.check(dir)
  for (const note of report.notes) Ui.step(note)
  if (report.problems.length === 0) return undefined
  for (const p of report.problems) process.stderr.write(Ui.red("aircoding: ") + p.message + "\n" + `  fix: ${p.fix}\n`)
  // CI reads stdout: say it there too, in the summary's shape.
  if (json) process.stdout.write(JSON.stringify({ status: "error", runId: null, stage: "idle", tasks: [], questions: [], errors: report.problems.map((p) => `${p.message} (fix: ${p.fix})`), preflight: report.problems }, null, 2) + "\n")
  return 1
}

export async function run(
  dirArg: string | undefined,
  opts: { yes: boolean; json: boolean; scripted?: string; resume?: boolean; initGit?: boolean; answer?: string },
): Promise<number> {
  const dir = Launch.projectDir(dirArg)
  if (opts.initGit && opts.resume) throw new UsageError("--init-git starts a new run; it cannot be used with --resume", "run")
  if (opts.answer !== undefined && !opts.resume) throw new UsageError('--answer goes with --resume: aircoding run [dir] --resume --answer "yes"', "run")
  if (opts.resume) {
    const refused = await preflight(dir, true, opts.json)
    if (refused !== undefined) return refused
    if (opts.answer !== undefined) {
      const recorded = await Answer.record(dir, opts.answer)
      if (!opts.json) process.stderr.write(`${recorded}; resuming the run\n`)
    }
    const state = await finalState(dir)
    if (!state || state.stage === "idle") throw new UsageError(`no AirCoding run to resume in ${dir}; start one with: aircoding run [dir] < requirement.txt`)
    if (state.finished && state.questions.length === 0) {
      // Nothing left to do: say how it ended, as the run itself would have (the final check may have died with it).
      if (state.finished.status === "done" && !FinalCheck.read(dir)) await FinalCheck.run(dir)
      const outcome = { exitCode: state.finished.status === "done" ? 0 : 2, summary: { ...RunReport.summary(dir, state), answer: "", wallTimeMs: 0, errors: [] } }
      printSummary(outcome, opts.json)
      return outcome.exitCode
    }
    const outcome = await headlessRun(dir, RESUME_PROMPT, opts)
    printSummary(outcome, opts.json)
    return outcome.exitCode
  }
  const requirement = requirementOf(await readStdin())
  if (opts.initGit) Ui.step(await Preflight.initGit(dir))
  const refused = await preflight(dir, false, opts.json)
  if (refused !== undefined) return refused
  const outcome = await headlessRun(dir, requirement, opts)
  printSummary(outcome, opts.json)
  return outcome.exitCode
}

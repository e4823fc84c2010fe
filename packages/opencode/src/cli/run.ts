import { existsSync } from "node:fs"
import { join } from "node:path"
import { FinalCheck } from "../scheduler/final-check"
import { RunReport } from "../scheduler/run-report"
import { Store } from "../scheduler/store"
import { runMainAgent, type EngineTranscript } from "./headless"
import { Launch } from "./launch"
import { followProgress } from "./progress"
import { UsageError, Ui } from "./ui"
import { Answer } from "./answer"

export type RunOutcome = { exitCode: number; summary: RunReport.Summary & { answer: string; wallTimeMs: number; errors: string[] } }

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) return ""
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString("utf8").trim()
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
function exitCodeOf(summary: RunReport.Summary, transcript: EngineTranscript): number {
  if (transcript.exitCode !== 0 || transcript.errors.length) return 1
  if (summary.final && !summary.final.passed) return 1
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
  if (base.status === "running" && base.stage !== "confirming") errors.push("the engine stopped before the run ended (see .air/local/state/events.jsonl)")
  if (base.final && !base.final.passed) errors.push(base.final.summary)
  const summary = { ...base, answer: transcript.text, wallTimeMs: Date.now() - started, errors }
  return { exitCode: exitCodeOf(base, transcript), summary }
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

export async function run(dirArg: string | undefined, opts: { yes: boolean; json: boolean; scripted?: string; resume?: boolean; answer?: string }): Promise<number> {
  const dir = Launch.projectDir(dirArg)
  if (opts.answer !== undefined && !opts.resume) throw new UsageError("--answer goes with --resume: aircoding run [dir] --resume --answer \"yes\"")
  if (opts.answer !== undefined) {
    const recorded = await Answer.record(dir, opts.answer)
    if (!opts.json) process.stderr.write(`${recorded}; resuming the run\n`)
  }
  if (opts.resume) {
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
  const requirement = await readStdin()
  if (!requirement) throw new UsageError("no requirement on stdin; usage: aircoding run [dir] < requirement.txt")
  const outcome = await headlessRun(dir, requirement, opts)
  printSummary(outcome, opts.json)
  return outcome.exitCode
}

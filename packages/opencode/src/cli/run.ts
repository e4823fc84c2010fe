import { existsSync } from "node:fs"
import { Preflight } from "../scheduler/runtime/preflight"
import { FinalCheck } from "../scheduler/runtime/integration/final-check"
import { RunReport } from "../scheduler/runtime/report/run-report"
import { Store } from "../scheduler/runtime/store/store"
import type { SchedulerState } from "../scheduler/core/state"
import { langOf, runMainAgent, silentTranscript, type EngineTranscript } from "./headless"
import { MainSilence } from "./main-silence"
import { Settings } from "../scheduler/runtime/settings"
import { t } from "../text/words"
import { Launch } from "./launch"
import { followProgress } from "./progress"
import { UsageError, Ui } from "./ui"
import { Args } from "./args"
import { RunWatch } from "./run-watch"
import { Notifier } from "../scheduler/runtime/notify/notifier"
import { TraceExport } from "../scheduler/runtime/trace/exporter"
import { RunData } from "../scheduler/runtime/store/run-data"
import { ViewText } from "../read/view-text"
import { TerminalText } from "../text/terminal-text"
import { exitCodeOf, headlessEnd, runStatus } from "../text/run-status"
import { Strict } from "../scheduler/core/strict"
import { Answer } from "./answer"
import { ExitSummary } from "./exit-summary"
import { CommandLine } from "./command-line"
import { AirPaths } from "../scheduler/core/air-paths"

export type RunOutcome = { exitCode: number; summary: RunReport.Summary & Partial<ExitSummary.Waits> & { answer: string; wallTimeMs: number; errors: string[]; notes?: string[] } }

const MAX_REQUIREMENT_BYTES = Strict.MAX_REQUIREMENT_BYTES

async function readStdin(): Promise<Buffer> {
  if (process.stdin.isTTY) return Buffer.alloc(0)
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

/** The requirement from stdin's bytes: UTF-8, not empty, not too large — else a usage error saying which. */
function requirementOf(bytes: Buffer): string {
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
  if (!text) throw new UsageError(`no requirement on stdin; usage: ${CommandLine.name()} run [dir] < requirement.txt`, "run")
  return text
}

/** The run's state as the Scheduler left it on disk (the engine process has exited and released the lock). */
async function finalState(dir: string) {
  if (!existsSync(AirPaths.state(dir))) return undefined
  const store = await Store.open(AirPaths.air(dir))
  try {
    return store.state
  } finally {
    await store.close()
  }
}

export async function headlessRun(
  dir: string,
  requirement: string,
  opts: { yes: boolean; scripted?: string; extra?: Record<string, string>; progress?: boolean; exitOnQuestion?: boolean },
): Promise<RunOutcome> {
  const started = Date.now()
  // Read before anything starts (pre-flight has checked the file): how long Main may be silent before a run begins.
  const silenceMs = Settings.load(dir, { ...process.env, ...opts.extra }).inactivityMs
  const prepared = await Launch.prepare(dir, {
    scripted: opts.scripted,
    extra: {
      ...(opts.yes ? { AIRCODING_AUTO_CONFIRM: "1" } : {}),
      AIRCODING_RESUME_COMMAND: CommandLine.resume(dir, { scripted: opts.scripted, yes: opts.yes, exitOnQuestion: opts.exitOnQuestion }),
      ...opts.extra,
    },
  })
  const stop = opts.progress === false ? () => {} : followProgress(dir)
  // The Scheduler's state, not Main's turn, decides when the process ends.
  let engine = new AbortController()
  const watch = RunWatch.start(dir, () => engine.abort(), { exitOnQuestion: opts.exitOnQuestion })
  // Beside the run, never in its way: what needs people goes to the configured webhooks while the run goes on.
  const notifier = Notifier.start(dir, { interactive: false, resumeCommand: CommandLine.resume(dir, { scripted: opts.scripted, exitOnQuestion: opts.exitOnQuestion }) })
  /** One start of Main; before any run begins, its silence is bounded too (MainSilence). */
  const startMain = async (prompt: string): Promise<EngineTranscript> => {
    engine = new AbortController()
    const current = engine
    const silence = MainSilence.start({ silenceMs, begun: () => watch.begun, onSilent: () => current.abort() })
    try {
      const transcript = await runMainAgent(prepared, prompt, current.signal, () => silence.touch())
      return silence.silent ? silentTranscript(transcript, silenceMs, langOf(dir)) : transcript
    } finally {
      silence.stop()
    }
  }
  let transcript: EngineTranscript
  const notes: string[] = []
  try {
    transcript = await startMain(requirement)
    // Main's turn may end before the run does — an error, text with no tool call, silence — and with it the
    // engine that hosts the Scheduler: Main is started again (the run resumes from its log), a bounded number of times.
    let nudged = false
    for (let starts = 1; starts < MAX_MAIN_STARTS && !watch.stoppedFor; starts++) {
      const again = mainAgain(await finalState(dir), transcript, requirement, nudged, opts.exitOnQuestion)
      if (!again) break
      nudged ||= again.nudge === true
      notes.push(again.note)
      transcript = await startMain(again.prompt)
    }
  } finally {
    watch.stop()
    stop()
    await prepared.close()
    await notifier?.close()
  }
  // After the engine is gone, never inside the run: the trace of what the log holds, bounded by the send's timeout.
  const traceNote = await TraceExport.afterRun(dir)
  if (traceNote) Ui.step(traceNote)
  const state = await finalState(dir)
  const base: RunReport.Summary = state
    ? RunReport.summary(dir, state)
    : { status: "idle", runId: null, stage: "idle", tasks: [], questions: [], modelRequests: {}, evidenceRoot: AirPaths.EVIDENCE, final: null }
  // Stopped by us, the engine's exit says nothing; else a failed turn of Main is a failure only if it left work undone.
  // Main's failure in words when the engine said what it was; its own stderr only when it said nothing.
  const engineErrors = watch.stoppedFor
    ? []
    : transcript.errors.length
      ? transcript.errors
      : transcript.exitCode !== 0
        ? [`engine exited with code ${transcript.exitCode}: ${transcript.stderr.trim().split("\n").slice(-3).join(" | ")}`]
        : []
  // No run began although Main had a requirement and said nothing failed: the work is undone, never exit 0.
  const noRun = (!state || state.stage === "idle") && engineErrors.length === 0 && !watch.stoppedFor
  if (noRun) engineErrors.push(t(langOf(dir), "main.noRun", { text: TerminalText.oneLine(transcript.text || "—", 200) }))
  const exitCode = exitCodeOf(state, { engineFailed: engineErrors.length > 0 })
  const errors: string[] = []
  if (exitCode === 1) {
    errors.push(...engineErrors)
    if (base.status === "running" || base.status === "planning") errors.push(`the engine stopped before the run ended (see ${AirPaths.EVENTS})`)
    if (base.final && !base.final.passed) errors.push(base.final.summary)
  } else if (engineErrors.length) notes.push(`the main agent's last turn failed after the run had settled (${TerminalText.oneLine(engineErrors[0]!, 200)}); the run's state decides the exit code`)
  const resume = CommandLine.resume(dir, { scripted: opts.scripted, yes: opts.yes, exitOnQuestion: opts.exitOnQuestion })
  return { exitCode, summary: { ...base, ...ExitSummary.waits(dir, state, resume), answer: transcript.text, wallTimeMs: Date.now() - started, errors, notes } }
}

/** Times `aircoding run` starts Main in one process: the first turn and at most two more. */
const MAX_MAIN_STARTS = 3

/**
 * Whether Main is started again after its turn ended, and with what: a run still at work (not waiting for
 * the user, not ended) is resumed; a first turn that failed before any run began is tried again with the
 * requirement when the provider's error is one waiting may cure (not a key, a model, a quota: only a person
 * fixes those; nor an engine that could not start); a first turn that ended well but started nothing is
 * told once, as any role that ends its turn without its report, the exact tool it must call (`nudged`: it was).
 */
export function mainAgain(
  state: SchedulerState | undefined,
  transcript: Pick<EngineTranscript, "errors" | "faults" | "exitCode">,
  requirement: string,
  nudged = false,
  exitOnQuestion = false,
): { prompt: string; note: string; nudge?: true } | undefined {
  const why = transcript.errors[0] ?? (transcript.exitCode !== 0 ? `the engine exited with code ${transcript.exitCode}` : "the main agent ended its turn without following the run")
  if (state && state.stage !== "idle") {
    if (headlessEnd(state, { exitOnQuestion }) !== undefined) return undefined
    return { prompt: RESUME_PROMPT, note: `${why}; the run was still at work (${state.stage}), so the main agent was started again to follow it` }
  }
  const quiet = transcript.exitCode === 0 && !transcript.errors.length && !transcript.faults.length
  if (quiet) return nudged ? undefined : { prompt: `${requirement}\n\n${SUBMIT_NUDGE}`, note: "the main agent ended its turn without starting a run, so it was told once to call air_submit", nudge: true }
  // Only a provider's error that waiting may cure: an engine that could not start (no model set up) fails the same way again.
  if (!transcript.faults.length || transcript.faults.some((f) => !f.retryable)) return undefined
  return { prompt: requirement, note: `${why}; no run had started, so the main agent was given the requirement again` }
}

export function printSummary(outcome: RunOutcome, json: boolean, dir?: string): void {
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
  const lang = langOf(dir ?? process.cwd())
  // Each question with the command that answers it, and what merged while they waited (issue 39 item 8).
  for (const line of ExitSummary.questionLines(s, lang)) process.stdout.write(Ui.yellow(line) + "\n")
  const cmd = `${CommandLine.name()} run${dir ? ` ${dir}` : ""}`
  if (s.stage === "confirming") {
    const [head, ...plan] = ExitSummary.planLines(s.plan, lang)
    process.stdout.write(Ui.yellow(head!) + "\n" + plan.map((l) => l + "\n").join(""))
    process.stdout.write(Ui.yellow(`Answer with:\n  ${cmd} --resume --answer "yes"\n  ${cmd} --resume --answer "change: <what to change>"\n`))
  } else if (outcome.exitCode === 2 && s.questions.length && !s.answerWith)
    process.stdout.write(Ui.yellow(`Answer with:\n  ${cmd} --resume --answer "<your answer>"\n`))
  for (const n of s.notes ?? []) process.stderr.write(`note: ${n}\n`)
  for (const e of s.errors) process.stderr.write(Ui.red(`error: ${e}\n`))
}

/** Said after the requirement to a Main whose first turn ended without starting the run. */
export const SUBMIT_NUDGE = "[AirCoding] Your last turn ended without starting the run. Call air_submit now with the requirement above (not this line)."

/** What Main is told when a run is resumed: the Scheduler resumes from its log when Main first listens. */
export const RESUME_PROMPT =
  "Resume the AirCoding run in this project: it was interrupted. Call air_listen now, and again after each answer, until it says RUN ENDED."

/** Pre-flight: every problem on stderr with its fix, exit 1 before the engine starts; notes as steps. */
async function preflight(dir: string, resume: boolean, json: boolean): Promise<number | undefined> {
  // A resumed run is past the door: only what would stop it again (its files, a live holder of its locks).
  const report = resume ? { problems: [...Preflight.files(dir), ...(await Preflight.locks(dir))], notes: [] } : await Preflight.check(dir)
  for (const note of report.notes) Ui.step(note)
  return refuse(report.problems, json)
}

function refuse(problems: readonly Preflight.Problem[], json: boolean): number | undefined {
  if (problems.length === 0) return undefined
  for (const p of problems) process.stderr.write(Ui.red("aircoding: ") + p.message + "\n" + `  fix: ${p.fix}\n`)
  // CI reads stdout: say it there too, in the summary's shape.
  if (json) process.stdout.write(JSON.stringify({ status: "error", runId: null, stage: "idle", tasks: [], questions: [], errors: problems.map((p) => `${p.message} (fix: ${p.fix})`), preflight: problems }, null, 2) + "\n")
  return 1
}

/** The run already in dir that a new requirement must not bury: one that waits for the user or was interrupted. */
export function openRun(dir: string): { state: SchedulerState; problem: Preflight.Problem } | undefined {
  const { state } = RunData.load(dir)
  if (!state.runId || state.stage === "idle") return undefined
  const status = runStatus(state)
  if (state.finished && !status.needsUser) return undefined
  const waits = status.needsUser
  const what = waits
    ? status.waitingFor.filter((w) => w.kind === "confirm" || w.kind === "question").map((w) => ViewText.waitingText("en", w)).join("; ")
    : `${status.word}, ${status.tasks.merged} of ${status.tasks.total} tasks merged`
  return { state, problem: Preflight.openRun(dir, { runId: state.runId, waits, confirm: state.stage === "confirming", what }, CommandLine.name()) }
}

export async function run(
  dirArg: string | undefined,
  opts: { yes: boolean; json: boolean; scripted?: string; resume?: boolean; fresh?: boolean; initGit?: boolean; answer?: string; exitOnQuestion?: boolean },
): Promise<number> {
  const dir = Args.projectDir(dirArg, "run")
  if (opts.initGit && opts.resume) throw new UsageError("--init-git starts a new run; it cannot be used with --resume", "run")
  if (opts.fresh && opts.resume) throw new UsageError("--new starts a new run; it cannot be used with --resume", "run")
  if (opts.answer !== undefined && !opts.resume) throw new UsageError(`--answer goes with --resume: ${CommandLine.name()} run [dir] --resume --answer "yes"`, "run")
  if (opts.resume) {
    const refused = await preflight(dir, true, opts.json)
    if (refused !== undefined) return refused
    if (opts.answer !== undefined) {
      const recorded = await Answer.record(dir, opts.answer)
      if (!opts.json) process.stderr.write(`${recorded}; resuming the run\n`)
    }
    const state = await finalState(dir)
    if (!state || state.stage === "idle") throw new UsageError(`no AirCoding run to resume in ${dir}; start one with: ${CommandLine.name()} run [dir] < requirement.txt`, "run")
    if (state.finished && state.questions.length === 0) {
      // Nothing left to do: say how it ended, as the run itself would have (the final check may have died with it).
      const final = state.finished.status === "done" && !state.finalCheck ? (FinalCheck.read(dir) ?? (await FinalCheck.run(dir))) : null
      const outcome = { exitCode: exitCodeOf(state, { final }), summary: { ...RunReport.summary(dir, state), answer: "", wallTimeMs: 0, errors: [] } }
      printSummary(outcome, opts.json, dirArg)
      return outcome.exitCode
    }
    const outcome = await headlessRun(dir, RESUME_PROMPT, opts)
    printSummary(outcome, opts.json, dirArg)
    return outcome.exitCode
  }
  const requirement = requirementOf(await readStdin())
  if (opts.initGit) Ui.step(await Preflight.initGit(dir))
  const open = openRun(dir)
  if (open && opts.fresh) Ui.step(await Preflight.archiveRun(dir, open.state.runId!, open.state.tasks.map((t) => t.id)))
  else if (open) return refuse([open.problem], opts.json)!
  const refused = await preflight(dir, false, opts.json)
  if (refused !== undefined) return refused
  const outcome = await headlessRun(dir, requirement, opts)
  printSummary(outcome, opts.json, dirArg)
  return outcome.exitCode
}

import { execFileSync } from "node:child_process"
import { cpSync, existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { FAULTS, type FaultName } from "@aircoding/scripted-model"
import { Paths } from "../../src/engine"
import { Proc } from "../../src/scheduler/runtime/process"
import { JsonLines } from "../../src/scheduler/runtime/store/jsonl"
import { transition } from "../../src/scheduler/core/machine"
import type { Event } from "../../src/scheduler/core/event.schema"
import { initialState } from "../../src/scheduler/core/state"
import { headlessEnd } from "../../src/text/run-status"
import { aircodingBin, bunBinary, makeSandbox } from "./sandbox"

/**
 * One seed of the chaos check: a real headless run (`aircoding run --yes --json`) of a scenario with the
 * scripted model's seeded faults, questions answered with `--resume --answer` up to a bound, and the
 * invariant judged on what the run left (exit codes, its JSON summary, its event log, git):
 * - it ends within the bound in exactly one of: exit 0 with every task merged exactly once and the
 *   integration branch built and tested; or exit 2 with questions each naming a cause, none raw JSON; or,
 *   when the provider refused the main agent's first request for good so that no run began, exit 1 saying
 *   so in words;
 * - never a hang, never exit 0 with a task unmerged, nothing the user committed lost, no task merged twice.
 */
export namespace Chaos {
  export const SCENARIOS = {
    demo: {
      file: "demo.json",
      requirement: "Extend calc with calc::mul(a, b) and calc::avg3(a, b, c) (integer average of three values), and cover both with tests.",
    },
    four: {
      file: "chaos-four.json",
      requirement: "Extend calc with calc::mul(a, b) and calc::avg3(a, b, c) (integer average of three values), and cover both with tests in a second phase.",
    },
  } as const
  export type ScenarioName = keyof typeof SCENARIOS

  /** The faults a seed draws from when none are named: every one, the whole set about 0.07 per scripted step. */
  export const DEFAULT_RATE = 0.07

  export type Options = {
    seed: number
    scenario: ScenarioName
    faults?: readonly FaultName[]
    /** The chance per scripted step that some fault strikes (split evenly over `faults`). */
    rate?: number
    /** Bound of each `aircoding run` process (a longer one is a hang). */
    processMs?: number
    /** How many `--resume --answer` rounds at most. */
    answers?: number
    inactivityMs?: number
    keep?: boolean
  }

  export type Round = { args: string[]; code: number; ms: number; timedOut: boolean; summary?: Summary; stderrTail: string }
  export type Summary = {
    status: string
    tasks: { id: string; state: string }[]
    questions: { questionId: string; text: string }[]
    final: { passed: boolean } | null
    stage?: string
    errors: string[]
  }
  export type Verdict = {
    seed: number
    scenario: ScenarioName
    ok: boolean
    /** `refused`: the provider refused the main agent's first request for good, so no run began (exit 1, in words). */
    outcome: "merged" | "questions" | "refused" | "violation"
    problems: string[]
    rounds: Round[]
    /** The faults the model injected, in request order: `fault@agent`. */
    faults: string[]
    ms: number
    /**
     * From the moment the run began to wait for the user (the event that opened its question, plan or blocked
     * task, in the log) to the exit 2 that asked it, when the first round ended so (issue 21 item 3: within 5 s).
     */
    questionLatencyMs?: number
    dir: string
  }

  const RAW_JSON = /\{\s*"|\\"|"\s*:\s*[{["\d]|\\\\n/

  /** A question names a cause when it says something past its id, and never in raw JSON. */
  export function questionProblem(text: string): string | undefined {
    if (RAW_JSON.test(text)) return `a question carries raw JSON: ${text.slice(0, 160)}`
    if (text.trim().length < 15) return `a question names no cause: "${text}"`
    return undefined
  }

  /** The answer a person would give a question: the first suggested answer that goes on, else "retry". */
  export function answerFor(summary: Summary): string {
    if (summary.stage === "confirming") return "yes"
    const text = summary.questions[0]?.text ?? ""
    // The suggested answers close the question ("Answer 'retry' or 'skip T-2'."); a cause quoted before them
    // may hold an apostrophe ("the model's maximum context…") that is no answer.
    const clause = text.slice(Math.max(0, text.lastIndexOf("Answer ")))
    const quoted = [...clause.matchAll(/['"“]([a-z][^'"”]{0,30})['"”]/gi)].map((m) => m[1]!)
    return quoted.find((a) => !/^(stop|skip|abort|cancel)\b/i.test(a)) ?? "retry"
  }

  export function scenarioWithChaos(name: ScenarioName, seed: number, faults: readonly FaultName[], rate: number, stallMs: number): object {
    const base = JSON.parse(readFileSync(join(Paths.scenarios, SCENARIOS[name].file), "utf8"))
    const p = faults.length ? rate / faults.length : 0
    return { ...base, chaos: { seed, faults: Object.fromEntries(faults.map((f) => [f, p])), retryAfterS: 2, stallMs } }
  }

  export async function runSeed(opts: Options): Promise<Verdict> {
    const started = Date.now()
    const sandbox = makeSandbox(`air-chaos-${opts.seed}-`)
    const dir = join(sandbox.root, "repo")
    cpSync(join(Paths.samples, "cpp-calc"), dir, { recursive: true })
    const git = (...args: string[]) => execFileSync("git", args, { cwd: dir, env: sandbox.env, encoding: "utf8" }).trim()
    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-q", "-m", "the user's sample")
    // The user's own work: it must survive the run, whatever the model does.
    writeFileSync(join(dir, "NOTES.md"), "the user's notes\n")
    git("add", "NOTES.md")
    git("commit", "-q", "-m", "the user's notes")
    const userCommit = git("rev-parse", "HEAD")

    const inactivityMs = opts.inactivityMs ?? 15_000
    const scenarioFile = join(sandbox.root, "scenario.json")
    const faults = opts.faults ?? FAULTS
    writeFileSync(scenarioFile, JSON.stringify(scenarioWithChaos(opts.scenario, opts.seed, faults, opts.rate ?? DEFAULT_RATE, inactivityMs + 5_000)))
    const modelLog = join(sandbox.root, "model.jsonl")
    const env = {
      ...sandbox.env,
      AIRCODING_SCRIPTED_LOG: modelLog,
      AIRCODING_INACTIVITY_MS: String(inactivityMs),
      AIRCODING_LISTEN_MS: "5000",
      AIRCODING_RETRY_MINUTES: "1",
    }
    const processMs = opts.processMs ?? 300_000
    const rounds: Round[] = []
    const exec = async (args: string[], input?: string): Promise<Round> => {
      const r = await Proc.run(bunBinary(), [aircodingBin, ...args], { cwd: dir, env: { ...env, PWD: dir }, input: input ?? "", timeoutMs: processMs, outputCap: Infinity })
      let summary: Summary | undefined
      try {
        summary = JSON.parse(r.stdout)
      } catch {}
      const round = { args, code: r.code ?? 128, ms: r.ms, timedOut: r.timedOut, summary, stderrTail: r.stderr.trim().split("\n").slice(-4).join(" | ").slice(0, 600) }
      rounds.push(round)
      return round
    }

    let last = await exec(["run", dir, "--yes", "--json", "--scripted", scenarioFile], SCENARIOS[opts.scenario].requirement)
    const waitedFrom = last.code === 2 ? waitingSince(dir) : undefined
    const questionLatencyMs = waitedFrom === undefined ? undefined : Date.now() - waitedFrom
    for (let i = 0; i < (opts.answers ?? 3) && last.code === 2 && last.summary && !last.timedOut; i++) {
      const answer = answerFor(last.summary)
      const next = await exec(["run", dir, "--resume", "--answer", answer, "--json", "--scripted", scenarioFile])
      // An answer the CLI cannot take (the question is not one --answer speaks to): the run stays as it was.
      if (next.code === 1 && !next.summary?.tasks?.length && /--answer|waits for no/.test(next.stderrTail)) break
      last = next
    }

    const problems = judge(dir, rounds, last, userCommit, git)
    const injected = existsSync(modelLog)
      ? readFileSync(modelLog, "utf8")
          .trim()
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { agent: string; fault?: string; ts: string })
      : []
    const faultLines = injected.filter((r) => r.fault).map((r) => `${r.fault}@${r.agent}`)
    const outcome = problems.length ? "violation" : last.code === 0 ? "merged" : last.code === 1 ? "refused" : "questions"
    const verdict: Verdict = {
      seed: opts.seed,
      scenario: opts.scenario,
      ok: problems.length === 0,
      outcome,
      problems,
      rounds,
      faults: faultLines,
      ms: Date.now() - started,
      questionLatencyMs,
      dir,
    }
    if (!opts.keep && verdict.ok) sandbox.cleanup()
    return verdict
  }

  /** When the run last began to wait for the user and has waited since, by its log (undefined: it does not wait). */
  function waitingSince(dir: string): number | undefined {
    let state = initialState()
    let since: number | undefined
    for (const event of JsonLines.read<Event>(join(dir, ".air", "local", "state", "events.jsonl"))) {
      const r = transition(state, event)
      if ("refused" in r) continue
      state = r.state
      if (headlessEnd(state) !== "waits") since = undefined
      else since ??= Date.parse(event.at)
    }
    return since
  }

  function judge(dir: string, rounds: Round[], last: Round, userCommit: string, git: (...a: string[]) => string): string[] {
    const problems: string[] = []
    for (const r of rounds) if (r.timedOut) problems.push(`hang: \`aircoding ${r.args.slice(0, 2).join(" ")}\` did not end within ${Math.round(r.ms / 1000)} s (${r.summary ? "" : "no summary; "}stderr: ${r.stderrTail})`)
    if (problems.length) return problems
    const s = last.summary
    if (!s) return [`exit ${last.code} with no JSON summary (stderr: ${last.stderrTail})`]
    const events = readEvents(dir)
    const merges = new Map<string, number>()
    for (const e of events) if (e.type === "merge.succeeded") merges.set(e.taskId, (merges.get(e.taskId) ?? 0) + 1)
    for (const [id, n] of merges) if (n > 1) problems.push(`${id} merged ${n} times`)
    try {
      git("merge-base", "--is-ancestor", userCommit, "main")
    } catch {
      problems.push("the user's commit is no longer on main")
    }
    if (last.code === 0) {
      const unmerged = s.tasks.filter((t) => t.state !== "merged")
      if (!s.tasks.length) problems.push("exit 0 with no task")
      if (unmerged.length) problems.push(`exit 0 with tasks unmerged: ${unmerged.map((t) => `${t.id} ${t.state}`).join(", ")}`)
      for (const t of s.tasks) if (t.state === "merged" && !merges.get(t.id)) problems.push(`${t.id} is merged in the summary but has no merge.succeeded`)
      if (!s.final?.passed) problems.push("exit 0 but the integration branch was not built and tested (final check)")
    } else if (last.code === 2) {
      const asks = s.questions.length + (s.stage === "confirming" ? 1 : 0)
      if (!asks) problems.push(`exit 2 with no question (status ${s.status})`)
      for (const q of s.questions) {
        const p = questionProblem(q.text)
        if (p) problems.push(`${q.questionId}: ${p}`)
      }
    } else if (!(last.code === 1 && refusedBeforeAnyRun(events, s))) problems.push(`exit ${last.code}: ${s.errors.join(" | ").slice(0, 300) || last.stderrTail}`)
    return problems
  }

  /**
   * Exit 1 is the headless rule's "an error that left the work undone": here, no run began because the
   * provider refused the main agent's first request for good (a key, a model, a quota), or the main agent
   * ended its turn without starting one — said in words, no JSON.
   */
  function refusedBeforeAnyRun(events: any[], s: Summary): boolean {
    return !events.some((e) => e.type === "run.started") && s.errors.length > 0 && s.errors.every((e) => !RAW_JSON.test(e) && /^the main agent('s model request failed| ended its turn without starting a run)/.test(e))
  }

  export function readEvents(dir: string): any[] {
    const file = join(dir, ".air", "local", "state", "events.jsonl")
    if (!existsSync(file)) return []
    return readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .filter(Boolean)
      .flatMap((l) => {
        try {
          return [JSON.parse(l)]
        } catch {
          return []
        }
      })
  }

  /** Runs `seeds` with at most `parallel` at once; calls `each` as each ends. */
  export async function runMany(seeds: Options[], parallel: number, each?: (v: Verdict) => void): Promise<Verdict[]> {
    const out: Verdict[] = []
    let next = 0
    const worker = async () => {
      while (next < seeds.length) {
        const opts = seeds[next++]!
        const v = await runSeed(opts)
        out.push(v)
        each?.(v)
      }
    }
    await Promise.all(Array.from({ length: Math.max(1, parallel) }, worker))
    return out.sort((a, b) => a.seed - b.seed || a.scenario.localeCompare(b.scenario))
  }

  /** One line per seed: what it did, and for a failing one the faults and the run's path. */
  export function describe(v: Verdict): string {
    const codes = v.rounds.map((r) => (r.timedOut ? "hang" : String(r.code))).join("→")
    const head = `seed ${String(v.seed).padStart(4)} ${v.scenario.padEnd(4)} ${v.ok ? "ok  " : "FAIL"} ${v.outcome.padEnd(9)} exit ${codes.padEnd(7)} ${(v.ms / 1000).toFixed(0).padStart(4)} s  faults: ${v.faults.join(", ") || "none"}`
    return v.ok ? head : `${head}\n      ${v.problems.join("\n      ")}\n      kept at ${v.dir}`
  }

  /** Failing seeds grouped by their first problem's kind and the first fault, for the report. */
  export function summary(verdicts: Verdict[]): string {
    const ok = verdicts.filter((v) => v.ok).length
    const groups = new Map<string, number[]>()
    for (const v of verdicts.filter((x) => !x.ok)) {
      const kind = (v.problems[0] ?? "").replace(/T-\d+/g, "T-n").replace(/\d+/g, "N").slice(0, 90)
      const key = `${kind} ⟵ ${v.faults[0] ?? "no fault"}`
      groups.set(key, [...(groups.get(key) ?? []), v.seed])
    }
    const lines = [`${ok}/${verdicts.length} seeds met the invariant (${verdicts.filter((v) => v.outcome === "merged").length} merged, ${verdicts.filter((v) => v.outcome === "questions").length} ended with questions, ${verdicts.filter((v) => v.outcome === "refused").length} refused before any run)`]
    for (const [key, seeds] of groups) lines.push(`  ${seeds.length} × ${key}   seeds ${seeds.join(",")}`)
    return lines.join("\n")
  }
}

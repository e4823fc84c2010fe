/**
 * Crash and resume, by hand or from a test: starts `aircoding run` on a small plan (three independent
 * docs tasks, a toolchain of `true`), kills the whole process tree (aircoding, the engine, the scripted
 * model) with SIGKILL at random moments, resumes with `aircoding run --resume`, and at the end lets the
 * run finish and checks that every task was merged exactly once and the integration branch builds.
 *
 *   bun packages/opencode/scripts/kill-loop.ts [--kills N] [--min-ms A] [--max-ms B] [--seed S] [--keep]
 */
import { spawn, execFileSync } from "node:child_process"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { aircodingBin, bunBinary, makeSandbox, type Sandbox } from "../test/support/sandbox"
import { passingReviewer, readJsonl, trivialProject } from "../test/support/runs"
import { writeScenario } from "../test/support/engine"
import { rngFrom } from "../test/scheduler/simulate"

export const REQUIREMENT = "Write three notes: alpha, beta and gamma."
export const TASK_IDS = ["T-1", "T-2", "T-3"]

const tasks = TASK_IDS.map((id, i) => ({
  id,
  title: `Write note ${["alpha", "beta", "gamma"][i]}`,
  kind: "docs",
  writeSet: [{ path: `notes/${id}.md`, action: "create" }],
  doneWhen: `notes/${id}.md exists`,
}))

export const scenario = {
  name: "kill-loop",
  scripts: [
    { agent: "main", match: "^Resume the AirCoding run", steps: [{ tool: "air_listen", args: {}, until: "RUN ENDED" }, { text: "Resumed to the end." }] },
    { agent: "main", steps: [{ tool: "air_submit", args: { requirement: REQUIREMENT } }, { tool: "air_listen", args: {}, until: "RUN ENDED" }, { text: "Done." }] },
    { agent: "architect", match: "^Requirement:", steps: [{ tool: "air_propose", args: { summary: "Three independent notes." } }, { tool: "air_plan", args: { tasks } }, { text: "Planned." }] },
    {
      agent: "executor",
      match: "^Task (?<id>T-\\d+):",
      steps: [
        // Idempotent: a session started again after a kill finds its earlier work and keeps it.
        { tool: "bash", args: { command: 'mkdir -p notes && echo "note {{id}}" > notes/{{id}}.md && git add -A && (git diff --cached --quiet || git commit -q -m "note {{id}}")', description: "write and commit" } },
        { tool: "air_report", args: { summary: "Wrote notes/{{id}}.md." } },
        { text: "Reported." },
      ],
    },
    // Only if a gate failed after a kill: the debugger finds the note committed and reports.
    { agent: "debugger", match: "^Task (?<id>T-\\d+):", steps: [{ tool: "bash", args: { command: "git status --short; git log --oneline -3", description: "evidence" } }, { tool: "air_report", args: { summary: "Checked the note." } }, { text: "Reported." }] },
    passingReviewer,
  ],
}

export type Attempt = { kind: "start" | "resume"; delayMs: number | null; code: number | null; killed: boolean; ms: number }
export type LoopResult = { project: string; attempts: Attempt[]; kills: number; final: { code: number | null; stdout: string; stderr: string }; problems: string[] }

function size(file: string): number {
  try {
    return statSync(file).size
  } catch {
    return 0
  }
}

/** Whether the model log got, after `offset`, a request of an agent at work (title requests do not count). */
function working(file: string, offset: number): boolean {
  if (size(file) <= offset) return false
  const text = readFileSync(file).subarray(offset).toString("utf8")
  return text.split("\n").some((line) => line.includes('"agent":"') && !line.includes('"agent":"title"'))
}

/**
 * Runs aircoding in its own process group. With `killAfterMs`, the group is killed that long after the new
 * process first talks to the model (its engine is up and working): the moments a kill can hurt, not the
 * seconds of start-up, which cost nothing to lose. Never armed within `armCapMs`: killed then anyway.
 */
/**
 * What arms the kill timer: the first request of a working agent, the next event of a type in the log, a file
 * holding a text, or a test's own reading of the moment (`when`, asked every 50 ms with the aircoding process's pid:
 * a capture's processes up, which no file announces).
 */
export type Trigger = { kind: "request" } | { kind: "event"; type: string } | { kind: "file"; path: string; contains: string } | { kind: "when"; ready: (pid: number) => boolean }
export const TRIGGER_EVENTS = ["task.dispatched", "worker.reported", "gates.started", "gates.passed", "review.started", "merge.started", "merge.succeeded"]

const eventCount = (project: string, type: string) => readJsonl(join(project, ".air/local/state/events.jsonl")).filter((e) => e.type === type).length

/**
 * `killProcessOnly`: the kill reaches the aircoding process alone, as `kill -9 <pid>`, an OOM killer or a CI timeout
 * would, not its process group; what it started must then end by itself (the engine watches its launcher). The
 * group's survivors, a second after the exit, are returned in `survivors` (and then ended).
 */
export function runOnce(
  sandbox: Sandbox,
  project: string,
  args: string[],
  input: string | null,
  killAfterMs: number | null,
  timeoutMs: number,
  trigger: Trigger = { kind: "request" },
  armCapMs = 120_000,
  opts: { killProcessOnly?: boolean } = {},
) {
  const modelLog = join(sandbox.root, "model.jsonl")
  return new Promise<{ code: number | null; killed: boolean; stdout: string; stderr: string; survivors: string[] }>((resolve) => {
    const child = spawn(bunBinary(), [aircodingBin, ...args], {
      cwd: project,
      env: { ...sandbox.env, AIRCODING_SCRIPTED_LOG: modelLog, AIRCODING_INACTIVITY_MS: "20000", AIRCODING_LISTEN_MS: "600000" },
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    })
    let stdout = ""
    let stderr = ""
    let killed = false
    child.stdout!.on("data", (d) => (stdout += d))
    child.stderr!.on("data", (d) => (stderr += d))
    child.stdin!.end(input ?? "")
    const kill = () => {
      killed = true
      try {
        process.kill(opts.killProcessOnly ? child.pid! : -child.pid!, "SIGKILL")
      } catch {}
    }
    let timer = setTimeout(kill, killAfterMs === null ? timeoutMs : armCapMs)
    const before = size(modelLog)
    const eventsBefore = trigger.kind === "event" ? eventCount(project, trigger.type) : 0
    const armed = () =>
      trigger.kind === "request"
        ? working(modelLog, before)
        : trigger.kind === "file"
          ? fileHas(trigger.path, trigger.contains)
          : trigger.kind === "when"
            ? trigger.ready(child.pid!)
            : eventCount(project, trigger.type) > eventsBefore
    const arm =
      killAfterMs === null
        ? undefined
        : setInterval(() => {
            if (!armed()) return
            clearInterval(arm)
            clearTimeout(timer)
            timer = setTimeout(kill, killAfterMs)
          }, 50)
    child.on("exit", (code) => {
      clearTimeout(timer)
      if (arm) clearInterval(arm)
      const endGroup = () => {
        // Whatever is left of the group (the engine) goes too, so no orphan keeps a lock.
        const survivors = groupMembers(child.pid!)
        try {
          process.kill(-child.pid!, "SIGKILL")
        } catch {}
        setTimeout(() => resolve({ code, killed, stdout, stderr, survivors }), 200)
      }
      // Killed alone, its children get the moment they need to notice and end by themselves.
      if (killed && opts.killProcessOnly) setTimeout(endGroup, 1_500)
      else endGroup()
    })
  })
}

/** The command lines of the processes of group `pgid` still alive (Linux /proc; none elsewhere). */
function groupMembers(pgid: number): string[] {
  const found: string[] = []
  let entries: string[] = []
  try {
    entries = readdirSync("/proc")
  } catch {}
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8")
      // Fields after the command's closing parenthesis: state, ppid, pgrp. A zombie has ended (only not yet reaped),
      // and a process with no command line is ending (its memory is gone): a member the group's SIGKILL just reached.
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      const command = readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0/g, " ").trim()
      if (Number(pgrp) === pgid && state !== "Z" && command) found.push(command)
    } catch {}
  }
  return found
}

function fileHas(file: string, text: string): boolean {
  try {
    return readFileSync(file, "utf8").includes(text)
  } catch {
    return false
  }
}

const started = (project: string) => readJsonl(join(project, ".air/local/state/events.jsonl")).some((e) => e.type === "run.started")

export async function killLoop(opts: { kills: number; minMs: number; maxMs: number; seed: number; sandbox?: Sandbox; finalTimeoutMs?: number; log?: (s: string) => void }): Promise<LoopResult> {
  const sandbox = opts.sandbox ?? makeSandbox("air-kill-")
  const scenarioFile = writeScenario(sandbox, scenario)
  const random = rngFrom(opts.seed)
  const attempts: Attempt[] = []
  const log = opts.log ?? (() => {})
  const problems: string[] = []
  let kills = 0
  let project = ""
  let final = { code: 0 as number | null, stdout: "", stderr: "" }
  // A run that ends before all kills are spent is checked, and the kills go on in a fresh project.
  for (let round = 1; kills < opts.kills; round++) {
    project = trivialProject(sandbox, { "README.md": "# Notes\n" }, { build: ["true"], test: ["test -f README.md"] }, `proj-${round}`)
    const args = (resume: boolean) => ["run", project, "--yes", "--json", "--scripted", scenarioFile, ...(resume ? ["--resume"] : [])]
    let done = false
    while (kills < opts.kills) {
      const resume = started(project)
      // Half the kills come at a random moment after the process starts working, half just after a chosen
      // step of the Scheduler (a dispatch, the gates, a merge) lands in the log, to hit those moments often.
      const trigger: Trigger = random() < 0.5 ? { kind: "request" } : { kind: "event", type: TRIGGER_EVENTS[Math.floor(random() * TRIGGER_EVENTS.length)]! }
      const delayMs = trigger.kind === "request" ? Math.round(opts.minMs + random() * (opts.maxMs - opts.minMs)) : Math.round(random() * 1500)
      const t0 = Date.now()
      const out = await runOnce(sandbox, project, args(resume), resume ? null : REQUIREMENT, delayMs, 600_000, trigger)
      attempts.push({ kind: resume ? "resume" : "start", delayMs, code: out.code, killed: out.killed, ms: Date.now() - t0 })
      if (out.killed) kills++
      const what = trigger.kind === "request" ? "its first model request" : trigger.type
      log(`round ${round} ${resume ? "resume" : "start "} kill ${delayMs} ms after ${what}: ${out.killed ? "killed" : `ended (exit ${out.code})`} after ${Date.now() - t0} ms; events: ${readJsonl(join(project, ".air/local/state/events.jsonl")).length}`)
      if (!out.killed && safeJson(out.stdout)?.status === "done") {
        final = out
        done = true
        break
      }
    }
    if (!done) {
      for (let i = 0; i < 3; i++) {
        const resume = started(project)
        const t0 = Date.now()
        const out = await runOnce(sandbox, project, args(resume), resume ? null : REQUIREMENT, null, opts.finalTimeoutMs ?? 600_000)
        attempts.push({ kind: resume ? "resume" : "start", delayMs: null, code: out.code, killed: out.killed, ms: Date.now() - t0 })
        final = out
        log(`round ${round} final ${resume ? "resume" : "start"}: exit ${out.code}`)
        if (safeJson(out.stdout)?.status === "done") break
      }
    }
    problems.push(...check(project, safeJson(final.stdout)).map((p) => `round ${round}: ${p}`))
  }
  return { project, attempts, kills, final, problems }
}

function safeJson(text: string): any {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** What must hold at the end, whatever the kills did. */
export function check(project: string, summary: any): string[] {
  const problems: string[] = []
  const git = (...a: string[]) => execFileSync("git", a, { cwd: project, encoding: "utf8" }).trim()
  if (summary?.status !== "done") problems.push(`the run ended ${summary?.status ?? "without a summary"}`)
  if (summary && summary.final?.passed !== true) problems.push(`the final check of the integration branch: ${summary.final?.summary ?? "did not run"}`)
  const tags = git("tag", "--list", "air/done/*").split("\n").filter(Boolean).sort()
  if (JSON.stringify(tags) !== JSON.stringify(TASK_IDS.map((id) => `air/done/${id}`))) problems.push(`tags: ${tags.join(", ")}`)
  const trailers = git("log", "main", "--format=%(trailers:key=Air-Task,valueonly)").split("\n").filter(Boolean)
  for (const id of TASK_IDS) {
    const n = trailers.filter((t) => t.trim() === id).length
    if (n !== 1) problems.push(`${id} has ${n} squash commit(s) on main`)
    let text = ""
    try {
      text = git("show", `main:notes/${id}.md`)
    } catch {}
    if (text !== `note ${id}`) problems.push(`notes/${id}.md is not on main`)
  }
  const events = readJsonl(join(project, ".air/local/state/events.jsonl"))
  for (const id of TASK_IDS) {
    const merged = events.filter((e) => e.type === "merge.succeeded" && e.taskId === id).length
    if (merged !== 1) problems.push(`${id}: ${merged} merge.succeeded events`)
  }
  const blocked = events.filter((e) => e.type === "worker.failed" || (e.type === "timer.fired" && e.kind === "inactivity"))
  if (blocked.length > 0) problems.push(`sessions failed or stalled: ${blocked.map((e) => `${e.type}:${e.taskId}`).join(", ")}`)
  if (readFileSync(join(project, "README.md"), "utf8") !== "# Notes\n") problems.push("README.md changed")
  return problems
}

if (import.meta.main) {
  const arg = (name: string, dflt: number) => {
    const i = process.argv.indexOf(`--${name}`)
    return i >= 0 ? Number(process.argv[i + 1]) : dflt
  }
  const keep = process.argv.includes("--keep")
  const sandbox = makeSandbox("air-kill-")
  const result = await killLoop({ kills: arg("kills", 50), minMs: arg("min-ms", 0), maxMs: arg("max-ms", 8000), seed: arg("seed", Date.now() % 100000), sandbox, log: (s) => console.log(s) })
  console.log(`${result.kills} kills; ${result.problems.length ? `PROBLEMS:\n- ${result.problems.join("\n- ")}` : "every task merged exactly once, integration branch green"}`)
  if (keep || result.problems.length) console.log(`project kept at ${result.project}`)
  else sandbox.cleanup()
  process.exit(result.problems.length ? 1 : 0)
}

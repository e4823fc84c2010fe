import { readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { aircoding, writeScenario } from "../support/engine"
import { passingReviewer, planningArchitect, readJsonl, trivialProject, writeAndReport } from "../support/runs"
import { runOnce } from "../../scripts/kill-loop"

/**
 * Status after a SIGKILL (issue 39 item 3): `aircoding run` — the CLI, its engine and the scripted model, as one
 * process group — is killed while T-1's test gate runs (a CTest-like line, then a silent wait). What it left
 * behind (the progress file of the running gate, jobs.json with the test command holding its jobs) must not
 * read as a run at work: `aircoding status` and `--json` say "interrupted", print the exact command that
 * resumes the run, and show no running gate and no job in use. Then that command, typed as printed, resumes
 * the run to its end: T-1 merges, exit 0, and status says done. Before the kill, while the baseline's test command
 * is silent, status is read twice: the baseline shows its step and count like a gate, and its time goes on
 * (issue 39 item 4) though the tool wrote nothing between the reads.
 */
const requirement = "Add a note."
const tasks = [{ id: "T-1", title: "Write the note", kind: "build", writeSet: [{ path: "notes/one.md", action: "create" }], doneWhen: "notes/one.md exists" }]

const scenario = {
  name: "status-after-kill",
  scripts: [
    { agent: "main", match: "^Resume the AirCoding run", steps: [{ tool: "air_listen", args: {}, until: "RUN ENDED" }, { text: "Resumed to the end." }] },
    { agent: "main", steps: [{ tool: "air_submit", args: { requirement } }, { tool: "air_listen", args: {}, until: "RUN ENDED" }, { text: "Done." }] },
    planningArchitect("One note.", tasks),
    { agent: "executor", match: "^Task T-1:", steps: writeAndReport("notes/one.md", "# one\n", "note one") },
    passingReviewer,
  ],
}

let sandbox: Sandbox
let project: string
let scenarioFile: string
let killed: Awaited<ReturnType<typeof runOnce>>
let eventsAtKill: any[] = []
let baselineReads: any[] = []
let statusJson: { code: number; stdout: string; stderr: string }
let statusText: { code: number; stdout: string; stderr: string }
let resumed: Awaited<ReturnType<typeof runOnce>>
let resumeArgs: string[] = []
let after: { code: number; stdout: string; stderr: string }

beforeAll(async () => {
  sandbox = makeSandbox("air-status-kill-")
  // The test command prints a CTest line, then is silent for a while: the kill lands while it runs in T-1's gate.
  // In the baseline's worktree it is silent for longer: `aircoding status` is read twice meanwhile.
  const test = "echo '1/2 Test  #1: first ....   Passed    0.01 sec'; case \"$(pwd)\" in */.air/local/baseline/*) sleep 20;; *) sleep 6;; esac"
  project = trivialProject(sandbox, { "README.md": "# notes\n" }, { build: ["true"], test: [test] })
  scenarioFile = writeScenario(sandbox, scenario)
  const progressFile = join(project, ".air/local/state/progress/T-1.json")
  const run = runOnce(sandbox, project, ["run", project, "--yes", "--json", "--scripted", scenarioFile], requirement, 1500, 300_000, { kind: "file", path: progressFile, contains: '"gate":"test"' }, 480_000)
  let running = true
  void run.finally(() => (running = false))
  baselineReads = await readsDuringBaseline(() => running)
  killed = await run
  eventsAtKill = readJsonl(join(project, ".air/local/state/events.jsonl"))
  statusJson = await aircoding(["status", project, "--json"], { cwd: project, env: sandbox.env, timeoutMs: 120_000 })
  statusText = await aircoding(["status", project], { cwd: project, env: sandbox.env, timeoutMs: 120_000 })
  const view = JSON.parse(statusJson.stdout)
  // The command as printed: its first word is how the user starts AirCoding (`aircoding`); here that is bun and the CLI.
  const words = String(view.resume ?? "").split(" ")
  if (words[0] === "aircoding") {
    resumeArgs = words.slice(1)
    resumed = await runOnce(sandbox, project, resumeArgs, null, null, 600_000)
  }
  after = await aircoding(["status", project, "--json"], { cwd: project, env: sandbox.env, timeoutMs: 120_000 })
}, 1_500_000)

afterAll(() => sandbox?.cleanup())

/**
 * `aircoding status --json` twice, a second or more apart, while the baseline's test command is silent (after its
 * one line of output, its progress file written): what the status said of the baseline each time.
 */
async function readsDuringBaseline(running: () => boolean): Promise<any[]> {
  const file = join(project, ".air/local/state/progress/_baseline.json")
  const reads: any[] = []
  while (running() && reads.length < 2) {
    let text = ""
    try {
      text = readFileSync(file, "utf8")
    } catch {}
    if (!text.includes('"done":1')) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      continue
    }
    const r = await aircoding(["status", project, "--json"], { cwd: project, env: sandbox.env, timeoutMs: 120_000 })
    reads.push(JSON.parse(r.stdout).checks?.[0] ?? null)
    await new Promise((resolve) => setTimeout(resolve, 1000))
  }
  return reads
}

describe("aircoding status after a SIGKILL mid-gate", () => {
  test("the run was killed while T-1's test gate ran", () => {
    expect(killed.killed, killed.stderr.slice(-2000)).toBe(true)
    expect(eventsAtKill.filter((e) => e.type === "gates.started").map((e) => e.taskId)).toEqual(["T-1"])
    expect(eventsAtKill.some((e) => e.type === "gates.passed" || e.type === "gates.failed")).toBe(false)
  })

  test("while the baseline's test command is silent, status shows its step and count, and its time goes on", () => {
    expect(baselineReads).toHaveLength(2)
    const [first, second] = baselineReads
    expect(first).toMatchObject({ check: "baseline", gate: "test", done: 1, total: 2 })
    expect(second).toMatchObject({ check: "baseline", gate: "test", done: 1, total: 2 })
    // The tool wrote nothing between the reads (the file's time is the same): the elapsed time moved anyway.
    expect(second.updatedAt).toBe(first.updatedAt)
    expect(second.elapsedMs).toBeGreaterThanOrEqual(first.elapsedMs + 1000)
  })

  test("--json: interrupted, the exact resume command, no running gate, no job in use", () => {
    expect(statusJson.code, statusJson.stderr).toBe(0)
    const view = JSON.parse(statusJson.stdout)
    expect(view.status).toBe("interrupted")
    expect(view.resume).toBe(`aircoding run ${project} --resume --yes --scripted ${scenarioFile}`)
    expect(view.waitingFor).toEqual([{ kind: "interrupted", resume: view.resume }])
    expect(view.tasks.find((t: any) => t.id === "T-1")?.state).toBe("gating")
    expect(view.tasks.filter((t: any) => t.progress)).toEqual([])
    expect(view.budgets.active).toBe(0)
    if (view.budgets.jobs) expect(view.budgets.jobs).toMatchObject({ inUse: 0, waiting: 0 })
  })

  test("the text says interrupted and how to resume, with no gate running", () => {
    expect(statusText.code, statusText.stderr).toBe(0)
    expect(statusText.stdout).toMatch(/— interrupted$/m)
    // The command on a line of its own, whole: copied from the terminal, it works.
    expect(statusText.stdout.split("\n")).toContain(`    aircoding run ${project} --resume --yes --scripted ${scenarioFile}`)
    expect(statusText.stdout).not.toMatch(/T-1: test /)
    expect(statusText.stdout).not.toMatch(/jobs: [1-9]\d* of/)
  })

  test("the printed command resumes the run: T-1 merges once, exit 0, and status says done", () => {
    expect(resumeArgs.length, statusJson.stdout).toBeGreaterThan(0)
    expect(resumed.killed, resumed.stderr.slice(-3000)).toBe(false)
    expect(resumed.code, resumed.stderr.slice(-3000)).toBe(0)
    const events = readJsonl(join(project, ".air/local/state/events.jsonl"))
    expect(events.filter((e) => e.type === "merge.succeeded").map((e) => e.taskId)).toEqual(["T-1"])
    const view = JSON.parse(after.stdout)
    expect(view.status).toBe("done")
    expect(view.resume).toBeUndefined()
  })
})

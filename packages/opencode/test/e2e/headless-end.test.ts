import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { aircoding } from "../support/engine"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { passingReviewer, planningArchitect, runScenario, shellStep, trivialProject, type RunResult } from "../support/runs"
import { CALC_CPP, legacyFailureFiles } from "../runtime/cpp-repo"

/**
 * A headless run ends on the Scheduler's state, not on Main's turn (issue 21 item 3), with the real engine
 * and the scripted model. Main here never ends its turn on its own: it listens until "RUN ENDED", and its
 * script has no step after that, so its last request gets the scripted model's HTTP 400 ("steps
 * exhausted"). The product's window for Main to answer is used (AIRCODING_HEADLESS_ANSWER_MS unset).
 * (a) a baseline that does not build (real cmake): exit 2 with the baseline's question, naming the failed
 *     command and the compiler's first error, while Main still listens, nothing dispatched;
 * (b) a new requirement on that repository: refused, exit 1, naming the run and both ways on; --new
 *     archives it and starts again;
 * (c) the plan waits (exit 2, the plan in --json), a change makes a new Architect, shown its proposal and
 *     the user's words, propose a second time (exit 2 again), "yes" merges everything: exit 0 although
 *     Main's last request failed with a 400. (The same plan confirmed in conversation: confirm.test.ts.)
 */
const requirement = "Document the app."
const change = "Split the docs in two."
const tasks = [{ id: "T-1", title: "Document the install", kind: "docs", writeSet: [{ path: "docs/install.md", action: "create" }], doneWhen: "docs/install.md exists" }]
const planV1 = "Plan v1: one task writes docs/install.md."
const planV2 = "Plan v2: the same task, in two paragraphs."
/** A decision recorded with the first proposal: the plan that waits carries it (issue 39 item 7). */
const adr = { id: "ADR-1", title: "Docs are Markdown under docs/", status: "accepted", body: "Every document is a Markdown file under docs/." }

/** Main listens until the run ends and has nothing after it: its last request is a 400. */
const listeningMain = [
  { agent: "main", match: "^Resume the AirCoding run", steps: [{ tool: "air_listen", args: {}, until: "RUN ENDED" }] },
  { agent: "main", steps: [{ tool: "air_submit", args: { requirement } }, { tool: "air_listen", args: {}, until: "RUN ENDED" }] },
]
const architect = [
  // A new Architect (each resume is a new process) is shown its proposal and the user's words.
  {
    agent: "architect",
    match: "Your proposed plan[\\s\\S]*asked for changes",
    steps: [{ tool: "air_propose", args: { summary: planV2 }, expect: { lastUserIncludes: [planV1, change] } }, { text: "Proposed again." }],
  },
  {
    agent: "architect",
    match: "Your proposed plan[\\s\\S]*confirmed this plan",
    steps: [{ tool: "air_plan", args: { tasks }, expect: { lastUserIncludes: [planV2] } }, { text: "Planned." }],
  },
  {
    agent: "architect",
    match: "^Requirement:",
    steps: [{ tool: "air_adr", args: adr }, { tool: "air_propose", args: { summary: planV1 } }, { tool: "air_plan", args: { tasks } }, { text: "Planned." }],
  },
]
const executor = {
  agent: "executor",
  match: "^Task T-1:",
  steps: [shellStep("mkdir -p docs && echo 'Install: make' > docs/install.md && git add -A && git commit -qm install"), { tool: "air_report", args: { summary: "done" } }, { text: "Reported." }],
}
const scenario = { name: "headless-end", scripts: [...listeningMain, ...architect, executor, passingReviewer] }
const env = { AIRCODING_HEADLESS_ANSWER_MS: "" }
const cmake = { build: ["cmake -S . -B .air-build -G Ninja", "cmake --build .air-build"], test: ["ctest --test-dir .air-build --output-on-failure"] }

let sandbox: Sandbox
let broken: string
let docs: string
const baseline: RunResult[] = []
const plan: RunResult[] = []
let refused: Awaited<ReturnType<typeof aircoding>>
let fresh: RunResult

async function headlessRun(project: string, opts: Parameters<typeof runScenario>[3]): Promise<RunResult> {
  return runScenario(sandbox, project, scenario, { ...opts, env })
}

/**
 * Where Main was when the process ended. Each air_listen lasts up to 10 minutes here (AIRCODING_LISTEN_MS in
 * runScenario), the stall; it returns earlier only with news. Had the process waited for Main's turn, a listen
 * would have run out ("No news yet", in Main's next request) or Main's turn would have ended after it. Main's
 * last request calling air_listen and no listen run out: the process ended while Main still listened, so only
 * the Scheduler's state could have ended it.
 */
function mainAtTheEnd(r: RunResult): { lastCall: string[] | undefined; listensRunOut: number } {
  const main = r.modelLog.filter((l) => l.agent === "main" && l.script !== "auto-title")
  return { lastCall: main.at(-1)?.reply?.tools, listensRunOut: main.filter((l) => /^No news yet/.test(l.lastToolResult ?? "")).length }
}
const stillListening = { lastCall: ["air_listen"], listensRunOut: 0 }

beforeAll(async () => {
  sandbox = makeSandbox("air-headless-end-")
  // A real CMake project whose calc.cpp does not compile: the question must carry cmake's command and first error.
  broken = trivialProject(sandbox, legacyFailureFiles({ calc: CALC_CPP.replace("return a + b;", "return a + missing_b;") }), cmake, "broken")
  docs = trivialProject(sandbox, { "README.md": "# App\n" }, {}, "docs")
  await Promise.all([
    (async () => {
      baseline.push(await headlessRun(broken, { input: requirement, name: "baseline" }))
      refused = await aircoding(["run", broken], { cwd: broken, env: sandbox.env, input: "Another requirement.", timeoutMs: 120_000 })
      fresh = await runScenario(sandbox, broken, scenario, { input: requirement, yes: false, name: "fresh", args: ["--new"], env })
    })(),
    (async () => {
      plan.push(await headlessRun(docs, { input: requirement, yes: false, name: "plan-1" }))
      plan.push(await headlessRun(docs, { input: "", yes: false, name: "plan-2", args: ["--resume", "--answer", `change: ${change}`] }))
      plan.push(await headlessRun(docs, { input: "", yes: false, name: "plan-3", args: ["--resume", "--answer", "yes"] }))
    })(),
  ])
}, 1_200_000)

afterAll(() => sandbox?.cleanup())

describe("(a) a baseline that does not build", () => {
  test("exit 2 with the baseline's question in --json, while Main still listens", () => {
    const r = baseline[0]!
    expect(r.code, r.stderr.slice(-3000)).toBe(2)
    expect(r.events.find((e) => e.type === "baseline.done")).toMatchObject({ status: "failed", buildFailed: true, failingTests: [] })
    expect(r.summary.status).toBe("waiting")
    expect(r.summary.questions.map((q: any) => q.questionId)).toEqual(["baseline:1:question"])
    expect(r.summary.waitingFor).toEqual([expect.objectContaining({ kind: "question", questionId: "baseline:1:question" })])
    expect(r.summary.errors).toEqual([])
    expect(mainAtTheEnd(r)).toEqual(stillListening)
  })

  test("nothing was dispatched; the one question names the command that failed and the compiler's first error", () => {
    const r = baseline[0]!
    expect(r.events.filter((e) => e.type === "task.dispatched")).toEqual([])
    expect(r.summary.questions).toEqual([
      { questionId: "baseline:1:question", text: expect.stringMatching(/does not build: `cmake --build \.air-build` failed: .*calc\.cpp:\d+:\d+: error: .*missing_b[\s\S]*"go on"/) },
    ])
    expect(r.modelLog.filter((l) => l.agent === "debugger" || l.agent === "executor")).toEqual([])
  })
})

describe("(b) a new requirement where a run waits", () => {
  test("is refused with exit 1, naming the run, what it waits for, and both commands", () => {
    const runId = baseline[0]!.summary.runId
    expect(refused.code, refused.stderr).toBe(1)
    expect(refused.stderr).toContain(`the run ${runId} in ${broken} waits for your answer:`)
    expect(refused.stderr).toContain("does not build")
    expect(refused.stderr).toContain(`aircoding run ${broken} --resume --answer "<your answer>"`)
    expect(refused.stderr).toContain(`aircoding run ${broken} --new < requirement.txt (its log and evidence are kept under .air/local/archive/${runId}/)`)
  })

  test("--new archives the old run's log and evidence and starts a new run", () => {
    const runId = baseline[0]!.summary.runId
    expect(fresh.code, fresh.stderr.slice(-3000)).toBe(2)
    expect(fresh.stderr).toContain(`archived the run ${runId} under .air/local/archive/${runId}/`)
    expect(fresh.summary.runId).not.toBe(runId)
    expect(fresh.events.filter((e) => e.type === "run.started")).toHaveLength(1)
    expect(existsSync(join(broken, ".air/local/archive", runId, "state/events.jsonl"))).toBe(true)
    expect(readdirSync(join(broken, ".air/local/archive", runId))).toContain("evidence")
  })
})

describe("(c) a plan to confirm, proposed twice, then confirmed", () => {
  test("the plan waits: exit 2 while Main still listens, the plan in --json", () => {
    const r = plan[0]!
    expect(r.code, r.stderr.slice(-3000)).toBe(2)
    expect([r.summary.status, r.summary.stage, r.summary.errors]).toEqual(["waiting", "confirming", []])
    expect(r.summary.plan).toMatchObject({ summary: planV1, file: ".air/shared/plan/plan.md", adrs: [{ id: "ADR-1", title: adr.title, file: ".air/shared/plan/adr/ADR-1.md" }] })
    expect(readFileSync(join(docs, ".air/shared/plan/plan.md"), "utf8")).toContain(`## Decisions (ADRs)\n\n  ADR-1 ${adr.title}\n`)
    expect(mainAtTheEnd(r)).toEqual(stillListening)
  })

  test("after --resume --answer \"change: …\" the plan proposed a second time waits: exit 2 again", () => {
    const r = plan[1]!
    expect(r.code, r.stderr.slice(-3000)).toBe(2)
    expect(r.events.filter((e) => e.type === "plan.proposed").map((e) => e.summary)).toEqual([planV1, planV2])
    expect(r.summary.plan.summary).toBe(planV2)
    expect([r.summary.status, r.summary.stage, r.summary.errors]).toEqual(["waiting", "confirming", []])
    expect(mainAtTheEnd(r)).toEqual(stillListening)
  })

  test("after --resume --answer yes every task merged and the final check passed: exit 0 although Main's last request got a 400", () => {
    const r = plan[2]!
    expect(r.code, r.stderr.slice(-3000)).toBe(0)
    expect(r.summary.status).toBe("done")
    expect(r.events.find((e) => e.type === "finalCheck.done")?.status).toBe("passed")
    expect(r.summary.errors).toEqual([])
    const mainFailures = r.modelLog.filter((l) => l.agent === "main" && l.failure)
    expect(mainFailures.length, JSON.stringify(r.modelLog.filter((l) => l.failure))).toBeGreaterThan(0)
    expect(mainFailures[0].failure).toContain("steps exhausted")
    // Every other request of the three runs was answered: the new Architects were shown what their scripts expect.
    expect(plan.flatMap((x) => x.modelLog).filter((l) => l.failure && l.agent !== "main")).toEqual([])
    // The graph was written once, from the confirmed plan, and its task merged once.
    expect(r.events.filter((e) => e.type === "graph.accepted")).toHaveLength(1)
    expect(r.events.filter((e) => e.type === "merge.succeeded").map((e) => e.taskId)).toEqual(["T-1"])
  })
})

import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { foldEvents } from "../../src/scheduler/core/fold"
import { aircoding, writeScenario } from "../support/engine"
import { readJsonl, trivialProject } from "../support/runs"
import { makeSandbox, type Sandbox } from "../support/sandbox"

/**
 * The model provider refuses the Architect's planning request with a 400 (the context is too long): no
 * fresh session would fare better, so the run must not wait for ever at run.started. The failure is an
 * event the machine folds (step.failed, with the provider's class), and the user gets exactly one
 * question that says so in words — no JSON — and lists the answers the machine honours.
 * (Headless exit on a waiting state is another branch's work: this test asserts on the log, with a
 * deadline, not on the exit code.)
 */
const requirement = "Write a note."
const providerMessage = "This model's maximum context length is 8192 tokens. However, your messages resulted in 9120 tokens."
const scenario = {
  name: "provider-refusal",
  scripts: [
    {
      agent: "main",
      steps: [{ tool: "air_submit", args: { requirement } }, { tool: "air_listen", args: {}, until: "QUESTION" }, { text: "The planning failed; I asked you how to go on." }],
    },
    {
      agent: "architect",
      match: "^Requirement:",
      steps: [{ httpError: { status: 400, body: { error: { message: providerMessage, type: "invalid_request_error", param: "messages", code: "context_length_exceeded" } } } }],
    },
  ],
}

let sandbox: Sandbox
let events: any[]
let modelLog: any[]
let stderr = ""

beforeAll(async () => {
  sandbox = makeSandbox("air-refusal-")
  const project = trivialProject(sandbox, { "README.md": "# Notes\n" })
  const log = join(sandbox.root, "model.jsonl")
  // The deadline: a run that waits for ever is killed here, and the assertions below fail on its log.
  const out = await aircoding(["run", project, "--yes", "--json", "--scripted", writeScenario(sandbox, scenario)], {
    cwd: project,
    input: requirement,
    timeoutMs: 600_000,
    env: { ...sandbox.env, AIRCODING_SCRIPTED_LOG: log, AIRCODING_INACTIVITY_MS: "20000", AIRCODING_LISTEN_MS: "600000" },
  })
  stderr = out.stderr.slice(-3000)
  if (process.env.AIR_TEST_DUMP) console.log(out.code, out.stdout.slice(-3000), stderr)
  events = readJsonl(join(project, ".air/local/state/events.jsonl"))
  modelLog = readJsonl(log)
}, 660_000)

afterAll(() => sandbox?.cleanup())

describe("the provider refuses the Architect's planning request", () => {
  test("the Architect was asked once: a refusal that waiting cannot cure gets no fresh session", () => {
    expect(modelLog.filter((l) => l.agent === "architect").map((l) => l.reply.kind), JSON.stringify(modelLog.map((l) => [l.agent, l.reply])) + stderr).toEqual(["error"])
  })

  test("step.failed names the step and the provider's class; the state waits on one question with its answers", () => {
    const failed = events.filter((e) => e.type === "step.failed")
    expect(failed, JSON.stringify(events.map((e) => e.type))).toEqual([expect.objectContaining({ step: "plan", outcome: "errored", fault: expect.objectContaining({ class: "context-too-long", retryable: false }) })])
    const { state, refused } = foldEvents(events)
    expect(refused).toEqual([])
    expect(state.stage).toBe("planning")
    expect(state.questions).toHaveLength(1)
    const q = state.questions[0]!
    expect(q.step).toBe("plan")
    expect(q.answers).toEqual(["retry", "stop"])
    expect(q.text).toBe(`The model provider refused the Architect's request (planning): the conversation is longer than the model's context (${providerMessage.replace(/\.$/, "")}). Answer 'retry' or 'stop'.`)
    expect(q.text).not.toMatch(/\{"|\\"/)
  })
})

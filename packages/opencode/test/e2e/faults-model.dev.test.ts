import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { passingReviewer, runScenario, trivialProject, writeAndReport, type RunResult } from "../support/runs"

const requirement = "Write a note."
const tasks = [{ id: "T-1", title: "Write the note", kind: "docs", writeSet: [{ path: "note.md", action: "create" }], doneWhen: "note.md exists" }]
const architect = { agent: "architect", match: "^Requirement:", steps: [{ tool: "air_propose", args: { summary: "One note." } }, { tool: "air_plan", args: { tasks } }, { text: "Planned." }] }

let sandbox: Sandbox
let modelRun: RunResult

beforeAll(async () => {
  sandbox = makeSandbox("air-faults-model-")
  const project = trivialProject(sandbox, { "README.md": "# Notes\n" }, {}, "model")
  const main = { agent: "main", steps: [{ tool: "air_submit", args: { requirement } }, { tool: "air_listen", args: {}, until: "RUN ENDED" }, { text: "Done." }] }
  const confused = {
    agent: "executor",
    match: "^Task T-1:[\\s\\S]*\\(attempt 1\\)",
    steps: [
      { tool: "write", rawArgs: '{"filePath": "note.md", "content": ' },
      { tool: "air_report", args: { sumary: "a misspelt key" } },
      { tool: "air_plan", args: { tasks: [] }, allowUnoffered: true },
      { tool: "bash", args: { command: "true", description: "think" }, delayMs: 24_000 },
      { text: "never reached" },
    ],
  }
  const second = { agent: "executor", match: "^Task T-1:[\\s\\S]*\\(attempt 2\\)", steps: writeAndReport("note.md", "note\n", "the note") }
  modelRun = await runScenario(sandbox, project, { name: "faults-model", scripts: [main, architect, confused, second, passingReviewer] }, { input: requirement, name: "model", env: { AIRCODING_INACTIVITY_MS: "15000" } })
}, 900_000)

afterAll(() => sandbox?.cleanup())

describe("dev", () => {
  test("dump", () => {
    console.log(modelRun.code, JSON.stringify(modelRun.summary.tasks))
    console.log(modelRun.events.map((e) => e.type + (e.taskId ? ":" + e.taskId : "") + (e.kind ? ":" + e.kind : "")).join("\n"))
    for (const l of modelRun.modelLog.filter((l) => l.agent === "executor")) console.log(JSON.stringify({ step: l.step, script: l.script, reply: l.reply, tr: l.lastToolResult, f: l.failure }))
  })
})

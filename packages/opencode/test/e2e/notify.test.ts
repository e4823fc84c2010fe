import { cpSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { NotifyRecord } from "../../src/scheduler/runtime/store/notify-record"
import { Notifier } from "../../src/scheduler/runtime/notify/notifier"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { planningArchitect, runScenario, trivialProject, type RunResult } from "../support/runs"

/**
 * A headless run with the real engine and the scripted model whose task spends its request budget
 * (AIRCODING_TASK_REQUESTS=3): the machine blocks it and asks the user, the run exits 2 — and the webhook the
 * project's config.json names (a receiver of this test on 127.0.0.1) got the question with the command that
 * answers it, before `aircoding run` exited. In Chinese: the same run's project, copied with `language: "zh-CN"` and
 * no record of what was sent, and the launcher's notifier started on it (as `aircoding run --resume` would start
 * it, without a second run of the engine): the webhook gets the waiting question in Chinese with its command.
 */
const requirement = "Write the notes."
const tasks = [{ id: "T-1", title: "Write the notes", kind: "docs", writeSet: [{ path: "notes.md", action: "create" }], doneWhen: "notes.md exists" }]
const busy = Array.from({ length: 10 }, () => ({ tool: "bash", args: { command: "true", description: "think" }, delayMs: 1500 }))
const scenario = {
  name: "notify",
  scripts: [
    // Main listens until the run ends, which never comes: the Scheduler's state (a question) ends the process.
    { agent: "main", steps: [{ tool: "air_submit", args: { requirement } }, { tool: "air_listen", args: {}, until: "RUN ENDED" }] },
    planningArchitect("One task.", tasks),
    { agent: "executor", match: "^Task T-1:", steps: [...busy, { text: "never reached" }] },
  ],
}

let sandbox: Sandbox
let server: Server
let project: string
let r: RunResult
const got: any[] = []

beforeAll(async () => {
  server = createServer((req, res) => {
    let text = ""
    req.on("data", (c) => (text += c))
    req.on("end", () => {
      got.push(JSON.parse(text))
      res.end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook?token=SECRET`
  sandbox = makeSandbox("air-notify-")
  project = trivialProject(sandbox, {
    "README.md": "# Notes\n",
    ".air/shared/config.json": JSON.stringify({ notify: { channels: [{ kind: "webhook", url }] } }),
  })
  r = await runScenario(sandbox, project, scenario, { input: requirement, env: { AIRCODING_TASK_REQUESTS: "3", AIRCODING_HEADLESS_ANSWER_MS: "500" } })
}, 600_000)

afterAll(async () => {
  server?.closeAllConnections()
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()))
  sandbox?.cleanup()
})

describe("a question of a live run reaches the webhook", () => {
  test("the run waits (exit 2) on the budget's question", () => {
    expect(r.code, r.stderr.slice(-3000)).toBe(2)
    // The machine spends the budget from usage.recorded: the task is blocked and the user asked.
    expect(r.summary.tasks.map((t: any) => [t.id, t.state])).toEqual([["T-1", "blocked"]])
  })

  test("the webhook got the question with the exact command that answers it, and the budget notice", () => {
    const question = got.find((b) => b.event === "question")
    expect(question, JSON.stringify(got)).toBeDefined()
    const id = question.key.split(":question:")[1]
    expect(r.summary.questions?.map((q: any) => q.questionId) ?? [id]).toContain(id)
    expect(question.text).toContain(`waits for your answer to ${id}`)
    expect(question.text).toMatch(new RegExp(`Answer with: .*run ${project.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")} --resume .*--answer '${id}: `))
    expect(got.some((b) => b.event === "budget")).toBe(true)
    const record = NotifyRecord.read(project)
    expect(record.every((l) => l.outcome === "sent")).toBe(true)
    expect(JSON.stringify(record)).not.toContain("SECRET")
  })
})

describe("the same question in Chinese (language zh-CN)", () => {
  test("the webhook gets it in the run's language, with the command that answers it", async () => {
    const zh = `${project}-zh`
    cpSync(project, zh, { recursive: true })
    rmSync(NotifyRecord.file(zh), { force: true })
    const configFile = `${zh}/.air/shared/config.json`
    writeFileSync(configFile, JSON.stringify({ ...JSON.parse(readFileSync(configFile, "utf8")), language: "zh-CN" }))
    const before = got.length
    const resume = `aircoding run ${zh} --resume`
    const notifier = Notifier.start(zh, { interactive: false, resumeCommand: resume })
    expect(notifier).toBeDefined()
    await notifier!.close()
    const question = got.slice(before).find((b) => b.event === "question")
    expect(question, JSON.stringify(got.slice(before))).toBeDefined()
    const id = question.key.split(":question:")[1]
    expect(question.text).toContain(`正在等待你回答 ${id}`)
    expect(question.text).toContain(`回答方式：${resume} --answer '${id}: `)
    expect(NotifyRecord.read(zh).map((l) => l.outcome)).toEqual(["sent"])
  })
})

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, test } from "vitest"
import { Settings } from "../../src/scheduler/runtime/settings"
import { Notifier } from "../../src/scheduler/runtime/notify/notifier"
import { NotifyRecord } from "../../src/scheduler/runtime/store/notify-record"
import { RunMetrics } from "../../src/read/run-metrics"
import { Prometheus } from "../../src/dashboard/prometheus"
import { append, copyFixture, keepFirst } from "../dashboard/helpers"
import { FIXTURE } from "../cli-view/helpers"
import { RunData } from "../../src/scheduler/runtime/store/run-data"
import { beforeStallEnds, untilBeforeStallEnds } from "../support/stall"

/**
 * Notifications from the event log to webhooks the test runs on 127.0.0.1 (node:http): the question with the
 * command that answers it, in English and Chinese, in each chat's format; a receiver that hangs or answers 500
 * costs the run nothing and the drop is counted; a resumed run sends nothing twice.
 */
const cleanups: (() => void | Promise<void>)[] = []
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!()
})

type Received = { path: string; body: any }
type Receiver = { url: string; got: Received[] }

/** A webhook receiver: `answer` decides each request's fate (200 by default). */
async function receiver(answer: (req: IncomingMessage, res: ServerResponse) => void = (_, res) => res.end('{"errcode":0,"code":0}')): Promise<Receiver> {
  const got: Received[] = []
  const server: Server = createServer((req, res) => {
    let text = ""
    req.on("data", (c) => (text += c))
    req.on("end", () => {
      got.push({ path: req.url ?? "", body: JSON.parse(text) })
      answer(req, res)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, got }
}

/** The recorded run while two tasks work, with `notify` (and the language) in its config. */
function run(config: Record<string, unknown>): string {
  const copy = copyFixture()
  cleanups.push(copy.cleanup)
  keepFirst(copy.root, 14)
  writeFileSync(join(copy.root, ".air", "shared", "config.json"), JSON.stringify({ concurrency: 2, ...config }))
  return copy.root
}

/** The run's budget is spent: the run waits for one answer (a question) — two notices, the question and the budget. */
const BUDGET_SPENT = JSON.stringify({ seq: 15, type: "budget.spent", kind: "requests", at: "2026-11-29T09:05:30.000Z" })

const FIXTURE_LOG = RunData.eventsFile(FIXTURE)

const HOW = { interactive: false, resumeCommand: "aircoding run /p --resume" }

function started(root: string): Notifier {
  const notifier = Notifier.start(root, HOW, 50)
  if (!notifier) throw new Error("no notifier started although notify names channels")
  cleanups.push(() => notifier.close())
  return notifier
}

const STALL = { ms: 60_000, what: "the wait for the webhook" }

describe("notify in config.json", () => {
  test("an unknown kind is refused naming the key and the nearest kind; a chat without its url names the key", () => {
    const root = run({ notify: { channels: [{ kind: "slakc", url: "https://hooks.example/x" }] } })
    expect(() => Settings.load(root)).toThrow(/config\.json: notify\.channels\[0\]\.kind: unknown kind "slakc"; did you mean slack\?/)
    writeFileSync(join(root, ".air", "shared", "config.json"), JSON.stringify({ notify: { channels: [{ kind: "dingtalk" }] } }))
    expect(() => Settings.load(root)).toThrow(/notify\.channels\[0\]\.url: missing: a dingtalk channel needs the webhook's url/)
    writeFileSync(join(root, ".air", "shared", "config.json"), JSON.stringify({ notify: { chanels: [] } }))
    expect(() => Settings.load(root)).toThrow(/notify\.chanels: unknown key; did you mean channels\?/)
  })
})

describe("a question is notified with the command that answers it", () => {
  test("in English: the generic JSON and Slack's format, each with `--answer '<question id>: …'`", async () => {
    const hook = await receiver()
    const root = run({ notify: { channels: [{ kind: "webhook", url: `${hook.url}/generic` }, { kind: "slack", url: `${hook.url}/slack/T000/SECRET`, events: ["question"] }] } })
    const notifier = started(root)
    append(root, [BUDGET_SPENT])
    await untilBeforeStallEnds(() => hook.got.length >= 3, STALL)
    await notifier.settled()

    const generic = hook.got.filter((r) => r.path === "/generic").map((r) => r.body)
    expect(generic.map((b) => b.event).sort()).toEqual(["budget", "question"])
    const question = generic.find((b) => b.event === "question")
    expect(question).toMatchObject({ source: "aircoding", key: expect.stringMatching(/^run-20261129-0900:question:/) })
    const id = question.key.split(":question:")[1]
    expect(question.text).toContain(`The run run-20261129-0900 waits for your answer to ${id}`)
    expect(question.text).toContain(`Answer with: aircoding run /p --resume --answer '${id}: `)
    // The Slack channel asked for questions only.
    const slack = hook.got.filter((r) => r.path.startsWith("/slack")).map((r) => r.body)
    expect(slack).toHaveLength(1)
    expect(slack[0].text).toContain(`--answer '${id}: `)
    expect(NotifyRecord.counts(root)).toEqual({ sent: 3, dropped: 0 })
    // The record names the channel by kind and place, never by its URL and its secret.
    const record = JSON.stringify(NotifyRecord.read(root))
    expect(record).not.toContain("SECRET")
  })

  test("in Chinese: Feishu's, DingTalk's and WeCom's formats", async () => {
    const hook = await receiver()
    const root = run({
      language: "zh-CN",
      notify: {
        channels: [
          { kind: "feishu", url: `${hook.url}/feishu`, events: ["question"] },
          { kind: "dingtalk", url: `${hook.url}/dingtalk?access_token=SECRET`, events: ["question"] },
          { kind: "wecom", url: `${hook.url}/wecom?key=SECRET`, events: ["question"] },
        ],
      },
    })
    const notifier = started(root)
    append(root, [BUDGET_SPENT])
    await untilBeforeStallEnds(() => hook.got.length >= 3, STALL)
    await notifier.settled()
    const by = (prefix: string) => hook.got.find((r) => r.path.startsWith(prefix))!.body
    expect(by("/feishu")).toMatchObject({ msg_type: "text", content: { text: expect.stringContaining("正在等待你回答") } })
    expect(by("/feishu").content.text).toContain("回答方式：aircoding run /p --resume --answer '")
    expect(by("/dingtalk")).toMatchObject({ msgtype: "text", text: { content: expect.stringContaining("正在等待你回答") } })
    expect(by("/wecom")).toMatchObject({ msgtype: "text", text: { content: expect.stringContaining("--answer '") } })
  })
})

describe("a webhook that hangs or fails", () => {
  test("costs the run nothing: the event is read at once, the sends are given up after their bound and counted as dropped", async () => {
    // The hanging receiver holds every request ten minutes: far longer than the bound (2 attempts × 500 ms + a pause).
    const hangs = await receiver((_, res) => setTimeout(() => res.end(), 600_000))
    const fails = await receiver((_, res) => {
      res.statusCode = 500
      res.end("no")
    })
    const root = run({
      notify: {
        timeoutMs: 500,
        attempts: 2,
        channels: [
          { kind: "webhook", url: `${hangs.url}/hook`, events: ["question"] },
          { kind: "webhook", url: `${fails.url}/hook?token=SECRET`, events: ["question"] },
        ],
      },
    })
    const notifier = started(root)
    append(root, [BUDGET_SPENT])
    await beforeStallEnds(notifier.settled().then(() => untilBeforeStallEnds(() => NotifyRecord.counts(root).dropped === 2, STALL)), { ms: 600_000, what: "the hanging receiver's hold" })
    expect(hangs.got.length).toBe(2)
    expect(fails.got.length).toBe(2)
    const dropped = NotifyRecord.read(root)
    expect(dropped.map((l) => l.reason).sort()).toEqual([`${fails.url} answered HTTP 500`.replace(fails.url, `${fails.url}/…`), `${hangs.url}/… did not answer within 500 ms`].sort())
    expect(JSON.stringify(dropped)).not.toContain("SECRET")
    const text = await Prometheus.exposition(new RunMetrics.Source(root).figures())
    expect(text).toContain("aircoding_notifications_dropped_total 2")
  })
})

describe("across --resume", () => {
  test("a question still waiting is told once: a resumed run's notifier finds it in the record", async () => {
    const hook = await receiver()
    const root = run({ notify: { channels: [{ kind: "webhook", url: hook.url, events: ["question"] }] } })
    const first = started(root)
    append(root, [BUDGET_SPENT])
    await untilBeforeStallEnds(() => hook.got.length >= 1, STALL)
    await first.close()

    // The resumed run: a new process, the same log, the question still waiting.
    const again = started(root)
    await again.close()
    expect(hook.got).toHaveLength(1)

    // Without the record the same notifier would tell it again: the record is what holds it back.
    rmSync(NotifyRecord.file(root))
    const forgetful = started(root)
    await forgetful.close()
    expect(hook.got).toHaveLength(2)
    expect(hook.got[1]!.body.key).toBe(hook.got[0]!.body.key)
  })
})

describe("the other events", () => {
  test("a rate-limit pause over a minute is told (a shorter one is not), and the run's end as done", async () => {
    const hook = await receiver()
    const root = run({ notify: { channels: [{ kind: "webhook", url: hook.url }] } })
    const rest = readFileSync(FIXTURE_LOG, "utf8").trimEnd().split("\n").slice(14)
    const notifier = started(root)
    append(root, [
      JSON.stringify({ seq: 15, type: "rate.limited", until: "2026-11-29T09:10:00.000Z", cap: 1, sessionId: "ses_t2_exec1", message: "429 slow down", at: "2026-11-29T09:05:00.000Z" }),
      JSON.stringify({ seq: 16, type: "rate.limited", until: "2026-11-29T09:05:40.000Z", cap: 1, sessionId: "ses_t3_exec1", message: "429 again", at: "2026-11-29T09:05:10.000Z" }),
      JSON.stringify({ seq: 17, type: "rate.eased", cap: 2, at: "2026-11-29T09:10:01.000Z" }),
      ...rest,
    ])
    await untilBeforeStallEnds(() => hook.got.some((r) => r.body.event === "done"), STALL)
    await notifier.close()
    const events = hook.got.map((r) => r.body.event)
    expect(events.sort()).toEqual(["done", "rateLimit"])
    const pause = hook.got.find((r) => r.body.event === "rateLimit")!.body.text
    expect(pause).toContain("pauses the run run-20261129-0900 for 5 min (until 2026-11-29T09:10:00.000Z): 429 slow down")
    expect(hook.got.find((r) => r.body.event === "done")!.body.text).toMatch(/^The run run-20261129-0900 is done: /)
  })
})

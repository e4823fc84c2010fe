/**
 * notify_latency_s: from a question's event appended to the recorded run's log to its notification received by
 * a webhook on 127.0.0.1, through the notifier as the launcher starts it (polling the log every 250 ms, its
 * default). The median of AIR_BENCH_NOTIFY_ROUNDS rounds (5 by default), each on a fresh copy of the run.
 */
import { appendFileSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Notifier } from "../src/scheduler/runtime/notify/notifier.ts"
import { RunData } from "../src/scheduler/runtime/store/run-data.ts"
import { registerFigure } from "./figures"

const FIXTURE = join(import.meta.dirname ?? new URL(".", import.meta.url).pathname, "..", "test", "fixtures", "recorded-run")
const ROUNDS = Math.max(1, Number(process.env.AIR_BENCH_NOTIFY_ROUNDS) || 5)

async function once(): Promise<number> {
  let received: (at: number) => void = () => {}
  const arrived = new Promise<number>((resolve) => (received = resolve))
  const server = createServer((req, res) => {
    req.resume()
    req.on("end", () => {
      received(performance.now())
      res.end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const root = mkdtempSync(join(tmpdir(), "air-bench-notify-"))
  try {
    cpSync(join(FIXTURE, ".air"), join(root, ".air"), { recursive: true })
    const log = RunData.eventsFile(root)
    writeFileSync(log, readFileSync(log, "utf8").trimEnd().split("\n").slice(0, 14).join("\n") + "\n")
    rmSync(RunData.snapshotFile(root), { force: true })
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
    writeFileSync(join(root, ".air", "shared", "config.json"), JSON.stringify({ notify: { channels: [{ kind: "webhook", url, events: ["question"] }] } }))
    const notifier = Notifier.start(root, { interactive: false, resumeCommand: "aircoding run . --resume" })!
    const appended = performance.now()
    appendFileSync(log, JSON.stringify({ seq: 15, type: "budget.spent", kind: "requests", at: new Date().toISOString() }) + "\n")
    const at = await arrived
    await notifier.close()
    return (at - appended) / 1000
  } finally {
    server.close()
    rmSync(root, { recursive: true, force: true })
  }
}

registerFigure({
  name: "notify_latency_s",
  description: "a question's event appended to the log → its webhook notification received (median of rounds)",
  unit: "s",
  async run() {
    const all: number[] = []
    for (let i = 0; i < ROUNDS; i++) all.push(await once())
    all.sort((a, b) => a - b)
    return all[Math.floor(all.length / 2)]!
  },
})

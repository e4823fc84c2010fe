/**
 * bun packages/opencode/bench/engine-retries.ts [--seconds N]
 * Measures how the pinned engine handles provider errors: one `opencode serve`, the scripted model
 * answering each case's session with an HTTP error (the first `times` requests), and the engine's
 * bus events (`session.status` retry, `session.error`) and request times recorded per case. Prints a
 * Markdown table (the source of the runtime README's "The engine's retries, measured").
 */
import { spawn } from "node:child_process"
import { parseArgs } from "node:util"
import { createOpencodeClient } from "@opencode-ai/sdk"
import { opencodeProviderConfig, startScriptedModel, type Scenario } from "@aircoding/scripted-model"
import { LaunchConfig, Paths } from "../src/engine"
import { makeSandbox } from "../test/support/sandbox"

const { values } = parseArgs({ options: { seconds: { type: "string", default: "75" } } })
const WATCH_MS = Number(values.seconds) * 1000

type Case = { name: string; status: number; times?: number; retryAfter?: string; retryAfterMs?: string }
const cases: Case[] = [
  { name: "429", status: 429, times: 3 },
  { name: "429 retry-after 5", status: 429, times: 2, retryAfter: "5" },
  { name: "429 retry-after-ms 700", status: 429, times: 2, retryAfterMs: "700" },
  { name: "408", status: 408, times: 2 },
  { name: "500", status: 500, times: 3 },
  { name: "502", status: 502, times: 2 },
  { name: "503", status: 503, times: 2 },
  { name: "529", status: 529, times: 2 },
  { name: "400", status: 400, times: 1 },
  { name: "401", status: 401, times: 1 },
  { name: "404", status: 404, times: 1 },
  { name: "503 forever", status: 503 },
  { name: "429 forever retry-after 1", status: 429, retryAfter: "1" },
]

const sandbox = makeSandbox("air-retries-")
const project = sandbox.project()
const scenario: Scenario = {
  name: "engine-retries",
  scripts: ["main", "build", "unknown"].map((agent) => ({ agent, steps: [{ text: "ok" }, { text: "ok" }] })),
  inject: cases.map((c) => ({ status: c.status, match: `^case ${c.name}$`, times: c.times, retryAfter: c.retryAfter, retryAfterMs: c.retryAfterMs })),
} as Scenario
const model = await startScriptedModel({ scenario })
const env = LaunchConfig.environment({ overlay: opencodeProviderConfig(model.url), offline: true }, sandbox.env)
const serve = spawn(Paths.opencodeBinary(), ["serve", "--port", "0", "--hostname", "127.0.0.1"], { cwd: project, env: { ...env, PWD: project }, stdio: ["ignore", "pipe", "pipe"] })
const url = await new Promise<string>((resolve, reject) => {
  let out = ""
  serve.stdout!.on("data", (d) => {
    out += d
    const m = out.match(/https?:\/\/127\.0\.0\.1:\d+/)
    if (m) resolve(m[0])
  })
  serve.on("exit", (code) => reject(new Error(`serve exited ${code}`)))
})
const client = createOpencodeClient({ baseUrl: url, directory: project })

type Seen = { t: number; what: string }
const bySession = new Map<string, Seen[]>()
const t0 = Date.now()
const events = await client.event.subscribe()
void (async () => {
  for await (const ev of events.stream as AsyncIterable<any>) {
    const p = ev.properties ?? {}
    const id = p.sessionID
    if (!id || !bySession.has(id)) continue
    if (ev.type === "session.status" && p.status.type === "retry")
      bySession.get(id)!.push({ t: Date.now(), what: `retry attempt=${p.status.attempt} next=+${p.status.next - Date.now()}ms message=${JSON.stringify(p.status.message).slice(0, 80)}` })
    else if (ev.type === "session.error") bySession.get(id)!.push({ t: Date.now(), what: `error ${p.error?.name} ${JSON.stringify(p.error?.data ?? {}).slice(0, 160)}` })
    else if (ev.type === "session.idle") bySession.get(id)!.push({ t: Date.now(), what: "idle" })
  }
})()

const ids = new Map<string, string>()
for (const c of cases) {
  const s = await client.session.create({ body: { title: c.name } })
  const id = s.data!.id
  ids.set(c.name, id)
  bySession.set(id, [])
  await client.session.promptAsync({ path: { id }, body: { parts: [{ type: "text", text: `case ${c.name}` }] } })
}
await new Promise((r) => setTimeout(r, WATCH_MS))

const requests = model.requests()
console.log("| case | requests (s after the first) | retry statuses (attempt: next − now) | outcome |")
console.log("| --- | --- | --- | --- |")
for (const c of cases) {
  const mine = requests.filter((r) => r.lastUser === `case ${c.name}` || r.lastUser.endsWith(`case ${c.name}`)).filter((r) => r.agent !== "title")
  const first = mine[0] ? Date.parse(mine[0].ts) : 0
  const times = mine.map((r) => `${((Date.parse(r.ts) - first) / 1000).toFixed(1)}${r.fault ? "" : " ok"}`).join(", ")
  const seen = bySession.get(ids.get(c.name)!)!
  const retries = seen.filter((s) => s.what.startsWith("retry"))
  const outcome = seen.filter((s) => !s.what.startsWith("retry")).map((s) => s.what).join("; ")
  console.log(`| ${c.name} | ${mine.length}: ${times} | ${retries.length}: ${retries.map((r) => r.what.replace(/^retry /, "")).slice(0, 4).join(" / ")} | ${outcome || "(still retrying)"} |`)
}
console.error(`watched ${(Date.now() - t0) / 1000}s`)
serve.kill("SIGTERM")
await model.close()
sandbox.cleanup()
process.exit(0)

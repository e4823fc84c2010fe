import { afterEach, describe, expect, test } from "vitest"
import { chaosPick, FAULTS, startScriptedModel, type ScriptedModel } from "../src/index.ts"
import { assistantCalls, assistantText, openCodeLike, post, system, toolResult, user } from "./helpers.ts"

const executor = {
  agent: "executor",
  match: "^Task (?<id>T-\\d+)",
  steps: [
    { tool: "write", args: { filePath: "{{id}}.txt", content: "x" } },
    { tool: "air_report", args: { taskId: "{{id}}", status: "done" } },
    { text: "done" },
  ],
}
const offered = ["air_report", "read", "write"]
const first = (id = "T-1") => openCodeLike([system("executor"), user(`Task ${id}: write`)], offered)

let model: ScriptedModel | undefined
afterEach(async () => {
  await model?.close()
  model = undefined
})

describe("injected faults", () => {
  test("the first `times` matching requests get the HTTP error with its headers, then the script plays", async () => {
    model = await startScriptedModel({ scenario: { name: "inject", scripts: [executor], inject: [{ status: 429, times: 2, retryAfter: "3", retryAfterMs: "3000" }] } })
    for (let i = 0; i < 2; i++) {
      const res = await post(model, first())
      expect([res.status, res.headers.get("retry-after"), res.headers.get("retry-after-ms")]).toEqual([429, "3", "3000"])
      expect(await res.json()).toMatchObject({ error: { message: "scripted fault: HTTP 429" } })
    }
    expect((await post(model, first())).status).toBe(200)
    expect(model.requests().map((r) => r.fault ?? r.reply.kind)).toEqual(["status-429", "status-429", "tool"])
    expect(model.failures()).toEqual([])
  })

  test("a named fault: context too long is a 400 with the provider's code", async () => {
    model = await startScriptedModel({ scenario: { name: "inject", scripts: [executor], inject: [{ fault: "context-too-long", match: "T-2" }] } })
    expect((await post(model, first("T-1"))).status).toBe(200)
    const res = await post(model, first("T-2"))
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ error: { code: "context_length_exceeded", type: "invalid_request_error" } })
  })

  test("a stream cut sends part of the answer and breaks the connection", async () => {
    model = await startScriptedModel({ scenario: { name: "inject", scripts: [executor], inject: [{ fault: "stream-cut", times: 1 }] } })
    const res = await post(model, first())
    expect(res.status).toBe(200)
    await expect(res.text()).rejects.toThrow()
    const again = await (await post(model, first())).text()
    expect(again).toContain("[DONE]")
  })
})

describe("chaos", () => {
  test("the same seed strikes the same positions; a different seed others", () => {
    const chaos = (seed: number) => ({ seed, faults: { "rate-limit": 0.3, "stream-cut": 0.3 } })
    const keys = Array.from({ length: 200 }, (_, i) => `executor|3|{"id":"T-${i % 7}"}|${i}`)
    const a = keys.map((k) => chaosPick(chaos(7), k))
    expect(keys.map((k) => chaosPick(chaos(7), k))).toEqual(a)
    expect(keys.map((k) => chaosPick(chaos(8), k))).not.toEqual(a)
    const share = a.filter(Boolean).length / a.length
    expect(share).toBeGreaterThan(0.45)
    expect(share).toBeLessThan(0.75)
  })

  test("a made-up turn consumes no step: after text-no-tool the script goes on where it was", async () => {
    model = await startScriptedModel({ scenario: { name: "chaos", scripts: [executor], chaos: { seed: 1, faults: { "text-no-tool": 1 } } } })
    const res = await (await post(model, first())).text()
    expect(res).toContain("[chaos]")
    // The engine sends the made-up text back with the next prompt: the same step (write) plays, unstruck.
    const next = await (await post(model, openCodeLike([system("executor"), user("Task T-1: write"), assistantText("[chaos] I believe the work is done."), user("call air_report")], offered))).text()
    expect(next).toContain('"name":"write"')
  })

  test("false-success reports at once with the script's report; report-twice sends the report twice, once marked", async () => {
    model = await startScriptedModel({ scenario: { name: "chaos", scripts: [executor], chaos: { seed: 1, faults: { "false-success": 1 } } } })
    const early = await (await post(model, first())).text()
    expect(early).toContain('"name":"air_report"')
    expect(early).toContain('"id":"chaos_')
    await model.close()
    model = await startScriptedModel({ scenario: { name: "chaos", scripts: [executor], chaos: { seed: 1, faults: { "report-twice": 1 } } } })
    const atReport = openCodeLike([system("executor"), user("Task T-1: write"), assistantCalls({ id: "call_1", name: "write", args: {} }), toolResult("call_1", "ok")], offered)
    const twice = await (await post(model, atReport)).text()
    expect(twice.match(/"name":"air_report"/g)?.length).toBe(2)
    expect(twice.match(/"id":"chaos_/g)?.length).toBe(1)
  })

  test("every fault has a name the schema accepts", async () => {
    for (const name of FAULTS) {
      const m = await startScriptedModel({ scenario: { name: "chaos", scripts: [executor], chaos: { seed: 3, faults: { [name]: 1 }, stallMs: 10 } } })
      const res = await post(m, first())
      if (res.status === 200) await res.text().catch(() => "cut")
      expect(res.status, name).toBeGreaterThanOrEqual(200)
      await m.close()
    }
  })
})

import { afterEach, describe, expect, it } from "vitest"
import { loadScenario, type Scenario } from "../src/index.ts"
import { openCodeLike, post, serverPool, sseData, system, user } from "./helpers.ts"

const pool = serverPool()
afterEach(() => pool.closeAll())

/** A malformed tool call, for tests of how the engine and the runtime take one: `rawArgs` is sent as is. */
describe("rawArgs", () => {
  it("streams the arguments string verbatim, invalid JSON included", async () => {
    const scenario: Scenario = { name: "raw", scripts: [{ agent: "writer", steps: [{ tool: "write", rawArgs: '{"filePath": "a.txt", "content": ' }] }] }
    const m = await pool.start(scenario)
    const res = await post(m, openCodeLike([system("writer"), user("go")]))
    expect(res.status).toBe(200)
    const chunks = sseData(await res.text()).slice(0, -1).map((d) => JSON.parse(d))
    const args = chunks.flatMap((c) => c.choices.flatMap((ch: any) => ch.delta.tool_calls ?? [])).map((t: any) => t.function.arguments ?? "").join("")
    expect(args).toBe('{"filePath": "a.txt", "content": ')
    expect(() => JSON.parse(args)).toThrow()
  })

  it("belongs to a tool step, and excludes args", () => {
    expect(() => loadScenario({ name: "x", scripts: [{ agent: "a", steps: [{ text: "hi", rawArgs: "{" }] }] })).toThrow(/"rawArgs" belongs to a "tool" step/)
    expect(() => loadScenario({ name: "x", scripts: [{ agent: "a", steps: [{ tool: "read", args: {}, rawArgs: "{" }] }] })).toThrow(/either "args" or "rawArgs"/)
  })
})

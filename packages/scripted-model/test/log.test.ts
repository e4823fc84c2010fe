import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import type { LogEntry } from "../src/index.ts"
import { assistantCalls, expectError, openCodeLike, play, serverPool, system, toolResult, user } from "./helpers.ts"

const pool = serverPool()
afterEach(() => pool.closeAll())

describe("request log", () => {
  it("writes one JSON line per request, the same entries requests() returns", async () => {
    const logPath = join(mkdtempSync(join(tmpdir(), "scripted-log-")), "nested", "requests.jsonl")
    const m = await pool.start(
      {
        name: "log",
        scripts: [{ name: "exec", agent: "executor", steps: [{ tools: [{ tool: "read" }, { tool: "bash" }] }, { tool: "write" }, { text: "done" }] }],
      },
      { logPath },
    )
    const sys = system("executor")
    const long = "x".repeat(5000)
    await play(m, openCodeLike([sys, user(long)]))
    await post2(m, [sys, user(long), assistantCalls({ id: "1", name: "read" }, { id: "2", name: "bash" }), toolResult("1", "file"), toolResult("2", "out")])
    await play(m, openCodeLike([sys, user("u"), assistantCalls({ id: "1", name: "read" }), toolResult("1", "a"), assistantCalls({ id: "3", name: "write" }), toolResult("3", "b")]))
    await expectError(m, openCodeLike([system("nobody"), user("u")]))

    const lines = readFileSync(logPath, "utf8").trimEnd().split("\n")
    const fromFile = lines.map((l) => JSON.parse(l) as LogEntry)
    expect(fromFile).toEqual(m.requests())
    expect(fromFile.map((e) => e.seq)).toEqual([1, 2, 3, 4])
    expect(fromFile.map((e) => e.reply)).toEqual([
      { kind: "tools", tools: ["read", "bash"] },
      { kind: "tool", tools: ["write"] },
      { kind: "text", text: "done" },
      { kind: "error" },
    ])
    expect(fromFile[0]).toMatchObject({ agent: "executor", script: "exec", step: 0, stream: true, offered: ["bash", "read", "write"], lastToolResult: "" })
    expect(fromFile[0]!.lastUser.length).toBeLessThan(400)
    expect(fromFile[1]).toMatchObject({ step: 1, stream: false, lastToolResult: "file\nout" })
    expect(fromFile[3]).toMatchObject({ agent: "nobody", script: null, step: null })
    expect(fromFile[3]!.failure).toContain('no script for agent "nobody"')
    expect(new Date(fromFile[0]!.ts).getTime()).toBeGreaterThan(0)
    expect(m.requestsByAgent()).toEqual({ executor: 3, nobody: 1 })
    expect(m.failures()).toEqual([fromFile[3]!.failure])
  })
})

async function post2(m: { url: string }, messages: object[]) {
  const res = await fetch(`${m.url}/chat/completions`, {
    method: "POST",
    body: JSON.stringify({ messages, tools: ["bash", "read", "write"].map((name) => ({ type: "function", function: { name } })) }),
  })
  expect(res.status).toBe(200)
}

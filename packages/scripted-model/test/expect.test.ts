import { afterEach, describe, expect, it } from "vitest"
import type { Expect } from "../src/index.ts"
import { assistantCalls, expectError, openCodeLike, play, serverPool, system, toolResult, user } from "./helpers.ts"

const pool = serverPool()
afterEach(() => pool.closeAll())

// One conversation, checked against one expectation at a time: each kind must pass when true and
// fail loudly (naming the kind and the culprit) when not.
const conversation = openCodeLike(
  [system("checker", "Never push to main."), user("first ask"), assistantCalls({ id: "1", name: "bash" }), toolResult("1", "exit code 0: 12 tests passed"), user("last ask")],
  ["bash", "read", "write"],
)

const cases: { kind: keyof Expect; pass: string[]; fail: string[]; culprit: string }[] = [
  { kind: "offered", pass: ["bash", "read"], fail: ["bash", "task"], culprit: '"task" not offered' },
  { kind: "notOffered", pass: ["task", "edit"], fail: ["task", "write"], culprit: '"write" is offered' },
  { kind: "offeredExactly", pass: ["write", "bash", "read"], fail: ["bash", "read", "edit"], culprit: 'missing "edit", unexpected "write"' },
  { kind: "systemIncludes", pass: ["Never push to main.", "AirCoding role: checker"], fail: ["Always push"], culprit: '"Always push" not found' },
  { kind: "lastToolResultIncludes", pass: ["12 tests passed"], fail: ["0 failed"], culprit: '"0 failed" not found' },
  { kind: "lastUserIncludes", pass: ["last ask"], fail: ["first ask"], culprit: '"first ask" not found' },
  { kind: "lastUserExcludes", pass: ["first ask"], fail: ["last ask"], culprit: '"last ask" found' },
]

describe("expect", () => {
  for (const c of cases) {
    it(`${c.kind} passes when it holds`, async () => {
      const m = await pool.start({ name: c.kind, scripts: [{ agent: "checker", steps: [{ tool: "bash", args: {} }, { text: "ok", expect: { [c.kind]: c.pass } }] }] })
      expect((await play(m, conversation)).text).toBe("ok")
      expect(m.failures()).toEqual([])
    })

    it(`${c.kind} fails loudly when it does not`, async () => {
      const m = await pool.start({ name: c.kind, scripts: [{ name: "checks", agent: "checker", steps: [{ tool: "bash", args: {} }, { text: "ok", expect: { [c.kind]: c.fail } }] }] })
      const message = await expectError(m, conversation)
      expect(message).toContain(`expect.${c.kind}: ${c.culprit}`)
      expect(message).toContain('agent "checker", script 0 ("checks"), step 1')
      expect(message).toContain('lastToolResult="exit code 0: 12 tests passed"')
      expect(m.failures()).toEqual([message])
      expect(m.requests()[0]!.reply).toEqual({ kind: "error" })
    })
  }

  it("lastUserImages counts the pictures of the last user message (OpenAI image_url parts, data URLs read for their type)", async () => {
    const png = "data:image/png;base64,iVBORw0KGgo="
    const withPictures = openCodeLike(
      [system("checker"), user("first ask"), { role: "user", content: [{ type: "text", text: "look" }, { type: "image_url", image_url: { url: png } }, { type: "image_url", image_url: { url: png } }] }],
      ["bash"],
    )
    const two = await pool.start({ name: "two", scripts: [{ agent: "checker", steps: [{ text: "ok", expect: { lastUserImages: 2, lastUserIncludes: ["look"] } }] }] })
    expect((await play(two, withPictures)).text).toBe("ok")
    expect(two.requests()[0]!.images).toEqual(["image/png", "image/png"])
    const none = await pool.start({ name: "none", scripts: [{ agent: "checker", steps: [{ text: "ok", expect: { lastUserImages: 0 } }] }] })
    expect(await expectError(none, withPictures)).toContain("expect.lastUserImages: 0 expected, 2 received (image/png, image/png)")
    const textOnly = await pool.start({ name: "text", scripts: [{ agent: "checker", steps: [{ tool: "bash", args: {} }, { text: "ok", expect: { lastUserImages: 1 } }] }] })
    expect(await expectError(textOnly, conversation)).toContain("expect.lastUserImages: 1 expected, 0 received")
    expect(textOnly.requests()[0]!.images).toBeUndefined()
  })

  it("reports every unmet expectation at once", async () => {
    const m = await pool.start({ name: "many", scripts: [{ agent: "checker", steps: [{ tool: "bash" }, { text: "ok", expect: { offered: ["task"], lastUserIncludes: ["nope"] } }] }] })
    const message = await expectError(m, conversation)
    expect(message).toContain("expect.offered")
    expect(message).toContain("expect.lastUserIncludes")
  })

  it("substitutes named groups in expectations", async () => {
    const m = await pool.start({ name: "g", scripts: [{ agent: "checker", match: "(?<word>first) ask", steps: [{ tool: "bash" }, { text: "ok", expect: { lastUserIncludes: ["{{word}}"] } }] }] })
    const message = await expectError(m, conversation)
    expect(message).toContain('"first" not found')
  })

  it("fails when the scripted tool is not offered, unless allowUnoffered", async () => {
    const strict = await pool.start({ name: "s", scripts: [{ agent: "checker", steps: [{ tools: [{ tool: "read" }, { tool: "task" }] }] }] })
    const message = await expectError(strict, openCodeLike([system("checker"), user("x")], ["bash", "read"]))
    expect(message).toContain('the step calls "task" but the request does not offer it')

    const lenient = await pool.start({ name: "l", scripts: [{ agent: "checker", steps: [{ tool: "task", allowUnoffered: true }] }] })
    expect((await play(lenient, openCodeLike([system("checker"), user("x")], ["bash"]))).calls[0]!.name).toBe("task")
  })
})

describe("expect.assistantIncludes", () => {
  // What the engine sends as the model's own past: after a compaction, its summary.
  const compacted = openCodeLike([system("checker", "x"), user("what did we do so far?"), { role: "assistant", content: "We edited src/a.cpp under ADR-2." }, user("continue")])
  const start = (needles: string[]) => pool.start({ name: "assistant", scripts: [{ name: "checks", agent: "checker", steps: [{ text: "summary" }, { text: "ok", expect: { assistantIncludes: needles } }] }] })

  it("passes when an assistant message holds each text", async () => {
    const m = await start(["src/a.cpp", "ADR-2"])
    expect((await play(m, compacted)).text).toBe("ok")
    expect(m.failures()).toEqual([])
  })

  it("fails loudly, naming what is missing, when none does", async () => {
    const m = await start(["src/b.cpp"])
    expect(await expectError(m, compacted)).toContain('expect.assistantIncludes: "src/b.cpp" not found')
  })
})

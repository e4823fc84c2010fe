import { afterEach, describe, expect, it } from "vitest"
import type { Scenario } from "../src/index.ts"
import { assistantCalls, assistantText, expectError, openCodeLike, play, serverPool, system, toolResult, user } from "./helpers.ts"

const pool = serverPool()
afterEach(() => pool.closeAll())

const TITLE_SYSTEM = "You are a title generator. You output ONLY a thread title. Nothing else."
const titleRequest = (prompt: string) =>
  openCodeLike([{ role: "system", content: TITLE_SYSTEM }, user("Generate a title for this conversation:\n"), user(prompt)], [])

describe("step derivation", () => {
  const scenario: Scenario = {
    name: "steps",
    scripts: [
      {
        agent: "orchestrator",
        steps: [
          { tool: "start_run", args: { plan: "p" } },
          { tool: "listen", args: {}, until: "RUN FINISHED" },
          { tool: "read", args: { filePath: "report.md" } },
          { text: "Run complete." },
        ],
      },
    ],
  }
  const sys = system("orchestrator")
  const offered = ["listen", "read", "start_run"]

  it("plays the step after the assistant messages already in the conversation", async () => {
    const m = await pool.start(scenario)
    const first = await play(m, openCodeLike([sys, user("go")], offered))
    expect(first.calls.map((c) => c.name)).toEqual(["start_run"])
    const second = await play(m, openCodeLike([sys, user("go"), assistantCalls({ id: "a", name: "start_run" }), toolResult("a", "started")], offered))
    expect(second.calls.map((c) => c.name)).toEqual(["listen"])
  })

  it("repeats an `until` step while the tool result lacks the text, then moves on", async () => {
    const m = await pool.start(scenario)
    const history = [sys, user("go"), assistantCalls({ id: "a", name: "start_run" }), toolResult("a", "started")]
    for (let i = 0; i < 3; i++) {
      history.push(assistantCalls({ id: `l${i}`, name: "listen" }), toolResult(`l${i}`, `event ${i}: task running`))
      const got = await play(m, openCodeLike(history, offered))
      expect(got.calls.map((c) => c.name)).toEqual(["listen"])
    }
    history.push(assistantCalls({ id: "l9", name: "listen" }), toolResult("l9", "RUN FINISHED: 3 tasks"))
    const next = await play(m, openCodeLike(history, offered))
    expect(next.calls.map((c) => [c.name, c.args])).toEqual([["read", { filePath: "report.md" }]])
    expect(m.requests().map((r) => r.step)).toEqual([1, 1, 1, 2])
  })

  it("supports untilRegex", async () => {
    const m = await pool.start({ name: "re", scripts: [{ agent: "o", steps: [{ tool: "listen", untilRegex: "status: (done|failed)" }, { text: "ok" }] }] })
    const s = system("o")
    const waiting = await play(m, openCodeLike([s, user("go"), assistantCalls({ id: "1", name: "listen" }), toolResult("1", "status: running")], ["listen"]))
    expect(waiting.calls[0]!.name).toBe("listen")
    const done = await play(m, openCodeLike([s, user("go"), assistantCalls({ id: "1", name: "listen" }), toolResult("1", "status: failed")], ["listen"]))
    expect(done.text).toBe("ok")
  })

  it("continues the script across user turns (a text answer consumes its step too)", async () => {
    const m = await pool.start({ name: "turns", scripts: [{ agent: "chat", steps: [{ text: "first" }, { text: "second", expect: { lastUserIncludes: ["again"] } }] }] })
    const s = system("chat")
    expect((await play(m, openCodeLike([s, user("hi")]))).text).toBe("first")
    expect((await play(m, openCodeLike([s, user("hi"), assistantText("first"), user("again")]))).text).toBe("second")
  })

  it("fails loudly when the steps are exhausted", async () => {
    const m = await pool.start(scenario)
    const done = [sys, user("go"), assistantCalls({ id: "a", name: "start_run" }), toolResult("a", "x")]
    done.push(assistantCalls({ id: "b", name: "listen" }), toolResult("b", "RUN FINISHED"))
    done.push(assistantCalls({ id: "c", name: "read" }), toolResult("c", "report"), assistantText("Run complete."), user("and now?"))
    const message = await expectError(m, openCodeLike(done, offered))
    expect(message).toContain('agent "orchestrator"')
    expect(message).toContain("script 0")
    expect(message).toContain("step 4")
    expect(message).toContain("steps exhausted")
    expect(message).toContain('lastUser="and now?"')
    expect(m.failures()).toEqual([message])
  })

  it("is deterministic for interleaved parallel conversations", async () => {
    const m = await pool.start(scenario)
    const a = openCodeLike([sys, user("go")], offered)
    const b = openCodeLike([sys, user("go"), assistantCalls({ id: "a", name: "start_run" }), toolResult("a", "RUN FINISHED")], offered)
    const results = await Promise.all([play(m, b), play(m, a), play(m, b), play(m, a)])
    expect(results.map((r) => r.calls[0]!.name)).toEqual(["listen", "start_run", "listen", "start_run"])
  })

  it("waits delayMs before answering", async () => {
    const m = await pool.start({ name: "slow", defaults: { delayMs: 5 }, scripts: [{ agent: "a", steps: [{ text: "late", delayMs: 300 }] }] })
    const t0 = Date.now()
    await play(m, openCodeLike([system("a"), user("x")]))
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290)
  })

  it("passes over a step whose `when` fails for the user message it would answer, for good: a script branches", async () => {
    const branching: Scenario = {
      name: "branch",
      scripts: [
        {
          agent: "orchestrator",
          steps: [
            { text: "Here is the plan." },
            { tool: "confirm", args: {}, when: { lastUserRegex: "^yes$" } },
            { text: "Confirmed.", when: { lastUserRegex: "^yes$" } },
            { tool: "change", args: {}, when: { lastUserExcludes: ["yes", "RUN ENDED"] } },
            { text: "Sent your changes.", when: { lastUserExcludes: ["yes", "RUN ENDED"] } },
            { text: "The run has ended.", when: { lastUserIncludes: ["RUN ENDED"] } },
          ],
        },
      ],
    }
    const offered = ["change", "confirm"]
    const m = await pool.start(branching)
    const shown = [sys, user("go"), assistantText("Here is the plan.")]
    const yes = await play(m, openCodeLike([...shown, user("yes")], offered))
    expect(yes.calls.map((c) => c.name)).toEqual(["confirm"])
    const confirmed = await play(m, openCodeLike([...shown, user("yes"), assistantCalls({ id: "c", name: "confirm" }), toolResult("c", "ok")], offered))
    expect(confirmed.text).toBe("Confirmed.")
    const change = await play(m, openCodeLike([...shown, user("tests first")], offered))
    expect(change.calls.map((c) => c.name)).toEqual(["change"])
    const sent = await play(m, openCodeLike([...shown, user("tests first"), assistantCalls({ id: "c", name: "change" }), toolResult("c", "ok")], offered))
    expect(sent.text).toBe("Sent your changes.")
    // After the confirmation's branch, the change's steps are passed over: the end plays.
    const ended = await play(m, openCodeLike([...shown, user("yes"), assistantCalls({ id: "c", name: "confirm" }), toolResult("c", "ok"), assistantText("Confirmed."), user("RUN ENDED: done")], offered))
    expect(ended.text).toBe("The run has ended.")
  })
})

describe("script selection and substitution", () => {
  const scenario: Scenario = {
    name: "executors",
    scripts: [
      { name: "special", agent: "executor", match: "^Task T-9\\b", steps: [{ text: "special" }] },
      {
        name: "any task",
        agent: "executor",
        match: "Task (?<id>T-\\d+) in (?<dir>[^\\s:]+)",
        steps: [
          { tool: "write", args: { filePath: "{{dir}}/src/{{id}}.cpp", content: "// {{id}}\n", meta: [{ tag: "{{ id }}" }], n: 3 } },
          { text: "Finished {{id}}." },
        ],
      },
    ],
  }

  it("routes by agent and first user message, substituting named groups everywhere in args", async () => {
    const m = await pool.start(scenario)
    const got = await play(m, openCodeLike([system("executor"), user("Task T-17 in /tmp/w: build it")]))
    expect(got.calls[0]!.args).toEqual({ filePath: "/tmp/w/src/T-17.cpp", content: "// T-17\n", meta: [{ tag: "T-17" }], n: 3 })
    const text = await play(
      m,
      openCodeLike([system("executor"), user("Task T-17 in /tmp/w: build it"), assistantCalls({ id: "1", name: "write" }), toolResult("1", "ok"), user("status?")]),
    )
    expect(text.text).toBe("Finished T-17.")
    expect(m.requests().map((r) => r.script)).toEqual(["any task", "any task"])
  })

  it("takes the first matching script", async () => {
    const m = await pool.start(scenario)
    expect((await play(m, openCodeLike([system("executor"), user("Task T-9 in /x")]))).text).toBe("special")
  })

  it("fails loudly when no script of the agent matches", async () => {
    const m = await pool.start(scenario)
    const message = await expectError(m, openCodeLike([system("executor"), user("Review the code")]))
    expect(message).toContain('none of the 2 script(s) for agent "executor"')
    expect(message).toContain('firstUser="Review the code"')
  })

  it("fails loudly for an agent with no script", async () => {
    const m = await pool.start(scenario)
    const message = await expectError(m, openCodeLike([system("reviewer"), user("x")]))
    expect(message).toContain('no script for agent "reviewer"')
    expect(message).toContain("offered=[bash, read, write]")
  })
})

describe("agent recognition", () => {
  it("attributes a request without a role line to `unknown` and fails loudly", async () => {
    const m = await pool.start({ name: "u", scripts: [] })
    const message = await expectError(m, openCodeLike([{ role: "system", content: "You are opencode." }, user("hi")]))
    expect(message).toContain('agent "unknown"')
    expect(message).toContain("AirCoding role")
    expect(m.requestsByAgent()).toEqual({ unknown: 1 })
  })

  it("plays a script for `unknown` when there is one", async () => {
    const m = await pool.start({ name: "u", scripts: [{ agent: "unknown", steps: [{ text: "who am I" }] }] })
    expect((await play(m, openCodeLike([user("hi")]))).text).toBe("who am I")
  })

  it("answers OpenCode's title generator automatically", async () => {
    const m = await pool.start({ name: "t", scripts: [] })
    const got = await play(m, titleRequest("read a.txt please"))
    expect(got.text).toBe("AirCoding session")
    expect(m.failures()).toEqual([])
    expect(m.requests()[0]).toMatchObject({ agent: "title", script: "auto-title", step: null, reply: { kind: "text" } })
  })

  it("recognises a tool-less request that asks for a title", async () => {
    const m = await pool.start({ name: "t", defaults: { titleText: "Custom" }, scripts: [] })
    const got = await play(m, openCodeLike([{ role: "system", content: "You name chats." }, user("Please generate a short title for this chat")], []))
    expect(got.text).toBe("Custom")
  })

  it("keeps an AirCoding agent that merely asks for a title without tools", async () => {
    const m = await pool.start({ name: "t", scripts: [{ agent: "writer", steps: [{ text: "# Release notes" }] }] })
    expect((await play(m, openCodeLike([system("writer"), user("Write a title for the release notes")], []))).text).toBe("# Release notes")
  })

  it("plays a scripted `title` instead of the automatic answer", async () => {
    const m = await pool.start({ name: "t", scripts: [{ agent: "title", steps: [{ text: "Scripted title" }] }] })
    expect((await play(m, titleRequest("x"))).text).toBe("Scripted title")
  })

  it("lets the scenario recognise agents by system-prompt regex, before the role line", async () => {
    const m = await pool.start({
      name: "o",
      agents: { build: { systemMatch: ["You are opencode", "^never$"] }, sub: { systemMatch: "AirCoding role: executor" } },
      scripts: [
        { agent: "build", steps: [{ text: "build here" }] },
        { agent: "sub", steps: [{ text: "sub here" }] },
      ],
    })
    expect((await play(m, openCodeLike([{ role: "system", content: "You are opencode, an agent" }, user("hi")]))).text).toBe("build here")
    expect((await play(m, openCodeLike([system("executor"), user("hi")]))).text).toBe("sub here")
    expect(m.requestsByAgent()).toEqual({ build: 1, sub: 1 })
  })
})

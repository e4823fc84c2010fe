import type { AssistantMessage } from "@opencode-ai/sdk"
import { describe, expect, it } from "vitest"
import { SessionCosts } from "../../src/scheduler/runtime/sessions/cost"

/**
 * A session's cost as the engine reports it on each completed assistant message (`message.updated`): the
 * engine's own `cost`, summed once per message however often it is reported; a message with tokens and no
 * cost is unpriced (its model has no price), never $0 spent.
 */
function reply(sessionID: string, id: string, cost: number, input: number, output: number): AssistantMessage {
  return {
    id,
    sessionID,
    role: "assistant",
    time: { created: 1, completed: 2 },
    parentID: "user-1",
    modelID: "scripted",
    providerID: "scripted",
    mode: "executor",
    path: { cwd: "/tmp", root: "/tmp" },
    cost,
    tokens: { input, output, reasoning: 0, cache: { read: 0, write: 0 } },
  }
}

describe("what a session's requests cost", () => {
  it("sums the engine's cost once per message, however often a message is reported", () => {
    SessionCosts.note(reply("ses-a", "m1", 0.25, 2000, 10))
    SessionCosts.note(reply("ses-a", "m1", 0.25, 2000, 10))
    SessionCosts.note(reply("ses-a", "m2", 0.5, 4000, 10))
    expect(SessionCosts.of("ses-a")).toEqual({ usd: 0.75, unpriced: 0 })
  })

  it("counts a request with tokens and no cost as unpriced, not as free", () => {
    SessionCosts.note(reply("ses-b", "m1", 0, 2000, 10))
    SessionCosts.note(reply("ses-b", "m2", 0.1, 1000, 10))
    expect(SessionCosts.of("ses-b")).toEqual({ usd: 0.1, unpriced: 1 })
  })

  it("knows nothing of a session it never heard of", () => {
    expect(SessionCosts.of("ses-none")).toBeUndefined()
  })
})

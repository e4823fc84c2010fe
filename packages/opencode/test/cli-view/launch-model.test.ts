import { describe, expect, it } from "vitest"
import { Launch } from "../../src/cli/launch"

describe("the launcher without a model", () => {
  it("stops with the fix and the offline demo, naming the command the user started with", () => {
    const problem = Launch.modelProblem({ agent: { main: {} } }, "./start.sh")
    expect(problem).toMatch(/^no model is configured/)
    expect(problem).toContain('"model": "<provider>/<model>"')
    expect(problem).toMatch(/\.\/start\.sh --scripted \S+demo-chat\.json/)
    expect(Launch.modelProblem(undefined)).toBeDefined()
  })

  it("goes on when a model is chosen, for every agent or for Main", () => {
    expect(Launch.modelProblem({ model: "anthropic/claude" })).toBeUndefined()
    expect(Launch.modelProblem({ agent: { main: { model: "local/qwen" } } })).toBeUndefined()
  })

  it("hints name ./start.sh when it launched AirCoding, else aircoding", () => {
    expect(Launch.command({ AIRCODING_COMMAND: "./start.sh" })).toBe("./start.sh")
    expect(Launch.command({})).toBe("aircoding")
  })
})

import { describe, expect, it } from "vitest"
import { Launch } from "../../src/cli/launch"
import { Help } from "../../src/cli/help"
import { Args } from "../../src/cli/args"
import { CommandLine } from "../../src/cli/command-line"

const START = { AIRCODING_COMMAND: "./start.sh" }
const SHIM = { AIRCODING_COMMAND: "aircoding" }

describe("the launcher without a model", () => {
  it("stops with the fix and the offline demo on the project folder, naming the command the user started with", () => {
    const problem = Launch.modelProblem({ agent: { main: {} } }, "/work/my proj", START)
    expect(problem).toMatch(/^no model is configured/)
    expect(problem).toContain('"model": "<provider>/<model>"')
    expect(problem).toMatch(/\.\/start\.sh '\/work\/my proj' --scripted \S+demo-chat\.json$/)
    expect(Launch.modelProblem(undefined, "/p")).toBeDefined()
  })

  it("goes on when a model is chosen, for every agent or for Main", () => {
    expect(Launch.modelProblem({ model: "anthropic/claude" }, "/p")).toBeUndefined()
    expect(Launch.modelProblem({ agent: { main: { model: "local/qwen" } } }, "/p")).toBeUndefined()
  })
})

describe("every hint names a command that works as typed", () => {
  it("./start.sh before `./start.sh env`, aircoding after it (the shim sets it) or when run by bun", () => {
    expect(CommandLine.name(START)).toBe("./start.sh")
    expect(CommandLine.name(SHIM)).toBe("aircoding")
    expect(CommandLine.name({})).toBe("aircoding")
    expect(Args.helpHint("status", START)).toBe("./start.sh status --help")
    expect(Args.helpHint(undefined, SHIM)).toBe("aircoding --help")
  })

  it("--help texts say the same command on every usage line", () => {
    for (const text of [Help.main, Help.run, Help.init, Help.doctor, Help.demo]) {
      const said = Help.say(text, START)
      expect(said).not.toMatch(/(^|\s|`)aircoding (run|demo|init|doctor|status|events|dashboard|\[dir\]|<command>)/m)
      expect(said).toContain("./start.sh")
      expect(Help.say(text, SHIM)).toBe(text)
    }
    expect(Help.say(Help.run, START)).toContain('./start.sh run [dir] --resume --answer "yes"')
  })

  it("the TUI's exit line reopens AirCoding with the same arguments, --scripted included, never a bare opencode", () => {
    expect(CommandLine.reopen("/work/calc", "/s/demo-chat.json", START)).toBe("./start.sh /work/calc --scripted /s/demo-chat.json")
    expect(CommandLine.reopen("/work/calc", undefined, SHIM)).toBe("aircoding /work/calc")
    expect(CommandLine.reopen("/it's", undefined, SHIM)).toBe(`aircoding '/it'\\''s'`)
  })
})

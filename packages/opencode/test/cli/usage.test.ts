import { afterAll, describe, expect, it } from "vitest"
import { COMMANDS as MAIN_COMMANDS, main } from "../../src/cli/main"
import { Help } from "../../src/cli/help"
import { Args } from "../../src/cli/args"
import { capture, FIXTURE } from "../cli-view/helpers"
import { makeSandbox } from "../support/sandbox"

/**
 * One usage-error policy for every command (issue 23 item 5), in process through `main` (nothing here
 * starts the engine): one line saying what, with the nearest known flag or command, the help hint of that
 * command, exit Args.USAGE_EXIT (1) — never Node's parser text, never the whole help.
 */
const sandbox = makeSandbox("air-usage-")
afterAll(() => sandbox.cleanup())

/** Every command of `aircoding`: the parser's list, which main's table is typed by and the help names. */
const COMMANDS = Args.COMMANDS

async function usage(args: string[]) {
  const r = await capture(() => main(args))
  expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(Args.USAGE_EXIT)
  const lines = r.stderr.trimEnd().split("\n")
  expect(lines, r.stderr).toHaveLength(2)
  expect(r.stderr).not.toMatch(/To specify a positional|ERR_PARSE_ARGS|Unknown option '|Usage:/)
  expect(r.stdout).toBe("")
  return lines
}

describe("usage errors: one line, the nearest known word, the command's help hint, exit 1", () => {
  it("exit 1 is the one usage exit code (2 means the run waits for you)", () => {
    expect(Args.USAGE_EXIT).toBe(1)
  })

  it("the list driven here is every command: main's table and the help name the same ones", () => {
    expect([...MAIN_COMMANDS].sort()).toEqual([...COMMANDS].sort())
    for (const command of COMMANDS) expect(Help.main, command).toMatch(new RegExp(`^  aircoding ${command}\\b`, "m"))
  })

  it("with no command: an unknown flag names the flag and the main help", async () => {
    const [bogus, hint] = await usage(["--bogus"])
    expect(bogus).toBe("aircoding: unknown option --bogus")
    expect(hint).toBe("Run `aircoding --help` for usage.")
  })

  it.each(["list", "show", "forget", "setup"])("knowledge %s: an unknown flag after the verb is the same usage error", async (verb) => {
    expect(await usage(["knowledge", verb, "--bogus"])).toEqual(["aircoding: unknown option --bogus", "Run `aircoding knowledge --help` for usage."])
  })

  it("knowledge setup with both --run and --check: exit 1, not 2 (2 means a run waits for you)", async () => {
    expect(await usage(["knowledge", "setup", sandbox.root, "--run", "true", "--check", "true"])).toEqual([
      "aircoding: knowledge setup: give --run or --check, not both",
      "Run `aircoding knowledge --help` for usage.",
    ])
  })

  it("run: a misspelt --exit-on-question names the flag, which the run's help documents", async () => {
    expect(await usage(["run", "--exit-on-questoin"])).toEqual(["aircoding: unknown option --exit-on-questoin; did you mean --exit-on-question?", "Run `aircoding run --help` for usage."])
    expect(Help.run).toMatch(/^ {2}--exit-on-question {2}stop at the first question/m)
  })

  it.each(COMMANDS)("%s: an unknown flag names the flag; a misspelt one names the nearest flag", async (command) => {
    const [bogus, hint] = await usage([command, "--bogus"])
    expect(bogus).toBe("aircoding: unknown option --bogus")
    expect(hint).toBe(`Run \`aircoding ${command} --help\` for usage.`)
    const [misspelt] = await usage([command, "--jsno"])
    // The servers and traces export have no --json: nothing is near enough to name.
    if (command === "dashboard" || command === "metrics" || command === "traces") expect(misspelt).toBe("aircoding: unknown option --jsno")
    else expect(misspelt).toBe("aircoding: unknown option --jsno; did you mean --json?")
  })

  it.each(COMMANDS.filter((c) => c !== "demo"))("%s: a mistyped command after it is said as one, not as a directory", async (command) => {
    const [line] = await usage([command, sandbox.root, "stauts"])
    expect(line).toBe("aircoding: unknown command 'stauts'; did you mean status?")
  })

  it("a mistyped command first, alone or followed by a directory", async () => {
    expect((await usage(["stauts"]))[0]).toBe("aircoding: unknown command 'stauts'; did you mean status?")
    expect((await usage(["staus", FIXTURE]))[0]).toBe("aircoding: unknown command 'staus'; did you mean status?")
    expect((await usage(["evnets", FIXTURE, "--json"]))[0]).toBe("aircoding: unknown command 'evnets'; did you mean events?")
    expect((await usage(["--scripted", "x.json", "dashbord"]))[0]).toBe("aircoding: unknown command 'dashbord'; did you mean dashboard?")
  })

  it("a flag without its value, a value where none is taken, a second directory, a bad value", async () => {
    expect((await usage(["run", "--answer"]))[0]).toBe("aircoding: --answer needs a value")
    expect((await usage(["status", "--json=yes"]))[0]).toBe("aircoding: --json takes no value")
    expect((await usage(["events", FIXTURE, sandbox.root]))[0]).toMatch(/^aircoding: unexpected argument '.+': expected at most one directory$/)
    expect((await usage(["status", FIXTURE, "--lang", "fr"]))[0]).toMatch(/^aircoding: .*fr/)
    expect((await usage(["dashboard", FIXTURE, "--port", "http"]))[0]).toBe("aircoding: --port http: expected a port number from 0 to 65535")
    expect((await usage(["init", FIXTURE, "--jobs", "0"]))[0]).toBe("aircoding: --jobs must be a positive whole number, got 0")
    expect((await usage(["demo", "somewhere"]))[0]).toBe("aircoding: unexpected argument 'somewhere': this command takes no directory")
    expect((await usage(["status", "/no/such/dir"]))[0]).toBe("aircoding: directory not found: /no/such/dir")
  })

  it("the hint names ./start.sh when AirCoding was started by it", async () => {
    const before = process.env.AIRCODING_COMMAND
    process.env.AIRCODING_COMMAND = "./start.sh"
    try {
      expect((await usage(["events", "--bogus"]))[1]).toBe("Run `./start.sh events --help` for usage.")
      const help = await capture(() => main(["status", "--help"]))
      expect(help.code).toBe(0)
      expect(help.stdout).toContain("./start.sh status [dir] [--json]")
    } finally {
      if (before === undefined) delete process.env.AIRCODING_COMMAND
      else process.env.AIRCODING_COMMAND = before
    }
  })
})

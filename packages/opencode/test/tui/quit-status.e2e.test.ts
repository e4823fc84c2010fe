import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, test } from "vitest"
import { aircoding } from "../support/engine"
import { aircodingBin, bunBinary } from "../support/sandbox"
import { DemoRun } from "./demo-run"

/**
 * Status tells the truth after the TUI is gone mid-build (issue 39 item 3): the person quits with Ctrl-C, or the
 * TUI is SIGKILLed with everything it started, while a task's gate runs. What is left behind (the running gate's
 * progress file, jobs.json with the gate's command holding its jobs) must not read as a run at work: `aircoding
 * status` says "interrupted", shows no gate running and no job in use, and prints the command that reopens the
 * TUI on the run (`aircoding <dir> --scripted …`, the AirCoding launcher, not the bare engine). That command, typed as
 * printed, brings the run to its end. The shipped demo-chat.json, unmodified. One TUI per path, about a minute each:
 * a soak step with the other paths (AIR_TUI_PATHS=1).
 */
const { until, has, dialogShown, EN_DIALOG, submitRequirement } = DemoRun

afterEach(() => DemoRun.closeAll(), 60_000)

/** The run's progress files that say a gate is running (written by the gate's command while it runs). */
function gateProgress(dir: string): string[] {
  const folder = join(dir, ".air", "local", "state", "progress")
  if (!existsSync(folder)) return []
  return readdirSync(folder)
    .filter((f) => /^T-\d+\.json$/.test(f))
    .filter((f) => {
      try {
        return /"gate":"[a-z-]+"/.test(readFileSync(join(folder, f), "utf8"))
      } catch {
        return false
      }
    })
}

/** Starts the demo, confirms its plan in the dialog, and returns once a task's gate is running. */
async function midBuild(): Promise<DemoRun.Demo> {
  const demo = DemoRun.start()
  await submitRequirement(demo.tui)
  await until(demo.tui, dialogShown(EN_DIALOG, "Three tasks. T-1 adds calc::mul"), 420_000, "the plan dialog")
  demo.tui.press("Enter") // an empty answer confirms
  await until(demo.tui, () => gateProgress(demo.dir).length > 0, 600_000, "a task's gate running (its progress file)")
  return demo
}

async function status(demo: DemoRun.Demo): Promise<{ json: any; text: string }> {
  const opts = { cwd: demo.dir, env: demo.sandbox.env, timeoutMs: 120_000 }
  const json = await aircoding(["status", demo.dir, "--json"], opts)
  expect(json.code, json.stderr).toBe(0)
  const text = await aircoding(["status", demo.dir], opts)
  expect(text.code, text.stderr).toBe(0)
  return { json: JSON.parse(json.stdout), text: text.stdout }
}

/** What status says of a run whose TUI is gone: interrupted, nothing running, the reopening command. */
function expectInterrupted(demo: DemoRun.Demo, seen: { json: any; text: string }): void {
  const reopen = `aircoding ${demo.dir} --scripted ${DemoRun.SCENARIO}`
  expect(seen.json.status).toBe("interrupted")
  expect(seen.json.resume).toBe(reopen)
  expect(seen.json.waitingFor).toEqual([{ kind: "interrupted", resume: reopen }])
  expect(seen.json.tasks.filter((t: any) => t.progress)).toEqual([])
  expect(seen.json.budgets.active).toBe(0)
  if (seen.json.budgets.jobs) expect(seen.json.budgets.jobs).toMatchObject({ inUse: 0, waiting: 0 })
  expect(seen.text).toMatch(/— interrupted$/m)
  // The command on a line of its own, whole: copied from the terminal, it works.
  expect(seen.text.split("\n")).toContain(`    ${reopen}`)
  expect(seen.text).not.toMatch(/^\s*T-\d+: (build|test|cppcheck|diff|commit) /m)
  expect(seen.text).not.toMatch(/jobs: [1-9]\d* of/)
}

describe.skipIf(!process.env.AIR_TUI_PATHS)("status after the TUI is gone mid-build (scenarios/demo-chat.json as shipped)", () => {
  test("quit with Ctrl-C while a gate runs: status says interrupted, nothing running, and how to reopen", async () => {
    const demo = await midBuild()
    // The engine quits on Ctrl-C (a second one if the first only cleared something); the launcher prints its hint.
    for (let i = 0; i < 10 && !/^EXITED \d+$/m.test(demo.tui.screen()); i++) {
      demo.tui.press("C-c")
      await new Promise((r) => setTimeout(r, 3_000))
    }
    const exit = await demo.tui.waitFor(/^EXITED \d+$/m, 60_000, "the TUI to exit")
    // The exit screen names the command that keeps AirCoding, with the scenario used.
    expect(exit).toContain(`--scripted ${DemoRun.SCENARIO}`)
    expectInterrupted(demo, await status(demo))
  }, 1_200_000)

  test("SIGKILL of the TUI and all it started: status says interrupted; the printed command reopens it and the run ends", async () => {
    const demo = await midBuild()
    const killed = await demo.tui.kill()
    expect(killed.length).toBeGreaterThan(1) // the launcher and the engine at least
    expect(gateProgress(demo.dir).length).toBeGreaterThan(0) // left behind, as a crash leaves it
    const seen = await status(demo)
    expectInterrupted(demo, seen)

    const words = String(seen.json.resume).split(" ")
    expect(words[0]).toBe("aircoding")
    demo.tui.reopen("resumed", [bunBinary(), aircodingBin, ...words.slice(1)])
    await until(demo.tui, has("AirCoding · done"), 900_000, "the reopened TUI's sidebar to say done")
    const merged = demo.events().filter((e) => e.type === "merge.succeeded").map((e) => e.taskId)
    expect([...merged].sort()).toEqual(["T-1", "T-2", "T-3"])
    const after = await status(demo)
    expect(after.json.status).toBe("done")
    expect(after.json.resume).toBeUndefined()
  }, 1_500_000)
})

import { execFileSync } from "node:child_process"
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { Paths } from "../../src/engine"
import { aircodingBin, bunBinary, makeSandbox, type Sandbox } from "../support/sandbox"
import { writeScenario } from "../support/engine"
import { columnOf, columns, dialog, finishedScreen, sidebar, TuiDriver } from "../support/tui"
import { golden } from "./golden"
import { catalog } from "../../src/text/words"

/**
 * AirCoding's TUI plugin in the real TUI (tmux, 200x50), the scripted model, real git/cmake/ctest/cppcheck:
 * one engine, one run. The plan is confirmed in the plugin's dialog, /air-status is answered while Main
 * waits in air_listen (the model sees no request for it), and the sidebar follows the tasks to the end.
 */
let sandbox: Sandbox
let dir: string
let tui: TuiDriver
let modelLog: string

/**
 * The demo scenario, with an Architect that keeps its session until the user confirms (it asks again every
 * 1.5 s), and one provider error on the first executor call.
 */
function scenario(): Record<string, unknown> {
  const demo = JSON.parse(readFileSync(join(Paths.scenarios, "demo.json"), "utf8"))
  const architect = demo.scripts.find((s: { name: string }) => s.name === "architect")
  const [adr, propose, plan] = architect.steps
  architect.steps = [
    adr,
    propose,
    { ...plan, until: "Task graph accepted", delayMs: 1500 },
    { text: "Plan written: T-1 and T-2 in parallel, T-3 after both." },
    // The runtime may prompt the Architect once more with the confirmation; nothing is left to do.
    { text: "The task graph is already written." },
  ]
  // The first executor call meets a 503 the engine retries after the provider's advised 10 s: the sidebar says so.
  return { ...demo, name: "tui", inject: [{ status: 503, agent: "executor", times: 1, retryAfter: "10" }] }
}

type Request = { agent: string; seq: number; lastUser?: string; reply?: { tools?: string[] } }
/**
 * Main's requests that carried out or relayed `tool` (or were prompted by the command `command`): Main is
 * also woken by the run's news (conv: main-wake), so a count of all its requests would measure those too.
 */
const mainRequestsFor = (tool: string, command: string): Request[] =>
  requests().filter((r) => r.agent === "main" && (r.reply?.tools?.includes(tool) || (r.lastUser ?? "").includes(command)))

/**
 * The sidebar's words in one line. The renderer starts a wrapped line's continuation a column or two left of
 * the sidebar's edge, so the rows are read from a little before it.
 */
function sidebarWords(screen: string): string {
  const lines = screen.split("\n")
  const from = lines.findIndex((l) => l.includes("AirCoding · "))
  if (from < 0) return ""
  const col = Math.max(0, columnOf(lines[from]!, lines[from]!.indexOf("AirCoding · ")) - 4)
  return lines
    .slice(from)
    .map((l) => columns(l, col).replace(/^[\s┃│]+/, ""))
    .join(" ")
    .replace(/\s+/g, " ")
}

const requests = (): Request[] =>
  existsSync(modelLog)
    ? readFileSync(modelLog, "utf8")
        .trim()
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : []

const events = (): ({ type: string } & Record<string, unknown>)[] => {
  const file = join(dir, ".air", "local", "state", "events.jsonl")
  return existsSync(file) ? readFileSync(file, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l)) : []
}

beforeAll(() => {
  sandbox = makeSandbox("air-tui-")
  dir = join(sandbox.root, "calc")
  cpSync(join(Paths.samples, "cpp-calc"), dir, { recursive: true })
  const git = (...args: string[]) => execFileSync("git", args, { cwd: dir, env: sandbox.env, stdio: "ignore" })
  git("init", "-q", "-b", "main")
  git("add", "-A")
  git("commit", "-q", "-m", "cpp-calc sample")
  modelLog = join(sandbox.root, "model.jsonl")
  const file = writeScenario(sandbox, scenario())
  tui = TuiDriver.start({
    root: sandbox.root,
    cwd: dir,
    env: { ...sandbox.env, AIRCODING_SCRIPTED_LOG: modelLog },
    command: [bunBinary(), aircodingBin, dir, "--scripted", file],
  })
})

afterAll(async () => {
  await tui?.stop()
  sandbox?.cleanup()
}, 60_000)

describe("AirCoding in the TUI", () => {
  test("the requirement typed in the TUI brings the Architect's plan up as a dialog", async () => {
    // Inactivity bounds for a loaded 2-core machine, where the engine's cold start alone has taken minutes.
    await tui.waitFor("Ask anything", 420_000, "the TUI's prompt")
    tui.type("Add mul and avg3 to calc")
    tui.press("Enter")
    // The dialog is read once it is drawn whole (its title, the plan, the engine's footer), not when its title
    // first shows: on a loaded machine the renderer draws it over several frames.
    const whole = (s: string) => s.includes("The Architect proposes a plan") && s.includes("Three tasks. T-1 adds calc::mul") && s.includes("enter submit")
    const screen = await tui.waitFor(whole, 420_000, "the plan dialog, drawn whole")
    golden("plan-dialog.en.txt", dialog(screen, "The Architect proposes a plan", "enter submit"))
    const waiting = await tui.waitFor((s) => s.includes("AirCoding · waiting"), 30_000, "the sidebar's status word")
    golden("sidebar-waiting.en.txt", sidebar(waiting))
  }, 900_000)

  test("/air-status answers at once, with no model request for it", async () => {
    tui.press("Escape") // leave the plan dialog for now; /air-answer brings it back
    await tui.waitFor((s) => !s.includes("The Architect proposes a plan"), 30_000, "the dialog to close")
    expect(requests().filter((r) => r.agent === "main").length).toBeGreaterThan(0)
    tui.type("/air-status")
    await tui.waitFor("AirCoding: show the run", 30_000, "the command in the slash menu")
    tui.press("Enter")
    const screen = await tui.waitFor("AirCoding run", 30_000, "the status dialog")
    expect(screen).toMatch(/Run run-\w+ — waiting/)
    expect(screen).toMatch(/- your confirmation of the plan/)
    tui.press("Enter")
    await tui.waitFor((s) => !s.includes("AirCoding run"), 30_000, "the status dialog to close")
    // The status came from code: no model request asked for it or carried it.
    expect(mainRequestsFor("air_status", "/air-status")).toEqual([])
  }, 120_000)

  test("confirming in the dialog starts the run; pause and resume act at once; the sidebar follows every task to merged", async () => {
    tui.type("/air-answer")
    await tui.waitFor("AirCoding: answer the plan", 30_000, "the command in the slash menu")
    tui.press("Enter")
    await tui.waitFor("The Architect proposes a plan", 30_000, "the plan dialog again")
    tui.press("Enter") // an empty answer confirms
    await tui.waitFor(() => events().some((e) => e.type === "plan.confirmed"), 30_000, "plan.confirmed in the log")
    // The confirmation went to the Scheduler in code: Main made no request to relay it.
    expect(mainRequestsFor("air_confirm", "/air-answer")).toEqual([])
    // The engine waits to retry the executor's call: the sidebar names the task and the time of the next attempt,
    // and says nothing of it once that time has passed.
    const retryLine = /(T-[12]): the executor's model call retries at (\d\d:\d\d:\d\d)/
    const retrying = sidebarWords(await tui.waitFor((s) => retryLine.test(sidebarWords(s)), 300_000, "the executor's retry in the sidebar"))
    const retry = events().find((e) => e.type === "model.retrying") as { taskId?: string; nextAt: string; attempt: number } | undefined
    expect(retry).toMatchObject({ taskId: retrying.match(retryLine)![1], attempt: 1 })
    expect(retry!.nextAt.slice(11, 19)).toBe(retrying.match(retryLine)![2])
    await tui.waitFor((s) => !/model call retries at/.test(sidebarWords(s)), 60_000, "the retry line to go once its time passed")
    const running = await tui.waitFor(/T-3 +pending/, 180_000, "the task graph in the sidebar")
    expect(running).toMatch(/T-1 /)
    // T-3 waits for T-1 and T-2: time enough to pause and resume before it could start.
    tui.type("/air-pause")
    await tui.waitFor("AirCoding: pause the run", 30_000, "/air-pause in the slash menu")
    tui.press("Enter")
    await tui.waitFor("AirCoding · paused", 30_000, "the sidebar to say paused")
    expect(events().some((e) => e.type === "run.paused")).toBe(true)
    tui.type("/air-resume")
    await tui.waitFor("AirCoding: resume the run", 30_000, "/air-resume in the slash menu")
    tui.press("Enter")
    await tui.waitFor(() => events().some((e) => e.type === "run.resumed"), 30_000, "run.resumed in the log")
    expect([...mainRequestsFor("air_pause", "/air-pause"), ...mainRequestsFor("air_resume", "/air-resume")]).toEqual([])
    // The language setting changes while the run goes on: the sidebar speaks it from the next event on.
    const config = join(dir, ".air", "shared", "config.json")
    mkdirSync(join(dir, ".air", "shared"), { recursive: true })
    const current = existsSync(config) ? JSON.parse(readFileSync(config, "utf8")) : {}
    writeFileSync(config, JSON.stringify({ ...current, language: "zh-CN" }, null, 2))
    // The end of the run is a toast, in the new language too. Toasts last 5 s: it is watched for from now on,
    // not after the sidebar (on a loaded machine the sidebar's last redraw can come after the toast is gone).
    await tui.waitFor("运行结束：所有任务均已合并", 600_000, "the end-of-run toast")
    const done = await finishedScreen(tui, dir, "AirCoding · 已完成", catalog("zh-CN")["check.final"], 60_000)
    for (const id of ["T-1", "T-2", "T-3"]) expect(done).toMatch(new RegExp(`${id} 已合并`))
    golden("sidebar-done.zh-CN.txt", sidebar(done))
  }, 900_000)
})

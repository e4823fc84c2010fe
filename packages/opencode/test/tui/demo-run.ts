import { execFileSync } from "node:child_process"
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Paths } from "../../src/engine"
import { aircodingBin, bunBinary, makeSandbox, type Sandbox } from "../support/sandbox"
import { columnOf, columns, TuiDriver } from "../support/tui"

/**
 * The README's offline demo in a real TUI (tmux): the cpp-calc sample in a fresh repository, AirCoding started on it
 * with the shipped scenarios/demo-chat.json, unmodified. Shared by the TUI files that walk a person's paths.
 */
export namespace DemoRun {
  export const SCENARIO = join(Paths.scenarios, "demo-chat.json")
  export const REQUIREMENT = "Add mul and avg3 to calc"
  /** Main's last words in demo-chat.json, said once RUN ENDED reaches it. */
  export const RUN_ENDED_IN_CHAT = "The run has ended"
  export const EN_DIALOG = "The Architect proposes a plan"
  export const ZH_FIELD = "留空 = 确认；或输入需要的修改"

  export type Event = { type: string } & Record<string, unknown>
  export type Demo = { sandbox: Sandbox; dir: string; tui: TuiDriver; events: () => Event[]; command: string[] }

  const open: Demo[] = []

  export function start(opts: { width?: number; height?: number; language?: "en" | "zh-CN" } = {}): Demo {
    const sandbox = makeSandbox("air-paths-")
    const dir = join(sandbox.root, "calc")
    cpSync(join(Paths.samples, "cpp-calc"), dir, { recursive: true })
    if (opts.language) {
      mkdirSync(join(dir, ".air", "shared"), { recursive: true })
      writeFileSync(join(dir, ".air", "shared", "config.json"), JSON.stringify({ language: opts.language }, null, 2))
    }
    const git = (...args: string[]) => execFileSync("git", args, { cwd: dir, env: sandbox.env, stdio: "ignore" })
    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-q", "-m", "cpp-calc sample")
    const command = [bunBinary(), aircodingBin, dir, "--scripted", SCENARIO]
    const tui = TuiDriver.start({ root: sandbox.root, cwd: dir, env: sandbox.env, command, width: opts.width, height: opts.height })
    const log = join(dir, ".air", "local", "state", "events.jsonl")
    const events = () => (existsSync(log) ? readFileSync(log, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l) as Event) : [])
    const d = { sandbox, dir, tui, events, command }
    open.push(d)
    return d
  }

  /** Every demo started since the last call: their programs ended, their sandboxes removed (an afterEach). */
  export async function closeAll(): Promise<void> {
    for (const d of open.splice(0)) {
      await d.tui.stop()
      d.sandbox.cleanup()
    }
  }

  /**
   * Waits until the screen shows `what`, failing at once when the program has exited (its window then shows
   * "EXITED <code>") instead of waiting out the deadline. The deadline is an inactivity bound for a loaded machine.
   */
  export async function until(tui: TuiDriver, what: (screen: string) => boolean, timeoutMs: number, label: string): Promise<string> {
    const screen = await tui.waitFor((s) => what(s) || /^EXITED \d+$/m.test(s), timeoutMs, label)
    if (!what(screen)) throw new Error(`the program exited while waiting for ${label}; the screen was:\n${screen}`)
    return screen
  }

  export const has = (text: string) => (s: string) => s.includes(text)
  /** The plan dialog drawn whole: its title, the plan's summary, and `last` (the engine's footer, or the answer field's placeholder). */
  export const dialogShown = (title: string, summary: string, last = "enter submit") => (s: string) => s.includes(title) && s.includes(summary) && s.includes(last)

  /** The Main chat's column: the screen left of the sidebar (which starts with "AirCoding · "). */
  export function chat(screen: string): string {
    const lines = screen.split("\n")
    const head = lines.find((l) => l.includes("AirCoding · "))
    const edge = head ? columnOf(head, head.indexOf("AirCoding · ")) - 2 : 10_000
    return lines.map((l) => columns(l, 0, edge)).join("\n")
  }

  export async function submitRequirement(tui: TuiDriver): Promise<void> {
    // Inactivity bounds for a loaded 2-core machine, where the engine's cold start alone has taken minutes.
    await until(tui, has("Ask anything"), 420_000, "the TUI's prompt")
    tui.submit(REQUIREMENT)
  }
}

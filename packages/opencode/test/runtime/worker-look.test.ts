import { execFileSync } from "node:child_process"
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { Orchestrators, type Orchestrator } from "../../src/scheduler/runtime/orchestrator"
import { Store } from "../../src/scheduler/runtime/store/store"
import { Worktrees } from "../../src/scheduler/runtime/git/worktree"
import { pixel } from "../support/ui-project"
import { leftovers } from "../verify/ui-programs"
import { TEST_CONFIG } from "../scheduler/simulate"
import { graphOf, task } from "../scheduler/fixtures"

/**
 * The workers' looks (issue 37, item 4) on real programs, through the orchestrator's method the air_capture and
 * air_probe tools call: a project with the Xlib test window and the line service, built by the toolchain's build
 * command through the build gate, a run whose three tasks (ui, service, code) were dispatched by the real runtime
 * into their own worktrees. The engine is a stand-in that only hands out session ids; the Scheduler records each
 * session's purpose as it does for the engine's. A planted fault in a worktree makes the task's own look fail, its
 * repair makes it pass; a build that fails answers with the build's failure; a code task's look is refused.
 */
const HERE = dirname(fileURLToPath(import.meta.url))
const TITLE = "Look test window"
const BG = "#3366cc"
const FG = "#ff8000"
const BUILD = "mkdir -p build && g++ -O1 -o build/xwindow src/xwindow.cpp -lX11 && g++ -O1 -o build/line-service src/line-service.cpp"
const ui = { command: "build/xwindow", args: ["draw", BG, FG, TITLE], checks: { title: TITLE, pixels: [{ x: 160, y: 120, rgb: FG }] } }
const service = {
  service: { command: "build/line-service", args: [] },
  ports: [7000],
  probe: { command: "nc", args: ["-N", "127.0.0.1", "7000"], input: "PING\n", expect: { contains: "PONG" } },
}
const graph = graphOf(
  task("U-1", { kind: "ui", writeSet: [{ path: "src/xwindow.cpp", action: "modify" }], ui }),
  task("S-1", { kind: "service", writeSet: [{ path: "src/line-service.cpp", action: "modify" }], service }),
  task("C-1", { kind: "code", writeSet: [{ path: "src/other.cpp", action: "modify" }] }),
)

let root: string
let orchestrator: Orchestrator
/** Session ids by task, as the stand-in engine handed them out to the runtime's dispatch. */
const sessions = new Map<string, string>()
const prompted = new Set<string>()

/** The engine's session API as far as a dispatch uses it: ids handed out, prompts accepted. */
const standIn = {
  session: {
    create: async (req: { body?: { title?: string } }) => {
      const id = `ses_look_${sessions.size + 1}`
      sessions.set(req.body?.title?.split(" ").pop() ?? id, id)
      return { data: { id } }
    },
    promptAsync: async (req: { path: { id: string } }) => {
      prompted.add(req.path.id)
      return {}
    },
    abort: async () => ({}),
    messages: async () => ({ data: [] }),
  },
}

const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, encoding: "utf8", stdio: "pipe" })

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "air-worker-look-"))
  mkdirSync(join(root, "src"))
  mkdirSync(join(root, ".air", "shared", "rules"), { recursive: true })
  copyFileSync(join(HERE, "..", "verify", "xwindow.cpp"), join(root, "src", "xwindow.cpp"))
  copyFileSync(join(HERE, "..", "verify", "line-service.cpp"), join(root, "src", "line-service.cpp"))
  writeFileSync(join(root, "src", "other.cpp"), "int other() { return 1; }\n")
  writeFileSync(join(root, ".air", "shared", "rules", "toolchain.json"), JSON.stringify({ schemaVersion: 1, build: [BUILD], test: [] }))
  writeFileSync(join(root, ".gitignore"), "build/\n.air/local/\n")
  git(root, "init", "-q", "-b", "main")
  git(root, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
  git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "the programs")
  const store = await Store.open(join(root, ".air"))
  const at = new Date().toISOString()
  // Long timers: no session of the stand-in ever speaks, and the looks must not race the inactivity rule.
  store.append({ type: "run.started", at, runId: "r-look", requirement: "Look at the programs.", config: { ...TEST_CONFIG, inactivityMs: 3_600_000, wallClockMs: 3_600_000 } })
  store.append({ type: "plan.proposed", at, summary: "three tasks" })
  store.append({ type: "plan.confirmed", at })
  store.append({ type: "graph.accepted", at, graph })
  store.close()
  Orchestrators.attach(root, standIn as never)
  orchestrator = Orchestrators.forRoot(root)
  await orchestrator.start()
  // The runtime dispatches the three tasks: each worktree made, each session recorded, then prompted.
  for (let i = 0; i < 600 && prompted.size < 3; i++) await new Promise((r) => setTimeout(r, 100))
  expect([...sessions.keys()].sort()).toEqual(["C-1", "S-1", "U-1"])
}, 120_000)

afterAll(async () => {
  if (root) {
    expect(await leftovers(root)).toEqual([])
    rmSync(root, { recursive: true, force: true })
  }
})

const worktree = (taskId: string) => Worktrees.pathFor(root, taskId)
/** A planted fault in a worktree: `from` becomes `to` in `file`; undone by swapping the two. */
function plant(taskId: string, file: string, from: string, to: string): void {
  const path = join(worktree(taskId), file)
  const text = readFileSync(path, "utf8")
  expect(text).toContain(from)
  writeFileSync(path, text.replace(from, to))
}
const look = (taskId: string, tool: "air_capture" | "air_probe", override = {}) => orchestrator.look(sessions.get(taskId)!, tool, override)

describe("air_capture: the ui task's window, on the worker's worktree", () => {
  test("a planted blank window fails (exit 1) with the reason, the window tree and the evidence; the repair passes (exit 0)", async () => {
    plant("U-1", "src/xwindow.cpp", `const bool blank = mode == "blank";`, "const bool blank = true;")
    const failed = await look("U-1", "air_capture")
    expect(failed.exit, failed.text).toBe(1)
    expect(failed.text).toMatch(/^air_capture of task U-1: FAILED/)
    expect(failed.text).toMatch(/the window stayed blank/)
    expect(failed.text).toContain(`"${TITLE}" 320x240`)
    const blankShot = join(failed.outDir, "screenshot.png")
    expect(failed.text).toContain(blankShot)
    // The evidence is the task's, outside the worktree the program could write.
    expect(failed.outDir.startsWith(join(root, ".air", "local", "evidence", "U-1", "looks"))).toBe(true)
    expect(pixel(blankShot, 160, 120)).not.toBe(FG)

    plant("U-1", "src/xwindow.cpp", "const bool blank = true;", `const bool blank = mode == "blank";`)
    const passed = await look("U-1", "air_capture")
    expect(passed.exit, passed.text).toBe(0)
    expect(passed.text).toMatch(/^air_capture of task U-1: PASSED/)
    expect(passed.outDir).not.toBe(failed.outDir)
    // The test's own reading of the picture, not the look's verdict.
    expect(pixel(join(passed.outDir, "screenshot.png"), 160, 120)).toBe(FG)
    const windows = JSON.parse(readFileSync(join(passed.outDir, "windows.json"), "utf8"))
    expect(windows.windows.map((w: { title: string | null }) => w.title)).toContain(TITLE)
  }, 180_000)

  test("a look at other arguments runs them under the task's checks, and says it verifies nothing", async () => {
    const other = await look("U-1", "air_capture", { args: ["blank", BG, FG, TITLE] })
    expect(other.exit, other.text).toBe(1)
    expect(other.text).toMatch(/the window stayed blank/)
    expect(other.text).toMatch(/reproduces or verifies nothing/)
  }, 120_000)

  test("a build that fails answers with the build's failure (exit 2), and nothing is started", async () => {
    const source = join(worktree("U-1"), "src", "xwindow.cpp")
    const good = readFileSync(source, "utf8")
    writeFileSync(source, good + "\nint broken( {\n")
    try {
      const result = await look("U-1", "air_capture")
      expect(result.exit, result.text).toBe(2)
      expect(result.text).toMatch(/The build failed, so nothing was started/)
      expect(result.text).toMatch(/src\/xwindow\.cpp:\d+/)
      expect(existsSync(join(result.outDir, "build.log"))).toBe(true)
      expect(existsSync(join(result.outDir, "screenshot.png"))).toBe(false)
    } finally {
      writeFileSync(source, good)
    }
  }, 120_000)
})

describe("air_probe: the service task's exchange, on the worker's worktree", () => {
  test("a planted wrong reply fails (exit 1) with the captured exchange; the repair passes (exit 0) with the pcap", async () => {
    plant("S-1", "src/line-service.cpp", `std::string reply = "PONG";`, `std::string reply = "PANG";`)
    const failed = await look("S-1", "air_probe")
    expect(failed.exit, failed.text).toBe(1)
    expect(failed.text).toMatch(/^air_probe of task S-1: FAILED/)
    expect(failed.text).toMatch(/lacks 'PONG'/)
    expect(failed.text).toMatch(/Network summary/)
    expect(failed.text).toContain("PANG")

    plant("S-1", "src/line-service.cpp", `std::string reply = "PANG";`, `std::string reply = "PONG";`)
    const passed = await look("S-1", "air_probe")
    expect(passed.exit, passed.text).toBe(0)
    expect(passed.text).toMatch(/^air_probe of task S-1: PASSED/)
    const pcap = join(passed.outDir, "capture.pcap")
    expect(passed.text).toContain(pcap)
    // The reply's bytes are in the capture itself.
    expect(readFileSync(pcap).includes(Buffer.from("PONG\n"))).toBe(true)
  }, 180_000)
})

describe("who may look at what", () => {
  test("a code task's look is refused with what to do instead; so is the other kind's look and a session that is no worker", async () => {
    await expect(look("C-1", "air_capture")).rejects.toThrow(/task C-1 is a code task: nothing to capture\. Check your work with the build and the tests/)
    await expect(look("U-1", "air_probe")).rejects.toThrow(/air_probe looks at a service task's program, and task U-1 is a ui task/)
    await expect(orchestrator.look("ses_main", "air_capture", {})).rejects.toThrow(/for the executor or debugger session of a task/)
    expect(existsSync(join(root, ".air", "local", "evidence", "C-1", "looks"))).toBe(false)
  })

  test("a look's arguments are checked (zod): air_capture takes no input, a command is a non-empty string", async () => {
    await expect(look("U-1", "air_capture", { input: "PING\n" })).rejects.toThrow(/air_capture takes no input/)
    await expect(look("U-1", "air_capture", { command: "" })).rejects.toThrow(/command/)
  })
})

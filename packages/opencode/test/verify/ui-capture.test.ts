import { spawn } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest"
import { Proc } from "../../src/scheduler/runtime/process"
import { DisplaySandbox } from "../../src/scheduler/runtime/verify/display-sandbox"
import { Png } from "../../src/scheduler/runtime/verify/png"
import { UiCapture } from "../../src/scheduler/runtime/verify/ui-capture"
import { UiSpec } from "../../src/scheduler/runtime/verify/ui-spec"
import { UiTools } from "../../src/scheduler/runtime/verify/ui-tools"
import { WindowTree } from "../../src/scheduler/runtime/verify/window-tree"
import { bunBinary } from "../support/sandbox"
import { buildQtProgram, leftovers, makeUiWorkspace, type UiWorkspace } from "./ui-programs"

// Real Xvfb, xwd, xwininfo and bwrap (./start.sh test installs them), real programs built here with g++.
const BLUE = "#3366cc"
const ORANGE = "#ff8000"
const GREEN = "#00ff00"
const TITLE = "AirCoding test window"

let ws: UiWorkspace
beforeAll(() => {
  ws = makeUiWorkspace()
})
afterAll(() => {
  if (ws) rmSync(ws.root, { recursive: true, force: true })
})
afterEach(async () => {
  // Nothing a capture started survives it: no Xvfb, no program, no sandbox (they all name the test's files).
  expect(await leftovers(ws.root)).toEqual([])
})

const ownerOf = (dir: string) => {
  try {
    return Number(readFileSync(join(dir, "owner"), "utf8"))
  } catch {
    return undefined
  }
}

const draw = (fg: string, title = TITLE) => ({ command: ws.xwindow, args: ["draw", BLUE, fg, title] })
const capture = (name: string, spec: UiCapture.SpecInput, extra: Partial<UiCapture.Options> = {}) =>
  UiCapture.capture(spec, { worktree: ws.worktree, outDir: ws.evidence(name), ...extra })

describe("UiCapture.capture on real X programs", () => {
  test("a drawn window passes its checks: title, size, not blank, the centre pixel; evidence on disk", async () => {
    const r = await capture("drawn", { ...draw(ORANGE), checks: { title: TITLE, minSize: { width: 300, height: 200 }, pixels: [{ x: 160, y: 120, rgb: ORANGE }, { x: 5, y: 5, rgb: BLUE }] } })
    expect(r.failures).toEqual([])
    expect(r.ok).toBe(true)
    expect(r.outcome).toBe("shown")
    expect(r.window).toMatchObject({ title: TITLE, width: 320, height: 240, x: 0, y: 0, mapped: true })
    expect(r.windowsShown).toBe(1)
    expect(r.display.number).not.toBeNull()
    expect(r.program).toMatchObject({ exitCode: null, stoppedByCapture: true, stdout: "mapped 1 window(s)\n" })

    const shot = Png.read(r.evidence.screenshot!)
    expect([shot.width, shot.height]).toEqual([320, 240])
    expect(UiCapture.pixelAt(shot, 160, 120)).toBe(ORANGE)
    expect(UiCapture.pixelAt(shot, 0, 0)).toBe(BLUE)
    const screen = Png.read(r.evidence.screen!)
    expect([screen.width, screen.height]).toEqual([800, 600])
    const windows = JSON.parse(readFileSync(r.evidence.windows, "utf8")) as { shown: number; windows: WindowTree.Window[] }
    expect(windows.shown).toBe(1)
    expect(windows.windows.find((w) => w.title === TITLE)).toMatchObject({ width: 320, height: 240, mapped: true })
    const log = readFileSync(r.evidence.log, "utf8")
    expect(log).toContain("status: still running: stopped by the capture")
    expect(log).toContain("mapped 1 window(s)")
  })

  test("the checks fail in words: a wrong title, a too small window, a wrong pixel", async () => {
    const r = await capture("wrong", { ...draw(ORANGE, "Other"), checks: { title: { regex: "^AirCoding" }, minSize: { width: 640, height: 480 }, pixels: [{ x: 160, y: 120, rgb: GREEN, tolerance: 8 }] } })
    expect(r.ok).toBe(false)
    expect(r.outcome).toBe("shown")
    expect(r.failures).toEqual([
      "the window title is 'Other', expected one matching /^AirCoding/",
      "the window is 320x240, expected at least 640x480",
      `the pixel at (160, 120) is ${ORANGE}, expected ${GREEN} (±8)`,
    ])
  })

  test("the same program in another colour: compare() reports the changed share (the rectangle: 100x60 of 320x240)", async () => {
    const before = await capture("before", draw(ORANGE))
    const after = await capture("after", draw(GREEN))
    expect(before.ok && after.ok).toBe(true)
    const diff = UiCapture.compare(before.evidence.screenshot!, after.evidence.screenshot!)
    expect(diff).toEqual({ changedShare: (100 * 60) / (320 * 240), changedPixels: 6000, totalPixels: 76_800, sameSize: true })
    expect(UiCapture.pixelAt(after.evidence.screenshot!, 160, 120)).toBe(GREEN)
    expect(UiCapture.compare(before.evidence.screenshot!, before.evidence.screenshot!).changedShare).toBe(0)
  })

  test("a window mapped and never drawn: 'the window stayed blank'", async () => {
    const r = await capture("blank", { command: ws.xwindow, args: ["blank"], checks: { title: TITLE } })
    expect(r.outcome).toBe("shown")
    expect(r.ok).toBe(false)
    expect(r.failures).toEqual(["the window stayed blank (one colour, #000000, over 100% of it)"])
    expect(existsSync(r.evidence.screenshot!)).toBe(true)
  })

  test("a program that never opens a window: 'no window within 1.5 s', long before its ten-minute sleep ends", async () => {
    const r = await capture("nowindow", { command: ws.xwindow, args: ["nowindow"], waitMs: 1500 })
    expect(r.outcome).toBe("no-window")
    expect(r.failures).toEqual(["no window within 1.5 s"])
    expect(r.program).toMatchObject({ exitCode: null, stoppedByCapture: true, stdout: "not opening any window\n" })
    expect(r.evidence.screenshot).toBeUndefined()
  }, 120_000)

  test("a program that crashes: 'exited with 139 (SIGSEGV)', with its stderr", async () => {
    const r = await capture("crash", { command: ws.xwindow, args: ["crash"] })
    expect(r.outcome).toBe("exited")
    expect(r.failures).toEqual(["the program exited with 139 (SIGSEGV) before showing a window"])
    expect(r.program.exitCode).toBe(139)
    expect(r.notes).toContain("the program's stderr ends: about to crash")
    expect(readFileSync(r.evidence.log, "utf8")).toContain("status: exited with 139 (SIGSEGV)")
    // No core file landed in the worktree.
    expect(existsSync(join(ws.worktree, "core"))).toBe(false)
  })

  test("a program that exits 0 without a window: waited for (a launcher may fork), then 'no window within 1 s'", async () => {
    const r = await capture("exit0", { command: "/bin/sh", args: ["-c", "echo launcher done"], waitMs: 1000 })
    expect(r.outcome).toBe("exited")
    expect(r.failures).toEqual(["no window within 1 s (the program exited with 0 and showed none)"])
    expect(r.program).toMatchObject({ exitCode: 0, stoppedByCapture: false, stdout: "launcher done\n" })
  })

  test("a program that is not there: exit 127 named as a command not found", async () => {
    const r = await capture("missing-program", { command: "build/not-built" })
    expect(r.outcome).toBe("exited")
    expect(r.failures[0]).toMatch(/^the program exited with 127 before showing a window \(command not found/)
  })

  test("ten windows: a verdict on the largest, the count in the result, no hang", async () => {
    const r = await capture("ten", { command: ws.xwindow, args: ["ten", BLUE, ORANGE, "Many"], checks: { title: { regex: "^Many" } } })
    expect(r.outcome).toBe("shown")
    expect(r.windowsShown).toBe(10)
    expect(r.window).toMatchObject({ title: "Many 10", width: 500, height: 330 })
    expect(r.ok).toBe(true)
    expect(r.notes).toEqual(["10 windows were shown; the checks looked at 'Many 10' (500x330)"])
    expect(UiCapture.pixelAt(r.evidence.screenshot!, 250, 165)).toBe(ORANGE)
  })

  test("two captures at once get two displays: each photographs its own program", async () => {
    const [a, b] = await Promise.all([capture("pair-a", draw(ORANGE)), capture("pair-b", draw(GREEN))])
    expect(a!.ok && b!.ok).toBe(true)
    expect(a!.display.socketDir).not.toBe(b!.display.socketDir)
    expect(UiCapture.pixelAt(a!.evidence.screenshot!, 160, 120)).toBe(ORANGE)
    expect(UiCapture.pixelAt(b!.evidence.screenshot!, 160, 120)).toBe(GREEN)
  })

  test("a display number taken on the machine does not matter: the capture's display and probes are its own", async () => {
    // An X server of the machine's own, on the lowest free number (usually :0, the number the sandbox's display gets
    // too): were the probes to share the machine's network namespace, its abstract socket would answer them.
    let hostOutput = ""
    const stopHost = new AbortController()
    const host = Proc.run("Xvfb", ["-displayfd", "1", "-screen", "0", "320x200x24", "-nolisten", "tcp", "-noreset", "-nocursor"], {
      cwd: ws.root,
      env: { ...process.env, AIR_UI_CAPTURE: ws.root },
      signal: stopHost.signal,
      onOutput: (c) => (hostOutput += c.toString()),
    })
    try {
      for (let i = 0; i < 300 && !/^\d+\n/.test(hostOutput); i++) await new Promise((r) => setTimeout(r, 50))
      expect(hostOutput).toMatch(/^\d+\n/)
      const r = await capture("taken", { ...draw(ORANGE), checks: { title: TITLE, pixels: [{ x: 160, y: 120, rgb: ORANGE }] } })
      expect(r.failures).toEqual([])
      expect(r.ok).toBe(true)
    } finally {
      stopHost.abort()
      await host
    }
  })

  test("the program is fenced: it writes its worktree, not outside; the spec's env and cwd reach it", async () => {
    // Beside the worktree (the sandbox's private /tmp holds only what it binds), and a system directory (read-only).
    const outside = join(ws.root, "outside.txt")
    const system = join("/usr/local", `air-uicap-fence-${process.pid}`)
    mkdirSync(join(ws.worktree, "run"), { recursive: true })
    const r = await capture("fence", {
      command: "/bin/sh",
      args: ["-c", `echo "$GREETING" > inside.txt; echo x > ${outside}; echo x > ${system} || echo refused >&2; exec ../${ws.xwindow} draw '${BLUE}' '${ORANGE}' Fenced`],
      cwd: "run",
      env: { GREETING: "hello" },
      checks: { title: "Fenced" },
    })
    expect(r.ok).toBe(true)
    expect(readFileSync(join(ws.worktree, "run", "inside.txt"), "utf8")).toBe("hello\n")
    expect(existsSync(outside)).toBe(false)
    const leaked = existsSync(system)
    rmSync(system, { force: true })
    expect(leaked).toBe(false)
    expect(r.program.stderr).toContain("refused")
  })

  test("a program that prints without end: its output is cut on disk, the capture goes on", async () => {
    // 20 MB on stdout, then the window; a background child keeps the stream open and printing after the exec.
    const r = await capture("chatty", {
      command: "/bin/sh",
      args: ["-c", `yes spam | head -c 20000000; (while :; do echo more; sleep 0.01; done) & exec ${ws.xwindow} draw '${BLUE}' '${ORANGE}' Chatty`],
      checks: { title: "Chatty" },
    })
    expect(r.failures).toEqual([])
    expect(r.program.stdout.length).toBeLessThan(70 * 1024)
    expect(r.program.stdout).toMatch(/^spam\nspam\n/)
    expect(r.program.stdout).toContain(`bytes dropped; the stream was cut at ${UiCapture.STREAM_DISK_CAP} bytes`)
  })

  test("an abort stops the capture at once and everything it started", async () => {
    const controller = new AbortController()
    const r = await capture("abort", { command: ws.xwindow, args: ["nowindow"], waitMs: 120_000 }, { onProgramStarted: () => void setTimeout(() => controller.abort(), 200), signal: controller.signal })
    expect(r.outcome).toBe("aborted")
    expect(r.failures).toEqual(["the capture was stopped (the run was aborted)"])
  }, 60_000)

  test("AirCoding SIGKILLed mid-capture leaves no Xvfb, program or sandbox behind", async () => {
    const spec = { command: ws.xwindow, args: ["nowindow"], waitMs: 120_000 }
    const child = spawn(bunBinary(), [join(__dirname, "ui-capture-child.ts"), JSON.stringify(spec), ws.worktree, ws.evidence("killed")], { stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    child.stdout.on("data", (c: Buffer) => (out += c.toString()))
    child.stderr.on("data", (c: Buffer) => (out += c.toString()))
    const signal = await new Promise<NodeJS.Signals | string | null>((resolve) => {
      child.on("exit", (_code, sig) => resolve(sig))
      child.on("error", (error) => resolve(`could not start ${bunBinary()}: ${error.message}`))
    })
    expect(signal).toBe("SIGKILL")
    // Before the kill the sandbox, its shell, Xvfb and the program were running (they name the test's files).
    const running = Number(/program started; (\d+) processes/.exec(out)?.[1] ?? 0)
    expect(running, out).toBeGreaterThanOrEqual(4)
    // Its work dir (the display's sockets, the program's output) is swept by the next capture, or by sweep().
    const owned = () => readdirSync(tmpdir()).filter((n) => n.startsWith("air-x-") && ownerOf(join(tmpdir(), n)) === child.pid)
    expect(owned()).toHaveLength(1)
    DisplaySandbox.sweep()
    expect(owned()).toEqual([])
    // afterEach checks /proc: bwrap's --die-with-parent and the PID namespace take Xvfb and the program down.
  }, 120_000)

  test("a missing tool is a missing tool, with the install command, never a pass", async () => {
    const bin = join(ws.root, "bin-without-xvfb")
    mkdirSync(bin, { recursive: true })
    for (const tool of ["bwrap", "xwd", "xwininfo", "sh"]) {
      const found = (process.env.PATH ?? "").split(":").map((d) => join(d, tool)).find((p) => existsSync(p))
      if (found && !existsSync(join(bin, tool))) symlinkSync(found, join(bin, tool))
    }
    const r = await capture("no-xvfb", draw(ORANGE), { env: { ...process.env, PATH: bin } })
    expect(r.ok).toBe(false)
    expect(r.outcome).toBe("missing-tool")
    expect(r.missingTool).toEqual({ tools: ["Xvfb"], packages: ["xvfb"], install: "sudo apt-get install -y xvfb" })
    expect(r.failures[0]).toContain("Install with: sudo apt-get install -y xvfb")
    expect(readFileSync(r.evidence.log, "utf8")).toContain("Xvfb (the private X display)")
  })

  test("a display that does not start is the capture's failure, named, not the program's", async () => {
    // Inside the worktree: the sandbox's private /tmp shows nothing else of the test's directory.
    const bin = join(ws.worktree, "bin-broken-xvfb")
    mkdirSync(bin, { recursive: true })
    writeFileSync(join(bin, "Xvfb"), "#!/bin/sh\necho 'fake Xvfb: no screens found' >&2\nexit 1\n", { mode: 0o755 })
    const r = await capture("broken-xvfb", draw(ORANGE), { env: { ...process.env, PATH: `${bin}:${process.env.PATH}` } })
    expect(r.outcome).toBe("failed-to-start")
    expect(r.failures).toEqual([`the private X display (Xvfb) did not start (it ended with 1; see ${r.evidence.log})`])
    expect(r.program.exitCode).toBeNull()
    expect(readFileSync(r.evidence.log, "utf8")).toContain("fake Xvfb: no screens found")
  })

  test("a Qt Widgets program under Xvfb (xcb)", async () => {
    const qt = buildQtProgram(ws)
    const r = await capture("qt", { command: qt, args: ["#33cc66", ORANGE, "Qt window"], checks: { title: "Qt window", pixels: [{ x: 5, y: 5, rgb: "#33cc66" }, { x: 160, y: 120, rgb: ORANGE }] } })
    expect(r.failures).toEqual([])
    expect(r.ok).toBe(true)
    expect(r.window).toMatchObject({ title: "Qt window", width: 320, height: 240 })
  })
})

describe("UiCapture pieces", () => {
  test("the spec refuses what would leave the worktree or take the display, naming the field", () => {
    const bad = (input: unknown) => UiSpec.Spec.safeParse(input).error?.issues.map((i) => `${i.path.join(".")}: ${i.message}`)
    expect(bad({ command: "app", cwd: "../up" })).toEqual(["cwd: a path that stays inside the worktree (no '..')"])
    expect(bad({ command: "app", cwd: "/abs" })).toEqual(["cwd: a path relative to the worktree"])
    expect(bad({ command: "app", env: { DISPLAY: ":0", "A-B": "x" } })).toEqual([
      "env.DISPLAY: DISPLAY is set by the capture (the program gets a display of its own)",
      "env.A-B: a variable name (letters, digits, _)",
    ])
    expect(bad({ command: "app", checks: { pixels: [{ x: 1, y: 1, rgb: "red" }] } })).toEqual(["checks.pixels.0.rgb: a colour as six hex digits, '#rrggbb'"])
    expect(bad({ command: "app", checks: { title: { regex: "(" } } })).toEqual(["checks.title.regex: a JavaScript regular expression"])
    const spec = UiSpec.Spec.parse({ command: "app" })
    expect(spec).toMatchObject({ args: [], cwd: ".", screen: { width: 800, height: 600 }, waitMs: 10_000, checks: { notBlank: true, blankShare: 1, pixels: [] } })
  })

  test("the window tree reads titles with quotes and colons, nesting, negative offsets and map states", () => {
    const output = [
      "xwininfo: Window id: 0x50d (the root window) (has no name)",
      "  Root window id: 0x50d (the root window) (has no name)",
      "     3 children:",
      "     0x200008 \"qt_bin\": ()  1x1+0+0  +0+0",
      "     0x200006 \"Qt \"quoted\": (x)\": (\"qt_bin\" \"qt_bin\")  320x240+10+20  +10+20",
      "        1 child:",
      "        0x200007 (has no name): ()  300x200+-5+0  +5+20",
      "     0x200004 (has no name): ()  3x3+-1+-1  +-1+-1",
      WindowTree.MAP_STATES,
      "0x200008 IsUnMapped",
      "0x200006 IsViewable",
      "0x200004 ",
    ].join("\n")
    const tree = WindowTree.parse(output)
    expect(tree.map((w) => [w.id, w.title, w.mapped])).toEqual([
      ["0x200008", "qt_bin", false],
      ["0x200006", 'Qt "quoted": (x)', true],
      ["0x200004", null, false],
    ])
    expect(tree[1]).toMatchObject({ wmClass: '"qt_bin" "qt_bin"', width: 320, height: 240, x: 10, y: 20 })
    expect(tree[1]!.children).toEqual([{ id: "0x200007", title: null, wmClass: "", width: 300, height: 200, x: 5, y: 20, children: [] }])
    expect(tree[2]).toMatchObject({ x: -1, y: -1 })
    expect(WindowTree.shown(tree).map((w) => w.id)).toEqual(["0x200006"])
  })

  test("doctor's line: the tools present, or which are missing with the install command", () => {
    expect(UiTools.doctorCheck(process.env.PATH)).toMatchObject({ name: "ui capture", ok: true })
    expect(UiTools.doctorCheck(join(ws.root, "no-such-dir"))).toEqual({
      name: "ui capture",
      ok: false,
      detail: "Xvfb, xwd, xwininfo, bwrap not installed: ui tasks cannot be captured",
      fix: "sudo apt-get install -y xvfb x11-apps x11-utils bubblewrap (or ./start.sh setup)",
    })
  })

  test("compare() counts pixels only one picture has as changed", () => {
    const solid = (w: number, h: number, rgb: [number, number, number]): Png.Image => {
      const data = Buffer.alloc(w * h * 4)
      for (let i = 0; i < w * h; i++) data.set([...rgb, 255], i * 4)
      return { width: w, height: h, data }
    }
    expect(UiCapture.compare(solid(10, 10, [0, 0, 0]), solid(10, 20, [0, 0, 0]))).toEqual({ changedShare: 0.5, changedPixels: 100, totalPixels: 200, sameSize: false })
    expect(UiCapture.compare(solid(4, 4, [10, 10, 10]), solid(4, 4, [12, 10, 10]), 2).changedShare).toBe(0)
    const file = join(ws.root, "solid.png")
    writeFileSync(file, Png.encode(solid(3, 2, [1, 2, 3])))
    expect(UiCapture.pixelAt(file, 2, 1)).toBe("#010203")
    expect(UiCapture.pixelAt(file, 3, 1)).toBeUndefined()
  })
})

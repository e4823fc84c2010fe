import { existsSync, mkdirSync, rmSync } from "node:fs"
import { isAbsolute, join, resolve } from "node:path"
import { z } from "zod"
import type { Exec } from "../exec/exec.ts"
import { Proc } from "../process"
import { Sandbox } from "../sandbox/sandbox"
import { CaptureFiles } from "./capture-files"
import { DisplaySandbox } from "./display-sandbox"
import { Png } from "./png"
import { UiSpec } from "./ui-spec"
import { UiTools } from "./ui-tools"
import { UiVerdict } from "./ui-verdict"
import { WindowTree } from "./window-tree"
import { Xwd } from "./xwd"

/**
 * Visual evidence in code (issue 37, item 2): ONE capture of a program's window, headless.
 *
 * One bubblewrap sandbox (the project's fence: the worktree writable, the rest read-only, a private /tmp, no
 * network, new PID namespace) holds both a private Xvfb and the program (display-sandbox.ts); the probes
 * (`xwininfo`, `xwd`) reach its display from small sandboxes of their own. The sandbox runs with
 * `--die-with-parent` and a PID namespace: stopping it (or AirCoding being SIGKILLed) ends Xvfb and every
 * process the program started. Here: the bounded waits, the screenshot, the verdict, the evidence files.
 */
export namespace UiCapture {
  export const Spec = UiSpec.Spec
  export type Spec = UiSpec.Spec
  export type SpecInput = UiSpec.Input

  /** How long Xvfb may take to listen before the capture gives up (a loaded machine; usually ~0.1 s). */
  export const DISPLAY_START_MS = 15_000
  const POLL_MS = 100
  const PROBE_TIMEOUT_MS = 10_000
  export const STREAM_DISK_CAP = DisplaySandbox.STREAM_DISK_CAP

  export const Outcome = z.enum([
    /** A window was shown and photographed; `failures` holds the checks that failed. */
    "shown",
    "no-window",
    /** The program ended (non-zero, or with no window by the deadline) before showing a window. */
    "exited",
    "aborted",
    /** A tool is not installed: `missingTool` says which and how to install it. */
    "missing-tool",
    /** The display or the sandbox could not start (not the program's fault). */
    "failed-to-start",
  ])
  export type Outcome = z.infer<typeof Outcome>

  export const Result = z.object({
    /** The capture saw a window and every check passed. */
    ok: z.boolean(),
    outcome: Outcome,
    /** Each failed check, in words ("the window stayed blank (one colour, #000000, over 100% of it)"). */
    failures: z.array(z.string()),
    /** What a reader should know besides (several windows shown, the window partly off the screen). */
    notes: z.array(z.string()),
    evidence: z.object({
      /** The checked window, cropped from the screen. */
      screenshot: z.string().optional(),
      /** The whole display. */
      screen: z.string().optional(),
      windows: z.string(),
      log: z.string(),
    }),
    display: z.object({
      number: z.number().int().nullable(),
      /** The host directory holding this display's socket: unique per capture. */
      socketDir: z.string(),
      width: z.number().int(),
      height: z.number().int(),
    }),
    /** The window the checks looked at. */
    window: WindowTree.Window.optional(),
    /** Mapped top-level windows larger than a pixel. */
    windowsShown: z.number().int(),
    program: z.object({
      command: z.string(),
      args: z.array(z.string()),
      /** The exit status the shell saw (128 + n for signal n), when it ended by itself. */
      exitCode: z.number().int().nullable(),
      /** Still running when the capture stopped it. */
      stoppedByCapture: z.boolean(),
      stdout: z.string(),
      stderr: z.string(),
    }),
    missingTool: z.object({ tools: z.array(z.string()), packages: z.array(z.string()), install: z.string() }).optional(),
    timings: z.object({
      /** From the start of the capture to the display listening. */
      displayMs: z.number().optional(),
      /** From the program's start to its window mapped. */
      windowMs: z.number().optional(),
      /** From the start of the capture to the screenshot written. */
      pngMs: z.number().optional(),
      totalMs: z.number(),
    }),
  })
  export type Result = z.infer<typeof Result>

  export interface Options {
    worktree: string
    /** Where the evidence files go (created; earlier evidence files there are replaced). */
    outDir: string
    /** The project root: its `.env` files are hidden from the program too. */
    project?: string
    /**
     * The runner (default: `Proc.run`). A plain one, never the gates' sandboxed `exec` (SandboxExec.wrap): the
     * capture builds its own sandbox around Xvfb and the program, and a second bwrap around it would hide the
     * display's socket directory from the probes.
     */
    exec?: Exec
    signal?: AbortSignal
    /** The environment the sandbox's is reduced from (default `process.env`); its PATH finds the tools. */
    env?: NodeJS.ProcessEnv
    /** Tests: called once the program was started on its display. */
    onProgramStarted?: () => void | Promise<void>
  }

  const defaultExec: Exec = (command, args, options) => Proc.run(command, args, options)

  /**
   * Starts the program on a display of its own, waits (bounded) for its window, photographs it, records
   * the window tree and the program's output, stops everything and judges. Never throws for the program's
   * faults or a missing tool: those are outcomes; a bad spec throws (zod).
   */
  export async function capture(input: SpecInput, options: Options): Promise<Result> {
    const spec = Spec.parse(input)
    const t0 = performance.now()
    const since = () => Math.round(performance.now() - t0)
    const exec = options.exec ?? defaultExec
    const sourceEnv = options.env ?? process.env
    const worktree = resolve(options.worktree)
    const outDir = resolve(options.outDir)
    mkdirSync(outDir, { recursive: true })
    const evidence = { screenshot: join(outDir, "screenshot.png"), screen: join(outDir, "screen.png"), windows: join(outDir, "windows.json"), log: join(outDir, "program.log") }
    for (const file of Object.values(evidence)) rmSync(file, { force: true })
    const command = spec.command.includes("/") && !isAbsolute(spec.command) ? join(worktree, spec.command) : spec.command
    const cwd = join(worktree, spec.cwd)

    const base = {
      failures: [] as string[],
      notes: [] as string[],
      display: { number: null as number | null, socketDir: "", width: spec.screen.width, height: spec.screen.height },
      windowsShown: 0,
      program: { command: spec.command, args: spec.args, exitCode: null as number | null, stoppedByCapture: false, stdout: "", stderr: "" },
    }
    const finish = (outcome: Outcome, extra: Partial<Result> = {}): Result => {
      const failures = extra.failures ?? base.failures
      const result = Result.parse({
        ...base,
        ...extra,
        failures,
        ok: outcome === "shown" && failures.length === 0,
        outcome,
        evidence: {
          windows: evidence.windows,
          log: evidence.log,
          ...(existsSync(evidence.screenshot) ? { screenshot: evidence.screenshot } : {}),
          ...(existsSync(evidence.screen) ? { screen: evidence.screen } : {}),
        },
        timings: { ...extra.timings, totalMs: since() },
      })
      return result
    }

    const missing = UiTools.missing(sourceEnv.PATH)
    if (missing) {
      CaptureFiles.writeEvidence(evidence, spec.screen, { windows: [], shown: 0 }, `${missing.message}\n`)
      return finish("missing-tool", { failures: [missing.message], missingTool: { tools: missing.tools, packages: missing.packages, install: missing.install } })
    }
    const sandboxCheck = Sandbox.check()
    if (!sandboxCheck.ok) {
      CaptureFiles.writeEvidence(evidence, spec.screen, { windows: [], shown: 0 }, `${sandboxCheck.message}\n`)
      return finish("failed-to-start", { failures: [`the capture's sandbox cannot start: ${sandboxCheck.message}`] })
    }
    if (!existsSync(cwd)) {
      const message = `the program's working directory ${spec.cwd} does not exist in the worktree ${worktree}: build the program first, or fix the spec's cwd`
      CaptureFiles.writeEvidence(evidence, spec.screen, { windows: [], shown: 0 }, `${message}\n`)
      return finish("failed-to-start", { failures: [message] })
    }

    // Before anything is made or started: a policy that cannot be planned leaves nothing behind.
    const policy = Sandbox.plan({ worktree, ...(options.project ? { project: options.project } : {}), env: sourceEnv, network: false, git: false })
    const dirs = DisplaySandbox.makeDirs()
    base.display.socketDir = dirs.sockets

    const stop = new AbortController()
    const onAbort = () => stop.abort()
    if (options.signal?.aborted) stop.abort()
    else options.signal?.addEventListener("abort", onAbort, { once: true })

    const state: DisplaySandbox.State = {}
    const sandboxArgs = DisplaySandbox.programArgs({
      policy,
      env: { ...spec.env, AIR_UI_CAPTURE: outDir },
      dirs,
      width: spec.screen.width,
      height: spec.screen.height,
      cwd,
      command,
      args: spec.args,
    })
    // The bound: display start, the wait, the settle, the probes; the capture stops it long before.
    const sandboxBound = DISPLAY_START_MS + spec.waitMs + spec.settleMs + 3 * PROBE_TIMEOUT_MS
    const sandbox = exec(Sandbox.BINARY, sandboxArgs, { cwd: worktree, env: sourceEnv, shell: false, timeoutMs: sandboxBound, signal: stop.signal, onOutput: DisplaySandbox.protocolReader(state) })
    let sandboxEnded: Proc.Result | undefined
    void sandbox.then((r) => {
      sandboxEnded = r
      state.ended = true
    })

    const probe = (script: string) =>
      exec(Sandbox.BINARY, DisplaySandbox.probeArgs({ dirs, path: sourceEnv.PATH ?? "/usr/bin:/bin", display: state.display ?? 0, marker: outDir, script }), {
        cwd: dirs.work,
        env: sourceEnv,
        shell: false,
        timeoutMs: PROBE_TIMEOUT_MS,
        signal: stop.signal,
      })

    let outcome: Outcome | undefined
    const extra: Partial<Result> = {}
    const timings: Result["timings"] = { totalMs: 0 }
    let tree: WindowTree.Window[] = []
    let shownCount = 0
    try {
      // 1. The display.
      const displayDeadline = performance.now() + DISPLAY_START_MS
      while (state.display === undefined && state.displayFailed === undefined && !state.ended && !stop.signal.aborted && performance.now() < displayDeadline) await sleep(20, stop.signal)
      if (stop.signal.aborted) outcome = "aborted"
      else if (state.display === undefined) {
        outcome = "failed-to-start"
        base.failures.push(
          state.displayFailed !== undefined
            ? `the private X display (Xvfb) did not start (it ended with ${state.displayFailed}; see ${evidence.log})`
            : state.ended
              ? `the capture's sandbox ended before its display started (${describeEnd(sandboxEnded)}; see ${evidence.log})`
              : `the private X display (Xvfb) did not listen within ${UiVerdict.seconds(DISPLAY_START_MS)}`,
        )
      } else {
        base.display.number = state.display
        timings.displayMs = since()
        // 2. The program's window, within its bound from the program's start.
        while (state.started === undefined && !state.ended && !stop.signal.aborted && performance.now() < displayDeadline) await sleep(10, stop.signal)
        const programStart = state.started ?? performance.now()
        await options.onProgramStarted?.()
        const deadline = programStart + spec.waitMs
        for (;;) {
          if (stop.signal.aborted) {
            outcome = "aborted"
            break
          }
          // A launcher may fork and exit 0 before its window comes: only a failure ends the wait early.
          if (state.exit !== undefined && state.exit !== 0) {
            outcome = "exited"
            break
          }
          if (state.ended) {
            outcome = "failed-to-start"
            base.failures.push(`the capture's sandbox ended unexpectedly (${describeEnd(sandboxEnded)}; see ${evidence.log})`)
            break
          }
          const listing = await probe(WindowTree.PROBE_SCRIPT)
          if (listing.ok) {
            tree = WindowTree.parse(listing.stdout)
            shownCount = WindowTree.shown(tree).length
            if (shownCount > 0) break
          }
          if (performance.now() >= deadline) {
            outcome = state.exit !== undefined ? "exited" : "no-window"
            break
          }
          await sleep(Math.min(POLL_MS, Math.max(0, deadline - performance.now())), stop.signal)
        }
        if (outcome === undefined) {
          timings.windowMs = Math.round(performance.now() - programStart)
          // 3. Let it draw, then the screen and the tree as they are in the same moment (as near as two calls get).
          await sleep(spec.settleMs, stop.signal)
          const shot = stop.signal.aborted ? undefined : await probe(`xwd -root -silent -out ${DisplaySandbox.PROBE_INSIDE}/screen.xwd || exit 4; ${WindowTree.PROBE_SCRIPT}`)
          if (stop.signal.aborted || !shot) outcome = "aborted"
          else if (!shot.ok) {
            outcome = "failed-to-start"
            base.failures.push(`the screenshot failed (xwd ${Proc.describe(shot, PROBE_TIMEOUT_MS)}): ${(shot.stderr || shot.stdout).trim().split("\n").slice(-3).join(" / ")}`)
          } else {
            tree = WindowTree.parse(shot.stdout)
            const shown = WindowTree.shown(tree)
            shownCount = shown.length
            const screen = Xwd.decode(CaptureFiles.readBytes(join(dirs.probe, "screen.xwd")))
            const window = UiVerdict.mainWindow(shown, spec.checks)
            outcome = "shown"
            if (!window) {
              Png.write(evidence.screen, screen)
              base.failures.push(
                state.exit !== undefined
                  ? `the window closed before the screenshot: the program exited with ${UiVerdict.exitStatus(state.exit)}`
                  : `the window was gone by the screenshot (${UiVerdict.seconds(spec.settleMs)} after it was mapped)`,
              )
            } else {
              const picture = Png.crop(screen, window)
              Png.write(evidence.screenshot, picture)
              timings.pngMs = since()
              Png.write(evidence.screen, screen)
              extra.window = window
              if (picture.width < window.width || picture.height < window.height) {
                base.notes.push(`the window (${window.width}x${window.height} at ${window.x},${window.y}) lies partly outside the ${screen.width}x${screen.height} screen: only its visible part is checked`)
              }
              if (shownCount > 1) base.notes.push(`${shownCount} windows were shown; the checks looked at ${describeWindow(window)}`)
              base.failures.push(...UiVerdict.judge(spec.checks, window, picture, shownCount))
            }
          }
        }
      }
    } catch (error) {
      outcome = stop.signal.aborted ? "aborted" : "failed-to-start"
      base.failures.push(`the capture failed: ${(error as Error).message}`)
    } finally {
      options.signal?.removeEventListener("abort", onAbort)
      // 4. Everything stops: the sandbox's group (bwrap), and with it its PID namespace: Xvfb and the program's tree.
      const runningAtEnd = state.display !== undefined && state.exit === undefined
      stop.abort()
      sandboxEnded = await sandbox
      base.program.stoppedByCapture = runningAtEnd && state.exit === undefined
      base.program.exitCode = state.exit ?? null
      base.program.stdout = CaptureFiles.readCapped(join(dirs.output, "stdout"))
      base.program.stderr = CaptureFiles.readCapped(join(dirs.output, "stderr"))
      const xvfbLog = CaptureFiles.readCapped(join(dirs.output, "xvfb.log"))
      if (outcome === "exited" && state.exit === 0) {
        base.failures.push(`no window within ${UiVerdict.seconds(spec.waitMs)} (the program exited with 0 and showed none)`)
      } else if (outcome === "exited" && state.exit !== undefined) {
        base.failures.push(`the program exited with ${UiVerdict.exitStatus(state.exit)} before showing a window${state.exit === 127 ? " (command not found: is it built, and is the spec's command right?)" : ""}`)
      } else if (outcome === "no-window") {
        base.failures.push(`no window within ${UiVerdict.seconds(spec.waitMs)}${tree.length > 0 ? ` (${tree.length} top-level window(s) created, none mapped)` : ""}`)
      } else if (outcome === "aborted") {
        base.failures.push("the capture was stopped (the run was aborted)")
      }
      const lastErr = base.program.stderr.trim().split("\n").filter(Boolean).slice(-1)[0]
      if ((outcome === "exited" || outcome === "no-window") && lastErr) base.notes.push(`the program's stderr ends: ${lastErr}`)
      const log = CaptureFiles.programLog({ command, args: spec.args, cwd, program: base.program, sandbox: sandboxEnded, xvfbLog, withDiagnostics: outcome !== "shown" })
      CaptureFiles.writeEvidence(evidence, spec.screen, { windows: tree, shown: shownCount }, log)
      rmSync(dirs.work, { recursive: true, force: true })
    }
    timings.totalMs = since()
    return finish(outcome ?? "failed-to-start", { ...extra, windowsShown: shownCount, timings })
  }

  export const Comparison = z.object({
    /** Share of the pixels that differ (over the larger of the two sizes: pixels only one picture has count as changed). */
    changedShare: z.number().min(0).max(1),
    changedPixels: z.number().int(),
    totalPixels: z.number().int(),
    sameSize: z.boolean(),
  })
  export type Comparison = z.infer<typeof Comparison>

  /** How much changed between two screenshots (the before and after of a ui task). `tolerance` per channel. */
  export function compare(before: string | Png.Image, after: string | Png.Image, tolerance = 0): Comparison {
    const a = typeof before === "string" ? Png.read(before) : before
    const b = typeof after === "string" ? Png.read(after) : after
    const width = Math.max(a.width, b.width)
    const height = Math.max(a.height, b.height)
    let changed = 0
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const p = Png.pixel(a, x, y)
        const q = Png.pixel(b, x, y)
        if (!p || !q || p.some((c, i) => Math.abs(c - q[i]!) > tolerance)) changed++
      }
    }
    const total = width * height
    return Comparison.parse({ changedShare: total === 0 ? 0 : changed / total, changedPixels: changed, totalPixels: total, sameSize: a.width === b.width && a.height === b.height })
  }

  /** The colour at (x, y) of a PNG (for checks on evidence already written). */
  export function pixelAt(png: string | Png.Image, x: number, y: number): string | undefined {
    const image = typeof png === "string" ? Png.read(png) : png
    const rgb = Png.pixel(image, x, y)
    return rgb ? Png.hex(rgb) : undefined
  }

  function describeEnd(r: Proc.Result | undefined): string {
    if (!r) return "still running"
    const err = r.stderr.trim().split("\n").filter(Boolean).slice(-1)[0]
    return `bwrap ${Proc.describe(r)}${err ? `: ${err}` : ""}`
  }

  function describeWindow(w: WindowTree.Window): string {
    return `${w.title === null ? "an untitled window" : `'${w.title}'`} (${w.width}x${w.height})`
  }

  function sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((done) => {
      if (signal.aborted || ms <= 0) return done()
      const timer = setTimeout(finish, ms)
      function finish() {
        clearTimeout(timer)
        signal.removeEventListener("abort", finish)
        done()
      }
      signal.addEventListener("abort", finish, { once: true })
    })
  }
}

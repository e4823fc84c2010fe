import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/**
 * The real programs the ui capture tests photograph, built with g++ (Xlib; Qt Widgets through pkg-config)
 * into a worktree of their own, and the check that nothing a capture started is left running.
 */
export type UiWorkspace = {
  /** Every file of the test lives under it: processes naming it are the test's. */
  root: string
  worktree: string
  /** build/xwindow, relative to the worktree. */
  xwindow: string
  evidence(name: string): string
}

export function makeUiWorkspace(): UiWorkspace {
  const root = mkdtempSync(join(tmpdir(), "air-uicap-"))
  const worktree = join(root, "wt")
  mkdirSync(join(worktree, "build"), { recursive: true })
  execFileSync("g++", ["-O1", "-o", join(worktree, "build", "xwindow"), join(__dirname, "xwindow.cpp"), "-lX11"], { stdio: "pipe" })
  return { root, worktree, xwindow: "build/xwindow", evidence: (name) => join(root, "evidence", name) }
}

/** Builds the Qt Widgets program into the worktree: its path relative to it. */
export function buildQtProgram(ws: UiWorkspace): string {
  const flags = execFileSync("pkg-config", ["--cflags", "--libs", "Qt5Widgets"], { encoding: "utf8" }).trim().split(/\s+/)
  execFileSync("g++", ["-fPIC", "-O1", "-o", join(ws.worktree, "build", "qtwindow"), join(__dirname, "qtwindow.cpp"), ...flags], { stdio: "pipe" })
  return "build/qtwindow"
}

/** Processes whose command line or environment names `marker` (the capture sets AIR_UI_CAPTURE=<outDir> inside). */
export function processesNaming(marker: string): string[] {
  const found: string[] = []
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    if (Number(pid) === process.pid) continue
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8")
      const environ = readFileSync(`/proc/${pid}/environ`, "utf8")
      // A zombie has an empty cmdline: it is gone but for its exit status, which its parent collects.
      if (cmdline && (cmdline.includes(marker) || environ.includes(marker))) found.push(`${pid}: ${cmdline.replace(/\0/g, " ").trim()}`)
    } catch {
      // ended while we looked
    }
  }
  return found
}

/** Waits (up to `boundMs`) until no process names `marker`; what is still there then. */
export async function leftovers(marker: string, boundMs = 10_000): Promise<string[]> {
  const end = Date.now() + boundMs
  for (;;) {
    const found = processesNaming(marker)
    if (found.length === 0 || Date.now() >= end) return found
    await new Promise((r) => setTimeout(r, 100))
  }
}

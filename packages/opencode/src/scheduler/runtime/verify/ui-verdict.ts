import { constants } from "node:os"
import { Png } from "./png"
import type { UiSpec } from "./ui-spec"
import { WindowTree } from "./window-tree"

/**
 * The checks of a ui task, run in code on what the capture saw, each failure said in words a person and
 * the Debugger can act on. Pure: the capture gathers, this judges.
 */
export namespace UiVerdict {
  /** The window the checks look at: one whose title matches when a title is asked for, else the largest, topmost on a tie. */
  export function mainWindow(shown: readonly WindowTree.Window[], checks: UiSpec.Checks): WindowTree.Window | undefined {
    const titled = checks.title === undefined ? [] : shown.filter((w) => titleMatches(w.title, checks.title!))
    const pool = titled.length > 0 ? titled : shown
    let best: WindowTree.Window | undefined
    // xwininfo lists bottom to top: a later window of the same size is above the earlier one.
    for (const w of pool) if (!best || w.width * w.height >= best.width * best.height) best = w
    return best
  }

  export function titleMatches(title: string | null, expected: UiSpec.Title): boolean {
    if (typeof expected === "string") return title === expected
    return title !== null && new RegExp(expected.regex).test(title)
  }

  /** The failed checks on the window's picture (cropped from the screen), in words; empty when all pass. */
  export function judge(checks: UiSpec.Checks, window: WindowTree.Window, picture: Png.Image, shownCount: number): string[] {
    const failures: string[] = []
    if (checks.title !== undefined && !titleMatches(window.title, checks.title)) {
      const expected = typeof checks.title === "string" ? `'${checks.title}'` : `one matching /${checks.title.regex}/`
      const others = shownCount > 1 ? ` (none of the ${shownCount} windows shown has it)` : ""
      failures.push(`the window title is ${window.title === null ? "unset" : `'${window.title}'`}, expected ${expected}${others}`)
    }
    const min = checks.minSize
    if (min && (window.width < min.width || window.height < min.height)) {
      failures.push(`the window is ${window.width}x${window.height}, expected at least ${min.width}x${min.height}`)
    }
    if (checks.notBlank) {
      const { rgb, share } = Png.dominant(picture)
      if (share >= checks.blankShare) failures.push(`the window stayed blank (one colour, ${Png.hex(rgb)}, over ${percent(share)} of it)`)
    }
    for (const point of checks.pixels) {
      const seen = Png.pixel(picture, point.x, point.y)
      if (!seen) {
        failures.push(`the point (${point.x}, ${point.y}) is outside the ${picture.width}x${picture.height} window`)
        continue
      }
      const want = Png.parseHex(point.rgb)!
      if (seen.some((c, i) => Math.abs(c - want[i]!) > point.tolerance)) {
        failures.push(`the pixel at (${point.x}, ${point.y}) is ${Png.hex(seen)}, expected ${Png.hex(want)} (±${point.tolerance})`)
      }
    }
    return failures
  }

  /** "139 (SIGSEGV)" for a shell's 128+n status, the number alone otherwise. */
  export function exitStatus(code: number): string {
    const name = code > 128 ? signalName(code - 128) : undefined
    return name ? `${code} (${name})` : String(code)
  }

  function signalName(n: number): string | undefined {
    return Object.entries(constants.signals).find(([, v]) => v === n)?.[0]
  }

  export function percent(share: number): string {
    const p = share * 100
    if (p >= 99.95 && share < 1) return "99.9%"
    return `${Number.isInteger(Math.round(p * 10) / 10) ? Math.round(p) : (Math.round(p * 10) / 10).toFixed(1)}%`
  }

  export function seconds(ms: number): string {
    return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`
  }
}

import { z } from "zod"

/**
 * The X window tree as the capture records it (windows.json): read from `xwininfo -root -tree` (titles and
 * geometry, nested by indentation) and the map state of each top-level window (`xwininfo -id`), which the
 * tree listing does not show. Without a window manager the top-level windows are the root's children.
 */
export namespace WindowTree {
  export type Window = {
    /** X id, "0x200006". */
    id: string
    /** WM_NAME / _NET_WM_NAME; null when the window has none. */
    title: string | null
    /** WM_CLASS as xwininfo prints it (`"app" "App"`), empty when unset. */
    wmClass: string
    width: number
    height: number
    /** Absolute position on the screen. */
    x: number
    y: number
    /** Known for top-level windows only. */
    mapped?: boolean
    children: Window[]
  }

  export const Window: z.ZodType<Window> = z.lazy(() =>
    z.object({
      id: z.string(),
      title: z.string().nullable(),
      wmClass: z.string(),
      width: z.number().int(),
      height: z.number().int(),
      x: z.number().int(),
      y: z.number().int(),
      mapped: z.boolean().optional(),
      children: z.array(Window),
    }),
  )

  /** The separator the probe script prints between the tree and the map states. */
  export const MAP_STATES = "--- map states"

  /**
   * The probe, one shell line run inside the capture's display: the tree, then one "<id> <state>" line per
   * top-level window. A window gone between the two listings prints no state: it counts as unmapped.
   */
  export const PROBE_SCRIPT =
    "xwininfo -root -tree || exit 3; " +
    `echo '${MAP_STATES}'; ` +
    `for id in $(xwininfo -root -children | sed -n 's/^ *\\(0x[0-9a-f]*\\) .*/\\1/p'); do ` +
    `printf '%s ' "$id"; xwininfo -id "$id" 2>/dev/null | sed -n 's/^ *Map State: //p'; echo; done`

  // `     0x200006 "title": ("inst" "Class")  320x240+0+0  +0+0` — the title may hold quotes and colons, so the
  // line is read from both ends: the geometry at the end, the class list in the last parentheses before it.
  const LINE = /^( *)(0x[0-9a-f]+) (?:"(.*)"|\(has no name\)): \((.*)\)\s+(\d+)x(\d+)[+-]-?\d+[+-]-?\d+\s+([+-]-?\d+)([+-]-?\d+)\s*$/

  /** The top-level windows, with their descendants, from the probe's output. */
  export function parse(output: string): Window[] {
    const [treeText, statesText = ""] = output.split(MAP_STATES)
    const states = new Map<string, boolean>()
    for (const line of statesText.split("\n")) {
      const m = /^(0x[0-9a-f]+) (\S+)/.exec(line.trim())
      if (m) states.set(m[1]!, m[2] === "IsViewable")
    }
    const top: Window[] = []
    const stack: { indent: number; window: Window }[] = []
    for (const line of treeText!.split("\n")) {
      const m = LINE.exec(line)
      if (!m) continue
      const window: Window = {
        id: m[2]!,
        title: m[3] ?? null,
        wmClass: m[4]!,
        width: Number(m[5]),
        height: Number(m[6]),
        x: offset(m[7]!),
        y: offset(m[8]!),
        children: [],
      }
      const indent = m[1]!.length
      while (stack.length > 0 && stack[stack.length - 1]!.indent >= indent) stack.pop()
      const parent = stack[stack.length - 1]
      if (parent) parent.window.children.push(window)
      else top.push({ ...window, mapped: states.get(window.id) ?? false })
      stack.push({ indent, window: parent ? window : top[top.length - 1]! })
    }
    return top
  }

  /** "+12" / "-3" / "+-3" (xwininfo's form for a negative offset) → a number. */
  function offset(text: string): number {
    return text.startsWith("+-") ? -Number(text.slice(2)) : Number(text)
  }

  /** Top-level windows a person could see: mapped, larger than a pixel (toolkits map 1x1 helper windows). */
  export function shown(windows: readonly Window[]): Window[] {
    return windows.filter((w) => w.mapped === true && w.width > 1 && w.height > 1)
  }
}

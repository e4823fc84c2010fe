import { isAbsolute } from "node:path"
import { z } from "zod"
import { Png } from "./png"

/**
 * What a ui task says about its program (issue 37, item 1): how to start it from the build, the display to
 * show it on, how long to wait, and the checks run in code on what it shows. Kept apart from the capture so
 * a plan validator can read it without the process machinery.
 */
export namespace UiSpec {
  /** A path inside the worktree: relative, never climbing out of it. */
  const Inside = z
    .string()
    .min(1)
    .refine((p) => !isAbsolute(p), "a path relative to the worktree")
    .refine((p) => !p.split(/[\\/]/).includes(".."), "a path that stays inside the worktree (no '..')")

  const Colour = z.string().refine((s) => Png.parseHex(s) !== undefined, "a colour as six hex digits, '#rrggbb'")

  export const Point = z
    .object({
      /** Pixels from the window's top-left corner. */
      x: z.number().int().min(0),
      y: z.number().int().min(0),
      rgb: Colour,
      /** How far each channel may be from `rgb` (0–255). */
      tolerance: z.number().int().min(0).max(255).default(16),
    })
    .strict()
  export type Point = z.infer<typeof Point>

  export const Title = z.union([
    z.string(),
    z
      .object({
        regex: z.string().refine((r) => {
          try {
            new RegExp(r)
            return true
          } catch {
            return false
          }
        }, "a JavaScript regular expression"),
      })
      .strict(),
  ])
  export type Title = z.infer<typeof Title>

  export const Size = z.object({ width: z.number().int().min(1).max(16_384), height: z.number().int().min(1).max(16_384) }).strict()

  export const Checks = z
    .object({
      /** The window's title, exact or `{ regex }`. */
      title: Title.optional(),
      minSize: Size.optional(),
      /** Fail when one colour covers the window (a program that maps its window and never draws). */
      notBlank: z.boolean().default(true),
      /** The share of the window one colour must reach for it to count as blank (1: every pixel). */
      blankShare: z.number().gt(0).max(1).default(1),
      pixels: z.array(Point).default([]),
    })
    .strict()
  export type Checks = z.infer<typeof Checks>

  const Env = z.record(z.string(), z.string()).superRefine((env, ctx) => {
    for (const name of Object.keys(env)) {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) ctx.addIssue({ code: "custom", path: [name], message: "a variable name (letters, digits, _)" })
      else if (name === "DISPLAY") ctx.addIssue({ code: "custom", path: [name], message: "DISPLAY is set by the capture (the program gets a display of its own)" })
    }
  })

  export const Spec = z
    .object({
      /** The program: a path relative to the worktree ("build/app") or a name found on PATH. */
      command: z.string().min(1),
      args: z.array(z.string()).default([]),
      /** Added to the sandbox's reduced environment. */
      env: Env.default({}),
      /** Where the program starts, relative to the worktree. */
      cwd: Inside.default("."),
      /** The display's size; the program's window is checked, the screen recorded. */
      screen: Size.prefault({ width: 800, height: 600 }),
      /** How long the program has, from its start, to map a window. */
      waitMs: z.number().int().min(100).max(300_000).default(10_000),
      /** After the window is mapped, how long it has to draw before the screenshot. */
      settleMs: z.number().int().min(0).max(60_000).default(300),
      checks: Checks.prefault({}),
    })
    .strict()
  export type Spec = z.infer<typeof Spec>
  export type Input = z.input<typeof Spec>
}

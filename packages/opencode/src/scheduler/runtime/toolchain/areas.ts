import path from "node:path"
import { z } from "zod"

/**
 * Toolchain areas: the parts of a repository that hold several languages (a CMake library at the top, a Python
 * package under python/, a TypeScript package under web/, a Go module, a Rust crate), each built, tested and
 * analysed by its own tools from its own directory. Pure: which area a file belongs to, which areas a change
 * touches, and the rules that run just those. Whatever does not know areas (the final check, the merge build,
 * the baseline) reads the rules' `build` and `test`, which hold every area's commands.
 */
export namespace Areas {
  /** An area's directory: relative to the worktree, `.` for the top, `/` between directories. */
  const Root = z
    .string()
    .min(1)
    .refine((p) => !p.startsWith("/") && !/^[A-Za-z]:/.test(p) && !p.includes("\\"), "a directory relative to the worktree, with / between directories")
    .refine((p) => !p.split("/").includes(".."), "inside the worktree (no ..)")
    .refine((p) => /^[A-Za-z0-9_.+@/-]+$/.test(p), "letters, digits and _ . + @ - / only (it is written into shell commands)")

  export const Area = z
    .object({
      name: z.string().regex(/^[a-z0-9][a-z0-9_.-]*$/, "lowercase letters, digits, _ . - (e.g. cpp, python, web)").describe("the area's name, in the evidence and doctor"),
      root: Root.describe("its directory, relative to the worktree (`.` for the top): its commands run there, and it owns the files below it that no deeper area owns"),
      build: z.array(z.string().min(1)).default([]).describe("shell commands run in order in the area's root"),
      test: z.array(z.string().min(1)).default([]).describe("shell commands run in order in the area's root after the build"),
      analysers: z
        .array(z.string().min(1))
        .optional()
        .describe("the analysers that read this area's files by tool name (cppcheck, clang-tidy, mypy, pylint, tsc, go-vet, staticcheck, clippy); absent: every one"),
      detected: z.string().optional().describe("the file that made `aircoding init` write this area, for people"),
    })
    .strict()
  export type Area = z.infer<typeof Area>

  export const List = z
    .array(Area)
    .default([])
    .refine((areas) => new Set(areas.map((a) => a.name)).size === areas.length, "two areas have the same name")
  export type List = z.infer<typeof List>

  /** The root without `./` and trailing `/`; "" for the top. */
  export function dirOf(area: Pick<Area, "root">): string {
    const normal = path.posix.normalize(area.root).replace(/\/+$/, "")
    return normal === "." ? "" : normal
  }

  /** A command of the area as the worktree runs it: from the area's root (the runners read the `cd <dir> &&`). */
  export function command(area: Pick<Area, "root">, text: string): string {
    const dir = dirOf(area)
    return dir === "" ? text : `cd ${dir} && ${text}`
  }

  /** Every command of `which` of `areas`, in their order, each from its own root. */
  export function commands(areas: readonly Area[], which: "build" | "test"): string[] {
    return areas.flatMap((area) => area[which].map((text) => command(area, text)))
  }

  /**
   * The areas that own `file` (relative to the worktree): those with the deepest root above it (several when
   * two areas share a directory: a pyproject.toml beside the top CMakeLists.txt); none when no root is above it.
   */
  export function owners(areas: readonly Area[], file: string): Area[] {
    const normal = path.posix.normalize(file)
    let best: Area[] = []
    let depth = -1
    for (const area of areas) {
      const dir = dirOf(area)
      if (dir !== "" && normal !== dir && !normal.startsWith(`${dir}/`)) continue
      const d = dir === "" ? 0 : dir.split("/").length
      if (d > depth) {
        best = [area]
        depth = d
      } else if (d === depth) best.push(area)
    }
    return best
  }

  /**
   * The areas a write-set entry can change: a file's owners; for a directory (`tools/`) or a pattern
   * (`web/*.ts`, `*`) also every area rooted below its literal part, whose files it may name.
   */
  export function touchedBy(areas: readonly Area[], entry: string): Area[] {
    const normal = entry.replace(/\\/g, "/").replace(/^\.\//, "")
    const wild = normal.search(/[*?]/)
    if (!normal.endsWith("/") && wild < 0) return owners(areas, normal)
    // The directory every path it names lies in: the entry itself, or a pattern's part before its last / ahead of the wildcard.
    const literal = wild < 0 ? normal.replace(/\/+$/, "") : normal.slice(0, wild)
    const dir = wild < 0 ? literal : literal.includes("/") ? literal.slice(0, literal.lastIndexOf("/")) : ""
    const below = areas.filter((a) => dir === "" || dirOf(a) === dir || dirOf(a).startsWith(`${dir}/`))
    const own = dir === "" ? [] : owners(areas, dir)
    return [...new Set([...own, ...below])]
  }

  export interface Scoped<R> {
    rules: R
    /** The areas whose commands run, and those left out (none when the project has no areas). */
    run: string[]
    skipped: string[]
    /** Why, for the evidence. */
    note?: string
  }

  /**
   * The rules a change runs: only the areas that own one of `paths` (the task's write-set), their build and test
   * commands in the areas' order. No path given, or none inside an area: every area, since nothing says that
   * leaving one out is safe.
   */
  export function scope<R extends { areas: List; build: string[]; test: string[] }>(rules: R, paths: readonly string[] | undefined): Scoped<R> {
    const areas = rules.areas
    if (areas.length === 0) return { rules, run: [], skipped: [] }
    const all = areas.map((a) => a.name)
    if (paths === undefined) return { rules, run: all, skipped: [], note: "every area (no write-set)" }
    const touched = new Set(paths.flatMap((entry) => touchedBy(areas, entry).map((a) => a.name)))
    if (touched.size === 0) return { rules, run: all, skipped: [], note: "every area (the write-set is in none of them)" }
    const chosen = areas.filter((a) => touched.has(a.name))
    const skipped = areas.filter((a) => !touched.has(a.name)).map((a) => a.name)
    return {
      rules: { ...rules, build: commands(chosen, "build"), test: commands(chosen, "test") },
      run: chosen.map((a) => a.name),
      skipped,
      note: `the areas the write-set touches: ${chosen.map((a) => a.name).join(", ")}${skipped.length > 0 ? `; not run: ${skipped.join(", ")}` : ""}`,
    }
  }

  /**
   * Whether the analyser `tool` reads `file`: yes outside every area and in an area that lists no analysers;
   * otherwise only when one of the file's areas lists it.
   */
  export function analyses(areas: readonly Area[], tool: string, file: string): boolean {
    const own = owners(areas, file)
    return own.length === 0 || own.some((area) => area.analysers === undefined || area.analysers.includes(tool))
  }
}

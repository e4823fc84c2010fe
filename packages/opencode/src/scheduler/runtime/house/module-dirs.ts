import { gitTry } from "../git/git"
import type { BoundaryRules } from "../../core/boundary-tests"
import type { HouseRules } from "./rules"

/**
 * The fact the boundary rule needs to tell a new module from an existing one: the directories that hold tracked
 * files at a commit (the integration branch when a plan arrives), every ancestor included.
 */
export namespace ModuleDirs {
  export async function at(root: string, ref: string): Promise<Set<string>> {
    const r = await gitTry(root, ["ls-tree", "-r", "-z", "--name-only", ref])
    if (r.code !== 0) throw new Error(`git ls-tree ${ref} failed (exit ${r.code}): ${r.stderr.trim() || r.stdout.trim()}`)
    const dirs = new Set<string>()
    for (const path of r.stdout.split("\0")) {
      let at = path.lastIndexOf("/")
      while (at > 0) {
        const dir = path.slice(0, at)
        if (dirs.has(dir)) break
        dirs.add(dir)
        at = dir.lastIndexOf("/")
      }
    }
    return dirs
  }

  /** The plan validation's boundary rules from the house rules; undefined (the built-in rule) without them or when turned off. */
  export async function rules(root: string, ref: string, house: HouseRules.Loaded | undefined): Promise<BoundaryRules | undefined> {
    const b = house?.boundaries
    if (!b) return undefined
    return { ...b, ...(b.modules ? { existingDirs: await at(root, ref) } : {}) }
  }
}

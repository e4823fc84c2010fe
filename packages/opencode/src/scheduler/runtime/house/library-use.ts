import { gitTry } from "../git/git"
import { LoggingLibraries } from "./libraries"
import type { HouseRules } from "./rules"

/**
 * Whether the project already uses its logging library, read from a commit's tree (the integration branch when a
 * plan arrives), so the plan rule is given a fact, not a guess: its include or its CMake package appears in some
 * tracked file. The project's own header is in the project by definition.
 */
export namespace LibraryUse {
  export async function uses(root: string, ref: string, rule: HouseRules.LoggingRule): Promise<boolean> {
    const pattern = LoggingLibraries.TABLE[rule.library].usedWhen
    if (!pattern) return true
    // Exit 1 is "no match"; anything else (no such ref) is a real failure, said with git's words.
    const r = await gitTry(root, ["grep", "-q", "-I", "-E", "-e", pattern, ref, "--"])
    if (r.code === 0) return true
    if (r.code === 1) return false
    throw new Error(`git grep for ${rule.library} in ${ref} failed (exit ${r.code}): ${r.stderr.trim() || r.stdout.trim()}`)
  }

  /** What the plan rule needs: the library the project must integrate first, or undefined (used already, or no rule). */
  export async function missing(root: string, ref: string, rules: HouseRules.Loaded | undefined): Promise<{ library: string; cmakePackage?: string; allowNetwork: boolean } | undefined> {
    const rule = rules?.logging
    if (!rule || !rule.integrationFirst) return undefined
    if (await uses(root, ref, rule)) return undefined
    return { library: rule.library, ...(rule.cmake ? { cmakePackage: rule.cmake.package } : {}), allowNetwork: rule.allowNetwork }
  }
}

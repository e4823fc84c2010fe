/**
 * Path globs as teams write them in rule files (`test/fixtures/**`, `build/test-results/*.xml`): `*` and
 * `?` within one path segment, `**` across segments. One reader for every rule file that takes globs, so
 * they all mean the same thing.
 */
export namespace Glob {
  /** The pattern as a regular expression over `/`-separated relative paths. */
  export function toRegExp(glob: string): RegExp {
    let re = ""
    for (let i = 0; i < glob.length; i++) {
      const c = glob[i]!
      if (c === "*") {
        if (glob[i + 1] === "*") {
          i++
          // `a/**/b` matches `a/b` too, but not `a/xb`.
          if (glob[i + 1] === "/") {
            re += "(?:.*/)?"
            i++
          } else re += ".*"
        } else re += "[^/]*"
      } else if (c === "?") re += "[^/]"
      else re += c.replace(/[.+^${}()|[\]\\]/g, "\\$&")
    }
    return new RegExp(`^${re}$`)
  }

  /** Whether a path segment has a wildcard (the directories before the first one need no search). */
  export function isPattern(segment: string): boolean {
    return /[*?]/.test(segment)
  }
}

import picomatch from "picomatch"

/**
 * Path globs as teams write them in rule files (`test/fixtures/**`, `build/test-results/*.xml`), read by
 * picomatch: `*` and `?` within one path segment, `**` across segments, dotfiles matched too. One reader
 * for every rule file that takes globs, so they all mean the same thing.
 */
export namespace Glob {
  /** The pattern as a regular expression over `/`-separated relative paths. */
  export function toRegExp(glob: string): RegExp {
    return picomatch.makeRe(glob, { dot: true })
  }
}

/** A task id becomes a branch name, a tag and a directory name: only plain names are safe everywhere. */
const PLAIN_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/

export function idProblem(id: string): string | null {
  if (id.length === 0) return "the id is empty"
  if (/[\u0000-\u001f\u007f]/.test(id)) return "the id contains a control character"
  if (id.includes("..")) return 'the id contains ".."'
  if (id.includes("/") || id.includes("\\")) return "the id contains a slash"
  if (id.length > 64) return "the id is longer than 64 characters"
  if (!PLAIN_ID.test(id)) return "the id must start with a letter or digit and use only letters, digits, _ . -"
  return null
}

/** Already normal: relative, forward slashes, no empty, "." or ".." segment, no control character. */
const PLAIN_PATH = /^(?!\.\.?(?:\/|$))(?:[^/\\\u0000-\u001f\u007f:]+\/(?!\.\.?(?:\/|$)))*[^/\\\u0000-\u001f\u007f:]+$/

/**
 * Normalises a repository-relative path to posix form, or says why it cannot be one.
 * Inner "." and ".." segments are resolved; a path that climbs out of the repository is refused.
 */
export function normaliseRepoPath(raw: string): { path: string } | { problem: string } {
  if (raw.trim().length === 0) return { problem: "the path is empty" }
  if (PLAIN_PATH.test(raw)) return { path: raw }
  if (/[\u0000-\u001f\u007f]/.test(raw)) return { problem: "the path contains a control character" }
  const slashed = raw.replace(/\\/g, "/")
  if (slashed.startsWith("/") || /^[A-Za-z]:/.test(slashed)) return { problem: "the path is absolute" }
  const parts: string[] = []
  for (const segment of slashed.split("/")) {
    if (segment === "" || segment === ".") continue
    if (segment === "..") {
      if (parts.length === 0) return { problem: "the path leaves the repository through .." }
      parts.pop()
      continue
    }
    parts.push(segment)
  }
  if (parts.length === 0) return { problem: "the path names the repository root, not a file" }
  return { path: parts.join("/") }
}

/** Natural order, so that T-2 comes before T-10; the dispatch order must not depend on a locale. */
export function compareIds(a: string, b: string): number {
  let i = 0
  let j = 0
  while (i < a.length && j < b.length) {
    const ca = a.charCodeAt(i)
    const cb = b.charCodeAt(j)
    if (isDigit(ca) && isDigit(cb)) {
      let ei = i
      let ej = j
      while (ei < a.length && isDigit(a.charCodeAt(ei))) ei++
      while (ej < b.length && isDigit(b.charCodeAt(ej))) ej++
      const na = a.slice(i, ei).replace(/^0+/, "")
      const nb = b.slice(j, ej).replace(/^0+/, "")
      if (na.length !== nb.length) return na.length - nb.length
      if (na !== nb) return na < nb ? -1 : 1
      i = ei
      j = ej
      continue
    }
    if (ca !== cb) return ca - cb
    i++
    j++
  }
  if (a.length - i !== b.length - j) return a.length - i - (b.length - j)
  return a < b ? -1 : a > b ? 1 : 0
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57
}

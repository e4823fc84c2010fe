import { existsSync, readFileSync } from "node:fs"

/**
 * The records of a JSON-lines file that AirCoding appends to (requests.jsonl, events.jsonl), in order.
 * A missing file has none; a torn last line — a process killed mid-append — is skipped, never fatal.
 */
export function readJsonLines<T>(file: string): T[] {
  if (!existsSync(file)) return []
  const out: T[] = []
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line.trim()) continue
    try {
      out.push(JSON.parse(line) as T)
    } catch {
      // a torn line
    }
  }
  return out
}

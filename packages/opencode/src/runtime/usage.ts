import { appendFileSync, existsSync, mkdirSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { z } from "zod"
import { writeFileAtomicSync } from "./atomic"
import { readJsonLines } from "./jsonl"

/**
 * Model requests by agent, one line per request, recorded from the `chat.params` hook (which fires
 * once per model call and names the agent). Invariant 5 — routine scheduling costs zero model calls —
 * is checked against this file.
 */
export namespace Usage {
  export function file(root: string): string {
    return join(root, ".air", "local", "state", "requests.jsonl")
  }

  export function record(root: string, agent: string, sessionID: string, at = new Date().toISOString()): void {
    const path = file(root)
    mkdirSync(dirname(path), { recursive: true })
    appendFileSync(path, JSON.stringify({ at, agent, sessionID }) + "\n")
  }

  /** Every request recorded, in order (a torn last line is skipped). */
  export function entries(root: string): { at: string; agent: string; sessionID: string }[] {
    return readJsonLines(file(root))
  }

  export function byAgent(root: string): Record<string, number> {
    const counts: Record<string, number> = {}
    for (const { agent } of entries(root)) counts[agent] = (counts[agent] ?? 0) + 1
    return counts
  }

  /** Model requests per session. */
  export function bySession(root: string): Record<string, number> {
    const counts: Record<string, number> = {}
    for (const { sessionID } of entries(root)) if (sessionID) counts[sessionID] = (counts[sessionID] ?? 0) + 1
    return counts
  }

  /**
   * Tokens each session used, as the engine reported them, kept on disk so that a restarted process
   * counts what the dead one spent. `at`: when the session was first seen (to tell runs apart).
   */
  export const SessionTokens = z.record(z.string(), z.object({ at: z.string(), tokens: z.number().int().min(0) }))
  export type SessionTokens = z.infer<typeof SessionTokens>

  export function tokensFile(root: string): string {
    return join(root, ".air", "local", "state", "tokens.json")
  }

  export function readTokens(root: string): SessionTokens {
    const path = tokensFile(root)
    if (!existsSync(path)) return {}
    try {
      const parsed = SessionTokens.safeParse(JSON.parse(readFileSync(path, "utf8")))
      return parsed.success ? parsed.data : {}
    } catch {
      return {} // written atomically, so only a hand-edited file is unreadable; it is rebuilt as sessions report
    }
  }

  export function writeTokens(root: string, tokens: SessionTokens): void {
    mkdirSync(dirname(tokensFile(root)), { recursive: true })
    writeFileAtomicSync(tokensFile(root), JSON.stringify(tokens))
  }
}

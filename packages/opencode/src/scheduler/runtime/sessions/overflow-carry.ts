import type { TaskRuntime } from "../../core/state"
import type { OverflowRecord, RefreshCarried } from "../../core/vocabulary"
import type { GitPort } from "../ports"
import { GuardLog } from "./guard-log"

/**
 * What a fresh session after a context overflow starts from beside its context pack (core/overflow.ts): what
 * the worktree holds — the task's diff so far, the last gate failure (already in the pack's history) and the
 * steps the overflowed Debugger's session recorded (the evidence the guard allowed it, from its log). Kept
 * small on purpose: the session that gets it ran out of context once already.
 */
export namespace OverflowCarry {
  /** The diff is given up to this many characters; the rest is for the session to read in parts. */
  export const DIFF_CHARS = 12_000
  /** The Debugger's last steps carried over, at most. */
  export const MAX_STEPS = 30

  export type Carry = {
    /** The session that overflowed. */
    from: string
    /** The integration branch the diff is taken against. */
    base: string
    /** `git diff --stat` of the task's branch against `base`, one line per file. */
    stat: string[]
    /** The diff itself, cut to DIFF_CHARS. */
    diff: string
    diffChars: number
    diffCut: boolean
    /** "<kind>: <what>", oldest first. */
    steps: string[]
    gateFailure: boolean
  }

  /** Gathers the carry for the fresh session of `record.role`; a git that cannot say leaves the diff empty. */
  export async function gather(input: { root: string; worktree: string; base: string; record: OverflowRecord; rt: TaskRuntime | undefined; git: GitPort }): Promise<Carry> {
    const { root, worktree, base, record, rt, git } = input
    const range = `${base}...HEAD`
    const [statOut, diffOut] = await Promise.all([git(worktree, ["diff", "--stat=120", range]).catch(() => ""), git(worktree, ["diff", range]).catch(() => "")])
    const stat = statOut.split("\n").map((l) => l.trimEnd()).filter(Boolean)
    return {
      from: record.sessionId,
      base,
      stat,
      diff: diffOut.length > DIFF_CHARS ? diffOut.slice(0, DIFF_CHARS) : diffOut,
      diffChars: diffOut.length,
      diffCut: diffOut.length > DIFF_CHARS,
      steps: record.role === "debugger" ? GuardLog.evidenceOf(root, record.sessionId).slice(-MAX_STEPS) : [],
      gateFailure: Boolean(rt?.lastFailure?.evidencePath),
    }
  }

  /** What session.refreshed records of it. */
  export function carried(carry: Carry): RefreshCarried {
    // The stat's last line is its summary ("2 files changed, …"), not a file.
    const files = carry.stat.filter((l) => l.includes("|")).length
    return { diffFiles: files, diffChars: carry.diffChars, diffCut: carry.diffCut, gateFailure: carry.gateFailure, steps: carry.steps.length }
  }
}

import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { z } from "zod"
import { writeFileAtomicSync } from "../scheduler/runtime/store/atomic"
import type { Exec } from "../scheduler/runtime/gates/gate"
import { AirPaths } from "../scheduler/core/air-paths"

/**
 * Environment fixes that stay fixed: when a baseline or a gate failed for a reason outside the code and
 * the person fixed it, the fix is recorded as a setup step of the project's rules,
 * `.air/shared/rules/setup.json` (committed with the project):
 * - `run`: a command run in the sandbox, in each worktree, before its first build (a generated file, a
 *   submodule init, a tool's config) — once per worktree and step;
 * - `check` + `install`: a prerequisite — when the check fails, nothing builds and the person is asked to
 *   run the install command (the gates report the tool missing, `aircoding doctor` names it).
 */
export namespace SetupSteps {
  export const Step = z
    .object({
      id: z.string().min(1),
      reason: z.string().min(1).describe("what failed without it, for people"),
      run: z.string().min(1).optional(),
      check: z.string().min(1).optional(),
      install: z.string().min(1).optional(),
      recordedAt: z.string(),
    })
    .strict()
    .refine((s) => (s.run ? !s.check : !!s.check), "a step is either `run` or a prerequisite (`check`, with `install`)")
  export type Step = z.infer<typeof Step>
  export const File = z.object({ version: z.literal(1), steps: z.array(Step) }).strict()

  export const RULES_FILE = AirPaths.SETUP_RULES

  export function file(root: string): string {
    return join(root, RULES_FILE)
  }

  export function read(root: string): Step[] {
    const path = file(root)
    if (!existsSync(path)) return []
    return File.parse(JSON.parse(readFileSync(path, "utf8"))).steps
  }

  /** Records a fix (once: the same command or check is not added twice); returns the step. */
  export function record(root: string, fix: { reason: string; run?: string; check?: string; install?: string }, now: Date = new Date()): Step {
    const steps = read(root)
    const id = createHash("sha256").update(fix.run ?? `check:${fix.check}`).digest("hex").slice(0, 8)
    const known = steps.find((s) => s.id === id)
    if (known) return known
    const step = Step.parse({ id, ...fix, recordedAt: now.toISOString() })
    mkdirSync(join(file(root), ".."), { recursive: true })
    writeFileAtomicSync(file(root), JSON.stringify({ version: 1, steps: [...steps, step] }, null, 2) + "\n")
    return step
  }

  export type Applied = { ok: true; ran: string[] } | { ok: false; step: Step; output: string; missing: boolean }

  /**
   * Before a worktree's build: every prerequisite checked, every `run` step not yet applied there run (a
   * marker in the worktree's build dir remembers it). The first that fails stops, and says which.
   */
  export async function apply(root: string, worktree: string, exec: Exec, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Applied> {
    const steps = read(root)
    const ran: string[] = []
    const markers = join(worktree, ".air-build", ".setup")
    for (const step of steps) {
      const command = step.check ?? step.run!
      const marker = join(markers, step.id)
      if (step.run && existsSync(marker)) continue
      const result = await exec(command, [], { cwd: worktree, env, shell: true, timeoutMs })
      if (!result.ok) return { ok: false, step, output: result.output, missing: !!step.check }
      if (step.run) {
        mkdirSync(markers, { recursive: true })
        writeFileSync(marker, `${step.run}\n`)
        ran.push(step.run)
      }
    }
    return { ok: true, ran }
  }

  /** What the person is told when a prerequisite is missing, or a setup step failed. */
  export function message(label: string, applied: Extract<Applied, { ok: false }>): string {
    const s = applied.step
    return s.check
      ? `${label}: a prerequisite of this project is missing: \`${s.check}\` failed (${s.reason}). Install it${s.install ? `: ${s.install}` : ""}, then run the gates again. (Recorded in ${RULES_FILE}.)`
      : `${label}: the setup step \`${s.run}\` from ${RULES_FILE} failed (${s.reason}):\n${applied.output.trim().split("\n").slice(-8).join("\n")}\nFix the environment or the step, then run the gates again.`
  }

  /** The offer made when a gate or the baseline failed on something outside the code. */
  export function offer(tool: string): string {
    return `Once it is installed, keep the fix for every worktree and machine: aircoding knowledge setup --check "command -v ${tool}" --install "<the install command>" --reason "${tool} is needed to build"`
  }
}

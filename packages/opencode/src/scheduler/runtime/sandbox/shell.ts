import { mkdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { z } from "zod"
import { Paths } from "../../../agent/paths"
import { gitTry } from "../git/git"
import { Sandbox } from "./sandbox"
import { GitSync } from "../git/git-sync"
import { AirPaths } from "../../core/air-paths"

/**
 * A worker's bash call, run in the sandbox: the command line the engine's bash tool runs instead of the
 * model's, and the git bookkeeping around it (GitSync). `enter` before the call, `leave` after it, both
 * keyed by the call's id. The model's command reaches bwrap as one quoted argument; the engine's own
 * shell runs only `exec bwrap --args 3 -- /bin/bash -c '<command>' 3<<args file>` (the options sit in a file
 * under `.air/local/sandbox`, which the sandbox cannot write).
 */
export namespace SandboxShell {
  export type Mode = "on" | "fallback" | "off"
  export type Entered =
    | { kind: "sandboxed"; command: string }
    | { kind: "unsandboxed"; why: string }
    | { kind: "refused"; message: string }

  type Open = { worktree: string; policy: Sandbox.Policy; argsFile: string }
  const open = new Map<string, Open>()

  /** `network` of the project's toolchain.json (a bad file means no network: the gates report the file). */
  export function networkAllowed(project: string | undefined): boolean {
    if (!project) return false
    try {
      const raw = JSON.parse(readFileSync(join(project, AirPaths.TOOLCHAIN_RULES), "utf8"))
      return z.object({ network: z.boolean() }).safeParse(raw).data?.network === true
    } catch {
      return false
    }
  }

  export type EnterInput = {
    /** The call's id (unique per session). */
    key: string
    worktree: string
    command: string
    mode: Mode
    env?: Readonly<Record<string, string | undefined>>
  }

  export async function enter(input: EnterInput): Promise<Entered> {
    if (input.mode === "off") return { kind: "unsandboxed", why: "the sandbox is off" }
    const check = Sandbox.check()
    if (!check.ok) {
      if (input.mode === "fallback") return { kind: "unsandboxed", why: check.message }
      return {
        kind: "refused",
        message:
          `No command can run: the OS sandbox that confines a worker's commands cannot start here — ${check.message}. ` +
          `Nothing was run. Report this as a blocker (air_report); the user can install bubblewrap, or allow running ` +
          `without the sandbox ("sandboxFallback": true in ${AirPaths.CONFIG}).`,
      }
    }
    const project = Paths.projectOfWorktree(input.worktree)?.root
    const policy = Sandbox.plan({ worktree: input.worktree, project, env: input.env, network: networkAllowed(project) })
    // Under the project's state, or the host's /tmp (which the sandbox replaces with its own): out of reach either way.
    const dir = project ? AirPaths.sandbox(project, "calls") : join(tmpdir(), `aircoding-sandbox-${process.pid}`)
    mkdirSync(dir, { recursive: true })
    const argsFile = join(dir, `${input.key.replace(/[^\w.-]/g, "_")}.args`)
    if (policy.git) await GitSync.detach(input.worktree, policy.git)
    await keepHiddenOutOfCommits(input.worktree, policy)
    open.set(input.key, { worktree: input.worktree, policy, argsFile })
    return { kind: "sandboxed", command: Sandbox.shellCommand(input.command, policy, argsFile) }
  }

  /**
   * A `.env` committed in the worktree is an empty file inside the sandbox: without this, the worker's
   * `git add -A` would commit it emptied. Marked skip-worktree (in the worktree's own index; asked each
   * time, a redone task's worktree has a new index), git leaves it out of what a command stages.
   */
  async function keepHiddenOutOfCommits(worktree: string, policy: Sandbox.Policy): Promise<void> {
    const inside = policy.hidden.filter((h) => h.kind === "file" && h.path.startsWith(worktree + "/")).map((h) => h.path)
    if (inside.length === 0) return
    const tracked = await gitTry(worktree, ["ls-files", "-z", "--full-name", "--", ...inside])
    const paths = tracked.stdout.split("\0").filter(Boolean)
    if (paths.length > 0) await gitTry(worktree, ["update-index", "--skip-worktree", "--", ...paths.map((p) => join(worktree, p))])
  }

  /**
   * The task branch settled without a command: before a worker's report (the gates read the branch), in
   * case a command of it was aborted before `leave` (`GitSync.heal`).
   */
  export function heal(worktree: string): Promise<GitSync.Settled | undefined> {
    return GitSync.heal(worktree)
  }

  /** After the call: the task branch settled, the args file gone. Unknown keys are ignored. */
  export async function leave(key: string): Promise<GitSync.Settled | undefined> {
    const o = open.get(key)
    if (!o) return undefined
    open.delete(key)
    rmSync(o.argsFile, { force: true })
    return o.policy.git ? await GitSync.settle(o.worktree, o.policy.git, GitSync.branchOf(o.worktree)) : {}
  }
}

import { Roles } from "../../../agent/roles"
import { WORKER_ROLES } from "../../core/vocabulary"
import { ContextPack } from "./context-pack"
import type { SessionSpec } from "./supervisor"

/**
 * The session the runtime starts for a worker role the machine dispatched: the role's agent (registered from its
 * row, fenced by its row), in its task's worktree, told its own context pack. Nothing here names a role: a new
 * worker role is its row in agent/roles.ts, its prompt in prompts/<role>.md and its pack in `WORKER_PACKS`.
 */
export namespace WorkerSession {
  /** Where the role's row and pack are read from: the shipped table and packs, or a test's own (`Roles.extend`, `{ ...WORKER_PACKS, … }`). */
  export type Registry = { roles?: Roles.Table; packs?: ContextPack.Packs }

  /**
   * The roles the machine dispatches (core/vocabulary.ts decides WHEN a role works; the core cannot import the
   * table): each must be a worker row, and tsc refuses this line for one that is not.
   */
  export const DISPATCHED: readonly Roles.Worker[] = WORKER_ROLES

  /** The session to start for `role` on `input.task`. Throws for a role with no worker row or no pack. */
  export function spec(role: string, input: ContextPack.WorkerInput, registry: Registry = {}): SessionSpec {
    const row = Roles.rowOf(role, registry.roles)
    if (!row?.confined) throw new Error(`AirCoding: ${role} is not a worker role (no row with confined: true in src/agent/roles.ts)`)
    const pack = ContextPack.packOf(role, registry.packs)
    if (!pack) throw new Error(`AirCoding: the ${role} role has no context pack (WORKER_PACKS in scheduler/runtime/sessions/context-pack.ts)`)
    const taskId = input.task.id
    return { agent: role, directory: input.root, worktree: input.worktree.path, title: `${role} ${taskId}`, prompt: pack(input), taskId }
  }
}

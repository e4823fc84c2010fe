import { Paths } from "../../agent/paths"
import type { ValidationError } from "../core/validate"
import type { PlanDelta } from "../core/delta.schema"
import type { TaskNode } from "../core/task.schema"
import { Strict } from "../core/strict"

/**
 * What a plan says, checked against the repository on disk when it is written (the core checks it as
 * text, without the file system): a write-set path that leads out of the repository through a symbolic
 * link is refused at the door, instead of every write to it being blocked later by the guard.
 */
export namespace PlanPaths {
  /** Problems of the write-sets of `tasks`, each with the JSON path `pathOf(i)` gives the task. */
  export function writeSetProblems(root: string, tasks: readonly Pick<TaskNode, "id" | "writeSet">[], pathOf: (i: number) => string): ValidationError[] {
    const errors: ValidationError[] = []
    tasks.forEach((task, i) =>
      task.writeSet.forEach((entry, j) => {
        const verdict = Paths.check(root, entry.path, { write: true })
        if (verdict.ok || verdict.why !== "symlink") return
        errors.push({
          path: `${pathOf(i)}.writeSet[${j}].path`,
          taskId: task.id,
          message: Strict.visible(`task ${task.id}: write-set path ${JSON.stringify(entry.path)} leads out of the repository through a symbolic link (it resolves to ${Paths.real(`${root}/${entry.path}`)})`),
          fix: "name the file where it really is inside the repository, or leave it out: a task may only write inside the repository",
        })
      }),
    )
    return errors
  }

  /** The same for what a plan delta adds or changes. */
  export function deltaProblems(root: string, delta: PlanDelta): ValidationError[] {
    const modified = delta.modify.flatMap((m) => (m.patch.writeSet ? [{ id: m.id, writeSet: m.patch.writeSet }] : []))
    const at = delta.modify.flatMap((m, i) => (m.patch.writeSet ? [i] : []))
    return [...writeSetProblems(root, delta.add, (i) => `add[${i}]`), ...writeSetProblems(root, modified, (i) => `modify[${at[i]}].patch`)]
  }
}

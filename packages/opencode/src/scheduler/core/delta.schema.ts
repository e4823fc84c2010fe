import { z } from "zod"
import { SCHEMA_VERSION, TaskNode, TASK_KINDS, WriteEntry } from "./task.schema"

/** Fields of a task a delta may change; the id and the runtime status are not among them. */
const TaskPatch = z
  .object({
      title: z.string().min(1),
      kind: z.enum(TASK_KINDS),
      phase: z.number().int().min(1),
      deps: z.array(z.string()),
      writeSet: z.array(WriteEntry),
      keep: z.array(z.string()),
      doneWhen: z.string(),
      validation: z.array(z.string()),
      adrRefs: z.array(z.string()),
      files: z.array(z.string()),
    })
    .partial()
    .strict()
  export type TaskPatch = z.infer<typeof TaskPatch>

  export const PlanDelta = z
    .object({
    schemaVersion: z.literal(SCHEMA_VERSION),
    add: z.array(TaskNode).default([]),
    remove: z.array(z.string()).default([]),
    modify: z.array(z.object({ id: z.string(), patch: TaskPatch }).strict()).default([]),
    supersedesAdrs: z.array(z.string()).default([]),
  })
  .strict()
export type PlanDelta = z.infer<typeof PlanDelta>

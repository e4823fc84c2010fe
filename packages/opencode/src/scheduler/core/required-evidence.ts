import type { TaskKind } from "./task.schema"

/**
 * ONLY for reading old logs: `gates.passed` events written before they carried what the gates required
 * (`requires`) are checked against the table the core held then, by the task's kind. Never extend it: every event
 * written now carries its requirements, and an evidence kind a gate added since has none here.
 */
const EVIDENCE_OF_LOGS_WITHOUT_REQUIRES: Readonly<Record<TaskKind, readonly string[]>> = {
  code: ["diff", "build", "test", "analysis"],
  fix: ["diff", "build", "test", "analysis"],
  refactor: ["diff", "build", "test", "analysis"],
  test: ["diff", "build", "test"],
  build: ["diff", "build"],
  docs: ["diff"],
  verify: ["build", "test"],
}

/**
 * The evidence a task must have before review: what the gates required of its kind, as `gates.passed` says (each
 * gate declares the kinds it is required for; the core lists no evidence kinds), or for an old event the table above.
 */
export function requiredEvidence(requires: readonly string[] | undefined, kind: TaskKind): readonly string[] {
  return requires ?? EVIDENCE_OF_LOGS_WITHOUT_REQUIRES[kind]
}

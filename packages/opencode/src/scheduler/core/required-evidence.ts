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
  // No log was written before these kinds existed; listed only because the table covers every kind.
  ui: ["diff", "build", "test", "analysis"],
  service: ["diff", "build", "test", "analysis"],
}

/**
 * The evidence a task must have before review: what the gates required of its kind, as `gates.passed` says (each
 * gate declares the kinds it is required for; the core lists no evidence kinds), or for an old event the table above.
 */
export function requiredEvidence(requires: readonly string[] | undefined, kind: TaskKind): readonly string[] {
  return requires ?? EVIDENCE_OF_LOGS_WITHOUT_REQUIRES[kind]
}

/**
 * What the gates hold for a task: `evidence`, each kind's log (the gate ran on the task's change and passed), and
 * `notApplicable`, each kind whose gate had nothing to check in this change, with why (no C/C++ file changed: the
 * analysis is not applicable, and that is recorded, not assumed).
 */
export type HeldEvidence = {
  readonly evidence: Readonly<Record<string, string>>
  readonly notApplicable?: Readonly<Record<string, string>> | undefined
}

/**
 * THE rule of evidence, in one place: a required kind is satisfied by its log, or by its gate's record that it had
 * nothing to check. The pipeline's evidence gate judges a task with it before it reports, and the machine judges
 * `gates.passed` with it, so a pass the gates report is never refused, and a task the gates failed never passes.
 */
export function missingEvidence(requires: readonly string[], held: HeldEvidence): string[] {
  return requires.filter((kind) => !held.evidence[kind] && !held.notApplicable?.[kind])
}

import { analysisGate } from "./analysis.ts"
import { buildGate } from "./build.ts"
import { clangTidyGate } from "./clang-tidy.ts"
import { mypyGate } from "./analysers/mypy.ts"
import { pylintGate } from "./analysers/pylint.ts"
import { tscGate } from "./analysers/tsc.ts"
import { goVetGate } from "./analysers/go-vet.ts"
import { clippyGate } from "./analysers/clippy.ts"
import { staticcheckGate } from "./analysers/staticcheck.ts"
import { commitGate } from "./commit.ts"
import { diffGate } from "./diff.ts"
import { evidenceGate } from "./evidence.ts"
import { loggingGate } from "./logging.ts"
import { logLevelsGate } from "./log-levels.ts"
import type { Gate, Route } from "./gate.ts"
import { TOOL_MISSING } from "./schema.ts"
import { secretsGate } from "./secrets.ts"
import { serviceProbeGate } from "./service-probe.ts"
import { uiCaptureGate } from "./ui-capture.ts"
import { testGate } from "./test.ts"
import { writeSetGate } from "./write-set.ts"

export { TOOL_MISSING }

/**
 * The gates, in the order they run. A gate is one file exporting a `Gate` (`gate.ts`); adding one (a coverage
 * check, an analyser of one more language) is that file, its test, and one line in `REGISTRY`. See README.md in
 * this folder. The models read this list too: prompts say `{{gates}}` (agent/vocabulary.ts), never the ids by hand.
 */
export const REGISTRY = [commitGate, diffGate, writeSetGate, secretsGate, loggingGate, buildGate, logLevelsGate, testGate, analysisGate, clangTidyGate, mypyGate, pylintGate, tscGate, goVetGate, staticcheckGate, clippyGate, uiCaptureGate, serviceProbeGate, evidenceGate] as const

export type GateId = (typeof REGISTRY)[number]["id"]
export const GATE_IDS = REGISTRY.map((gate) => gate.id) as [GateId, ...GateId[]]

/**
 * The evidence a task of `kind` must have before review: what each gate `provides` that it is `requiredFor` that
 * kind, in the order the gates run. The pipeline's evidence gate enforces it; `gates.passed` carries it to the machine.
 */
export function requiredEvidence(kind: string, gates: readonly Gate[] = REGISTRY): string[] {
  const out: string[] = []
  for (const gate of gates) if (gate.provides && (gate.requiredFor as readonly string[] | undefined)?.includes(kind) && !out.includes(gate.provides)) out.push(gate.provides)
  return out
}

/**
 * Where a failure with this id goes, as its gate declares (the pipeline writes it in the report, the runtime in
 * `gates.failed`); a missing tool blocks for a person, and an id no gate declares goes to a person (never to nothing).
 * A gate's name for people is not here: it is the catalogue's (`text/words.ts`, `gate.<id>`).
 */
export function routeOf(id: string, gates: readonly Gate[] = REGISTRY): Route {
  if (id === TOOL_MISSING) return "block-for-tool"
  return gates.find((gate) => gate.id === id)?.route ?? "user"
}

/** One problem with a program field of the plan, said like the core's validation errors (path, task, message, fix). */
type ProgramProblem = { path: string; taskId: string; message: string; fix: string }

/**
 * The plan's program fields checked against the gates that read them (their `program`): a ui or service task whose
 * field does not have the shape its gate needs is refused at the plan, naming the field, never at its gates.
 */
export function programProblems(tasks: readonly { id: string; kind: string; ui?: unknown; service?: unknown }[], gates: readonly Gate[] = REGISTRY): ProgramProblem[] {
  const problems: ProgramProblem[] = []
  tasks.forEach((task, i) => {
    for (const gate of gates) {
      if (!gate.program || !(gate.requiredFor as readonly string[] | undefined)?.includes(task.kind)) continue
      const value = task[gate.program.field]
      if (value === undefined) continue // the core names a missing field
      const parsed = gate.program.schema.safeParse(value)
      if (parsed.success) continue
      for (const issue of parsed.error.issues.slice(0, 5))
        problems.push({
          path: `tasks[${i}].${gate.program.field}${issue.path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("")}`,
          taskId: task.id,
          message: `task ${task.id}: ${gate.program.field}${issue.path.length ? `.${issue.path.join(".")}` : ""}: ${issue.message}`,
          fix: `give the ${gate.program.field} field the shape the ${gate.id} gate reads (see its description in the air_plan tool)`,
        })
    }
  })
  return problems
}

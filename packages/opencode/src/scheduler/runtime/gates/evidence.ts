import { Toolchain } from "../toolchain/index.ts"
import type { Gate, GateContext } from "./gate.ts"
import { indent } from "./text.ts"

/**
 * Every piece of evidence the task's kind requires (`ctx.requires`: the gates' `provides` for the kinds they are
 * `requiredFor`) was collected and passed. Each requirement is judged by the gate that `provides` it (its
 * `missingEvidence`), so a new gate brings its own rule.
 */
export const evidenceGate = {
  id: "evidence",
  route: "executor",
  async run(ctx: GateContext) {
    const missing: string[] = []
    for (const requirement of ctx.requires) {
      const provider = ctx.gates.find((gate) => gate.provides === requirement)
      const result = provider ? ctx.results.find((r) => r.gate === provider.id) : undefined
      const why = provider?.missingEvidence
        ? provider.missingEvidence(ctx, result)
        : provider
          ? result?.passed && result.ran
            ? undefined
            : `the ${provider.id} gate did not run and pass`
          : `no gate collects ${requirement} evidence`
      if (why) missing.push(`${requirement}: ${why}`)
    }
    if (missing.length === 0) return { ran: true, summary: `required evidence present: ${ctx.requires.join(", ") || "none"}` }
    const summary = `missing evidence: ${missing.map((m) => m.split(":")[0]).join(", ")}`
    return {
      ran: true,
      summary,
      failure: {
        summary,
        message:
          `${ctx.label} (kind ${ctx.kind}): the evidence this kind of task requires is missing:\n` +
          indent(missing.join("\n")) +
          `\nAdd what is missing (tests registered with add_test in CMakeLists.txt, or build[] / test[] commands in ` +
          `${Toolchain.RULES_PATH}), commit, and report again.`,
      },
    }
  },
} as const satisfies Gate

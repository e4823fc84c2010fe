import { missingEvidence } from "../../core/required-evidence.ts"
import { Toolchain } from "../toolchain/index.ts"
import type { Gate, GateContext } from "./gate.ts"
import { heldEvidence } from "./held-evidence.ts"
import { indent } from "./text.ts"

/**
 * Every piece of evidence the task's kind requires (`ctx.requires`: the gates' `provides` for the kinds they are
 * `requiredFor`) was collected and passed, or its gate recorded that the change held nothing for it to check. The
 * verdict is the one rule the machine applies to `gates.passed` (`missingEvidence`); the gate that `provides` a
 * kind only gives the words for why it is missing (its `missingEvidence`).
 */
export const evidenceGate = {
  id: "evidence",
  route: "executor",
  async run(ctx: GateContext) {
    const held = heldEvidence(ctx.results, ctx.gates)
    const missing = missingEvidence(ctx.requires, held).map((requirement) => {
      const provider = ctx.gates.find((gate) => gate.provides === requirement)
      const result = provider ? ctx.results.find((r) => r.gate === provider.id) : undefined
      const why = !provider
        ? `no gate collects ${requirement} evidence`
        : (provider.missingEvidence?.(ctx, result) ?? `the ${provider.id} gate did not run and pass`)
      return `${requirement}: ${why}`
    })
    const notApplicable = Object.keys(held.notApplicable).filter((kind) => ctx.requires.includes(kind))
    if (missing.length === 0)
      return {
        ran: true,
        summary:
          `required evidence present: ${ctx.requires.filter((kind) => !notApplicable.includes(kind)).join(", ") || "none"}` +
          (notApplicable.length > 0 ? `; not applicable: ${notApplicable.map((kind) => `${kind} (${held.notApplicable[kind]})`).join(", ")}` : ""),
      }
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

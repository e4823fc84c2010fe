import type { Toolchain } from "../toolchain/index.ts"
import type { Finding } from "./schema.ts"

/** Which findings fail an analysis gate: the task's own (not inherited), at or above the failing severity. */
export namespace Verdict {
  export type FailOn = Toolchain.Rules["analysis"]["failOn"]

  const FAILS: Record<FailOn, ReadonlySet<Finding["severity"]>> = {
    error: new Set(["error"]),
    warning: new Set(["error", "warning"]),
  }

  export function failing(findings: readonly Finding[], failOn: FailOn): Finding[] {
    return findings.filter((f) => !f.inherited && FAILS[failOn].has(f.severity))
  }
}

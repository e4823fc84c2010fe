/**
 * What the views know of the shipped gates without loading them (the TUI plugin must not load the runtime's
 * gates: test/tui/plugin-imports.test.ts, test/read/layout.test.ts): their ids in the order they run, and
 * which of them run a tool. A copy of facts each gate file declares itself, kept equal to the registry by
 * test/runtime/gate-registry.test.ts. Like a gate's words (`gate.<id>` in words.ts), an entry here is
 * optional: a gate with none is shown as a gate the project added (when it ran or failed, by its words or its id).
 * Neither the core nor the runtime reads this file.
 */

interface GateDescriptor<Id extends string = string> {
  readonly id: Id
  /**
   * A gate that runs a tool (the build, the tests, an analyser). When it had nothing to run, the pass
   * message says so and the views show no ✓ for it. A gate without the flag is bookkeeping (commit, diff,
   * the write-set, the secret scan, evidence): the views show it only when it fails.
   */
  readonly reportsNotRun?: boolean
}

/** Keyed by id, in pipeline order (`REGISTRY` runs them in this order: test/runtime/gate-registry.test.ts). */
export const GATE_DESCRIPTORS = {
  commit: { id: "commit" },
  diff: { id: "diff" },
  "write-set": { id: "write-set" },
  secrets: { id: "secrets" },
  logging: { id: "logging" },
  build: { id: "build", reportsNotRun: true },
  "log-levels": { id: "log-levels" },
  test: { id: "test", reportsNotRun: true },
  analysis: { id: "analysis", reportsNotRun: true },
  "clang-tidy": { id: "clang-tidy", reportsNotRun: true },
  evidence: { id: "evidence" },
} as const satisfies Readonly<Record<string, GateDescriptor>>

type ShippedGateId = keyof typeof GATE_DESCRIPTORS

/** The shipped gates' ids, in the order they run. */
export const SHIPPED_GATE_IDS = Object.keys(GATE_DESCRIPTORS) as readonly ShippedGateId[]

export function isShippedGate(id: string): id is ShippedGateId {
  return Object.hasOwn(GATE_DESCRIPTORS, id)
}

/** A shipped gate that runs no tool; a gate the project added itself is not one (the views show it when it ran). */
export function isBookkeepingGate(id: string): boolean {
  if (!isShippedGate(id)) return false
  const descriptor: GateDescriptor = GATE_DESCRIPTORS[id]
  return descriptor.reportsNotRun !== true
}

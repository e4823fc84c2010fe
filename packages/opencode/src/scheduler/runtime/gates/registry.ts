import { analysisGate } from "./analysis.ts"
import { buildGate } from "./build.ts"
import { clangTidyGate } from "./clang-tidy.ts"
import { commitGate } from "./commit.ts"
import { diffGate } from "./diff.ts"
import { evidenceGate } from "./evidence.ts"
import type { Gate, Route, Words } from "./gate.ts"
import { TOOL_MISSING } from "./schema.ts"
import { secretsGate } from "./secrets.ts"
import { testGate } from "./test.ts"
import { writeSetGate } from "./write-set.ts"

export { TOOL_MISSING }

/**
 * The gates, in the order they run. A gate is one file exporting a `Gate` (`gate.ts`); adding one (clang-tidy,
 * a secret scan) is that file, its test, and one line in `REGISTRY`. See README.md in this folder.
 */
export const REGISTRY = [commitGate, diffGate, writeSetGate, secretsGate, buildGate, testGate, analysisGate, clangTidyGate, evidenceGate] as const

export type GateId = (typeof REGISTRY)[number]["id"]
export const GATE_IDS = REGISTRY.map((gate) => gate.id) as [GateId, ...GateId[]]
/** Every id a `gates.failed` event may carry. */
export const FAILURE_IDS = [...GATE_IDS, TOOL_MISSING] as const

/** Where a failure with this id goes; an id no gate declares goes to a person (never to nothing). */
export function routeOf(id: string, gates: readonly Gate[] = REGISTRY): Route {
  if (id === TOOL_MISSING) return "user"
  return gates.find((gate) => gate.id === id)?.route ?? "user"
}

/** The gate's name for people. */
export function wordsOf(id: string, language: keyof Words = "en", gates: readonly Gate[] = REGISTRY): string {
  if (id === TOOL_MISSING) return language === "zh-CN" ? "缺少工具" : "tool missing"
  return gates.find((gate) => gate.id === id)?.words[language] ?? id
}


/** A gate that runs a tool (build, test, analysis): what views show in a one-line summary of a gate run. */
export function isToolGate(id: string, gates: readonly Gate[] = REGISTRY): boolean {
  return gates.find((gate) => gate.id === id)?.reportsNotRun === true
}

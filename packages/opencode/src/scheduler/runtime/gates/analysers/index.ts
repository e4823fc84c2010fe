import { mypyBackend } from "./mypy.ts"
import { pylintBackend } from "./pylint.ts"
import { tscBackend } from "./tsc.ts"
import type { AnalyserBackend } from "./backend.ts"

/** The analyser backends beyond C++, for doctor and the README; their gates are each in REGISTRY. */
export const BACKENDS: readonly AnalyserBackend[] = [mypyBackend, pylintBackend, tscBackend]
export type { AnalyserBackend } from "./backend.ts"

/** Moved to `src/runtime/gates/` (a registry of gates); this path re-exports it until the layout move. */
export { Gates } from "../runtime/gates/index.ts"

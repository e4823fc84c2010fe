/**
 * More kills by hand: bun packages/opencode/test/scheduler/crash-loop.ts [--kills 2000] [--max-delay 200]
 */
import { parseArgs } from "node:util"
import { findBun, runCrashLoop } from "./crash-harness"

const { values } = parseArgs({ options: { kills: { type: "string", default: "1000" }, "max-delay": { type: "string", default: "120" }, verbose: { type: "boolean", default: false } } })
const bun = findBun()
if (!bun) throw new Error("bun is needed to run the child process; put it on PATH or set BUN_BIN")
const started = Date.now()
const report = await runCrashLoop({
  kills: Number(values.kills),
  bun,
  maxDelayMs: Number(values["max-delay"]),
  log: values.verbose ? (line) => console.log(line) : undefined,
})
console.log(JSON.stringify({ ...report, seconds: Math.round((Date.now() - started) / 1000) }, null, 2))
process.exit(report.failures.length === 0 ? 0 : 1)

// A capture in a process of its own, SIGKILLed (no handler runs) once its program has started: a crash of
// AirCoding in the middle of a capture. Args: the spec as JSON, the worktree, the evidence dir.
import { UiCapture } from "../../src/scheduler/runtime/verify/ui-capture"
import { processesNaming } from "./ui-programs"

const [spec, worktree, outDir] = process.argv.slice(2)
await UiCapture.capture(JSON.parse(spec!), {
  worktree: worktree!,
  outDir: outDir!,
  onProgramStarted: () => {
    // The test's root: the worktree's parent.
    console.log(`program started; ${processesNaming(worktree!.replace(/\/wt$/, "")).length} processes`)
    process.kill(process.pid, "SIGKILL")
    return new Promise<void>(() => undefined)
  },
})
process.exit(3)

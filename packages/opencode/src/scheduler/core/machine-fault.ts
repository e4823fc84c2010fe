/**
 * Faults of the machine the gates ran on, read from what a building gate printed (issue 38 item 7): a full disk
 * is no verdict on the task's work, so no Debugger is sent to repair code that is not wrong. The gates reset
 * their build slot and run once more (the space may have been the slot's own leftovers); a second fault stops
 * the gates, and the task blocks with one question (`gates.errored`, tag "disk-full").
 */

const MACHINE_FAULTS = ["disk-full"] as const
type MachineFault = (typeof MACHINE_FAULTS)[number]

/** How many times the gates reset their slot and run again after a machine fault before they stop. */
export const MACHINE_FAULT_RETRIES = 1

// The words of the C library's strerror (compiler, assembler, linker, ninja, make) and of node's error codes.
const PATTERNS: readonly { fault: MachineFault; pattern: RegExp }[] = [
  { fault: "disk-full", pattern: /no space left on device|disk quota exceeded|\bENOSPC\b|\bEDQUOT\b/i },
]

/** The machine fault in a gate's output, with the first line that shows it; undefined when there is none. */
export function machineFaultIn(output: string): { fault: MachineFault; line: string } | undefined {
  for (const { fault, pattern } of PATTERNS) {
    const line = output.split("\n").find((l) => pattern.test(l))
    if (line !== undefined) return { fault, line: line.trim().slice(0, 300) }
  }
  return undefined
}

type MachineFaultStep = { do: "reset-and-retry" } | { do: "stop"; message: string }

/**
 * What the gates do when a building gate failed with a machine fault, after `retries` resets already: reset the
 * slot and run again, or stop with a message that says what happened and what the user can do.
 */
export function onMachineFault(retries: number, found: { fault: MachineFault; line: string }, where: string): MachineFaultStep {
  if (retries < MACHINE_FAULT_RETRIES) return { do: "reset-and-retry" }
  return {
    do: "stop",
    message:
      `the disk filled while the gates built in ${where} ("${found.line}"); the build directory was dropped and the gates ` +
      `ran again ${retries === 1 ? "once" : `${retries} times`}, and the disk filled again. This is the machine, not the task's code: ` +
      `free space on that disk (df -h ${where}), then answer to run the gates again`,
  }
}

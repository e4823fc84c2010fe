import { describe, expect, it } from "vitest"
import { MACHINE_FAULT_RETRIES, machineFaultIn, onMachineFault } from "../../src/scheduler/core/machine-fault"
import { apply, graphOf, started, steps, task, type EventInput } from "./fixtures"
import { checkRow, showByTask, type TableRow } from "./table"

/**
 * A machine fault in the gates (issue 38 item 7, core/machine-fault.ts): a full disk is read from what the build
 * printed, the gates reset their slot and run once more, and a second full disk is one question to the user —
 * never a Debugger sent to repair code that is not wrong.
 */
const show = showByTask

const graph = graphOf(task("A", { writeSet: [{ path: "a.cpp", action: "create" }] }), task("B", { writeSet: [{ path: "b.cpp", action: "create" }] }))
const gating = () => apply(started(graph, { concurrency: 2 }).state, steps.dispatched("A"), steps.dispatched("B"), steps.reported("A")).state
const diskFull: EventInput = {
  type: "gates.errored",
  taskId: "A",
  tag: "disk-full",
  message: `task A: the disk filled while the gates built in /p/.air/local/slots/slot-1 ("Fatal error: can't write 1 byte: 'No space left on device'"); the build directory was dropped and the gates ran again once, and the disk filled again. This is the machine, not the task's code: free space on that disk (df -h /p/.air/local/slots/slot-1), then answer to run the gates again`,
}

const rows: TableRow[] = [
  {
    rule: "a full disk after the gates' one retry blocks the task with one question that says it is the machine, resumed at the gates",
    given: gating,
    event: diskFull,
    statuses: { A: "blocked", B: "running" },
    commands: ["ask:A:blocked:1", "notify"],
    check: (st) => {
      expect(st.tasks.find((t) => t.id === "A")).toMatchObject({ resume: "gates", repairs: 0, lastFailure: { source: "gates:disk-full" } })
      expect(st.questions).toHaveLength(1)
      expect(st.questions[0]!.text).toMatch(/is blocked: the disk is full, not the task's code: .*free space on that disk/)
    },
  },
  {
    rule: "the answer runs the gates again",
    given: () => apply(gating(), diskFull).state,
    event: { type: "question.answered", questionId: "A:blocked:1", answer: "freed 10 GB" },
    statuses: { A: "gating" },
    commands: ["runGates:A"],
  },
]

describe("machine: a full disk in the gates (issue 38 item 7)", () => {
  for (const row of rows) it(row.rule, () => checkRow(row, show))
})

describe("machineFaultIn: what a build printed", () => {
  const cases: [string, string, ReturnType<typeof machineFaultIn>][] = [
    ["the assembler", "x.s: Assembler messages:\nx.s: Fatal error: can't fill 256 bytes in section .data of big.o: 'No space left on device'\nninja: build stopped", { fault: "disk-full", line: "x.s: Fatal error: can't fill 256 bytes in section .data of big.o: 'No space left on device'" }],
    ["the linker", "/usr/bin/ld: final link failed: No space left on device", { fault: "disk-full", line: "/usr/bin/ld: final link failed: No space left on device" }],
    ["a quota", "cc1plus: error: write failed: Disk quota exceeded", { fault: "disk-full", line: "cc1plus: error: write failed: Disk quota exceeded" }],
    ["node's code", "Error: ENOSPC: write", { fault: "disk-full", line: "Error: ENOSPC: write" }],
    ["a compile error", "src/a.cpp:3:1: error: expected ';' before '}' token\nninja: build stopped: subcommand failed.", undefined],
    ["a test's failure naming space", "test/space_test.cpp:9: FAILED: expected free space > 0", undefined],
  ]
  it.each(cases)("%s", (_name, output, want) => expect(machineFaultIn(output)).toEqual(want))
})

describe("onMachineFault: reset and retry once, then stop", () => {
  const found = { fault: "disk-full" as const, line: "ld: No space left on device" }
  it("retries while retries are below the limit, then stops with a message naming the place and what to do", () => {
    expect(MACHINE_FAULT_RETRIES).toBe(1)
    expect(onMachineFault(0, found, "/p/slot-1")).toEqual({ do: "reset-and-retry" })
    const stop = onMachineFault(1, found, "/p/slot-1")
    expect(stop.do).toBe("stop")
    expect(stop.do === "stop" && stop.message).toMatch(/the disk filled while the gates built in \/p\/slot-1 \("ld: No space left on device"\).*ran again once.*df -h \/p\/slot-1/)
  })
})

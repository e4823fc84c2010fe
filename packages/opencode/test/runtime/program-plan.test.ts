import { describe, expect, test } from "vitest"
import { validateGraph } from "../../src/scheduler/core/validate"
import { programProblems } from "../../src/scheduler/runtime/gates/registry"

/**
 * Issue 37 item 1: a ui or service task says what must be shown, or the plan is refused naming the field. The core
 * names a missing or misplaced field; the gate that reads it (registry `program`) names a field of the wrong shape.
 */
const base = { title: "Serve v2", doneWhen: "the service answers PONG v2", writeSet: [{ path: "src/server.cpp", action: "modify" }] }
const SERVICE = { service: { command: "build/server" }, ports: [7000], probe: { command: "nc", args: ["-N", "127.0.0.1", "7000"], input: "PING\n", expect: { contains: "PONG v2" } } }

describe("plans with programs (issue 37)", () => {
  test("a service task without its service field is refused, naming the field and how to write it", () => {
    const r = validateGraph({ schemaVersion: 1, tasks: [{ id: "T-1", kind: "service", ...base }] })
    expect(r.ok).toBe(false)
    if (r.ok) return
    expect(r.errors).toEqual([expect.objectContaining({ path: "tasks[0].service", taskId: "T-1", message: expect.stringMatching(/a service task must say how to start its program/), fix: expect.stringContaining('"probe"') })])
  })

  test("a ui task without ui is refused the same way; a code task carrying ui is refused too", () => {
    const ui = validateGraph({ schemaVersion: 1, tasks: [{ id: "T-1", kind: "ui", ...base }] })
    expect(!ui.ok && ui.errors.map((e) => e.path)).toEqual(["tasks[0].ui"])
    const code = validateGraph({ schemaVersion: 1, tasks: [{ id: "T-1", kind: "code", ui: { command: "build/app" }, ...base }] })
    expect(!code.ok && code.errors.map((e) => e.message)).toEqual([expect.stringMatching(/only a ui task has a ui field \(this one is code\)/)])
  })

  test("a service field of the wrong shape is refused by the gate that reads it, at the plan, naming the field", () => {
    const ok = validateGraph({ schemaVersion: 1, tasks: [{ id: "T-1", kind: "service", service: SERVICE, ...base }] })
    expect(ok.ok).toBe(true)
    if (!ok.ok) return
    expect(programProblems(ok.graph.tasks)).toEqual([])
    const bad = validateGraph({ schemaVersion: 1, tasks: [{ id: "T-1", kind: "service", service: { ...SERVICE, ports: [70000], probe: { command: "nc" } }, ...base }] })
    expect(bad.ok).toBe(true)
    if (!bad.ok) return
    const problems = programProblems(bad.graph.tasks)
    expect(problems.map((p) => p.path)).toEqual(expect.arrayContaining(["tasks[0].service.ports[0]", "tasks[0].service.probe.expect"]))
    expect(problems.every((p) => p.taskId === "T-1")).toBe(true)
  })
})

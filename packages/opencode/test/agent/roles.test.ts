import { describe, expect, it } from "vitest"
import { Roles } from "../../src/agent"

describe("the role table", () => {
  it("has the six roles with their modes", () => {
    expect([...Roles.names].sort()).toEqual(["architect", "debugger", "executor", "main", "reviewer", "scheduler"])
    expect(Roles.table.main.mode).toBe("primary")
    expect(Roles.table.main.default).toBe(true)
    for (const n of ["architect", "reviewer", "executor", "debugger", "scheduler"] as const) expect(Roles.table[n].mode).toBe("subagent")
    expect(Roles.table.scheduler.hidden).toBe(true)
    expect(Roles.names.filter((n) => Roles.table[n].hidden)).toEqual(["scheduler"])
  })

  it("gives no role task, web access, or another role's coordinator tools", () => {
    for (const n of Roles.names) {
      const row = Roles.table[n].tools
      for (const t of ["task", "webfetch", "websearch", "skill", "question", "todowrite", "execute", "plan_exit"]) expect(row).not.toContain(t)
      for (const other of Roles.names) {
        if (other === n) continue
        for (const t of Roles.COORDINATOR[other]) if (!Roles.COORDINATOR[n].includes(t as never)) expect(row).not.toContain(t)
      }
    }
  })

  it("keeps edit, write and bash to the workers, and the engine's edit family all-or-nothing", () => {
    for (const n of Roles.names) {
      const row = Roles.table[n].tools
      const edits = Roles.EDIT_TOOLS.filter((t) => row.includes(t))
      expect(edits.length === 0 || edits.length === Roles.EDIT_TOOLS.length).toBe(true)
      expect(row.includes("bash")).toBe(Roles.isWorker(n))
      expect(edits.length > 0).toBe(Roles.isWorker(n))
    }
    expect(Roles.table.scheduler.tools).toEqual(["air_status", "air_decide"])
    expect(Roles.table.debugger.evidenceFirst).toBe(true)
    expect(Roles.table.executor.evidenceFirst).toBe(false)
  })

  it("rows are exactly read-only tools plus the role's coordinator tools (or worker tools)", () => {
    expect(Roles.table.main.tools).toEqual([...Roles.READ_ONLY, "air_submit", "air_confirm", "air_status", "air_listen", "air_change", "air_answer", "air_pause", "air_resume"])
    expect(Roles.table.architect.tools).toEqual([...Roles.READ_ONLY, "air_propose", "air_plan", "air_delta", "air_adr", "air_milestone", "air_decide"])
    expect(Roles.table.reviewer.tools).toEqual([...Roles.READ_ONLY, "air_diff", "air_review"])
    expect(Roles.table.executor.tools).toEqual([...Roles.READ_ONLY, "edit", "write", "apply_patch", "bash", "air_report", "air_capture", "air_probe"])
    expect(Roles.table.debugger.tools).toEqual(Roles.table.executor.tools)
  })

  it("names the owners of a tool and what the engine would offer", () => {
    expect(Roles.owners("air_plan")).toEqual(["architect"])
    expect(Roles.owners("air_status")).toEqual(["main", "scheduler"])
    expect(Roles.owners("task")).toEqual([])
    expect(Roles.offered("main", [...Roles.ENGINE_BUILTIN, ...Roles.AIR_TOOLS])).toEqual(
      ["air_answer", "air_change", "air_confirm", "air_listen", "air_pause", "air_resume", "air_status", "air_submit", "glob", "grep", "lsp", "read"],
    )
    expect(Roles.isRole("build")).toBe(false)
    expect(Roles.of("executor")).toBe("executor")
  })

  it("lists the same coordinator tools as src/tool/coordinator.ts builds", async () => {
    const { CoordinatorTools } = await import("../../src/tool/coordinator")
    expect([...Roles.AIR_TOOLS].sort()).toEqual([...CoordinatorTools.ids].sort())
  })
})

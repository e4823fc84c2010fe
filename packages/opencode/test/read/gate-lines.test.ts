import { describe, expect, test } from "vitest"
import { GATE_DESCRIPTORS, SHIPPED_GATE_IDS } from "../../src/read/gate-descriptors"
import { t } from "../../src/text/words"
import { RunView } from "../../src/read/view"
import { ViewText } from "../../src/read/view-text"
import { Labels } from "../../src/read/labels"

const line = (gate: string, passed: boolean, ran = true): RunView.GateLine => ({ gate, passed, ran })
const label = (gate: string) => Labels.gate(gate, "en")

describe("a task's last gate run in one line", () => {
  test("of a passing run, only the gates that ran a tool are shown; bookkeeping gates are not", () => {
    const tools = SHIPPED_GATE_IDS.filter((id) => (GATE_DESCRIPTORS[id] as { reportsNotRun?: boolean }).reportsNotRun)
    expect(tools).toEqual(["build", "test", "analysis", "clang-tidy"])
    expect(ViewText.gatesText("en", SHIPPED_GATE_IDS.map((id) => line(id, true)))).toBe(tools.map((id) => `${label(id)} ✓`).join(" "))
  })

  test("a bookkeeping gate is shown when it is what failed", () => {
    for (const id of ["commit", "diff", "write-set", "secrets", "evidence"])
      expect(ViewText.gatesText("en", [line(id, false)])).toBe(`${label(id)} ✗`)
  })

  test("a tool gate with nothing to run is no ✓; nothing shown says so", () => {
    expect(ViewText.gatesText("en", [line("build", true), line("clang-tidy", true, false)])).toBe(`${label("build")} ✓`)
    expect(ViewText.gatesText("en", [line("diff", true), line("clang-tidy", true, false)])).toBe(t("en", "gates.none"))
  })

  test("a gate the project added itself is shown when it ran", () => {
    expect(ViewText.gatesText("en", [line("diff", true), line("secret-scan", true)])).toBe("secret-scan ✓")
    expect(ViewText.gatesText("en", [line("secret-scan", true, false)])).toBe(t("en", "gates.none"))
  })
})

import { describe, expect, it } from "vitest"
import { Language } from "../../src/agent"

describe("the language setting", () => {
  it("accepts auto and BCP-47 tags, and refuses anything else by name", () => {
    expect(Language.parse(undefined)).toBe("auto")
    expect(Language.parse("AUTO")).toBe("auto")
    expect(Language.parse("zh-cn")).toBe("zh-CN")
    expect(Language.parse("zh-hans-cn")).toBe("zh-Hans-CN")
    expect(Language.parse("en")).toBe("en")
    for (const bad of ["chinese!", "e", 42, "zh_CN"]) expect(() => Language.parse(bad)).toThrow(/language must be "auto" or a language tag/)
  })

  it("renders the rule for a prompt", () => {
    expect(Language.rule("auto")).toMatch(/language the user writes in/)
    expect(Language.rule("zh-CN")).toMatch(/Speak to the user in Simplified Chinese \(简体中文\) \(zh-CN\), whatever language they write in/)
    expect(Language.rule("en")).toMatch(/Speak to the user in English/)
    expect(Language.rule("fr-CA")).toMatch(/French/)
  })

  it("picks the catalog for texts from code", () => {
    expect(Language.catalogOf("auto")).toBe("en")
    expect(Language.catalogOf("auto", { text: "请把日志模块重构一下" })).toBe("zh-CN")
    expect(Language.catalogOf("auto", { text: "please refactor the logger" })).toBe("en")
    expect(Language.catalogOf("auto", { tag: "zh-TW" })).toBe("zh-CN")
    expect(Language.catalogOf("zh-CN")).toBe("zh-CN")
    expect(Language.catalogOf("en", { text: "中文" })).toBe("en")
    expect(Language.catalogOf("de")).toBe("en")
  })

  it("fills parameters and leaves unknown ones visible", () => {
    expect(Language.t("en", "guard.tool", { agent: "main", tool: "edit", instead: "Use air_submit." })).toBe(
      "AirCoding guard: the main agent may not call `edit`. Use air_submit.",
    )
    expect(Language.t("zh-CN", "run.ended", { status: "done" })).toBe("运行结束：done。")
    expect(Language.t("auto", "run.ended", { status: "done" })).toBe("RUN ENDED: done.")
    expect(Language.t("zh-CN", "guard.unassigned", {})).toContain("{agent}")
  })
})

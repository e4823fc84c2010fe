import { describe, expect, it } from "vitest"
import { Language } from "../../src/agent"

const placeholders = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort()

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

  it("has every key in English and Chinese, with the same placeholders", () => {
    expect(Language.keys.length).toBeGreaterThan(10)
    const en = Language.templates("en")
    const zh = Language.templates("zh-CN")
    expect(Object.keys(zh).sort()).toEqual(Object.keys(en).sort())
    for (const key of Language.keys) {
      for (const lang of Language.CATALOGS) expect([lang, key, Language.has(lang, key)]).toEqual([lang, key, true])
      expect([key, placeholders(zh[key])]).toEqual([key, placeholders(en[key])])
      expect([key, /[\u4e00-\u9fff]/.test(zh[key])]).toEqual([key, true])
    }
  })

  it("fills parameters and leaves unknown ones visible", () => {
    expect(Language.t("en", "guard.tool", { agent: "main", tool: "edit", instead: "Use air_submit." })).toBe(
      "AirCoding guard: the main agent may not call `edit`. Use air_submit.",
    )
    expect(Language.t("zh-CN", "run.ended", { status: "done" })).toBe("运行结束：done。")
    expect(Language.t("auto", "run.ended", { status: "done" })).toBe("RUN ENDED: done.")
    expect(Language.t("zh-CN", "task.done", {})).toContain("{task}")
  })
})

import { describe, expect, it } from "vitest"
import { catalog, KEYS, LANGS, t, tOr } from "../../src/text/words"

const placeholders = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort()

/** Texts that are the same in every language: symbols and tool names. */
const NEUTRAL = new Set(["gates.none", "session.none", "ui.log.cppcheck", "gate.analysis", "gate.clang-tidy", "gate.mypy", "gate.pylint", "gate.tsc", "gate.go-vet", "gate.staticcheck", "gate.clippy", "tui.sidebar.title"])

describe("the one catalogue of words", () => {
  it("has every key in English and Chinese, non-empty, with the same placeholders", () => {
    expect(KEYS.length).toBeGreaterThan(150)
    const en = catalog("en")
    const zh = catalog("zh-CN")
    expect(Object.keys(zh).sort()).toEqual(Object.keys(en).sort())
    for (const key of KEYS) {
      for (const lang of LANGS) expect([lang, key, catalog(lang)[key].length > 0]).toEqual([lang, key, true])
      expect([key, placeholders(zh[key])]).toEqual([key, placeholders(en[key])])
    }
  })

  it("speaks Chinese in every Chinese text but the language-neutral ones", () => {
    const zh = catalog("zh-CN")
    const english = KEYS.filter((k) => !NEUTRAL.has(k) && !/[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]/.test(zh[k]))
    expect(english).toEqual([])
  })

  it("holds the guard's refusals and the views' words in one place", () => {
    expect(t("en", "guard.tool", { agent: "main", tool: "edit", instead: "x" })).toContain("may not call `edit`")
    expect(t("zh-CN", "ev.gates.failed", { gate: "cppcheck", what: "…" })).toBe("cppcheck 门禁失败：…")
    expect(t("zh-CN", "status.waiting")).toBe("等待中")
  })

  it("fills parameters, leaves unknown ones visible, and falls back for keys built from data", () => {
    expect(t("zh-CN", "run.ended", { status: "done" })).toBe("运行结束：done。")
    expect(t("en", "guard.unassigned")).toContain("{agent}")
    expect(tOr("zh-CN", "state.merged", "?")).toBe("已合并")
    expect(tOr("zh-CN", "state.nonsense", "nonsense")).toBe("nonsense")
  })
})

import fc from "fast-check"
import { describe, expect, test } from "vitest"
import { TokenEstimate } from "../../src/scheduler/runtime/sessions/token-estimate"

/**
 * Issue 38, item 5: the token estimate by content class. Properties over generated texts: appending never
 * lowers an estimate; Chinese costs more tokens per character than English prose, and code lies between.
 */

const HAN = [..."的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处理府研质"]
const ENGLISH = ["the", "scheduler", "runs", "each", "task", "in", "its", "own", "worktree", "and", "checks", "what", "it", "did", "with", "evidence", "a", "person", "reads", "report", "when", "done"]
const CODE = ["int add(int a, int b) {", "  return a + b;", "}", "for (std::size_t i = 0; i < v.size(); ++i) {", "  out[i] = f(v[i]) * 2;", "if (!ptr || ptr->next == nullptr) return -1;", "#include <vector>", "auto x = std::make_unique<Foo>(bar, &baz);", "m[k] += (a << 3) | b;"]
const MARKUP = ["# Title", "- item one", "| a | b |", "<div class=\"x\">", "</div>", "> quoted", "1. first"]

const chinese = fc.array(fc.constantFrom(...HAN), { minLength: 20, maxLength: 400 }).map((cs) => cs.join(""))
const prose = fc.array(fc.constantFrom(...ENGLISH), { minLength: 10, maxLength: 200 }).map((ws) => `${ws.join(" ")}.`)
const code = fc.array(fc.constantFrom(...CODE), { minLength: 3, maxLength: 60 }).map((ls) => ls.join("\n"))
const mixed = fc
  .tuple(fc.array(fc.oneof(chinese, prose, code, fc.constantFrom(...MARKUP), fc.string(), fc.string({ unit: "binary" })), { maxLength: 8 }), fc.constantFrom("\n", " ", ""))
  .map(([parts, separator]) => parts.join(separator))
const perChar = (text: string) => TokenEstimate.tokens(text) / [...text].length

describe("the token estimate by content class", () => {
  test("monotone in length: appending text never lowers the estimate", () => {
    fc.assert(
      fc.property(mixed, fc.oneof(mixed, fc.string({ unit: "binary" }), fc.constantFrom("x", ";", "```", "\n```cpp\n", "  ", "int", "eresting")), (a, b) => {
        expect(TokenEstimate.tokens(a + b)).toBeGreaterThanOrEqual(TokenEstimate.tokens(a))
      }),
      { numRuns: 400 },
    )
  })

  test("monotone character by character over a text that changes class as it grows", () => {
    // A line dense with punctuation reads as code until its start thins out: it must not fall back to prose.
    const text = "int\ninteresting words here\n  x = f(y);\n```cpp\nint main() { return 0; }\n```\n# 标题 heading\n你好，世界\nab;ab;ab;ab;ab;ab;ab;ab;zzzzzzzzzzzzzzzzzzzzzzzz"
    let last = 0
    for (let i = 0; i <= text.length; i++) {
      const now = TokenEstimate.tokens(text.slice(0, i))
      expect(now, JSON.stringify(text.slice(0, i))).toBeGreaterThanOrEqual(last)
      last = now
    }
  })

  test("Chinese costs more tokens per character than code, and code more than English prose", () => {
    fc.assert(
      fc.property(chinese, code, prose, (zh, cpp, en) => {
        expect(perChar(zh)).toBeGreaterThan(perChar(cpp))
        expect(perChar(cpp)).toBeGreaterThan(perChar(en))
      }),
      { numRuns: 200 },
    )
  })

  test("each character is counted in its class; whitespace costs nothing", () => {
    expect(TokenEstimate.estimate("你好世界")).toEqual({ tokens: 4, chars: { cjk: 4, code: 0, markup: 0, prose: 0 } })
    expect(TokenEstimate.estimate("   \n\t  ")).toEqual({ tokens: 0, chars: { cjk: 0, code: 0, markup: 0, prose: 0 } })
    const e = TokenEstimate.estimate("The task is done.\n```cpp\nreturn a * b;\n```\n# 结果\n- ok")
    // The opening fence ```cpp reads as code by its punctuation, the closing one is inside the fence.
    expect(e.chars).toEqual({ cjk: 2, code: 19, markup: 4, prose: 14 })
  })

  test("English prose comes near the usual four characters a token", () => {
    const text = "The Scheduler runs every task in a worktree of its own and checks the result with evidence it gathers itself."
    const ratio = text.length / TokenEstimate.tokens(text)
    expect(ratio).toBeGreaterThan(3.5)
    expect(ratio).toBeLessThan(5.5)
  })
})

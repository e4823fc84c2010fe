import { describe, expect, test } from "vitest"
import { DialogLayout } from "../../src/tui/dialog-layout"
import { t } from "../../src/text/words"

/** The plan dialog's rows add up to the terminal's height, so its answer field and footer stay on screen. */
describe("the plan dialog's layout", () => {
  const help = (lang: "en" | "zh-CN", width: number) => DialogLayout.wrappedRows([t(lang, "tui.plan.help"), t(lang, "tui.plan.keys")], DialogLayout.textWidth(width))
  // At 80 columns the engine's medium dialog is 60 wide; at 160 its xlarge one is 116.
  for (const [w, h, dialogWidth] of [
    [80, 24, 60],
    [160, 48, 116],
    [200, 50, 116],
  ] as const)
    for (const lang of ["en", "zh-CN"] as const)
      test(`${w}×${h} ${lang}: frame, body, "more" row, help and answer field fit`, () => {
        const helpRows = help(lang, dialogWidth)
        const { rows, spacer } = DialogLayout.plan(h, helpRows)
        expect(rows).toBeGreaterThanOrEqual(3)
        expect(DialogLayout.frameRows(h) + rows + 1 + (spacer ? 1 : 0) + helpRows).toBeLessThanOrEqual(h)
      })

  test("Chinese help wraps to more rows than English at 80 columns (CJK characters take two columns)", () => {
    expect(help("zh-CN", 60)).toBeGreaterThan(help("en", 60))
  })
})

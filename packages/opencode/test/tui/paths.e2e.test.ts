import { afterEach, describe, expect, test } from "vitest"
import { columnOf, columns, normaliseScreen } from "../support/tui"
import { DemoRun } from "./demo-run"
import { goldenSoon } from "./golden"

/**
 * Every path a person can take through the plan with the demo the README points to: the shipped
 * scenarios/demo-chat.json, unmodified, in the real TUI (tmux), real git, cmake, ctest and cppcheck. The plan
 * is confirmed in the dialog or in the chat, or revised in the dialog or in the chat (the Architect proposes
 * again, then the person confirms); each path ends with the run's end in the chat. One TUI per path: about a minute and a half
 * each here, so the file runs in CI's soak stage (test/stages.ts) and, outside it, with AIR_TUI_PATHS=1.
 */
const { RUN_ENDED_IN_CHAT, EN_DIALOG, ZH_FIELD, until, has, dialogShown, chat, submitRequirement } = DemoRun
const demo = DemoRun.start

afterEach(() => DemoRun.closeAll(), 60_000)

describe.skipIf(!process.env.AIR_TUI_PATHS)("the demo's paths through the plan in the TUI (scenarios/demo-chat.json as shipped)", () => {
  test("confirmed in the dialog: the chat shows the run's end once the sidebar says done", async () => {
    const { tui, events } = demo()
    await submitRequirement(tui)
    await until(tui, dialogShown(EN_DIALOG, "Three tasks. T-1 adds calc::mul"), 420_000, "the plan dialog")
    tui.press("Enter") // an empty answer confirms
    await until(tui, () => events().some((e) => e.type === "plan.confirmed"), 120_000, "plan.confirmed in the log")
    // The confirmation's news reaches Main on its own: the chat says what the dialog did.
    await until(tui, (s) => chat(s).includes("You confirmed the plan in AirCoding's dialog"), 300_000, "Main's word on the dialog's confirmation")
    await until(tui, has("AirCoding · done"), 600_000, "the sidebar to say done")
    const doneAt = Date.now()
    // Main is told as it happens (the confirmation's news, then RUN ENDED, each its own wake): its last words
    // reach the chat. Measured, not bounded: the wait ends when the chat shows them or the program exits.
    const end = await until(tui, (s) => chat(s).includes(RUN_ENDED_IN_CHAT), 300_000, "the run's end in the chat")
    console.log(`paths: the chat showed the run's end ${Date.now() - doneAt} ms after the sidebar said done`)
    expect(chat(end)).toContain(RUN_ENDED_IN_CHAT)
    expect(events().filter((e) => e.type === "plan.proposed")).toHaveLength(1)
  }, 1_200_000)

  test("confirmed in the chat: \"yes\" typed to Main starts the run, which ends in the chat", async () => {
    const { tui, events } = demo()
    await submitRequirement(tui)
    await until(tui, dialogShown(EN_DIALOG, "Three tasks. T-1 adds calc::mul"), 420_000, "the plan dialog")
    tui.press("Escape") // answered in the chat instead; /air-answer would bring the dialog back
    await until(tui, (s) => !s.includes(EN_DIALOG), 120_000, "the dialog to close")
    // Main shows the plan in the chat when the proposal's news reaches it; the person answers it there.
    await until(tui, (s) => chat(s).includes("The Architect proposes this plan"), 300_000, "the plan in the chat")
    tui.submit("yes")
    await until(tui, () => events().some((e) => e.type === "plan.confirmed"), 300_000, "plan.confirmed in the log")
    await until(tui, has("AirCoding · done"), 600_000, "the sidebar to say done")
    const end = await until(tui, (s) => chat(s).includes(RUN_ENDED_IN_CHAT), 300_000, "the run's end in the chat")
    expect(chat(end)).toContain(RUN_ENDED_IN_CHAT)
    expect(events().find((e) => e.type === "plan.confirmed")).toMatchObject({ type: "plan.confirmed" })
  }, 1_200_000)

  test("revised in the chat: the change typed to Main goes to the Architect, whose revision \"yes\" confirms; the run ends in the chat", async () => {
    const { tui, events } = demo()
    await submitRequirement(tui)
    await until(tui, dialogShown(EN_DIALOG, "Three tasks. T-1 adds calc::mul"), 420_000, "the plan dialog")
    tui.press("Escape")
    await until(tui, (s) => !s.includes(EN_DIALOG), 120_000, "the dialog to close")
    await until(tui, (s) => chat(s).includes("The Architect proposes this plan"), 300_000, "the plan in the chat")
    tui.submit("Put the tests of mul and avg3 in their own task")
    // The revision comes back as a dialog (and in the chat); this time the person answers in the chat.
    await until(tui, dialogShown(EN_DIALOG, "Revised plan"), 420_000, "the revised plan's dialog")
    expect(events().filter((e) => e.type === "plan.proposed")).toHaveLength(2)
    expect(events().some((e) => e.type === "plan.confirmed")).toBe(false)
    tui.press("Escape")
    await until(tui, (s) => chat(s).includes("The Architect revised the plan"), 300_000, "the revised plan in the chat")
    tui.submit("yes")
    await until(tui, () => events().some((e) => e.type === "plan.confirmed"), 300_000, "plan.confirmed in the log")
    await until(tui, has("AirCoding · done"), 600_000, "the sidebar to say done")
    const end = await until(tui, (s) => chat(s).includes(RUN_ENDED_IN_CHAT), 300_000, "the run's end in the chat")
    expect(chat(end)).toContain(RUN_ENDED_IN_CHAT)
  }, 1_500_000)

  test("revised in the dialog at 80×24 in Chinese: the answer field shows, the Architect proposes again, confirmed, the run ends", async () => {
    const { tui, events } = demo({ width: 80, height: 24, language: "zh-CN" })
    await submitRequirement(tui)
    const title = "架构师提出了计划"
    // The dialog fits the short screen down to the answer field (its placeholder).
    await until(tui, dialogShown(title, "Three tasks.", ZH_FIELD), 420_000, "the plan dialog with its answer field")
    await goldenSoon("plan-dialog-answer.80x24.zh-CN.txt", () => dialogRows(tui.screen(), title, ZH_FIELD))
    tui.submit("Put the tests of mul and avg3 in their own task")
    // The change goes to the Architect, whose revision opens the dialog again.
    await until(tui, dialogShown(title, "Revised plan", ZH_FIELD), 420_000, "the revised plan's dialog")
    expect(events().filter((e) => e.type === "plan.proposed")).toHaveLength(2)
    tui.press("Enter")
    await until(tui, () => events().some((e) => e.type === "plan.confirmed"), 120_000, "plan.confirmed in the log")
    const end = await until(tui, (s) => s.includes(RUN_ENDED_IN_CHAT), 900_000, "the run's end in the chat")
    expect(end).toContain(RUN_ENDED_IN_CHAT)
  }, 1_500_000)
})

/** Rows from the one holding `first` to the one holding `last`, from `first`'s column to the dialog's "esc", normalised. */
function dialogRows(screen: string, first: string, last: string): string {
  const lines = screen.split("\n")
  const from = lines.findIndex((l) => l.includes(first))
  const to = lines.findIndex((l, i) => i >= from && l.includes(last))
  const title = lines[from]!
  const left = columnOf(title, title.indexOf(first))
  const esc = title.indexOf("esc", title.indexOf(first))
  const right = esc >= 0 ? columnOf(title, esc) + 3 : left + 60
  return normaliseScreen(lines.slice(from, to + 1).map((l) => columns(l, left, right).trimEnd()).join("\n")) + "\n"
}

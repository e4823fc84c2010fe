import { execFileSync } from "node:child_process"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { catalog, KEYS } from "../../src/text/words"
import { writeScenario } from "../support/engine"
import { passingReviewer, readJsonl, trivialProject } from "../support/runs"
import { aircodingBin, bunBinary, makeSandbox, type Sandbox } from "../support/sandbox"
import { columnOf, columns, dialog, finishedScreen, sidebar, TuiDriver } from "../support/tui"
import { golden } from "../tui/golden"

/**
 * A person who speaks Chinese, in the real TUI (tmux, 200x50, scripted model), with the language set to
 * zh-CN: types the requirement, the plan dialog comes up; quits with Ctrl-C before answering; reopens —
 * the plan question is asked again (dialog and home screen); says 好; asks Main how it goes and watches the tasks run in the sidebar;
 * the run ends with every task merged once. The plan dialog, the sidebar mid-run and the done screen are
 * golden captures, and no English sentence of ours is on screen (what the model types is in Chinese).
 */
const requirement = "为应用编写文档。"
const plan = "计划：T-1 编写 docs/install.md，然后 T-2 编写 docs/usage.md（T-2 依赖 T-1）。"
const tasks = [
  { id: "T-1", title: "编写安装文档", kind: "docs", writeSet: [{ path: "docs/install.md", action: "create" }], doneWhen: "docs/install.md 存在" },
  { id: "T-2", title: "编写使用文档", kind: "docs", deps: ["T-1"], writeSet: [{ path: "docs/usage.md", action: "create" }], doneWhen: "docs/usage.md 存在" },
]
const write = (path: string, text: string) => ({
  tool: "bash",
  args: { command: `mkdir -p docs && printf '${text}\\n' > ${path} && git add -A && git commit -q -m "${path}"`, description: "编写并提交" },
})

const question = "进展如何？"

const scenario = {
  name: "tui-reopen-zh",
  scripts: [
    // The reopened TUI's new chat: the user asks how it goes.
    { agent: "main", match: `^${question}`, steps: [{ text: "正在进行：请看右侧的进度。" }] },
    {
      agent: "main",
      // In the TUI Main's turn ends after each exchange; the plan comes as news into the chat (a wake).
      steps: [
        { tool: "air_submit", args: { requirement } },
        { tool: "air_listen", args: {}, expect: { lastToolResultIncludes: ["Submitted"] } },
        { text: "已提交：架构师正在制定计划。", expect: { lastToolResultIncludes: ["End your turn now"] } },
        // The news is hidden from the chat (a synthetic part) but Main reads it.
        // Not the dialog's title ("架构师提出了计划"): the test finds the dialog by its title, and this chat line stays on screen.
        { text: "计划已提出：先写安装文档，再写使用文档。请在对话框中确认。", expect: { lastUserIncludes: ["news for the user", plan] } },
        // Spare answers for news that may still reach this session before the user quits.
        { text: "好的。" },
        { text: "好的。" },
      ],
    },
    {
      // After the restart, the confirmation reaches a new Architect session with the proposal and the user's yes.
      agent: "architect",
      match: "Your proposed plan[\\s\\S]*confirmed this plan",
      steps: [{ tool: "air_plan", args: { tasks }, expect: { lastUserIncludes: [plan] } }, { text: "任务图已写好。" }],
    },
    {
      agent: "architect",
      match: "^Requirement:",
      steps: [
        { tool: "air_propose", args: { summary: plan } },
        { text: "已提出计划。" },
        { tool: "air_plan", args: { tasks } },
        { text: "任务图已写好。" },
      ],
    },
    {
      agent: "executor",
      match: "^Task T-1:",
      // Slow enough for the sidebar to be read while T-1 runs and T-2 waits for it.
      steps: [{ ...write("docs/install.md", "安装：make"), delayMs: 15_000 }, { tool: "air_report", args: { summary: "安装文档已写好" } }, { text: "已汇报。" }],
    },
    {
      agent: "executor",
      match: "^Task T-2:",
      steps: [write("docs/usage.md", "用法：app run"), { tool: "air_report", args: { summary: "使用文档已写好" } }, { text: "已汇报。" }],
    },
    passingReviewer,
  ],
}

const PLAN_TITLE = catalog("zh-CN")["tui.plan.title"]

let sandbox: Sandbox
let project: string
let tui: TuiDriver
const screens: Record<string, string> = {}
const events = () => readJsonl(join(project, ".air/local/state/events.jsonl"))
const has = (type: string, taskId?: string) => () => events().some((e) => e.type === type && (!taskId || e.taskId === taskId))

async function closeDialog(): Promise<void> {
  tui.press("Escape")
  await tui.waitFor((s) => !s.includes(PLAN_TITLE), 30_000, "the dialog to close")
}

/** /air-answer brings the plan dialog back. */
async function answerLater(): Promise<void> {
  tui.type("/air-answer")
  await tui.waitFor(catalog("zh-CN")["tui.cmd.plan"], 30_000, "/air-answer in the slash menu")
  tui.press("Enter")
  await tui.waitFor(PLAN_TITLE, 30_000, "the plan dialog again")
}

/** The plan dialog, from its title to the engine's "enter submit". */
const planDialog = (screen: string): string => dialog(screen, PLAN_TITLE, "enter submit")
/** The dialog drawn down to its last row: on a loaded machine a screen may be read between its title and the rest. */
const wholeDialog = (screen: string): boolean => screen.includes(PLAN_TITLE) && screen.includes("enter submit")

/** What the screen shows left of the open plan dialog: the chat, under the dialog's translucent backdrop. */
function behindDialog(screen: string): string {
  const lines = screen.split("\n")
  const title = lines.find((l) => l.includes(PLAN_TITLE))!
  const left = columnOf(title, title.indexOf(PLAN_TITLE)) - 4
  return lines.map((l) => columns(l, 0, left).trimEnd()).join("\n")
}

/**
 * English of ours on a screen: any English text of the catalogue (its words between placeholders, three
 * words or more), and the header of the news AirCoding writes into Main's chat.
 */
function ourEnglish(screen: string): string[] {
  const en = catalog("en")
  const fragments = KEYS.flatMap((k) => en[k].split(/\{\w+\}/))
    .map((f) => f.trim())
    .filter((f) => /^[A-Za-z]/.test(f) && f.split(/\s+/).length >= 3)
  const flat = screen.replace(/\s+/g, " ")
  return [...new Set([...fragments, "news for the user"])].filter((f) => flat.includes(f))
}

beforeAll(async () => {
  sandbox = makeSandbox("air-tui-zh-")
  project = trivialProject(sandbox, { "README.md": "# 应用\n", ".air/shared/config.json": JSON.stringify({ language: "zh-CN" }) })
  const file = writeScenario(sandbox, scenario)
  tui = TuiDriver.start({
    root: sandbox.root,
    cwd: project,
    env: { ...sandbox.env, AIRCODING_INACTIVITY_MS: "120000", AIRCODING_SCRIPTED_LOG: join(sandbox.root, "model.jsonl") },
    command: [bunBinary(), aircodingBin, project, "--scripted", file],
  })

  await tui.waitFor("Ask anything", 180_000, "the TUI's prompt")
  tui.submit(requirement)
  screens.plan = await tui.waitFor(wholeDialog, 180_000, "the plan dialog")
  // The engine blanks wide characters behind a dialog's backdrop: the sidebar is read with the dialog put aside.
  await closeDialog()
  screens.waiting = await tui.waitFor("AirCoding · 等待中", 30_000, "the sidebar's status word")
  await answerLater()
  // The user quits without answering, the dialog open: the engine's first Ctrl-C closes the dialog, the second quits.
  tui.press("C-c")
  await tui.waitFor((s) => !s.includes(PLAN_TITLE), 30_000, "Ctrl-C to close the dialog")
  tui.press("C-c")
  await tui.waitFor(/EXITED \d+/, 60_000, "the TUI to exit")

  tui.reopen("again")
  screens.reopenedDialog = await tui.waitFor(wholeDialog, 180_000, "the plan asked again")
  await closeDialog()
  // A reopened TUI starts on the home screen: it says where the run stands and what it waits for.
  screens.reopenedHome = await tui.waitFor("AirCoding · 等待中", 30_000, "the run's status on the home screen")
  await answerLater()
  tui.submit("好")
  await tui.waitFor(has("plan.confirmed"), 60_000, "plan.confirmed in the log")
  // The user asks Main how it goes: the chat opens, and with it the sidebar.
  tui.submit(question)
  // Once T-1's session is known (no longer "starting"), the line stays the same for the executor's 15 s.
  const running = (s: string) => /T-1 执行中[\s\S]*T-2 待开始/.test(s) && !s.includes("（启动中）")
  screens.running = await tui.waitFor(running, 240_000, "T-1 running in its session while T-2 waits, in the sidebar")
  screens.done = await finishedScreen(tui, project, "AirCoding · 已完成", catalog("zh-CN")["check.final"], 480_000)
}, 900_000)

afterAll(async () => {
  await tui?.stop()
  sandbox?.cleanup()
}, 60_000)

describe("reopening the TUI while the plan waits, in Chinese", () => {
  test("the plan dialog speaks Chinese", () => {
    expect(screens.plan).toContain(plan)
    golden("zh-plan-dialog.zh-CN.txt", planDialog(screens.plan!))
    golden("zh-sidebar-waiting.zh-CN.txt", sidebar(screens.waiting!))
  })

  test("Chinese text behind the open dialog stays on screen, dimmed, not blank: the chat and the sidebar", () => {
    // The engine's backdrop used to blank every wide glyph under it ("⚙ air_submit [requirement=        ]").
    // The user's message starts at the chat's left edge, clear of the dialog whatever its width.
    expect(behindDialog(screens.plan!)).toContain(requirement)
    expect(behindDialog(screens.plan!)).toContain("[requirement=为应用")
    expect(screens.plan).toContain("AirCoding · 等待中")
  })

  test("reopened, the plan is asked again, in the dialog and in the sidebar; 好 confirms it once", () => {
    expect(planDialog(screens.reopenedDialog!)).toBe(planDialog(screens.plan!))
    const asking = catalog("zh-CN")["waiting.confirm"].split("{summary}")[0]!
    expect(screens.reopenedHome).toContain(`等待 · ${asking}`)
    const planning = events().map((e) => e.type).filter((t) => t.startsWith("plan.") || t === "graph.accepted")
    expect(planning).toEqual(["plan.proposed", "plan.confirmed", "graph.accepted"])
  })

  test("the sidebar follows the run in Chinese, and the run ends with every task merged once", () => {
    golden("zh-sidebar-running.zh-CN.txt", sidebar(screens.running!))
    golden("zh-sidebar-done.zh-CN.txt", sidebar(screens.done!))
    expect(events().filter((e) => e.type === "merge.succeeded").map((e) => e.taskId)).toEqual(["T-1", "T-2"])
    expect(execFileSync("git", ["show", "main:docs/usage.md"], { cwd: project, encoding: "utf8" })).toBe("用法：app run\n")
  })

  test("no English sentence of ours on any screen", () => {
    for (const [name, screen] of Object.entries(screens)) expect([name, ourEnglish(screen)]).toEqual([name, []])
  })
})

import { describe, expect, test } from "vitest"
import { progressLine } from "../../src/cli/progress"
import { RunData } from "../../src/scheduler/runtime/store/run-data"
import { statusText } from "../../src/read/status-text"
import { RunView } from "../../src/read/view"
import { ViewRender } from "../../src/read/view-render"
import { EventText } from "../../src/read/event-text"
import { RunReport } from "../../src/scheduler/runtime/report/run-report"
import { recordedEvents } from "../fixtures/recorded-run/generate"
import { FIXTURE } from "../cli-view/helpers"
import { catalog, KEYS } from "../../src/text/words"
import { PlanView } from "../../src/text/plan-view"
import { TASK_KINDS } from "../../src/scheduler/core/task.schema"

/**
 * A Chinese rendering of the recorded run speaks Chinese: every sentence of ours comes from the
 * catalogue. What a person or a model wrote (the requirement, the plan, titles, reports) is shown as
 * written, and ids, paths, commands and code stay as they are; nothing else may be English.
 */
const ENGLISH_SENTENCE = /[A-Za-z]{2,}(?:[ ,;:'-]+[A-Za-z]{2,}){2,}/

/** Every text of the log a model or a person wrote: shown as written, so set aside before the check. */
function writtenByPeople(): string[] {
  const out: string[] = []
  const walk = (v: unknown, key = ""): void => {
    if (typeof v === "string") {
      if (/\s/.test(v) && !["type", "at", "message", "evidencePath"].includes(key)) out.push(v.replace(/\s+/g, " ").trim())
    } else if (Array.isArray(v)) v.forEach((x) => walk(x, key))
    else if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) walk(x, k)
  }
  for (const e of recordedEvents().events) walk(e)
  return [...new Set(out)].sort((a, b) => b.length - a.length)
}

function englishLeft(text: string): string[] {
  // A long text is wrapped onto indented lines: joined again, it is found whole.
  let rest = text.replace(/\n {2,}(?=\S)/g, " ")
  for (const written of writtenByPeople()) {
    rest = rest.split(written).join("⟨…⟩")
    // A long text is cut to fit a line: its head followed by "…".
    const head = written.slice(0, 16).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
    rest = rest.replace(new RegExp(`${head}[^…\\n]*…`, "g"), "⟨…⟩")
  }
  return rest.split("\n").filter((line) => ENGLISH_SENTENCE.test(line))
}

describe("a Chinese rendering of the recorded run", () => {
  const { events, states } = recordedEvents()
  const reports: EventText.Reports = (id, run) => RunData.lastGateReport(FIXTURE, id, run)

  test("the check itself finds an English sentence of ours", () => {
    expect(englishLeft("T-2: cppcheck 门禁失败：Analysis of src/parser.cpp failed: 1 finding (error).")).toHaveLength(1)
    expect(englishLeft("T-2: cppcheck 门禁失败：src/parser.cpp 中有 1 条发现，其中 1 个错误")).toEqual([])
  })

  test("status, mid-run status with the cppcheck failure, and the end-of-run text have no English sentence", () => {
    const mid = events.findIndex((e) => e.type === "merge.started" && e.taskId === "T-3") + 1
    const state = states[mid - 1]!
    const gateReports = Object.fromEntries(state.tasks.map((rt) => [rt.id, RunData.lastGateReport(FIXTURE, rt.id, rt.gateRuns)]))
    const texts = [
      statusText(FIXTURE, "zh-CN"),
      ViewRender.render(RunView.build({ state, gateReports, entries: events.slice(0, mid).map((event) => ({ event })) }), "zh-CN"),
      RunReport.endText(FIXTURE, states[states.length - 1]!, "zh-CN"),
      ...states.map((s) => RunReport.progressLine(s, "zh-CN")),
    ]
    for (const text of texts) expect(englishLeft(text), text).toEqual([])
    expect(texts[1]).toContain("cppcheck 门禁失败：src/parser.cpp 中有 1 条发现，其中 1 个错误")
  })

  test("the events view and the progress lines of a headless run have no English sentence", () => {
    const lines = events.map((event) => EventText.eventLine({ event }, "zh-CN", reports))
    const progress = events.map((event, i) => progressLine(FIXTURE, JSON.stringify(event), i + 1, "zh-CN")).filter((l): l is string => !!l)
    expect(progress.length).toBeGreaterThan(20)
    expect(progress).toContain("T-2：cppcheck 门禁失败：src/parser.cpp 中有 1 条发现，其中 1 个错误")
    expect(englishLeft([...lines, ...progress].join("\n"))).toEqual([])
  })

  test("the English rendering words the same facts", () => {
    const failed = events.find((e) => e.type === "gates.failed")!
    expect(EventText.describeEvent(failed, "en", reports)).toBe("cppcheck gate failed: 1 finding(s), 1 error(s), in src/parser.cpp")
  })
})

describe("the end of a headless run", () => {
  test("its summary is worded in the configured language", () => {
    const { states } = recordedEvents()
    const summary = RunReport.summary(FIXTURE, states[states.length - 1]!)
    const zh = RunReport.summaryText(summary, "zh-CN", 671_000)
    expect(zh.split("\n")[0]).toBe("运行 run-20261129-0900：已完成，用时 671.0 秒")
    expect(zh).toContain("模型请求：主控 4、架构师 3、执行者 18、评审者 6、调试者 4")
    expect(englishLeft(zh)).toEqual([])
    expect(RunReport.summaryText(summary, "en", 671_000).split("\n")[0]).toBe("Run run-20261129-0900: done in 671.0 s")
  })
})

describe("events other branches add", () => {
  // Not in this branch's event union yet: the view words them from their fields and the catalogue.
  const at = "2026-11-29T09:20:00.000Z"
  const events = [
    { type: "gates.errored", at, seq: 40, taskId: "T-2", tag: "toolchain", message: "toolchain.json: unknown key 'biuld' (did you mean build?)" },
    { type: "merge.blocked", at, seq: 41, taskId: "T-2", tag: "lock-timeout", message: "the merge lock is held by pid 4242" },
    { type: "session.errored", at, seq: 42, taskId: "T-2", sessionId: "ses_x", cause: "APIError: 500" },
    { type: "finalCheck.done", at, seq: 43, status: "errored", message: "cmake: not found" },
    { type: "plan.revision.requested", at, seq: 44, text: "把解析器拆成两个任务" },
  ] as unknown as Parameters<typeof EventText.describeEvent>[0][]

  test("read in Chinese from the catalogue, the raw messages left in the log", () => {
    const zh = events.map((e) => EventText.describeEvent(e, "zh-CN"))
    expect(zh).toEqual([
      "门禁无法运行：工具链配置（.air/shared/rules/toolchain.json）无效",
      "无法执行合并：另一个进程持有合并锁",
      "会话 ses_x 出错结束",
      "集成分支的最终检查：无法运行",
      "要求修改计划：把解析器拆成两个任务",
    ])
    expect(englishLeft(zh.join("\n"))).toEqual([])
  })

  test("and in English", () => {
    expect(EventText.describeEvent(events[1]!, "en")).toBe("the merge could not be carried out: another process holds the merge lock")
    expect(EventText.describeEvent(events[3]!, "en")).toBe("final check of the integration branch: could not run")
  })
})

describe("the whole catalogue in Chinese", () => {
  // Names that are the same in both languages: a tool's or a product's name is not a sentence.
  const NAMES = new Set(["cppcheck", "clang-tidy", "mypy", "pylint", "tsc", "go vet", "staticcheck", "clippy", "AirCoding"])

  test("no Chinese word is left in English (code in backticks and {placeholders} aside)", () => {
    const zh = catalog("zh-CN")
    const en = catalog("en")
    const english = KEYS.filter((k) => {
      const text = zh[k].replace(/`[^`]*`/g, "").replace(/"[^"]*"/g, "").replace(/\{[A-Za-z]+\}/g, "")
      return ENGLISH_SENTENCE.test(text) || (zh[k] === en[k] && !NAMES.has(zh[k]) && /[A-Za-z]{3,}/.test(zh[k]))
    })
    expect(english).toEqual([])
  })

  test("the plan dialog names every task kind in Chinese", () => {
    const tasks = TASK_KINDS.map((kind, i) => ({ id: `T-${i + 1}`, title: `t${i}`, kind, phase: 1, deps: [], writeSet: [] }))
    const text = PlanView.lines({ tasks } as never, [], "zh-CN", 200)
      .map((l) => l.text)
      .join("\n")
    for (const kind of TASK_KINDS) expect(text).not.toMatch(new RegExp(`^\\s+${kind} · `, "m"))
    expect(text).toContain("代码 · 阶段 1")
    expect(text).toContain("界面 · 阶段 1")
  })
})

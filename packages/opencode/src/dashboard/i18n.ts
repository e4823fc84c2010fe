import { readFileSync, existsSync } from "node:fs"
import { join } from "node:path"

/**
 * The words of the run views (status, events, dashboard) in English and Simplified Chinese.
 * A small catalog of its own until the shared one (src/agent/language.ts) exists; the keys are meant
 * to move there unchanged.
 */
export type Lang = "en" | "zh-CN"
export const LANGS: readonly Lang[] = ["en", "zh-CN"]

const en = {
  "run.none": "No AirCoding run in {dir} yet: {file} does not exist. Start one with `aircoding run` or from the TUI.",
  "run.header": "Run {runId} — {status} (stage: {stage})",
  "run.requirement": "Requirement: {text}",
  "run.paused": "paused",
  "run.frozen": "change being planned: {text}",
  "run.updated": "Last event: #{count} at {at}",
  "status.done": "done",
  "status.blocked": "blocked",
  "status.waiting": "waiting",
  "status.running": "running",
  "status.idle": "idle",
  "status.paused": "paused",
  "stage.idle": "idle",
  "stage.planning": "planning",
  "stage.confirming": "confirming",
  "stage.confirmed": "confirmed",
  "stage.running": "running",
  "stage.milestone": "milestone",
  "stage.finished": "finished",
  "state.pending": "pending",
  "state.running": "running",
  "state.gating": "gating",
  "state.debugging": "debugging",
  "state.reviewing": "reviewing",
  "state.consulting": "consulting",
  "state.merge_queued": "merge queued",
  "state.merging": "merging",
  "state.merged": "merged",
  "state.blocked": "blocked",
  "state.invalidated": "invalidated",
  "col.task": "TASK",
  "col.title": "TITLE",
  "col.state": "STATE",
  "col.session": "SESSION",
  "col.elapsed": "ELAPSED",
  "col.attempts": "ATTEMPTS",
  "col.gates": "LAST GATES",
  "tasks.heading": "Tasks",
  "tasks.none": "No task graph yet.",
  "tasks.waitsOn": "waits on {what}",
  "gates.none": "—",
  "budgets.heading": "Budgets",
  "budgets.repair": "Repair budget per task: {budget}; spent: {spent}",
  "budgets.repair.none": "none",
  "budgets.repair.task": "{id} {used}/{budget} ({left} left)",
  "budgets.stall": "Stall retries per task: {budget}",
  "budgets.concurrency": "Concurrency: {active} of {cap} in flight",
  "budgets.wallclock": "Wall-clock cap per task: {cap}",
  "budgets.requests": "Model requests: {total}{detail}",
  "budgets.runSpent": "The run's budget is spent: the run waits for an answer.",
  "waiting.heading": "Waiting for",
  "waiting.nothing": "nothing: the run is finished",
  "waiting.idle": "a requirement (submit one to start a run)",
  "waiting.plan": "the Architect's plan",
  "waiting.confirm": "your confirmation of the plan: {summary}",
  "waiting.graph": "the Architect's task graph",
  "waiting.question": "your answer to {questionId}: {text}",
  "waiting.paused": "the run is paused: resume it to start new tasks",
  "waiting.frozen": "the Architect's plan delta for the change: {text}",
  "waiting.milestone": "the Architect's review of milestone {phase}",
  "waiting.worker": "the {role} on {id} (session {session})",
  "waiting.workerStarting": "the {role} on {id} (starting)",
  "waiting.gates": "the gates of {id}",
  "waiting.review": "the reviewer of {id}",
  "waiting.consult": "the scheduler agent's choice for {id}",
  "waiting.merging": "the merge of {id}",
  "waiting.mergeQueue": "the merge queue: {ids}",
  "waiting.ready": "a free slot for {ids}",
  "role.executor": "executor",
  "role.debugger": "debugger",
  "role.reviewer": "reviewer",
  "session.none": "—",
  "ev.run.started": "run {runId} started: {requirement}",
  "ev.plan.proposed": "the Architect proposed a plan: {summary}",
  "ev.plan.confirmed": "the plan was confirmed",
  "ev.graph.accepted": "task graph accepted: {count} tasks ({ids})",
  "ev.task.dispatched": "{role} started, attempt {attempt}, session {sessionId}",
  "ev.worker.reported": "{role} reported: {summary}",
  "ev.worker.reported.blocked": "{role} is blocked: {reason}",
  "ev.worker.failed": "worker {reason}: {message}",
  "ev.gates.started": "gates started",
  "ev.gates.passed": "gates passed ({kinds})",
  "ev.gates.failed": "{gate} gate failed: {message}",
  "ev.review.started": "review started, session {sessionId}",
  "ev.review.reported": "review: {verdict} ({rows} rows, {findings} findings)",
  "ev.merge.started": "merge started",
  "ev.merge.succeeded": "merged as {tag} ({commit})",
  "ev.merge.conflicted": "merge conflict in {files}",
  "ev.milestone.reached": "milestone {phase} review started",
  "ev.milestone.reviewed": "milestone {phase}: {verdict}",
  "ev.change.requested": "requirement change: {text}",
  "ev.delta.accepted": "plan delta accepted: {add} added, {remove} removed, {modify} modified",
  "ev.consult.answered": "scheduler agent chose: {choice}",
  "ev.question.answered": "question {questionId} answered: {answer}",
  "ev.budget.spent": "{kind} budget spent",
  "ev.timer.fired": "{kind} timer fired",
  "ev.session.lost": "session {sessionId} lost in a restart; dispatched again",
  "ev.run.paused": "run paused",
  "ev.run.resumed": "run resumed",
  "ev.refused": "(not applied: {reason})",
  "verdict.pass": "pass",
  "verdict.fail": "fail",
  "events.none": "No events yet in {file}.",
  "events.following": "Following {file} — Ctrl-C to stop.",
  "warn.prefix": "warning: {text}",
  // dashboard
  "ui.title": "AirCoding run",
  "ui.graph": "Task graph",
  "ui.timeline": "Timeline",
  "ui.evidence": "Evidence",
  "ui.evidence.pick": "Click a task in the graph to see its evidence.",
  "ui.evidence.none": "No evidence collected for this task yet.",
  "ui.sessions": "Sessions",
  "ui.attempt": "Gate run {n}",
  "ui.review": "Review report",
  "ui.review.none": "No review report yet.",
  "ui.log.build": "Build",
  "ui.log.test": "Tests",
  "ui.log.cppcheck": "cppcheck",
  "ui.log.diff": "Diff",
  "ui.log.empty": "(empty)",
  "ui.log.missing": "(not collected)",
  "ui.passed": "passed",
  "ui.failed": "failed",
  "ui.live": "live",
  "ui.offline": "reconnecting…",
  "ui.close": "Close",
  "ui.requests": "requests",
  "ui.findings": "Findings",
  "ui.design": "Design",
  "ui.code": "Code",
  "ui.note": "Note",
} as const

export type Key = keyof typeof en

const zhCN: Record<Key, string> = {
  "run.none": "{dir} 中还没有 AirCoding 运行：{file} 不存在。用 `aircoding run` 或在 TUI 中开始一次运行。",
  "run.header": "运行 {runId} — {status}（阶段：{stage}）",
  "run.requirement": "需求：{text}",
  "run.paused": "已暂停",
  "run.frozen": "正在规划变更：{text}",
  "run.updated": "最后事件：第 {count} 条，时间 {at}",
  "status.done": "已完成",
  "status.blocked": "受阻",
  "status.waiting": "等待中",
  "status.running": "运行中",
  "status.idle": "空闲",
  "status.paused": "已暂停",
  "stage.idle": "空闲",
  "stage.planning": "规划中",
  "stage.confirming": "待确认",
  "stage.confirmed": "已确认",
  "stage.running": "执行中",
  "stage.milestone": "里程碑",
  "stage.finished": "已结束",
  "state.pending": "待开始",
  "state.running": "执行中",
  "state.gating": "门禁检查中",
  "state.debugging": "调试中",
  "state.reviewing": "评审中",
  "state.consulting": "咨询中",
  "state.merge_queued": "排队合并",
  "state.merging": "合并中",
  "state.merged": "已合并",
  "state.blocked": "受阻",
  "state.invalidated": "已作废",
  "col.task": "任务",
  "col.title": "标题",
  "col.state": "状态",
  "col.session": "会话",
  "col.elapsed": "用时",
  "col.attempts": "尝试",
  "col.gates": "最近门禁",
  "tasks.heading": "任务",
  "tasks.none": "还没有任务图。",
  "tasks.waitsOn": "等待 {what}",
  "gates.none": "—",
  "budgets.heading": "预算",
  "budgets.repair": "每个任务的修复预算：{budget}；已用：{spent}",
  "budgets.repair.none": "无",
  "budgets.repair.task": "{id} {used}/{budget}（剩余 {left}）",
  "budgets.stall": "每个任务的停滞重试次数：{budget}",
  "budgets.concurrency": "并发：{active}/{cap} 进行中",
  "budgets.wallclock": "每个任务的时间上限：{cap}",
  "budgets.requests": "模型请求：{total}{detail}",
  "budgets.runSpent": "本次运行的预算已用完：运行在等待回答。",
  "waiting.heading": "正在等待",
  "waiting.nothing": "无：运行已结束",
  "waiting.idle": "一个需求（提交需求即可开始运行）",
  "waiting.plan": "架构师的计划",
  "waiting.confirm": "你对计划的确认：{summary}",
  "waiting.graph": "架构师的任务图",
  "waiting.question": "你对 {questionId} 的回答：{text}",
  "waiting.paused": "运行已暂停：恢复后才会开始新任务",
  "waiting.frozen": "架构师针对变更的计划增量：{text}",
  "waiting.milestone": "架构师对里程碑 {phase} 的评审",
  "waiting.worker": "{id} 上的{role}（会话 {session}）",
  "waiting.workerStarting": "{id} 上的{role}（启动中）",
  "waiting.gates": "{id} 的门禁检查",
  "waiting.review": "{id} 的评审者",
  "waiting.consult": "调度代理对 {id} 的选择",
  "waiting.merging": "{id} 的合并",
  "waiting.mergeQueue": "合并队列：{ids}",
  "waiting.ready": "空闲名额，用于 {ids}",
  "role.executor": "执行者",
  "role.debugger": "调试者",
  "role.reviewer": "评审者",
  "session.none": "—",
  "ev.run.started": "运行 {runId} 已开始：{requirement}",
  "ev.plan.proposed": "架构师提出了计划：{summary}",
  "ev.plan.confirmed": "计划已确认",
  "ev.graph.accepted": "任务图已接受：{count} 个任务（{ids}）",
  "ev.task.dispatched": "{role}已启动，第 {attempt} 次尝试，会话 {sessionId}",
  "ev.worker.reported": "{role}已汇报：{summary}",
  "ev.worker.reported.blocked": "{role}受阻：{reason}",
  "ev.worker.failed": "工作者 {reason}：{message}",
  "ev.gates.started": "门禁检查开始",
  "ev.gates.passed": "门禁通过（{kinds}）",
  "ev.gates.failed": "{gate} 门禁失败：{message}",
  "ev.review.started": "评审开始，会话 {sessionId}",
  "ev.review.reported": "评审：{verdict}（{rows} 行，{findings} 条发现）",
  "ev.merge.started": "开始合并",
  "ev.merge.succeeded": "已合并为 {tag}（{commit}）",
  "ev.merge.conflicted": "合并冲突：{files}",
  "ev.milestone.reached": "里程碑 {phase} 评审开始",
  "ev.milestone.reviewed": "里程碑 {phase}：{verdict}",
  "ev.change.requested": "需求变更：{text}",
  "ev.delta.accepted": "计划增量已接受：新增 {add}，移除 {remove}，修改 {modify}",
  "ev.consult.answered": "调度代理选择：{choice}",
  "ev.question.answered": "问题 {questionId} 已回答：{answer}",
  "ev.budget.spent": "{kind} 预算已用完",
  "ev.timer.fired": "{kind} 计时器触发",
  "ev.session.lost": "会话 {sessionId} 在重启中丢失；已重新派发",
  "ev.run.paused": "运行已暂停",
  "ev.run.resumed": "运行已恢复",
  "ev.refused": "（未应用：{reason}）",
  "verdict.pass": "通过",
  "verdict.fail": "不通过",
  "events.none": "{file} 中还没有事件。",
  "events.following": "正在跟踪 {file} — 按 Ctrl-C 停止。",
  "warn.prefix": "警告：{text}",
  "ui.title": "AirCoding 运行",
  "ui.graph": "任务图",
  "ui.timeline": "时间线",
  "ui.evidence": "证据",
  "ui.evidence.pick": "点击任务图中的任务查看其证据。",
  "ui.evidence.none": "这个任务还没有收集到证据。",
  "ui.sessions": "会话",
  "ui.attempt": "第 {n} 次门禁",
  "ui.review": "评审报告",
  "ui.review.none": "还没有评审报告。",
  "ui.log.build": "构建",
  "ui.log.test": "测试",
  "ui.log.cppcheck": "cppcheck",
  "ui.log.diff": "差异",
  "ui.log.empty": "（空）",
  "ui.log.missing": "（未收集）",
  "ui.passed": "通过",
  "ui.failed": "失败",
  "ui.live": "实时",
  "ui.offline": "重新连接中…",
  "ui.close": "关闭",
  "ui.requests": "次请求",
  "ui.findings": "发现",
  "ui.design": "设计",
  "ui.code": "代码",
  "ui.note": "备注",
}

const CATALOG: Record<Lang, Record<Key, string>> = { en, "zh-CN": zhCN }

export function t(lang: Lang, key: Key, params: Record<string, string | number> = {}): string {
  const text = CATALOG[lang][key] ?? en[key]
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => (name in params ? String(params[name]) : whole))
}

/** The labels the dashboard's front end needs, in one language. */
export function catalog(lang: Lang): Record<Key, string> {
  return CATALOG[lang]
}

/** "zh", "zh-CN", "zh-Hans" → zh-CN; "en…", "auto", anything else → en. */
export function normaliseLang(value: string | undefined): Lang | undefined {
  if (!value) return undefined
  const v = value.trim().toLowerCase()
  if (v === "auto" || v === "") return undefined
  if (v === "zh" || v.startsWith("zh-") || v.startsWith("zh_")) return "zh-CN"
  if (v === "en" || v.startsWith("en-") || v.startsWith("en_")) return "en"
  return undefined
}

/**
 * The language of a view: the flag wins, then AIRCODING_LANGUAGE, then `language` in
 * .air/shared/config.json; "auto" and anything unknown fall back to English.
 */
export function resolveLang(root: string, flag?: string, env: NodeJS.ProcessEnv = process.env): Lang {
  if (flag !== undefined) {
    const lang = normaliseLang(flag)
    if (!lang && flag !== "auto") throw new Error(`unknown language "${flag}"; use one of: ${LANGS.join(", ")}, auto`)
    if (lang) return lang
  }
  const fromEnv = normaliseLang(env.AIRCODING_LANGUAGE)
  if (fromEnv) return fromEnv
  const file = join(root, ".air", "shared", "config.json")
  if (existsSync(file)) {
    try {
      const raw = JSON.parse(readFileSync(file, "utf8")) as { language?: unknown }
      if (typeof raw.language === "string") return normaliseLang(raw.language) ?? "en"
    } catch {
      // a broken config is reported by the commands that own it; a view falls back to English
    }
  }
  return "en"
}

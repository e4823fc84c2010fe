import type { Lang } from "../read/words"

/**
 * Every word the TUI plugin shows that the run views' catalogue (dashboard/i18n, moving to
 * src/read/words.ts) does not already have. One table per language, same keys: the lead can fold them
 * into the one catalogue as they are.
 */
const en = {
  "sidebar.title": "AirCoding",
  "sidebar.none": "No run yet: describe what to build.",
  "sidebar.waiting": "Waiting for",
  "sidebar.more": "… {count} more",
  "cmd.status": "AirCoding: show the run",
  "cmd.pause": "AirCoding: pause the run",
  "cmd.resume": "AirCoding: resume the run",
  "cmd.change": "AirCoding: change the requirement",
  "cmd.plan": "AirCoding: answer the plan or question",
  "status.title": "AirCoding run",
  "plan.title": "The Architect proposes a plan",
  "plan.help": "Enter with an empty answer (or yes): confirm and start. Or type what should change (or why you reject it), then Enter: the Architect revises and proposes again. Esc: answer later (/air-answer).",
  "plan.placeholder": "empty = confirm; or the changes you want",
  "question.title": "AirCoding asks ({questionId})",
  "question.placeholder": "your answer",
  "change.title": "Change the requirement",
  "change.placeholder": "what should change",
  "sent.confirm": "Plan confirmed: the Architect writes the task graph.",
  "sent.revise": "Your changes went to the Architect: it revises the plan.",
  "sent.change": "Change sent to the Scheduler.",
  "sent.answer": "Answer sent.",
  "sent.pause": "Pausing the run…",
  "sent.resume": "Resuming the run…",
  "sent.failed": "Could not reach the AirCoding server: {reason}",
  "reply.refused": "AirCoding refused: {reason}",
  "reply.done": "AirCoding: done.",
  "nothing.ask": "Nothing is waiting for your answer.",
  "toast.merged": "{id} merged ({title})",
  "toast.blocked": "{id} blocked: {reason}",
  "toast.milestone": "Milestone {phase} reached: the Architect reviews it",
  "toast.graph": "Plan accepted: {count} tasks",
  "toast.done": "Run finished: every task merged",
  "toast.runBlocked": "Run stopped: blocked tasks wait for you",
  "toast.paused": "Run paused",
  "toast.resumed": "Run resumed",
} as const

export type TuiKey = keyof typeof en

const zhCN: Record<TuiKey, string> = {
  "sidebar.title": "AirCoding",
  "sidebar.none": "还没有运行：请描述要构建的内容。",
  "sidebar.waiting": "等待",
  "sidebar.more": "… 另有 {count} 项",
  "cmd.status": "AirCoding：查看运行",
  "cmd.pause": "AirCoding：暂停运行",
  "cmd.resume": "AirCoding：恢复运行",
  "cmd.change": "AirCoding：变更需求",
  "cmd.plan": "AirCoding：回答计划或问题",
  "status.title": "AirCoding 运行",
  "plan.title": "架构师提出了计划",
  "plan.help": "直接按回车（不输入内容，或输入“是”/“确认”）：确认并开始。或输入需要修改之处（或拒绝的理由）后回车：架构师修改后重新提出。Esc：稍后回答（/air-answer）。",
  "plan.placeholder": "留空 = 确认；或输入需要的修改",
  "question.title": "AirCoding 提问（{questionId}）",
  "question.placeholder": "你的回答",
  "change.title": "变更需求",
  "change.placeholder": "需要变更的内容",
  "sent.confirm": "计划已确认：架构师正在编写任务图。",
  "sent.revise": "你的修改已交给架构师：计划将被修订。",
  "sent.change": "变更已发送给调度器。",
  "sent.answer": "回答已发送。",
  "sent.pause": "正在暂停运行…",
  "sent.resume": "正在恢复运行…",
  "sent.failed": "无法连接 AirCoding 服务：{reason}",
  "reply.refused": "AirCoding 拒绝了请求：{reason}",
  "reply.done": "AirCoding：已完成。",
  "nothing.ask": "当前没有等待你回答的内容。",
  "toast.merged": "{id} 已合并（{title}）",
  "toast.blocked": "{id} 受阻：{reason}",
  "toast.milestone": "到达里程碑 {phase}：架构师正在评审",
  "toast.graph": "计划已接受：{count} 个任务",
  "toast.done": "运行结束：所有任务均已合并",
  "toast.runBlocked": "运行停止：受阻的任务在等你处理",
  "toast.paused": "运行已暂停",
  "toast.resumed": "运行已恢复",
}

const catalogues: Record<Lang, Record<TuiKey, string>> = { en, "zh-CN": zhCN }

export function tw(lang: Lang, key: TuiKey, params: Record<string, string | number> = {}): string {
  const template = catalogues[lang][key] ?? en[key]
  return template.replace(/\{(\w+)\}/g, (_, name: string) => (name in params ? String(params[name]) : `{${name}}`))
}

export const TUI_KEYS = Object.keys(en) as TuiKey[]
export function tuiCatalogue(lang: Lang): Readonly<Record<TuiKey, string>> {
  return catalogues[lang]
}

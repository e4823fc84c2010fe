/**
 * The language rule. The setting is "auto" (speak to the user in the language they write in) or a
 * locked BCP-47 tag ("zh-CN", "en", …). Prompts get the rule as a paragraph (`{{language_rule}}`);
 * texts written by code (guard refusals, progress messages) come from the catalog below, in English
 * and Simplified Chinese.
 */
export namespace Language {
  export type Setting = "auto" | (string & {})
  /** The languages the catalog has. */
  export type Catalog = "en" | "zh-CN"
  export const CATALOGS: readonly Catalog[] = ["en", "zh-CN"]

  const BCP47 = /^[a-zA-Z]{2,3}(-[a-zA-Z]{4})?(-([a-zA-Z]{2}|[0-9]{3}))?(-[a-zA-Z0-9]{5,8})*$/

  /** Checks a setting: "auto" or a BCP-47 tag; anything else is an error that names the value. */
  export function parse(value: unknown): Setting {
    if (value === undefined || value === null || value === "") return "auto"
    if (typeof value !== "string") throw new Error(`language must be "auto" or a language tag such as "zh-CN" or "en", not ${JSON.stringify(value)}`)
    const v = value.trim()
    if (v.toLowerCase() === "auto") return "auto"
    if (!BCP47.test(v)) throw new Error(`language must be "auto" or a language tag such as "zh-CN" or "en", not ${JSON.stringify(value)}`)
    // Canonical case: language lower, script title, region upper (zh-hans-cn → zh-Hans-CN).
    return v
      .split("-")
      .map((part, i) => (i === 0 ? part.toLowerCase() : part.length === 2 ? part.toUpperCase() : part.length === 4 ? part[0]!.toUpperCase() + part.slice(1).toLowerCase() : part))
      .join("-")
  }

  const NAMES: Record<string, string> = {
    zh: "Chinese (简体中文)",
    "zh-CN": "Simplified Chinese (简体中文)",
    "zh-Hans": "Simplified Chinese (简体中文)",
    "zh-TW": "Traditional Chinese (繁體中文)",
    "zh-Hant": "Traditional Chinese (繁體中文)",
    en: "English",
    ja: "Japanese",
    ko: "Korean",
    de: "German",
    fr: "French",
    es: "Spanish",
    ru: "Russian",
  }

  /** A human name for a tag, for the prompt ("zh-CN" → "Simplified Chinese (简体中文)"). */
  export function name(tag: string): string {
    return NAMES[tag] ?? NAMES[tag.split("-")[0]!] ?? tag
  }

  /** The language rule paragraph for a prompt. */
  export function rule(setting: Setting = "auto"): string {
    const keep =
      "Keep code, identifiers, file paths, commands, tool names and tool arguments in their original form, and write files (code, comments, plans, commit messages) in the project's own language and conventions."
    if (setting === "auto")
      return `Language setting: auto. Speak to the user in the language the user writes in (for example, answer in Chinese when the user writes Chinese, in English when they write English). Text that only the Scheduler or other agents read (tool arguments, reports) may stay in English. ${keep}`
    return `Language setting: ${setting}. Speak to the user in ${name(setting)} (${setting}), whatever language they write in. ${keep}`
  }

  /** Detects Chinese text (Han characters), for "auto" when code must pick a catalog. */
  export function detect(text: string): Catalog {
    return /[\u3400-\u9fff\uf900-\ufaff]/.test(text) ? "zh-CN" : "en"
  }

  /**
   * The catalog for texts from code: a locked Chinese tag → zh-CN, any other tag → English; "auto"
   * follows the user's language when known (a tag, or a sample of their text), else English.
   */
  export function catalogOf(setting: Setting = "auto", user?: { tag?: string; text?: string }): Catalog {
    const pick = (tag: string): Catalog => (tag.toLowerCase().startsWith("zh") ? "zh-CN" : "en")
    if (setting !== "auto") return pick(setting)
    if (user?.tag) return pick(user.tag)
    if (user?.text) return detect(user.text)
    return "en"
  }

  const en = {
    "guard.tool": "AirCoding guard: the {agent} agent may not call `{tool}`. {instead}",
    "guard.tool.task": "No agent starts other agents: only the Scheduler's code dispatches work.",
    "guard.tool.owner": "`{tool}` belongs to the {owners} role.",
    "guard.tool.foreign": "`{tool}` is not one of AirCoding's tools for this role (MCP and other plugins' tools are not available to AirCoding's agents).",
    "guard.instead.main":
      "Main never does technical work: submit the requirement with air_submit, follow it with air_listen (again and again until the run ends), and let the Scheduler dispatch an executor.",
    "guard.instead.architect":
      "The Architect changes nothing directly: propose with air_propose, write the task graph with air_plan (changes with air_delta, decisions with air_adr); executors change the code.",
    "guard.instead.reviewer":
      "The Reviewer only reads: get the change and its evidence with air_diff, report with air_review; the executor fixes what you find.",
    "guard.instead.executor":
      "An executor works on its task with read, glob, grep, edit, write and bash inside its worktree, and reports with air_report (with `blocked` when something else is needed).",
    "guard.instead.debugger":
      "The debugger works with read, glob, grep, edit, write and bash inside the task's worktree, and reports with air_report (with `blocked` when something else is needed).",
    "guard.instead.scheduler": "The scheduler agent only chooses one of the options it was offered: answer with air_decide.",
    "guard.path":
      "AirCoding guard: the {agent} agent may only work inside its worktree {root}; `{tool}` was refused because {why}. Use a path inside the worktree (relative paths are resolved from it).",
    "guard.why.dotdot": "`{path}` climbs out of the worktree with `..`",
    "guard.why.absolute": "`{path}` is outside the worktree",
    "guard.why.symlink": "`{path}` goes through a symbolic link that leads outside the worktree",
    "guard.why.home": "`{path}` names the home directory",
    "guard.why.cd": "the command changes directory out of the worktree (`{path}`)",
    "guard.why.variable": "the command uses `{path}`, which points outside the worktree",
    "guard.airlocal":
      "AirCoding guard: `.air/local` is written only by the Scheduler's code; the {agent} agent may not touch `{path}` with `{tool}`. Gate output there is read-only; report with air_report instead.",
    "guard.evidence":
      "AirCoding guard: the debugger collects evidence before it changes anything, and `{tool}` comes first here. First run the failing build or test (for example `{example}`), run cppcheck, or read the gate output under .air/local/evidence/ or a *.log file; then edits are allowed.",
    "guard.unassigned": "AirCoding guard: the {agent} agent has no worktree yet; wait for the Scheduler to dispatch your task.",
    "run.submitted": "Submitted as {runId}. The Architect is studying the requirement and will propose a plan.",
    "run.progress": "Stage: {stage}.",
    "run.ended": "RUN ENDED: {status}.",
    "plan.proposed": "PLAN PROPOSED — ask the user to confirm it (then call air_confirm).",
    question: "QUESTION {id} — ask the user, then call air_answer with this id.",
    "task.started": "Task {task} started ({agent}).",
    "task.done": "Task {task} done and merged.",
    "task.failed": "Task {task}: the {gate} gate failed; the debugger is on it (attempt {attempt}).",
    "task.blocked": "Task {task} is blocked: {reason}",
    "budget.spent": "The {budget} budget is spent: {detail}",
  } as const

  export type Key = keyof typeof en

  const zh: Record<Key, string> = {
    "guard.tool": "AirCoding 守卫：{agent} 角色不得调用 `{tool}`。{instead}",
    "guard.tool.task": "任何智能体都不能启动其他智能体：只有调度器的代码负责派发工作。",
    "guard.tool.owner": "`{tool}` 属于 {owners} 角色。",
    "guard.tool.foreign": "`{tool}` 不是该角色可用的 AirCoding 工具（AirCoding 的智能体不能使用 MCP 工具和其他插件的工具）。",
    "guard.instead.main":
      "Main 从不做技术工作：用 air_submit 提交需求，用 air_listen 跟进（反复调用直到运行结束），由调度器派发执行者。",
    "guard.instead.architect":
      "架构师不直接修改任何东西：用 air_propose 提出方案，用 air_plan 写入任务图（变更用 air_delta，决策用 air_adr）；代码由执行者修改。",
    "guard.instead.reviewer": "审查者只读：用 air_diff 获取改动及其证据，用 air_review 报告；发现的问题由执行者修复。",
    "guard.instead.executor":
      "执行者只在自己的 worktree 内用 read、glob、grep、edit、write 和 bash 完成任务，并用 air_report 报告（需要其他东西时附 `blocked`）。",
    "guard.instead.debugger":
      "调试者只在任务的 worktree 内用 read、glob、grep、edit、write 和 bash 工作，并用 air_report 报告（需要其他东西时附 `blocked`）。",
    "guard.instead.scheduler": "调度智能体只能在给出的选项中选择一个：用 air_decide 回答。",
    "guard.path": "AirCoding 守卫：{agent} 角色只能在自己的 worktree {root} 内工作；`{tool}` 被拒绝，因为{why}。请使用 worktree 内的路径（相对路径从 worktree 解析）。",
    "guard.why.dotdot": "`{path}` 用 `..` 跳出了 worktree",
    "guard.why.absolute": "`{path}` 在 worktree 之外",
    "guard.why.symlink": "`{path}` 经过一个指向 worktree 之外的符号链接",
    "guard.why.home": "`{path}` 指向主目录",
    "guard.why.cd": "命令切换到了 worktree 之外的目录（`{path}`）",
    "guard.why.variable": "命令使用了指向 worktree 之外的 `{path}`",
    "guard.airlocal":
      "AirCoding 守卫：`.air/local` 只由调度器的代码写入；{agent} 角色不得用 `{tool}` 触碰 `{path}`。那里的门禁输出是只读的；请改用 air_report 报告。",
    "guard.evidence":
      "AirCoding 守卫：调试者在修改任何东西之前必须先收集证据，`{tool}` 暂不允许。请先运行失败的构建或测试（例如 `{example}`）、运行 cppcheck，或读取 .air/local/evidence/ 下的门禁输出或 *.log 文件；之后才允许修改。",
    "guard.unassigned": "AirCoding 守卫：{agent} 角色还没有 worktree；请等待调度器派发任务。",
    "run.submitted": "已提交为 {runId}。架构师正在研究需求，稍后会提出计划。",
    "run.progress": "阶段：{stage}。",
    "run.ended": "运行结束：{status}。",
    "plan.proposed": "计划已提出——请用户确认（然后调用 air_confirm）。",
    question: "问题 {id}——请询问用户，然后用此 id 调用 air_answer。",
    "task.started": "任务 {task} 已开始（{agent}）。",
    "task.done": "任务 {task} 已完成并合并。",
    "task.failed": "任务 {task}：{gate} 门禁失败；调试者正在处理（第 {attempt} 次）。",
    "task.blocked": "任务 {task} 受阻：{reason}",
    "budget.spent": "{budget} 预算已用完：{detail}",
  }

  const catalogs: Record<Catalog, Record<Key, string>> = { en, "zh-CN": zh }

  export const keys = Object.keys(en) as Key[]

  /** A text from the catalog with `{param}`s filled; a language given as a setting is mapped first. */
  export function t(lang: Catalog | Setting, key: Key, params: Record<string, string | number> = {}): string {
    const catalog = catalogs[(CATALOGS as readonly string[]).includes(lang) ? (lang as Catalog) : catalogOf(lang)]
    const template: string = catalog[key] ?? en[key]
    return template.replace(/\{(\w+)\}/g, (whole, k: string) => (params[k] === undefined ? whole : String(params[k])))
  }

  export function has(lang: Catalog, key: Key): boolean {
    return typeof catalogs[lang][key] === "string" && catalogs[lang][key].length > 0
  }

  /** The raw templates of one language (for tests: every key in both languages, same placeholders). */
  export function templates(lang: Catalog): Readonly<Record<Key, string>> {
    return catalogs[lang]
  }
}

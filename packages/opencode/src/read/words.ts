import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"

/**
 * The one catalogue of words for people, in English and Simplified Chinese: guard refusals, status,
 * events, progress lines, the dashboard, gate failures and the end-of-run text. Every text a person
 * reads comes from here in the configured language; ids, paths, commands and code stay as they are.
 * A text written by a model or a person (a requirement, a summary, a question) is shown as written.
 */
export type Lang = "en" | "zh-CN"
export const LANGS: readonly Lang[] = ["en", "zh-CN"]

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
  "run.ended": "RUN ENDED: {status}.",
  "run.none": "No AirCoding run in {dir} yet: {file} does not exist. Start one with `aircoding run` or from the TUI.",
  "run.header": "Run {runId} — {status}",
  "run.requirement": "Requirement: {text}",
  "run.headline": "{status} — waiting for {what}",
  "run.paused": "paused",
  "run.frozen": "change being planned: {text}",
  "run.updated": "Last event: #{count} at {at}",
  "status.done": "done",
  "status.blocked": "blocked",
  "status.waiting": "waiting",
  "status.running": "running",
  "status.idle": "idle",
  "status.paused": "paused",
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
  "ev.gates.failed": "{gate} gate failed: {what}",
  "ev.review.started": "review started, session {sessionId}",
  "ev.review.reported": "review: {verdict} ({rows} rows, {findings} findings)",
  "ev.merge.started": "merge started",
  "ev.merge.succeeded": "merged as {tag} ({commit})",
  "ev.merge.conflicted": "merge conflict in {files}",
  "ev.milestone.reached": "milestone {phase} review started",
  "ev.milestone.reviewed": "milestone {phase}: {verdict}",
  "ev.change.requested": "requirement change: {text}",
  "ev.delta.accepted": "plan delta accepted: {add} added, {remove} removed, {modify} modified",
  "ev.consult.answered": "{by} chose: {choice}",
  "ev.consult.unanswered": "{by} gave no decision: {reason}",
  "ev.dispatch.failed": "{role} session could not start: {message}",
  "consultant.scheduler": "scheduler agent",
  "consultant.architect": "Architect",
  "ev.question.answered": "question {questionId} answered: {answer}",
  "ev.budget.spent": "{kind} budget spent",
  "ev.timer.fired": "timer: {kind}",
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
  "ui.log.clangTidy": "clang-tidy",
  "ui.inherited": "{count} inherited",
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
  // run status words (src/read/run-status.ts)
  "status.planning": "planning",
  "status.error": "error",
  // gates, by their registry id
  "gate.commit": "commit",
  "gate.diff": "diff",
  "gate.write-set": "write-set",
  "gate.secrets": "secret scan",
  "gate.build": "build",
  "gate.test": "test",
  "gate.analysis": "cppcheck",
  "gate.clang-tidy": "clang-tidy",
  "gate.evidence": "evidence",
  "gatefail.commit": "the task's work is not committed on its branch",
  "gatefail.diff": "the change is empty or cannot be compared",
  "gatefail.build": "the build failed",
  "gatefail.test": "the tests failed",
  "gatefail.test.names": "failing tests: {names}",
  "gatefail.analysis": "{count} finding(s), {errors} error(s), in {files}",
  "gatefail.evidence": "evidence is missing",
  "gatefail.analysis.failed": "cppcheck did not pass",
  "gatefail.clang-tidy": "clang-tidy found findings the task introduced",
  "gatefail.other": "see the evidence",
  "gatefail.where": "{what} (evidence: {path})",
  "gatefail.inherited": "{what}; {count} inherited from the base",
  "role.main": "main",
  "role.architect": "architect",
  "role.scheduler": "scheduler",
  "failure.worker": "its session failed or stalled",
  "failure.dispatch": "its session could not start",
  "failure.review": "the review found problems: {text}",
  "failure.merge": "merge conflict: {files}",
  "failure.other": "{source} failed",
  // progress lines of a headless run, end-of-run text
  "progress.line": "{task}: {text}",
  "progress.run": "Run status: {status}{tasks}.",
  "progress.tasks": " — tasks: {counts}",
  "progress.count": "{n} {state}",
  "end.task": "- {id} {title}: {state} after {attempts} attempt(s)",
  "summary.header": "Run {runId}: {status} in {seconds} s",
  "summary.task": "{state}, {attempts} attempt(s)  {title}",
  "summary.requests": "model requests: {list}",
  "summary.question": "Question {questionId}: {text}",
  "end.final.passed": "Final check of the integration branch: passed.",
  "end.final.failed": "Final check of the integration branch: failed (see {path}).",
  "end.evidence": "Evidence: {path}",
  "ev.timer.inactivity": "no activity within the inactivity timeout",
  "ev.timer.wallclock": "wall-clock cap reached",
  "budget.kind.requests": "model request",
  "budget.kind.tokens": "token",
  "budget.kind.cost": "cost",
  "budget.kind.minutes": "time",
  "reason.error": "failed",
  "reason.aborted": "was aborted",
  "reason.stalled": "stalled",
  "reason.timeout": "timed out",
  "ui.loading": "Loading…",
  // events other branches add (plan revisions, faults, the final check): worded from their fields
  "ev.plan.revision.requested": "changes to the plan asked for: {text}",
  "ev.gates.errored": "the gates could not run: {fault}",
  "ev.merge.blocked": "the merge could not be carried out: {fault}",
  "ev.session.errored": "session {sessionId} ended in an error",
  "ev.finalCheck.done": "final check of the integration branch: {status}",
  "final.passed": "passed",
  "final.failed": "failed",
  "final.errored": "could not run",
  "fault.toolchain": "the toolchain settings (.air/shared/toolchain.json) are invalid",
  "fault.git": "a git command failed",
  "fault.index-lock": "git's index.lock was left in the project",
  "fault.local-changes": "local changes in the project are in the way",
  "fault.lock-timeout": "another process holds the merge lock",
  "fault.merge": "git could not merge",
  "fault.fs": "a file could not be written",
  "fault.process": "a command could not be run",
  "fault.session": "the session failed",
  "fault.unexpected": "an unexpected error (see the event log)",
} as const

export type Key = keyof typeof en

const zhCN: Record<Key, string> = {
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
  "run.ended": "运行结束：{status}。",
  "run.none": "{dir} 中还没有 AirCoding 运行：{file} 不存在。用 `aircoding run` 或在 TUI 中开始一次运行。",
  "run.header": "运行 {runId} — {status}",
  "run.requirement": "需求：{text}",
  "run.headline": "{status} — 正在等待{what}",
  "run.paused": "已暂停",
  "run.frozen": "正在规划变更：{text}",
  "run.updated": "最后事件：第 {count} 条，时间 {at}",
  "status.done": "已完成",
  "status.blocked": "受阻",
  "status.waiting": "等待中",
  "status.running": "运行中",
  "status.idle": "空闲",
  "status.paused": "已暂停",
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
  "ev.worker.failed": "工作者{reason}：{message}",
  "ev.gates.started": "门禁检查开始",
  "ev.gates.passed": "门禁通过（{kinds}）",
  "ev.gates.failed": "{gate} 门禁失败：{what}",
  "ev.review.started": "评审开始，会话 {sessionId}",
  "ev.review.reported": "评审：{verdict}（{rows} 行，{findings} 条发现）",
  "ev.merge.started": "开始合并",
  "ev.merge.succeeded": "已合并为 {tag}（{commit}）",
  "ev.merge.conflicted": "合并冲突：{files}",
  "ev.milestone.reached": "里程碑 {phase} 评审开始",
  "ev.milestone.reviewed": "里程碑 {phase}：{verdict}",
  "ev.change.requested": "需求变更：{text}",
  "ev.delta.accepted": "计划增量已接受：新增 {add}，移除 {remove}，修改 {modify}",
  "ev.consult.answered": "{by}选择：{choice}",
  "ev.consult.unanswered": "{by}未作决定：{reason}",
  "ev.dispatch.failed": "{role}会话无法启动：{message}",
  "consultant.scheduler": "调度代理",
  "consultant.architect": "架构师",
  "ev.question.answered": "问题 {questionId} 已回答：{answer}",
  "ev.budget.spent": "{kind} 预算已用完",
  "ev.timer.fired": "计时器：{kind}",
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
  "ui.log.clangTidy": "clang-tidy",
  "ui.inherited": "{count} 条继承自基线",
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
  "status.planning": "规划中",
  "status.error": "出错",
  "gate.commit": "提交",
  "gate.diff": "差异",
  "gate.write-set": "写入范围",
  "gate.secrets": "密钥扫描",
  "gate.build": "构建",
  "gate.test": "测试",
  "gate.analysis": "cppcheck",
  "gate.clang-tidy": "clang-tidy",
  "gate.evidence": "证据",
  "gatefail.commit": "任务的工作没有提交到它的分支",
  "gatefail.diff": "改动为空或无法比较",
  "gatefail.build": "构建失败",
  "gatefail.test": "测试失败",
  "gatefail.test.names": "失败的测试：{names}",
  "gatefail.analysis": "{files} 中有 {count} 条发现，其中 {errors} 个错误",
  "gatefail.evidence": "缺少证据",
  "gatefail.analysis.failed": "cppcheck 未通过",
  "gatefail.clang-tidy": "clang-tidy 发现了任务新引入的问题",
  "gatefail.other": "详见证据",
  "gatefail.where": "{what}（证据：{path}）",
  "gatefail.inherited": "{what}；另有 {count} 条继承自基线",
  "role.main": "主控",
  "role.architect": "架构师",
  "role.scheduler": "调度代理",
  "failure.worker": "会话失败或停滞",
  "failure.dispatch": "会话无法启动",
  "failure.review": "评审发现了问题：{text}",
  "failure.merge": "合并冲突：{files}",
  "failure.other": "{source} 失败",
  "progress.line": "{task}：{text}",
  "progress.run": "运行状态：{status}{tasks}。",
  "progress.tasks": "——任务：{counts}",
  "progress.count": "{state} {n} 个",
  "end.task": "- {id} {title}：{state}，共 {attempts} 次尝试",
  "summary.header": "运行 {runId}：{status}，用时 {seconds} 秒",
  "summary.task": "{state}，{attempts} 次尝试  {title}",
  "summary.requests": "模型请求：{list}",
  "summary.question": "问题 {questionId}：{text}",
  "end.final.passed": "集成分支的最终检查：通过。",
  "end.final.failed": "集成分支的最终检查：失败（详见 {path}）。",
  "end.evidence": "证据：{path}",
  "ev.timer.inactivity": "在不活动超时内没有任何活动",
  "ev.timer.wallclock": "达到时间上限",
  "budget.kind.requests": "模型请求",
  "budget.kind.tokens": "令牌",
  "budget.kind.cost": "费用",
  "budget.kind.minutes": "时间",
  "reason.error": "出错",
  "reason.aborted": "被中止",
  "reason.stalled": "停滞",
  "reason.timeout": "超时",
  "ui.loading": "加载中…",
  "ev.plan.revision.requested": "要求修改计划：{text}",
  "ev.gates.errored": "门禁无法运行：{fault}",
  "ev.merge.blocked": "无法执行合并：{fault}",
  "ev.session.errored": "会话 {sessionId} 出错结束",
  "ev.finalCheck.done": "集成分支的最终检查：{status}",
  "final.passed": "通过",
  "final.failed": "失败",
  "final.errored": "无法运行",
  "fault.toolchain": "工具链配置（.air/shared/toolchain.json）无效",
  "fault.git": "git 命令失败",
  "fault.index-lock": "项目中残留了 git 的 index.lock",
  "fault.local-changes": "项目中的本地改动妨碍了操作",
  "fault.lock-timeout": "另一个进程持有合并锁",
  "fault.merge": "git 无法合并",
  "fault.fs": "无法写入文件",
  "fault.process": "无法运行命令",
  "fault.session": "会话失败",
  "fault.unexpected": "意外错误（详见事件日志）",
}

const CATALOG: Record<Lang, Record<Key, string>> = { en, "zh-CN": zhCN }

export const KEYS = Object.keys(en) as Key[]

export type Params = Record<string, string | number>

/** A text of the catalogue with its `{param}`s filled; an unknown param stays visible. */
export function t(lang: Lang, key: Key, params: Params = {}): string {
  const text: string = CATALOG[lang][key] ?? en[key] ?? key
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => (params[name] === undefined ? whole : String(params[name])))
}

/** A list in the language's way: "a, b, c" or "甲、乙、丙". */
export function list(lang: Lang, items: readonly string[]): string {
  return items.join(lang === "zh-CN" ? "、" : ", ")
}

/** Whether a string is a key of the catalogue (for keys built from data, such as `state.${status}`). */
export function isKey(key: string): key is Key {
  return Object.prototype.hasOwnProperty.call(en, key)
}

/** A text for a key built from data; the fallback when the catalogue has no such key. */
export function tOr(lang: Lang, key: string, fallback: string, params: Params = {}): string {
  return isKey(key) ? t(lang, key, params) : fallback
}

/** The whole catalogue of one language (the dashboard embeds it in its first page). */
export function catalog(lang: Lang): Readonly<Record<Key, string>> {
  return CATALOG[lang]
}

/** "zh", "zh-CN", "zh-Hans" → zh-CN; "en…" → en; "auto", "" and anything else → undefined. */
export function normaliseLang(value: string | undefined): Lang | undefined {
  if (!value) return undefined
  const v = value.trim().toLowerCase()
  if (v === "auto" || v === "") return undefined
  if (v === "zh" || v.startsWith("zh-") || v.startsWith("zh_")) return "zh-CN"
  if (v === "en" || v.startsWith("en-") || v.startsWith("en_")) return "en"
  return undefined
}

/** Detects Chinese text (Han characters), for "auto" when code must pick a language. */
export function detectLang(text: string): Lang {
  return /[\u3400-\u9fff\uf900-\ufaff]/.test(text) ? "zh-CN" : "en"
}

/**
 * The language of a setting ("auto" or a BCP-47 tag): a Chinese tag → zh-CN, any other tag → en;
 * "auto" follows the user's language when known (a tag, or a sample of their text), else en.
 */
export function langOf(setting: string = "auto", user?: { tag?: string; text?: string }): Lang {
  const pick = (tag: string): Lang => (tag.toLowerCase().startsWith("zh") ? "zh-CN" : "en")
  if (setting !== "auto") return (LANGS as readonly string[]).includes(setting) ? (setting as Lang) : pick(setting)
  if (user?.tag) return pick(user.tag)
  if (user?.text) return detectLang(user.text)
  return "en"
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
      const raw = JSON.parse(readFileSync(file, "utf8").replace(/^\uFEFF/, "")) as { language?: unknown }
      if (typeof raw.language === "string") return normaliseLang(raw.language) ?? "en"
    } catch {
      // a broken config is reported by the commands that own it; a view falls back to English
    }
  }
  return "en"
}

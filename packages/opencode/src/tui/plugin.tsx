/** @jsxImportSource @opentui/solid */
import type { TuiPlugin, TuiPluginApi, TuiPluginModule } from "@opencode-ai/plugin/tui"
import { spawnSync } from "node:child_process"
import { join } from "node:path"
import { createSignal, For, Show } from "solid-js"
import { PlanView } from "../text/plan-view"
import { statusText } from "../read/status-text"
import { resolveLang, t, tCount, type Key, type Lang } from "../text/words"
import { readStatus } from "../read/status-read"
import { RunData } from "../scheduler/runtime/store/run-data"
import { RunView } from "../read/view"
import { TerminalText } from "../text/terminal-text"
import type { SchedulerState } from "../scheduler/core/state"
import { TuiBridge } from "./bridge"
import { TuiView } from "./view"
import { Backdrop } from "./backdrop"
import { DialogLayout } from "./dialog-layout"
import { parsePlanAnswer } from "../scheduler/core/answer"
import { AirPaths } from "../scheduler/core/air-paths"

/**
 * AirCoding inside OpenCode's TUI (loaded through the tui.json the launcher writes). It reads the run
 * from disk — the Scheduler's log, folded incrementally once a second — and never asks the model
 * anything: the sidebar, the toasts and /air-status are computed here; the user's answers (plan,
 * questions, pause, resume, change) go to the Scheduler over the server's event bus (see bridge.ts).
 */
const POLL_MS = 1000
/** The engine's session view shows its sidebar from this width on (measured in tmux with the pinned engine). */
const SIDEBAR_MIN_WIDTH = 120

/**
 * The sidebar's view at the clock of the view: a running gate's or check's elapsed time counts from its start to
 * now, so it ticks while the tool prints nothing (its progress file is written only when output arrives); a
 * wait for the model provider whose time has passed is over, though no event says so. A finished run's
 * times stop at its last event.
 */
function runView(root: string, follower: RunData.Follower): RunView.Status {
  const now = Date.now()
  const view = readStatus(root, follower.state, follower.entries, follower.state.finished ? undefined : new Date(now).toISOString())
  return { ...view, retries: view.retries?.filter((r) => Date.parse(r.nextAt) > now) }
}

const tui: TuiPlugin = async (api) => {
  const root = api.state.path.directory
  // The language setting (.air/shared/config.json) is read again whenever the run moves: a change applies live.
  const languageNow = (): Lang => {
    try {
      return resolveLang(root)
    } catch {
      return "en"
    }
  }
  let lang = languageNow()
  let follower = new RunData.Follower(root)
  follower.poll()
  let state: SchedulerState = follower.state
  const [view, setView] = createSignal<RunView.Status>(runView(root, follower))

  // The terminal's size as a signal: the first screen and the dialogs are laid out for it, again after a resize.
  const [size, setSize] = createSignal({ width: api.renderer.width, height: api.renderer.height })
  const onResize = () => setSize({ width: api.renderer.width, height: api.renderer.height })
  api.renderer.on("resize", onResize)
  api.lifecycle.onDispose(() => void api.renderer.off("resize", onResize))

  const toast = (message: string, variant: TuiView.Toast["variant"] = "info") =>
    api.ui.toast({ message: TuiView.toastText(message, api.renderer.width), variant, duration: 5000 })

  const send = async (request: TuiBridge.Request, sent: Key) => {
    try {
      const res = await api.client.tui.publish({ body: { type: "tui.command.execute", properties: { command: TuiBridge.encode(request) } } })
      if (res.error) throw new Error(JSON.stringify(res.error))
      toast(t(lang, sent), "info")
    } catch (err) {
      toast(t(lang, "tui.sent.failed", { reason: err instanceof Error ? err.message : String(err) }), "error")
    }
  }

  // ── the dialog for what waits on the user ────────────────────────────────────────────────────────
  // The engine's dialogs are 60, 88 or 116 columns wide; the widest that fits the terminal is used.
  const dialogSize = (): "medium" | "large" | "xlarge" => (api.renderer.width >= 128 ? "xlarge" : api.renderer.width >= 96 ? "large" : "medium")
  const dialogWidth = () => Math.min(api.renderer.width - 2, { medium: 60, large: 88, xlarge: 116 }[dialogSize()])

  /** plan.md in the editor OpenCode itself uses ($VISUAL, then $EDITOR), with the terminal handed over meanwhile. */
  const openPlanInEditor = () => {
    const file = join(root, AirPaths.PLAN_FILE)
    const editor = process.env.VISUAL || process.env.EDITOR
    if (!editor) return toast(t(lang, "tui.plan.noEditor", { path: file }), "warning")
    api.renderer.suspend()
    try {
      // The TUI's own process hands its terminal to the editor, as OpenCode's prompt editor does; no runtime process is involved.
      const r = spawnSync(`${editor} "$AIRCODING_PLAN_FILE"`, { shell: true, stdio: "inherit", env: { ...process.env, AIRCODING_PLAN_FILE: file } })
      if (r.error || r.status) toast(t(lang, "tui.plan.editorFailed", { path: file, reason: r.error?.message ?? `exit ${r.status}` }), "error")
    } finally {
      api.renderer.resume()
    }
  }

  let shownKey: string | null = null
  let dialogOpen: string | null = null

  const closeOurDialog = () => {
    if (dialogOpen === null) return
    dialogOpen = null
    api.ui.dialog.clear()
  }

  const openAsk = (a: TuiView.Ask) => {
    shownKey = a.key
    dialogOpen = a.key
    const done = () => {
      dialogOpen = null
      api.ui.dialog.clear()
    }
    if (a.kind === "plan") {
      // The whole plan a person confirms (tasks, phases, dependencies, files, ADRs), a window of it at a time:
      // PgUp/PgDn scroll while the answer field keeps the focus; ctrl+e opens plan.md in the user's editor.
      const width = dialogWidth() - 8
      const all = [{ text: a.summary, tone: "normal" as const }, ...PlanView.lines(a.graph, PlanView.adrTitles(root), lang, width)]
      const body = all.flatMap((l) => TerminalText.wrap(l.text, width).map((text) => ({ text, tone: l.tone })))
      // What the terminal leaves once the engine's frame, the help and the answer field are placed: the answer
      // field stays on screen at 80×24 in Chinese too, whose help wraps to more rows.
      const helpRows = DialogLayout.wrappedRows([t(lang, "tui.plan.help"), t(lang, "tui.plan.keys")], DialogLayout.textWidth(dialogWidth()))
      const { rows, spacer } = DialogLayout.plan(api.renderer.height, helpRows)
      const [offset, setOffset] = createSignal(0)
      const scroll = (by: number) => setOffset((o) => Math.max(0, Math.min(o + by, Math.max(0, body.length - rows))))
      const keys = api.keymap.registerLayer({
        priority: 100,
        bindings: [
          { key: "pagedown", cmd: () => scroll(rows - 1) },
          { key: "pageup", cmd: () => scroll(-(rows - 1)) },
          { key: "ctrl+e", cmd: () => openPlanInEditor() },
        ],
      })
      const tone = (x: "normal" | "muted" | "accent") => (x === "muted" ? api.theme.current.textMuted : x === "accent" ? api.theme.current.accent : api.theme.current.text)
      api.ui.dialog.replace(
        () => (
          <api.ui.DialogPrompt
            title={t(lang, "tui.plan.title")}
            placeholder={t(lang, "tui.plan.placeholder")}
            description={() => (
              <box flexDirection="column">
                <For each={body.slice(offset(), offset() + rows)}>{(l) => <text fg={tone(l.tone)}>{l.text}</text>}</For>
                <Show when={body.length > offset() + rows}>
                  <text fg={api.theme.current.textMuted}>{tCount(lang, "tui.plan.more", body.length - offset() - rows)}</text>
                </Show>
                <Show when={spacer}>
                  <text> </text>
                </Show>
                <text wrapMode="word" fg={api.theme.current.textMuted}>
                  {t(lang, "tui.plan.help")}
                </text>
                <text fg={api.theme.current.textMuted}>{t(lang, "tui.plan.keys")}</text>
              </box>
            )}
            onConfirm={(value) => {
              keys()
              done()
              // Empty or a yes ("yes", "ok", "好", "确认" …) confirms; other words go to the Architect as changes.
              const answer = parsePlanAnswer(value)
              void (answer.kind === "change" ? send({ verb: "change", text: answer.text }, "tui.sent.revise") : send({ verb: "confirm" }, "tui.sent.confirm"))
            }}
            onCancel={() => {
              keys()
              done()
            }}
          />
        ),
        () => {
          keys()
          dialogOpen = null
        },
      )
    }
    else
      api.ui.dialog.replace(
        () => (
          <api.ui.DialogPrompt
            title={t(lang, "tui.question.title", { questionId: a.questionId })}
            placeholder={t(lang, "tui.question.placeholder")}
            description={() => <text wrapMode="word">{a.text}</text>}
            onConfirm={(value) => {
              done()
              if (value.trim()) void send({ verb: "answer", questionId: a.questionId, answer: value.trim() }, "tui.sent.answer")
            }}
            onCancel={done}
          />
        ),
        () => (dialogOpen = null),
      )
    api.ui.dialog.setSize(dialogSize())
  }

  /** A new proposal or question opens its dialog once; one answered elsewhere (in chat) closes it. */
  const syncAsk = () => {
    const a = TuiView.ask(state)
    if (!a) shownKey = null // the next proposal opens its dialog even if it reads like the last one
    if (dialogOpen !== null && dialogOpen !== a?.key) closeOurDialog()
    if (a && a.key !== shownKey && !api.ui.dialog.open) openAsk(a)
  }

  // ── following the run ───────────────────────────────────────────────────────────────────────────
  const refresh = () => {
    const added = follower.poll()
    // The language setting applies at once, even while the run is still (the first screen, a finished run).
    const langNow = languageNow()
    if (added === "reset") {
      follower = new RunData.Follower(root)
      follower.poll()
    } else if (!added.length) {
      if (langNow !== lang) {
        lang = langNow
        setView(runView(root, follower))
      } else if (RunView.moves(state, view())) setView(runView(root, follower)) // a gate's or a check's progress and a retry's time move without events
      return
    }
    const prev = state
    state = follower.state
    lang = languageNow()
    setView(runView(root, follower))
    for (const note of TuiView.toasts(prev, state, lang)) toast(note.message, note.variant)
  }
  const timer = setInterval(() => {
    try {
      refresh()
      // Every tick, not only on change: a proposal that arrived while another dialog was open opens once that one closes.
      syncAsk()
    } catch {
      // A half-written line or a file being replaced: the next tick reads it whole.
    }
  }, POLL_MS)
  api.lifecycle.onDispose(() => clearInterval(timer))
  // Chinese text behind a dialog stays readable (the engine's translucent backdrop blanks wide glyphs).
  api.lifecycle.onDispose(Backdrop.install(api.renderer))
  syncAsk()

  // ── the sidebar ─────────────────────────────────────────────────────────────────────────────────
  const colour = (tone: TuiView.Tone) => {
    const c = api.theme.current
    return { normal: c.text, muted: c.textMuted, success: c.success, warning: c.warning, error: c.error, accent: c.accent }[tone]
  }
  api.slots.register({
    slots: {
      // A reopened TUI starts on the home screen, which has no sidebar: where the run stands is said there.
      home_bottom: () => (
        <box flexDirection="column" alignItems="center" flexShrink={0}>
          {/* Wrapped here, to a width the home column always has: a line the renderer re-wraps itself (CJK above all) overlaps the next. */}
          <For each={TuiView.home(view(), lang, Math.min(64, size().width - 16), 12)}>
            {(line) => (
              <text fg={colour(line.tone)} wrapMode="none" flexShrink={0}>
                {line.text}
              </text>
            )}
          </For>
        </box>
      ),
      // Below SIDEBAR_MIN_WIDTH columns the engine shows no sidebar: the run's two lines take the app's bottom rows.
      app_bottom: () => (
        <Show when={size().width < SIDEBAR_MIN_WIDTH}>
          <box flexDirection="column" paddingLeft={2} paddingRight={2}>
            <For each={TuiView.compact(view(), lang, size().width - 4)}>
              {(line) => (
                <text fg={colour(line.tone)} wrapMode="none">
                  {line.text}
                </text>
              )}
            </For>
          </box>
        </Show>
      ),
      sidebar_content: () => {
        const sidebar = () => TuiView.sidebar(view(), lang)
        return (
          <box flexDirection="column">
            <text fg={colour(sidebar().heading.tone)}>{sidebar().heading.text}</text>
            <For each={sidebar().tasks}>{(line) => <text fg={colour(line.tone)}>{line.text}</text>}</For>
            <Show when={sidebar().deploy.length > 0}>
              <text fg={api.theme.current.textMuted}>{sidebar().deployHeading}</text>
              <For each={sidebar().deploy}>{(line) => <text fg={colour(line.tone)}>{line.text}</text>}</For>
            </Show>
            <Show when={sidebar().waiting.length > 0}>
              <Show when={sidebar().waitingHeading}>
                <text fg={api.theme.current.textMuted}>{sidebar().waitingHeading}</text>
              </Show>
              <For each={sidebar().waiting}>{(line) => <text wrapMode="word">{"· " + line.text}</text>}</For>
            </Show>
          </box>
        )
      },
    },
  })

  // ── commands: they act at once, in code, whatever the model is doing ──────────────────────────
  // The run view refreshes while it is open (each poll, and every second for elapsed times) and fits the dialog's width;
  // a run longer than the terminal shows a window of it that PgUp/PgDn and the arrows move (Enter or Esc closes it).
  const showStatus = () => {
    const read = () => statusText(root, lang, undefined, dialogWidth() - 4).replace(/\n+$/, "").split("\n")
    const [lines, setLines] = createSignal(read())
    const [offset, setOffset] = createSignal(0)
    const rows = () => Math.max(3, api.renderer.height - 12)
    const scroll = (by: number) => {
      setOffset((o) => Math.max(0, Math.min(o + by, Math.max(0, lines().length - rows()))))
    }
    const tick = setInterval(() => {
      setLines(read())
      scroll(0)
    }, POLL_MS)
    const keys = api.keymap.registerLayer({
      priority: 100,
      bindings: [
        { key: "pagedown", cmd: () => scroll(rows() - 1) },
        { key: "pageup", cmd: () => scroll(-(rows() - 1)) },
        { key: "down", cmd: () => scroll(1) },
        { key: "up", cmd: () => scroll(-1) },
      ],
    })
    const close = () => {
      clearInterval(tick)
      keys()
    }
    const shown = () => {
      const all = lines()
      const from = offset()
      const window = all.slice(from, from + rows())
      const below = all.length - from - window.length
      return [...window, ...(below > 0 ? [tCount(lang, "tui.plan.more", below)] : [])].join("\n")
    }
    api.ui.dialog.replace(
      () => (
        <api.ui.DialogAlert
          title={t(lang, "tui.status.title")}
          message={shown()}
          onConfirm={() => {
            close()
            api.ui.dialog.clear()
          }}
        />
      ),
      close,
    )
    api.ui.dialog.setSize(dialogSize())
  }
  const askChange = () => {
    api.ui.dialog.replace(() => (
      <api.ui.DialogPrompt
        title={t(lang, "tui.change.title")}
        placeholder={t(lang, "tui.change.placeholder")}
        onConfirm={(value) => {
          api.ui.dialog.clear()
          if (value.trim()) void send({ verb: "change", text: value.trim() }, state.stage === "confirming" ? "tui.sent.revise" : "tui.sent.change")
        }}
        onCancel={() => api.ui.dialog.clear()}
      />
    ))
  }
  const answerNow = () => {
    const a = TuiView.ask(state)
    if (a) openAsk(a)
    else toast(t(lang, "tui.nothing.ask"))
  }
  const command = (name: string, title: Key, slash: string, run: () => void) => ({
    namespace: "palette",
    name: `aircoding.${name}`,
    title: t(lang, title),
    category: "AirCoding",
    slashName: slash,
    run: () => {
      run()
      return true
    },
  })
  const unregister = api.keymap.registerLayer({
    commands: [
      command("status", "tui.cmd.status", "air-status", showStatus),
      command("pause", "tui.cmd.pause", "air-pause", () => void send({ verb: "pause" }, "tui.sent.pause")),
      command("resume", "tui.cmd.resume", "air-resume", () => void send({ verb: "resume" }, "tui.sent.resume")),
      command("change", "tui.cmd.change", "air-change", askChange),
      command("answer", "tui.cmd.plan", "air-answer", answerNow),
    ],
  })
  api.lifecycle.onDispose(unregister)
}

const plugin: TuiPluginModule & { id: string } = { id: "aircoding-tui", tui }
export default plugin

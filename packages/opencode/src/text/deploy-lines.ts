import type { SchedulerState } from "../scheduler/core/state"
import { t, tOr, type Lang } from "./words"

/**
 * Per deploy target, what status, the summary, the end-of-run text, the TUI sidebar and the dashboard
 * show: deployed commit, hash match, service state, smoke result, rolled back or not (and the phase, for
 * the deploy of a phase the plan marks deployable).
 */
export namespace DeployLines {
  export type Target = {
    target: string
    n: number
    /** The phase this deploy carries (a deployable phase); null: the run's own deploy at its end. */
    phase?: number | null
    status: "running" | "passed" | "failed" | "asked"
    commit: string | null
    cause: string | null
    hashMatch: boolean | null
    service: string | null
    smoke: string | null
    rolledBack: boolean
    evidencePath: string | null
  }

  export function of(state: SchedulerState): Target[] {
    const phase = state.deploy?.phase ?? null
    return (state.deploy?.targets ?? []).map((d) => ({
      target: d.name,
      n: d.n,
      phase,
      status: d.status,
      commit: d.commit,
      cause: d.cause,
      hashMatch: d.hashMatch,
      service: d.service,
      smoke: d.smoke,
      rolledBack: d.rolledBack,
      evidencePath: d.evidencePath,
    }))
  }

  /** Each field of a target in words ("—" for what is not known yet). */
  export function words(lang: Lang, d: Target) {
    const none = t(lang, "deploy.unknown")
    return {
      status: t(lang, `deploy.status.${d.status}`, { cause: d.cause ? tOr(lang, `deploy.cause.${d.cause}`, d.cause) : none }),
      commit: d.commit ? d.commit.slice(0, 12) : none,
      hash: d.hashMatch === null ? none : t(lang, d.hashMatch ? "deploy.hash.match" : "deploy.hash.mismatch"),
      // The service state is what the target's status command said; its one usual word is ours.
      service: d.service === null ? none : d.service === "active" ? t(lang, "deploy.service.active") : d.service,
      smoke: d.smoke === null ? none : tOr(lang, `deploy.smoke.${d.smoke}`, d.smoke),
    }
  }

  export function text(lang: Lang, d: Target): string {
    return t(lang, "deploy.line", { target: d.target, n: d.n, ...words(lang, d), rolled: d.rolledBack ? t(lang, "deploy.rolledBack") : "" })
  }

  export function heading(lang: Lang, targets: readonly Target[]): string {
    const phase = targets[0]?.phase
    return phase !== null && phase !== undefined ? t(lang, "deploy.heading.phase", { phase }) : t(lang, "deploy.heading")
  }

  /** The lines under a heading, or nothing when the run deployed nothing. */
  export function section(lang: Lang, targets: readonly Target[] | undefined): string[] {
    if (!targets?.length) return []
    return [heading(lang, targets), ...targets.map((d) => `  ${text(lang, d)}`)]
  }

  /** For a narrow column (the TUI sidebar): the target and its status; commit and hashes; smoke and rollback; the service state (the longest, last). */
  export function compact(lang: Lang, d: Target): [string, string, string, string] {
    const w = words(lang, d)
    return [
      `${d.target} #${d.n} ${w.status}`,
      `  ${t(lang, "tui.deploy.detail", { commit: w.commit, hash: w.hash })}`,
      `  ${t(lang, "tui.deploy.smoke", { smoke: w.smoke, rolled: d.rolledBack ? t(lang, "tui.deploy.rolledBack") : "" })}`,
      `  ${t(lang, "tui.deploy.service", { service: w.service })}`,
    ]
  }
}

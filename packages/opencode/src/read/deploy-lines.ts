import type { SchedulerState } from "../scheduler/core/state"
import { t, type Lang } from "./words"

/** Per deploy target, what status, the summary and the end-of-run text show: commit, hash match, service, smoke, rollback. */
export namespace DeployLines {
  export type Target = {
    target: string
    n: number
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
    return (state.deploy?.targets ?? []).map((d) => ({
      target: d.name,
      n: d.n,
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

  export function text(lang: Lang, d: Target): string {
    const none = t(lang, "deploy.unknown")
    return t(lang, "deploy.line", {
      target: d.target,
      n: d.n,
      status: t(lang, `deploy.status.${d.status}`, { cause: d.cause ?? none }),
      commit: d.commit ? d.commit.slice(0, 12) : none,
      hash: d.hashMatch === null ? none : t(lang, d.hashMatch ? "deploy.hash.match" : "deploy.hash.mismatch"),
      service: d.service ?? none,
      smoke: d.smoke ?? none,
      rolled: d.rolledBack ? t(lang, "deploy.rolledBack") : "",
    })
  }

  /** The lines under a heading, or nothing when the run deployed nothing. */
  export function section(lang: Lang, targets: readonly Target[] | undefined): string[] {
    if (!targets?.length) return []
    return [t(lang, "deploy.heading"), ...targets.map((d) => `  ${text(lang, d)}`)]
  }
}

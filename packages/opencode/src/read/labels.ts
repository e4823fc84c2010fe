import { gateLabel as gateWord } from "./gate-words"
import { t, tOr, type Key, type Lang } from "../text/words"

/** The names people read for a task's state, a role and a gate, in the view's language; the status, the events and the TUI share them. */
export namespace Labels {
  export function state(lang: Lang, state: string): string {
    return t(lang, `state.${state}` as Key) || state
  }

  export function role(lang: Lang, role: string): string {
    return tOr(lang, `role.${role}`, role)
  }

  /** A gate's name for people ("analysis" is cppcheck), in the view's language. */
  export function gate(gate: string, lang: Lang = "en"): string {
    return gateWord(lang, gate)
  }
}

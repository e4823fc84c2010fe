import { HouseRules } from "./rules"

/**
 * `aircoding doctor`'s line for the house rules: what they say (the logging library, what is forbidden, what is
 * exempt), or why they cannot be read. No file, no line, as with the deploy targets (init writes the file).
 */
export namespace HouseDoctor {
  export type Check = { name: string; ok: boolean; detail: string; fix?: string }

  const NAME = "house rules"

  export function checks(root: string): Check[] {
    let rules: HouseRules.Loaded | undefined
    try {
      rules = HouseRules.load(root)
    } catch (err) {
      if (!(err instanceof HouseRules.Invalid)) throw err
      return [{ name: NAME, ok: false, detail: err.message.replace(/\. Fix the file.*$/, ""), fix: `fix ${HouseRules.RULES_PATH} (see "House rules" in the README), run aircoding init --redetect, or delete it` }]
    }
    if (!rules) return []
    const b = rules.file.boundaries
    const boundaries = rules.boundaries
      ? `boundary tests: a new module or a changed public interface (${(b?.publicInterface ?? HouseRules.DEFAULT_PUBLIC_INTERFACE).join(", ")}) needs its tests${rules.boundaries.modules ? "" : " (new modules not judged)"}${rules.boundaries.doneWhenTests ? "; every code task's doneWhen includes its tests passing" : ""}`
      : "boundary tests: only public headers under include/ (boundaries.enabled is false)"
    const rule = rules.logging
    if (!rule) return [{ name: NAME, ok: true, detail: `logging rule turned off (logging.enabled is false or absent); ${boundaries}` }]
    const parts = [
      `logging through ${rule.library}${rule.calls.length ? ` (${rule.calls.join(", ")})` : ""}`,
      rule.forbidden.length ? `new code may not use ${rule.forbidden.map((c) => c.call).join(", ")}` : "no channel forbidden",
      `exempt: ${rule.exempt.join(", ") || "nothing"}`,
      rule.integrationFirst ? `a plan integrates ${rule.library} first while the project lacks it${rule.allowNetwork ? " (network allowed)" : " (offline: find_package)"}` : "no integration task required",
      boundaries,
      ...rules.warnings.map((w) => `warning: ${w}`),
    ]
    return [{ name: NAME, ok: true, detail: parts.join("; ") }]
  }
}

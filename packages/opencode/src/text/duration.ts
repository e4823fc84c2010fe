/** "45s", "1m15s", "2h05m": a duration for people (the views' one format; run-report.ts uses it without the view). */
export function durationText(ms: number | null): string {
  if (ms === null) return "—"
  const s = Math.round(ms / 1000)
  if (s < 60) return `${s}s`
  const m = Math.floor(s / 60)
  if (m < 60) return `${m}m${String(s % 60).padStart(2, "0")}s`
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`
}

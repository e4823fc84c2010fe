import { describe, expect, it } from "vitest"
import { findBun, runCrashLoop } from "./crash-harness"

const bun = findBun()
// 80 in the suite; the soak stage (`bun run soak`, run by CI after the suite) kills 300 times.
const kills = Number(process.env.AIR_CRASH_KILLS ?? 80)

describe("the store under SIGKILL", () => {
  if (!bun) console.warn("crash test skipped: no bun on PATH (set BUN_BIN); CI has bun")
  it.skipIf(!bun)(
    `survives ${kills} kills at random moments: each time the state loads and equals the fold of the surviving events`,
    async () => {
      const report = await runCrashLoop({ kills, bun: bun!, lanes: 4 })
      console.log(`crash test: ${JSON.stringify(report)}`)
      expect(report.failures).toEqual([])
      expect(report.kills).toBeGreaterThanOrEqual(kills)
      expect(report.tornTails).toBeGreaterThan(0)
    },
    600_000,
  )
})

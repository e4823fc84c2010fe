import { readFile } from "node:fs/promises"
import { join } from "node:path"
import type { EventOf } from "../../core/event.schema.ts"
import { Farm } from "../toolchain/farm.ts"
import { FARM_FILE } from "./build.ts"

/**
 * The `farm.degraded` event of a gate run whose build lost farm hosts (its farm.json names failed hosts), or
 * nothing: no farm, no build, or every host answered. `attemptDir` is the gate run's evidence folder.
 */
export async function farmDegradedEvent(taskId: string | undefined, attemptDir: string): Promise<Omit<EventOf<"farm.degraded">, "at"> | undefined> {
  const file = join(attemptDir, FARM_FILE)
  const text = await readFile(file, "utf8").catch(() => undefined)
  if (text === undefined) return undefined
  const seen = Farm.Seen.safeParse(JSON.parse(text))
  if (!seen.success || seen.data.failedHosts.length === 0) return undefined
  return { type: "farm.degraded", ...(taskId ? { taskId } : {}), hosts: seen.data.failedHosts, localFallbacks: seen.data.localFallbacks, evidencePath: file }
}

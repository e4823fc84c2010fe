import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { leftovers } from "../verify/ui-programs"
import { markedProcesses } from "../verify/line-service"
import { ServiceProbe } from "../../src/scheduler/runtime/verify/service-probe"
import { projectPrograms } from "./service-project"

/**
 * What a run's captures and probes may leave behind (issue 37 item 6), read from /proc (Linux): the processes
 * of a run taken at a moment, and the check, after the run is gone, that none of them and nothing marked as a
 * capture's or a probe's of the project is still alive.
 */
export type Seen = { pid: number; start: string; command: string; environ: string }

function read(pid: string): (Seen & { ppid: number; zombie: boolean }) | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    // After the command's closing parenthesis: state, ppid, …; the start time is field 22 (19th after it).
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return {
      pid: Number(pid),
      ppid: Number(fields[1]),
      zombie: fields[0] === "Z",
      start: fields[19]!,
      command: readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ").trim(),
      environ: readFileSync(`/proc/${pid}/environ`, "utf8"),
    }
  } catch {
    return undefined
  }
}

/** The live processes below `pid` (its children, theirs, …, across the sandboxes' PID namespaces), not `pid` itself. */
export function descendants(pid: number): Seen[] {
  const all = readdirSync("/proc").filter((d) => /^\d+$/.test(d)).flatMap((d) => read(d) ?? [])
  const below = new Set([pid])
  const found: Seen[] = []
  // Parents first is not the order of /proc: repeat until a pass adds none.
  for (let added = true; added; ) {
    added = false
    for (const p of all) {
      if (p.zombie || below.has(p.pid) || !below.has(p.ppid)) continue
      below.add(p.pid)
      found.push({ pid: p.pid, start: p.start, command: p.command, environ: p.environ })
      added = true
    }
  }
  return found
}

/** Of `seen`, those alive after `boundMs` (the same pid with the same start time, not a zombie: a reused pid is another process). */
export async function stillAlive(seen: readonly Seen[], boundMs = 10_000): Promise<string[]> {
  const end = Date.now() + boundMs
  for (;;) {
    const alive = seen.filter((s) => {
      const now = read(String(s.pid))
      return now !== undefined && !now.zombie && now.start === s.start
    })
    if (alive.length === 0 || Date.now() >= end) return alive.map((s) => `${s.pid}: ${s.command}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** The probe markers (`AIRCODING_SERVICE_PROBE=<run id>`) the processes in `seen` carry. */
function probeRuns(seen: readonly Seen[]): string[] {
  const prefix = `${ServiceProbe.MARKER_ENV}=`
  return [...new Set(seen.flatMap((s) => s.environ.split("\0").filter((v) => v.startsWith(prefix)).map((v) => v.slice(prefix.length))))]
}

/**
 * Everything left of a run: the processes seen in it still alive, any process a ui capture of the project marked
 * (AIR_UI_CAPTURE=<its evidence dir>) or a probe seen marked, and any program built in the project still running.
 */
export async function leftBehind(project: string, seen: readonly Seen[]): Promise<string[]> {
  const alive = await stillAlive(seen)
  const captures = await leftovers(join(project, ".air", "local", "evidence"))
  const probes = probeRuns(seen).flatMap((run) => markedProcesses(run).map((p) => `${p.pid}: ${p.command}`))
  return [...new Set([...alive, ...captures, ...probes, ...projectPrograms(project)])]
}

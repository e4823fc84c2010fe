import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ServiceProbe } from "../../src/scheduler/runtime/verify/service-probe"

/**
 * A worktree holding the line service (line-service.cpp) built with the real g++ at `build/line-service`,
 * as a service task's build would; `spec` makes a probe spec for it (`nc -N` sending PING by default).
 */
export type LineServiceWorktree = {
  dir: string
  worktree: string
  /** A fresh evidence directory. */
  outDir(name: string): string
  spec(service: string[], more?: Partial<ServiceProbe.SpecInput>): ServiceProbe.SpecInput
  cleanup(): void
}

export function makeLineServiceWorktree(): LineServiceWorktree {
  const dir = mkdtempSync(join(tmpdir(), "air-probe-"))
  const worktree = join(dir, "worktree")
  mkdirSync(join(worktree, "build"), { recursive: true })
  execFileSync("g++", ["-O1", "-o", join(worktree, "build", "line-service"), join(import.meta.dirname, "line-service.cpp")], { stdio: "pipe" })
  return {
    dir,
    worktree,
    outDir: (name) => join(dir, "evidence", name),
    spec: (service, more = {}) => ({
      service: { command: "build/line-service", args: service },
      ports: [7000],
      probe: { command: "nc", args: ["-N", "127.0.0.1", "7000"], input: "PING\n", expect: { contains: "PONG" } },
      ...more,
    }),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  }
}

/** Processes whose environment carries the probe's marker for `runId`: what a run left behind. */
export function markedProcesses(runId: string): { pid: number; command: string }[] {
  const needle = `${ServiceProbe.MARKER_ENV}=${runId}\0`
  const out: { pid: number; command: string }[] = []
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const environ = readFileSync(`/proc/${entry}/environ`, "utf8") + "\0"
      if (!environ.includes(needle)) continue
      if (/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${entry}/stat`, "utf8"))) continue
      out.push({ pid: Number(entry), command: readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0/g, " ").trim() })
    } catch {
      // gone meanwhile
    }
  }
  return out
}

import { mkdirSync, readdirSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { runOnce } from "../../scripts/kill-loop"
import { writeScenario } from "../support/engine"
import { descendants, leftBehind, type Seen } from "../support/program-processes"
import { passingReviewer, planningArchitect, readJsonl, shellStep, trivialProject } from "../support/runs"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { serviceField, serviceProjectFiles } from "../support/service-project"
import { APP_COMMAND, CENTRE, hex, NEW_COLOUR, OLD_COLOUR, TITLE, uiProjectFiles } from "../support/ui-project"

/**
 * Issue 37 item 6: no Xvfb, tcpdump or program left behind after a SIGKILL of `aircoding run` and `--resume`. A
 * one-task run on the ui e2e project (real cmake, g++, Xvfb, bwrap) and one on the line service (tcpdump, nc, a
 * network namespace) is killed while its capture runs — its processes seen up in /proc, not guessed from a
 * delay — first as a process group (a CI timeout), then, resumed, the aircoding process alone (`kill -9 <pid>`).
 * After each kill nothing the run started is alive; resumed once more, the task merges, exit 0, nothing left.
 */
type Case = { name: string; files: Record<string, string>; task: Record<string, unknown>; change: string; up: (seen: Seen[]) => boolean }

/**
 * Whether a process of `program` was seen: by its first word (a path ending in it, or its name), since the
 * sandbox's own command line names every program it will start.
 */
const runs = (seen: Seen[], program: string, args = "") =>
  seen.some((s) => {
    const argv0 = s.command.split(" ")[0]!
    return (argv0 === program || argv0.endsWith(`/${program}`)) && s.command.includes(args)
  })

const UI: Case = {
  name: "ui",
  files: uiProjectFiles(),
  // settleMs: the window stays up a second before its screenshot, so the kill lands with every process up.
  task: { kind: "ui", writeSet: [{ path: "src/colour.h", action: "modify" }], doneWhen: `the window is ${NEW_COLOUR}`, ui: { command: APP_COMMAND, settleMs: 1000, checks: { title: TITLE, pixels: [{ ...CENTRE, rgb: NEW_COLOUR }] } } },
  change: `sed -i 's/${hex(OLD_COLOUR)}/${hex(NEW_COLOUR)}/' src/colour.h`,
  up: (seen) => runs(seen, "Xvfb") && runs(seen, APP_COMMAND),
}

const SERVICE: Case = {
  name: "service",
  files: serviceProjectFiles(),
  // The probe waits a second before it talks: the kill lands with the service, tcpdump and the probe up.
  task: {
    kind: "service",
    writeSet: [{ path: "src/reply.h", action: "modify" }],
    doneWhen: "the service answers PONG v2",
    service: { ...serviceField("PONG v2"), probe: { command: "sh", args: ["-c", "sleep 1 && exec nc -N 127.0.0.1 7000"], input: "PING\n", expect: { contains: "PONG v2" } } },
  },
  change: "sed -i 's/PONG v1/PONG v2/' src/reply.h",
  up: (seen) => runs(seen, ".air-build/server") && runs(seen, "tcpdump") && (runs(seen, "sh", "sleep 1 && exec nc") || runs(seen, "nc")),
}

type Killed = { run: Awaited<ReturnType<typeof runOnce>>; seen: Seen[]; left: string[]; gatesEnded: number }
type Outcome = { group: Killed; alone: Killed; final: Awaited<ReturnType<typeof runOnce>>; left: string[]; workDirs: string[]; events: any[] }

const sandboxes: Sandbox[] = []
afterAll(() => sandboxes.forEach((s) => s.cleanup()))

async function killTwiceAndResume(c: Case): Promise<Outcome> {
  const sandbox = makeSandbox(`air-program-kill-${c.name}-`)
  sandboxes.push(sandbox)
  // The captures' work dirs (display sockets) go here, where the test can see that none is left.
  const tmp = join(sandbox.root, "tmp")
  mkdirSync(tmp)
  sandbox.env.TMPDIR = tmp
  const requirement = `Change the ${c.name} program.`
  const project = trivialProject(sandbox, c.files, {}, c.name)
  const scenario = writeScenario(sandbox, {
    name: `program-kill-${c.name}`,
    scripts: [
      { agent: "main", match: "^Resume the AirCoding run", steps: [{ tool: "air_listen", args: {}, until: "RUN ENDED" }, { text: "Resumed to the end." }] },
      { agent: "main", steps: [{ tool: "air_submit", args: { requirement } }, { tool: "air_listen", args: {}, until: "RUN ENDED" }, { text: "Done." }] },
      planningArchitect("One task.", [{ id: "T-1", title: requirement, ...c.task }]),
      // Idempotent: a session started again after a kill finds its change committed.
      { agent: "executor", match: "^Task T-1:", steps: [shellStep(`${c.change} && git add -A && (git diff --cached --quiet || git commit -qm change)`), { tool: "air_report", args: { summary: "Changed." } }, { text: "Reported." }] },
      passingReviewer,
    ],
  })
  const args = (resume: boolean) => ["run", project, "--yes", "--json", "--scripted", scenario, ...(resume ? ["--resume"] : [])]
  const events = () => readJsonl(join(project, ".air/local/state/events.jsonl"))
  const killMidCapture = async (resume: boolean, killProcessOnly: boolean): Promise<Killed> => {
    let seen: Seen[] = []
    const ready = (pid: number) => c.up((seen = descendants(pid)))
    const run = await runOnce(sandbox, project, args(resume), resume ? null : requirement, 0, 600_000, { kind: "when", ready }, 480_000, { killProcessOnly })
    const gatesEnded = events().filter((e) => (e.type === "gates.passed" || e.type === "gates.failed") && e.taskId === "T-1").length
    return { run, seen, left: await leftBehind(project, seen), gatesEnded }
  }
  const group = await killMidCapture(false, false)
  const alone = await killMidCapture(true, true)
  const final = await runOnce(sandbox, project, args(true), null, null, 600_000)
  return { group, alone, final, left: await leftBehind(project, [...group.seen, ...alone.seen]), workDirs: readdirSync(tmp).filter((n) => n.startsWith("air-x-")), events: events() }
}

for (const c of [UI, SERVICE]) {
  describe(`SIGKILL of aircoding run mid-${c.name === "ui" ? "capture" : "probe"}, and of its --resume`, () => {
    let o: Outcome
    beforeAll(async () => {
      const started = Date.now()
      o = await killTwiceAndResume(c)
      const names = (seen: Seen[]) => seen.map((s) => s.command.split(" ")[0]!.split("/").at(-1)).join(" ")
      console.log(`program-kill ${c.name}: ${((Date.now() - started) / 1000).toFixed(1)} s; processes at the group kill: ${names(o.group.seen)}; at the kill alone: ${names(o.alone.seen)}`)
    }, 1_500_000)

    for (const which of ["group", "alone"] as const) {
      test(`killed ${which === "group" ? "as a process group" : "alone (its pid only)"} mid-${c.name === "ui" ? "capture" : "probe"}: nothing it started is left`, () => {
        const k = o[which]
        expect(k.run.killed, k.run.stderr.slice(-2000)).toBe(true)
        // The kill landed while the gate ran, with the capture's processes up (and the sandboxes holding them).
        expect(c.up(k.seen), k.seen.map((s) => s.command).join("\n")).toBe(true)
        expect(runs(k.seen, "bwrap")).toBe(true)
        expect(k.gatesEnded).toBe(0)
        expect(k.run.survivors).toEqual([])
        expect(k.left).toEqual([])
      })
    }

    test("resumed to the end: the task merges once, exit 0, and nothing is left", () => {
      expect(o.final.killed).toBe(false)
      expect(o.final.code, o.final.stderr.slice(-3000)).toBe(0)
      expect(JSON.parse(o.final.stdout).status).toBe("done")
      expect(o.events.filter((e) => e.type === "merge.succeeded").map((e) => e.taskId)).toEqual(["T-1"])
      expect(o.final.survivors).toEqual([])
      expect(o.left).toEqual([])
      // The killed captures' display dirs were swept by the next capture; the last one removed its own.
      expect(o.workDirs).toEqual([])
    })
  })
}

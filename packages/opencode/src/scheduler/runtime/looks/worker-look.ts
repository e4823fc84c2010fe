import { mkdir, readdir } from "node:fs/promises"
import path from "node:path"
import { z } from "zod"
import { Looks } from "../../../agent/looks"
import type { TaskNode } from "../../core/task.schema"
import { buildGate } from "../gates/build.ts"
import { runGates } from "../gates/pipeline.ts"
import { TOOL_MISSING } from "../gates/schema.ts"
import { ServiceProbe } from "../verify/service-probe.ts"
import { UiCapture } from "../verify/ui-capture.ts"
import { LookText } from "./look-text"

/**
 * A worker's look at its task's program (issue 37, item 4): the worktree built with the toolchain's build commands
 * through the build gate itself (the same commands, sandbox, job budget and compiler cache as the gates' build), then
 * the capture or the probe the ui-capture / service-probe gate runs, with the task's own `ui` / `service` field. The
 * evidence goes under the task's evidence directory (`looks/<n>-<tool>/`), outside the worktree the program could
 * write. The verdict comes back as text and as the exit code a look is recorded with (Looks.EXIT); a look that
 * could not judge (a missing tool, no display, stopped) has none.
 */
export namespace WorkerLook {
  /** What a look may point at instead of the task's own program: a look at something else, never the task's verdict. */
  export const Override = z
    .object({
      command: z.string().min(1).max(4096).optional(),
      args: z.array(z.string().max(4096)).max(256).optional(),
      /** air_probe only: what the probe writes to the service. */
      input: z.string().max(65_536).optional(),
    })
    .strict()
  export type Override = z.infer<typeof Override>

  export type Input = {
    root: string
    task: TaskNode
    worktree: string
    /** The task's evidence directory (`.air/local/evidence/<task>`). */
    evidenceDir: string
    /** The integration branch the task branched from. */
    base: string
    override?: Override
    signal?: AbortSignal
    env?: NodeJS.ProcessEnv
  }

  export type Result = { text: string; exit?: number; outDir: string }

  export async function look(tool: Looks.Tool, input: Input): Promise<Result> {
    const { field } = Looks.TOOLS[tool]
    const { task } = input
    const raw = task[field]
    if (task.kind !== field || raw === undefined)
      throw new Error(
        `${tool} looks at a ${field} task's program, and task ${task.id} is a ${task.kind} task${task.kind === field ? ` without its ${field} field` : ""}: nothing to ${tool === "air_capture" ? "capture" : "probe"}. ` +
          `Check your work with the build and the tests instead.`,
      )
    const override = parse(Override, input.override ?? {}, tool, "its arguments are not valid")
    if (tool === "air_capture" && override.input !== undefined) throw new Error("air_capture takes no input: only air_probe writes to a program")
    const outDir = await nextDir(path.join(input.evidenceDir, "looks"), tool)
    const built = await build(input, outDir)
    if (built) return { ...built, outDir }
    const env = input.env ?? process.env
    const signal = input.signal ? { signal: input.signal } : {}
    if (tool === "air_capture") {
      const spec = parse(UiCapture.Spec, { ...(raw as object), ...pick(override, ["command", "args"]) }, tool)
      const result = await UiCapture.capture(spec, { worktree: input.worktree, outDir, project: input.root, env, ...signal })
      return { ...LookText.capture(task.id, result, override), outDir }
    }
    const rawSpec = raw as { probe?: object }
    const spec = parse(ServiceProbe.Spec, { ...rawSpec, probe: { ...rawSpec.probe, ...pick(override, ["command", "args", "input"]) } }, tool)
    const ready = ServiceProbe.readiness(env)
    if (!ready.ok) return { text: `${tool}: the service probe cannot run here: ${ready.message}${ready.install ? `. Install: ${ready.install}` : ""}. There is no verdict on the service.`, outDir }
    const result = await ServiceProbe.run(spec, { worktree: input.worktree, outDir, env, ...signal })
    return { ...LookText.probe(task.id, result, override), outDir }
  }

  /** The worktree built by the build gate: undefined when it passed, else the look's answer (no capture). */
  async function build(input: Input, outDir: string): Promise<Omit<Result, "outDir"> | undefined> {
    const report = await runGates({
      root: input.root,
      worktree: input.worktree,
      taskId: input.task.id,
      base: input.base,
      kind: input.task.kind,
      attempt: 0,
      evidenceDir: outDir,
      gates: [buildGate],
      requires: [],
      ...(input.signal ? { signal: input.signal } : {}),
      ...(input.env ? { env: input.env } : {}),
    })
    if (report.passed) return undefined
    const judged = report.failedGate !== TOOL_MISSING
    return {
      text: `The build failed, so nothing was started (no look at the program):\n${report.message}`,
      ...(judged ? { exit: Looks.EXIT.buildFailed } : {}),
    }
  }

  function parse<S extends z.ZodType>(schema: S, value: unknown, tool: string, what = "the program to look at is not valid"): z.output<S> {
    const parsed = schema.safeParse(value)
    if (parsed.success) return parsed.data
    throw new Error(`${tool}: ${what}: ${parsed.error.issues.map((i) => `${i.path.join(".") || "(spec)"}: ${i.message}`).join("; ")}`)
  }

  function pick(override: Override, keys: readonly (keyof Override)[]): Partial<Override> {
    return Object.fromEntries(keys.filter((k) => override[k] !== undefined).map((k) => [k, override[k]]))
  }

  /** `looks/<n>-<tool>`, n one more than the looks already there: every look keeps its own evidence. */
  async function nextDir(dir: string, tool: string): Promise<string> {
    await mkdir(dir, { recursive: true })
    const taken = (await readdir(dir)).map((name) => Number.parseInt(name, 10)).filter(Number.isFinite)
    for (let n = Math.max(0, ...taken) + 1; ; n++) {
      const candidate = path.join(dir, `${n}-${tool}`)
      try {
        await mkdir(candidate)
        return candidate
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err
      }
    }
  }
}

import { z } from "zod"
import type { Exec } from "./gate.ts"

/**
 * Where a gate's seconds go, kept in its evidence (`<gate>-steps.json`): each step's time, and for every command
 * it ran the time spent waiting before the process started (the run's job budget, the sandbox's start) apart from
 * the process's own. A gate whose commands take 0.1 s but which takes 12 s says here which step took the rest.
 */
export namespace StepTimes {
  export const Command = z.object({ command: z.string(), ms: z.number(), runMs: z.number() })
  export const Step = z.object({ step: z.string(), ms: z.number(), commands: z.array(Command) })
  export const File = z.object({ gate: z.string(), ms: z.number(), steps: z.array(Step) })
  export type File = z.infer<typeof File>

  export const fileName = (gate: string) => `${gate}-steps.json`

  export class Recorder {
    private readonly steps: z.infer<typeof Step>[] = []
    private current: z.infer<typeof Step> | undefined
    private readonly started = Date.now()

    constructor(readonly gate: string) {}

    /** Runs `fn` as the step `name`; steps may not nest (a nested one is counted in its outer step). */
    async step<T>(name: string, fn: () => Promise<T>): Promise<T> {
      if (this.current) return fn()
      const step = { step: name, ms: 0, commands: [] as z.infer<typeof Command>[] }
      this.current = step
      const at = Date.now()
      try {
        return await fn()
      } finally {
        step.ms = Date.now() - at
        this.current = undefined
        this.steps.push(step)
      }
    }

    /** `exec` with each call's time, and the process's own (`Proc.Result.ms`), put under the current step. */
    exec(inner: Exec): Exec {
      return async (command, args, options) => {
        const at = Date.now()
        const result = await inner(command, args, options)
        this.current?.commands.push({ command: [command, ...args].join(" ").slice(0, 200), ms: Date.now() - at, runMs: result.ms })
        return result
      }
    }

    toJSON(): File {
      return { gate: this.gate, ms: Date.now() - this.started, steps: this.steps }
    }
  }
}

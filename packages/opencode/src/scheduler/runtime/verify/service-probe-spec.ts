import { isAbsolute, normalize } from "node:path"
import { z } from "zod"
import { CaptureSummary } from "./capture-summary"

/** Inside the worktree: relative, and never climbing out of it. */
const InsideWorktree = z
  .string()
  .min(1)
  .refine((p) => !isAbsolute(p) && !normalize(p).split(/[\\/]/).includes(".."), "a path relative to the worktree that stays inside it (no leading / and no ..)")

const Command = {
  /** A program: a path with a slash is relative to `cwd` (the build's `build/server`); a bare name is looked up on PATH. */
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  /** Added to the sandbox's reduced environment. */
  env: z.record(z.string(), z.string()).default({}),
  cwd: InsideWorktree.default("."),
}

const validRegex = (source: string) => {
  try {
    new RegExp(source)
    return true
  } catch {
    return false
  }
}

/**
 * How a service task's program is started and checked (issue 37 item 1's `service` kind): what the plan
 * holds, read at a boundary, so every field is checked here.
 */
export const ServiceProbeSpec = z
  .object({
    /** How to start the service from the task's build. */
    service: z.object(Command).strict(),
    /** The TCP port(s) it must listen on inside its namespace. */
    ports: z.array(z.number().int().min(1).max(65535)).min(1),
    /** How long it may take to listen on every port. */
    listenTimeoutS: z.number().positive().max(600).default(10),
    probe: z
      .object({
        ...Command,
        /** Written to the probe's stdin, which is then closed (`PING\n` for `nc -N 127.0.0.1 7000`). */
        input: z.string().optional(),
        timeoutS: z.number().positive().max(600).default(5),
        expect: z
          .object({
            /** The probe's output (stdout and stderr) must contain this text… */
            contains: z.string().min(1).optional(),
            /** …and/or match this regular expression (JavaScript syntax). */
            matches: z.string().min(1).refine(validRegex, "a valid regular expression").optional(),
          })
          .strict()
          .refine((e) => e.contains !== undefined || e.matches !== undefined, "what the output must hold: contains, matches, or both"),
        /** When given, the probe must exit with it. */
        exitCode: z.number().int().min(0).max(255).optional(),
      })
      .strict(),
    /** The capture's bounds: the file holds at most maxPackets × (snaplen + 16) + 24 bytes. */
    capture: z
      .object({
        maxPackets: z.number().int().min(1).max(1_000_000).default(10_000),
        snaplen: z.number().int().min(128).max(65_535).default(1_024),
        maxSeconds: z.number().positive().max(3_600).default(120),
      })
      .strict()
      .default({ maxPackets: 10_000, snaplen: 1_024, maxSeconds: 120 }),
  })
  .strict()
export type ServiceProbeSpec = z.infer<typeof ServiceProbeSpec>
export type ServiceProbeSpecInput = z.input<typeof ServiceProbeSpec>

/**
 * Why a probe did not pass, by who must act: `program` (the service or its reply is wrong: the Debugger),
 * `environment` (a tool or a namespace is missing here: a person), `spec` (the task's fields are wrong).
 */
export const VerdictKind = z.enum([
  "passed",
  "bad-spec",
  "command-missing",
  "tool-missing",
  "namespace-failed",
  "capture-failed",
  "service-exited",
  "never-listened",
  "probe-timeout",
  "probe-exit",
  "probe-output",
  "aborted",
])
export type VerdictKind = z.infer<typeof VerdictKind>

export const Verdict = z
  .object({
    ok: z.boolean(),
    kind: VerdictKind,
    cause: z.enum(["none", "program", "environment", "spec"]),
    /** The verdict in words, for people and the Debugger. */
    reason: z.string(),
    /** A tool that is not installed, and the command that installs it. */
    missingTool: z.string().optional(),
    install: z.string().optional(),
  })
  .strict()
export type Verdict = z.infer<typeof Verdict>

/** summary.json: the verdict, what ran, and what went over the wire. */
export const ServiceProbeReport = z
  .object({
    verdict: Verdict,
    namespace: z.object({ interfaces: z.array(z.string()) }).strict().optional(),
    service: z
      .object({
        command: z.array(z.string()),
        expectedPorts: z.array(z.number().int()),
        /** The ports it listened on when the wait ended. */
        listening: z.array(z.number().int()),
        /** How it ended: "still running at the end, then stopped" when we stopped it, else its own exit. */
        ended: z.string(),
      })
      .strict()
      .optional(),
    probe: z
      .object({ command: z.array(z.string()), exitCode: z.number().int().nullable(), timedOut: z.boolean(), ms: z.number() })
      .strict()
      .optional(),
    capture: CaptureSummary.Summary.optional(),
    /** tcpdump's own count of packets the kernel dropped (its buffer overflowed). */
    droppedByKernel: z.number().int().optional(),
    timings: z
      .object({ listenMs: z.number().optional(), probeMs: z.number().optional(), totalMs: z.number() })
      .strict(),
  })
  .strict()
export type ServiceProbeReport = z.infer<typeof ServiceProbeReport>

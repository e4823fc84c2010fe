import { readFileSync } from "node:fs"
import { homedir } from "node:os"
import { isAbsolute, join, resolve } from "node:path"
import { z } from "zod"
import { Strict } from "../../core/strict"
import { AirPaths } from "../../core/air-paths"

/**
 * The deploy targets of a project: `.air/shared/rules/deploy.json`, beside toolchain.json. No file, no
 * targets: `aircoding init` writes none, and a run without targets ends as it always did. With targets, a
 * run the plan marks deployable (or every run, `everyRun`) is done only when each target runs the merged
 * build, checked by hash, service state and smoke test.
 */
export namespace DeployRules {
  export const RULES_PATH = AirPaths.DEPLOY_RULES
  export const DEFAULT_STEP_TIMEOUT_MS = 60_000

  const remotePath = z
    .string()
    .min(1)
    .refine((p) => p.startsWith("/") && !p.split("/").includes(".."), "an absolute path on the target without `..`, e.g. /opt/myapp")
  const relativePath = z
    .string()
    .min(1)
    .refine((p) => !isAbsolute(p) && !p.replace(/\\/g, "/").split("/").includes(".."), "a path relative to the project root without `..`, e.g. build/server")

  /**
   * Host keys are checked: `strict` (default) needs the target's key in known_hosts already; `accept-new`
   * records a key seen for the first time but refuses a changed one; `off` (StrictHostKeyChecking=no) only
   * when the target says so here, in writing.
   */
  export const KNOWN_HOSTS_POLICIES = ["strict", "accept-new", "off"] as const

  export const Artefacts = z.union([
    z
      .object({ paths: z.array(relativePath).min(1).describe("files or directories of the build, relative to the project root (e.g. .air-build/server)") })
      .strict(),
    z
      .object({
        cmakeInstall: z
          .object({
            buildDir: relativePath.describe("the build directory that `cmake --install` reads, e.g. .air-build"),
            component: z.string().min(1).optional(),
          })
          .strict()
          .describe("`cmake --install <buildDir> --prefix <staging>`: everything installed is deployed"),
      })
      .strict(),
  ])
  export type Artefacts = z.infer<typeof Artefacts>

  export const SystemdRestart = z
    .object({
      preset: z.literal("systemd"),
      unit: z.string().regex(/^[\w@.:-]+$/, "a systemd unit name, e.g. myapp.service"),
      /** Prefix the systemctl commands with `sudo -n` (a deploy user allowed to restart the unit, no password). */
      sudo: z.boolean().default(false),
    })
    .strict()

  export const CommandsRestart = z
    .object({
      preset: z.literal("commands"),
      start: z.string().min(1).describe("starts the service; run in the target's current release"),
      stop: z.string().min(1).describe("stops it (succeeds when it was not running)"),
      status: z.string().min(1).describe("exits 0 while the service is up"),
      logs: z.string().min(1).optional().describe("prints the service's recent log (the journal excerpt), e.g. tail -n 50 service.log"),
    })
    .strict()

  export const Target = z
    .object({
      name: z.string().regex(/^[A-Za-z0-9][\w.-]{0,63}$/, "letters, digits, _ . - (it names the evidence folder)"),
      host: z.string().min(1).regex(/^[^\s@]+$/, "a host name or address, without user@"),
      user: z.string().regex(/^[a-z_][\w.-]*$/i, "a user name on the target"),
      port: z.number().int().min(1).max(65535).default(22),
      /** The key ssh offers (the user's agent and ~/.ssh/config work too; the identity file is never read by AirCoding). */
      identityFile: z.string().min(1).optional(),
      knownHosts: z.enum(KNOWN_HOSTS_POLICIES).default("strict"),
      /** A known_hosts file of its own (else ssh's). */
      knownHostsFile: z.string().min(1).optional(),
      artefacts: Artefacts,
      remoteDir: remotePath.describe("where releases go on the target: <remoteDir>/releases/<n>, <remoteDir>/current → the live one"),
      restart: z.discriminatedUnion("preset", [SystemdRestart, CommandsRestart]),
      smoke: z.string().min(1).describe("run on the target after the restart (in the current release); exit 0 passes"),
      stepTimeoutMs: z.number().int().min(1000).default(DEFAULT_STEP_TIMEOUT_MS).describe("the limit of each step (connect, transfer, restart, smoke)"),
      /** How long the service may take to report active after the restart. */
      activeWaitMs: z.number().int().min(0).default(10_000),
    })
    .strict()
  export type Target = z.infer<typeof Target>

  export const Rules = z
    .object({
      schemaVersion: z.literal(1),
      /** Every run deploys, whatever the plan says (else only a plan the Architect marks deployable). */
      everyRun: z.boolean().default(false),
      targets: z.array(Target).default([]),
    })
    .strict()
    .superRefine((rules, ctx) => {
      const seen = new Set<string>()
      rules.targets.forEach((t, i) => {
        if (seen.has(t.name)) ctx.addIssue({ code: "custom", path: ["targets", i, "name"], message: `target name ${t.name} is used twice` })
        seen.add(t.name)
      })
    })
  export type Rules = z.infer<typeof Rules>

  export class Invalid extends Error {
    readonly _tag = "DeployRulesInvalid"
    constructor(
      readonly file: string,
      detail: string,
    ) {
      super(`${file}: ${detail}. Fix the file (schemaVersion 1, everyRun, targets[]: name, host, user, port, identityFile, knownHosts, artefacts, remoteDir, restart, smoke, stepTimeoutMs) or delete it (no deploy).`)
      this.name = "DeployRulesInvalid"
    }
  }

  export function parse(text: string, file: string = RULES_PATH): Rules {
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch (error) {
      throw new Invalid(file, `not valid JSON (${(error as Error).message})`)
    }
    const parsed = Rules.safeParse(json)
    if (!parsed.success) throw new Invalid(file, Strict.oneLine(Rules, parsed.error))
    return parsed.data
  }

  /** The project's rules; none when the file does not exist. Read from the project root, never a worktree. */
  export function load(root: string): Rules | undefined {
    const file = join(root, RULES_PATH)
    let bytes: Uint8Array
    try {
      bytes = readFileSync(file)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined
      throw error
    }
    let text: string
    try {
      text = Strict.decode(bytes, file)
    } catch (error) {
      if (error instanceof Strict.DecodeError) throw new Invalid(file, `not valid UTF-8 at byte ${error.offset}`)
      throw error
    }
    return parse(text, file)
  }

  /** The run's deploy settings at its start (an invalid file refuses the start: a run must not skip its deploy silently). */
  export function runConfig(root: string): { deploy?: { targets: string[]; everyRun: boolean } } {
    const rules = load(root)
    if (!rules || rules.targets.length === 0) return {}
    return { deploy: { targets: rules.targets.map((t) => t.name), everyRun: rules.everyRun } }
  }

  export function target(rules: Rules, name: string): Target {
    const t = rules.targets.find((x) => x.name === name)
    if (!t) throw new Invalid(RULES_PATH, `no target named ${name}; known: ${rules.targets.map((x) => x.name).join(", ") || "none"}`)
    return t
  }

  /** `~/` expanded; relative paths are from the project root. */
  export function localPath(root: string, p: string, home: string = homedir()): string {
    if (p === "~" || p.startsWith("~/")) return join(home, p.slice(1))
    return resolve(root, p)
  }

  /** The deploy's ssh control sockets (DeploySsh.open): an authenticated way onto the targets, hidden like a key. */
  export const SSH_DIR = AirPaths.SSH

  /**
   * Files a worker must never read: every target's identity file (the sandbox hides them; ~/.ssh is hidden
   * anyway) and the deploy's ssh control sockets. An unreadable or invalid deploy.json hides no key and is
   * reported by doctor.
   */
  export function secretPaths(root: string, home: string = homedir()): string[] {
    let rules: Rules | undefined
    try {
      rules = load(root)
    } catch {
      return [join(root, SSH_DIR)]
    }
    return [join(root, SSH_DIR), ...(rules?.targets ?? []).flatMap((t) => (t.identityFile ? [localPath(root, t.identityFile, home)] : []))]
  }
}

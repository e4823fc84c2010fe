import { createHash } from "node:crypto"
import { existsSync } from "node:fs"
import { homedir, tmpdir, userInfo } from "node:os"
import path from "node:path"
import { z } from "zod"
import type { Finding } from "../schema.ts"
import { jsonOf, lines, unsetIn, type AnalyserBackend, type Parsed } from "./backend.ts"
import { backendGate } from "./backend-gate.ts"

/** One line of `cargo --message-format=json`: what it built, a compiler's diagnostic, the end. */
const Message = z
  .object({
    reason: z.string(),
    message: z
      .object({
        level: z.string(),
        message: z.string(),
        code: z.object({ code: z.string() }).passthrough().nullable().optional(),
        spans: z.array(z.object({ file_name: z.string(), line_start: z.number().int(), is_primary: z.boolean() }).passthrough()),
      })
      .passthrough()
      .optional(),
  })
  .passthrough()
/** What cargo says on stderr beside its JSON: progress, and its verdict on a crate with errors. */
const UNDERSTOOD = /^\s*(Checking|Compiling|Finished|Blocking|Fresh|Locking|Updating|Adding|warning: build failed|error: could not compile|warning: `[^`]+` \((lib|bin|test)[^)]*\) generated)/
/** cargo refusing the project: a manifest or lock file it cannot read, a dependency it cannot get offline. */
const CARGO_REFUSED = /^error: (failed to (parse|load|read|get|select)|could not find `Cargo\.toml`|no matching package|the lock file|.*Cargo\.(toml|lock))/
/** The compiler or clippy itself failing. */
const PANIC = /^(thread '.*' panicked|error: internal compiler error|error: the compiler unexpectedly panicked|error: no such command: `clippy`)/

/**
 * cargo clippy on the crate (the nearest Cargo.toml) a changed .rs file belongs to. Clippy checks the whole
 * crate: the gate keeps the findings in the changed files (`checksProject`). A lint's severity is its level:
 * clippy's correctness lints are denied (errors) by default, style and complexity are warnings. Offline
 * (CARGO_NET_OFFLINE), its target directory outside the worktree, one per tree (the task's worktree and its
 * base tree never share one), and the Cargo.lock it writes for a crate without one removed after.
 */
const clippyBackend = {
  tool: "clippy",
  language: "Rust",
  binary: "cargo",
  install: "apt-get install cargo rust-clippy (or rustup component add clippy)",
  owns: (file: string) => /\.rs$/.test(file),
  rootMarkers: ["Cargo.toml"],
  needsRoot: true,
  checksProject: true,
  versionArgs: ["clippy", "--version"],
  scratch: ["Cargo.lock"],
  args: (_files, extra) => ["clippy", "--message-format=json", "--quiet", ...extra],
  env: (root: string, env: NodeJS.ProcessEnv) => unsetIn(env, { CARGO_NET_OFFLINE: "true", CARGO_TARGET_DIR: targetDir(root), CARGO_TERM_COLOR: "never", ...toolchainHomes(env) }),
  parse: parseClippy,
} as const satisfies AnalyserBackend<"clippy">

/** Its gate, listed in REGISTRY. */
export const clippyGate = backendGate(clippyBackend)

/** The crate's target directory: under the machine's temp dir, one per crate directory, so each tree builds incrementally on its own. */
function targetDir(root: string): string {
  return path.join(tmpdir(), "aircoding-cargo", createHash("sha256").update(root).digest("hex").slice(0, 16))
}

/**
 * rustup's toolchains and cargo's registry belong to the user: found from their account's home when the gate's
 * HOME is another (a test's, a sandbox's), else rustup's `cargo` finds no toolchain.
 */
function toolchainHomes(env: NodeJS.ProcessEnv): Record<string, string> {
  const own = (() => {
    try {
      return userInfo().homedir
    } catch {
      return homedir()
    }
  })()
  if (!own || env.HOME === own) return {}
  const out: Record<string, string> = {}
  if (existsSync(path.join(own, ".rustup"))) out.RUSTUP_HOME = path.join(own, ".rustup")
  return out
}

/**
 * The compiler's diagnostics at their primary span (the notes and help beneath a diagnostic, and the summaries
 * with no span — "aborting due to…", "N warnings emitted" — are no finding); cargo's own errors about the
 * project are a configuration problem; everything else on the output unread.
 */
export function parseClippy(output: string, _exit: number | null, _root: string): Parsed {
  const findings: Finding[] = []
  const unread: string[] = []
  for (const line of lines(output)) {
    if (line.startsWith("{")) {
      const parsed = Message.safeParse(jsonOf(line))
      if (!parsed.success) {
        unread.push(line)
        continue
      }
      const m = parsed.data.message
      if (parsed.data.reason !== "compiler-message" || !m) continue
      const at = m.spans.find((s) => s.is_primary) ?? m.spans[0]
      if (!at) continue
      const severity = m.level === "error" ? "error" : m.level === "warning" ? "warning" : "information"
      findings.push({ file: path.posix.normalize(at.file_name), line: at.line_start, severity, id: m.code?.code ?? (m.level === "error" ? "rustc" : "clippy"), message: m.message.trim() })
      continue
    }
    if (!UNDERSTOOD.test(line)) unread.push(line)
  }
  const crash = unread.find((line) => PANIC.test(line))
  if (crash) return { findings, unread, crashed: crash }
  const refused = unread.find((line) => CARGO_REFUSED.test(line))
  if (refused && findings.length === 0) return { findings, unread, configProblem: unread.slice(0, 5).join("\n") }
  return { findings, unread, unreadFails: true }
}

/**
 * The layout of a project's `.air/` folder (issue 42 item 3): the one module that names a path under it.
 * `.air/local` is the Scheduler's own state, never committed and written only by its code (the event log,
 * evidence, worktrees, build slots, the sandbox's state, the records of notifications and traces, …);
 * `.air/shared` is what the project commits (config.json, the rules, the plan and its ADRs, skills,
 * knowledge). Every other file of src/ takes these names from here (test/read/one-air-layout.test.ts).
 *
 * Why here, in the Scheduler's core: every layer needs the names — the core (a rule's words), src/text (the
 * words shown to users), the runtime, the read model, the agents' guard, knowledge, the CLI and the TUI —
 * and the core is the one folder all of them may import (src/text imports only the core; the core imports
 * only its own files: test/read/layout.test.ts, layers.test.ts). So the module is pure like the rest of the
 * core: no `node:path`, and a `join` of its own that is node's posix `join` (test/core/air-paths.test.ts
 * checks the two agree).
 *
 * Two forms of each name: the UPPER-CASE one is relative to the project root ("/"-separated: the words a
 * person reads, a glob, a rule's path); the lower-case function is the path under a given root.
 */
export namespace AirPaths {
  /** The folder itself, relative to the project root. */
  export const AIR = ".air"
  export const LOCAL = `${AIR}/local`
  export const SHARED = `${AIR}/shared`

  // Under .air/local: the Scheduler's state.
  const STATE = `${LOCAL}/state`
  export const EVENTS = `${STATE}/events.jsonl`
  export const RUN_LOCK = `${STATE}/lock`
  export const MERGE_LOCK = `${STATE}/merge.lock`
  export const EVIDENCE = `${LOCAL}/evidence`
  export const WORKTREES = `${LOCAL}/worktrees`
  export const ARCHIVE = `${LOCAL}/archive`
  const SANDBOX = `${LOCAL}/sandbox`
  export const BASE_TREE = `${LOCAL}/base-tree`
  export const SSH = `${LOCAL}/ssh`
  export const CCACHE = `${LOCAL}/ccache`
  export const RESULTS = `${LOCAL}/results`
  const TRACE = `${LOCAL}/trace`
  export const TRACE_RECORD = `${TRACE}/sent.jsonl`
  const NOTIFY_RECORD = `${LOCAL}/notify/sent.jsonl`

  // Under .air/shared: what the project commits.
  export const CONFIG = `${SHARED}/config.json`
  const RULES = `${SHARED}/rules`
  export const TOOLCHAIN_RULES = `${RULES}/toolchain.json`
  export const HOUSE_RULES = `${RULES}/house.json`
  export const DEPLOY_RULES = `${RULES}/deploy.json`
  export const SETUP_RULES = `${RULES}/setup.json`
  export const SECRETS_ALLOW = `${RULES}/secrets-allow.txt`
  export const PLAN = `${SHARED}/plan`
  export const PLAN_FILE = `${PLAN}/plan.md`
  export const ADRS = `${PLAN}/adr`
  export const SKILLS = `${SHARED}/skills`
  const KNOWLEDGE = `${SHARED}/knowledge`
  export const PATTERNS = `${KNOWLEDGE}/patterns.json`
  export const FACTS_ARCHIVE = `${KNOWLEDGE}/facts-archive.md`

  /** `.air` under `root`: what the Store opens, what a sandbox keeps read-only. */
  export const air = (root: string) => join(root, AIR)
  export const local = (root: string) => join(root, LOCAL)
  /** `.air/local` of an `.air` folder (the Store is given the `.air` folder, not the project root). */
  export const localIn = (air: string) => join(air, "local")
  /** The run's state (the event log, snapshot, locks, jobs.json, progress, …), or a file in it. */
  export const state = (root: string, ...file: string[]) => join(root, STATE, ...file)
  export const stateIn = (air: string) => join(localIn(air), "state")
  /** The gates' evidence, of a task (`evidence(root, taskId)`) or of a step (`_init`, `_final`, `_baseline/<commit>`, `_deploy/…`, `_merge/…`). */
  export const evidence = (root: string, ...under: string[]) => join(root, EVIDENCE, ...under)
  export const worktrees = (root: string, ...under: string[]) => join(root, WORKTREES, ...under)
  /** A run archived by `run --new` (its state and evidence), or the folder of them all. */
  export const archive = (root: string, ...runId: string[]) => join(root, ARCHIVE, ...runId)
  export const sandbox = (root: string, ...under: string[]) => join(root, SANDBOX, ...under)
  /** The build slots' checkouts, `.air/local/slots/<id>`. */
  export const slots = (root: string) => join(root, LOCAL, "slots")
  /** The baseline's worktrees, one per commit. */
  export const baseline = (root: string, name: string) => join(root, LOCAL, "baseline", name)
  /** A deploy's staged files, per target and attempt. */
  export const deploy = (root: string, ...under: string[]) => join(root, LOCAL, "deploy", ...under)
  /** An ADR's text as last accepted. */
  export const adrAccepted = (root: string, file: string) => join(root, LOCAL, "adr-accepted", file)
  export const notifyRecord = (root: string) => join(root, NOTIFY_RECORD)
  export const traceRecord = (root: string) => join(root, TRACE_RECORD)
  /** The traces' folder: the exports' record and the engine spans the relay kept, per trace. */
  export const trace = (root: string, ...under: string[]) => join(root, TRACE, ...under)

  export const config = (root: string) => join(root, CONFIG)
  export const shared = (root: string) => join(root, SHARED)
  export const plan = (root: string, ...file: string[]) => join(root, PLAN, ...file)
  export const adrs = (root: string, ...file: string[]) => join(root, ADRS, ...file)

  /** A relative name's segments, `[".air", "local", "worktrees"]`, to find it in a path split by the platform's separator. */
  export const partsOf = (name: string) => name.split("/")

  /**
   * A relative name as the source of a regular expression, its separators matched by `separator` (a regex
   * source; default a slash): the guard's `\.air[\\/]+local`, the evidence reader's `\.air/local/evidence`.
   */
  export function pattern(name: string, separator = "/"): string {
    return partsOf(name)
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
      .join(separator)
  }

  /*
   * node's `path.posix.join`: the non-empty parts joined by "/", then normalised ("." and empty segments
   * dropped, ".." resolved, above the root only when relative, a trailing slash kept), "." for nothing.
   */
  function join(...parts: string[]): string {
    const joined = parts.filter((p) => p.length > 0).join("/")
    if (joined === "") return "."
    const absolute = joined.startsWith("/")
    const out: string[] = []
    for (const segment of joined.split("/")) {
      if (segment === "" || segment === ".") continue
      if (segment !== "..") out.push(segment)
      else if (out.length > 0 && out[out.length - 1] !== "..") out.pop()
      else if (!absolute) out.push("..")
    }
    const body = out.join("/")
    if (body === "") return absolute ? "/" : joined.endsWith("/") ? "./" : "."
    return `${absolute ? "/" : ""}${body}${joined.endsWith("/") ? "/" : ""}`
  }
}

import { resolve } from "node:path"
import { RepairPatterns } from "../knowledge/patterns"
import { SetupSteps } from "../knowledge/setup-steps"
import { Strict } from "../scheduler/core/strict"
import { Args } from "./args"
import { UsageError } from "./ui"
import { AirPaths } from "../scheduler/core/air-paths"

const KNOWLEDGE_HELP = `aircoding knowledge — the repair patterns runs have learned

Usage:
  aircoding knowledge list [dir] [--user] [--json]
  aircoding knowledge show <id> [dir] [--user] [--json]
  aircoding knowledge forget <id> [dir] [--user]
  aircoding knowledge setup [dir] [--run CMD | --check CMD --install CMD] [--reason TEXT]

A repair that passed its gates is kept as a pattern: the failure's fingerprint (gate, check, first error,
kind of file), its root cause, the shape of the fix and the command that verified it. The project's
patterns are in ${AirPaths.PATTERNS} (commit them); with "shareKnowledge": true in
${AirPaths.CONFIG} they also go to the store every project on this machine reads.
setup records an environment fix as a step of the project's rules (${SetupSteps.RULES_FILE}): --run, a
command every worktree runs in the sandbox before its first build; --check with --install, a prerequisite
the gates check (a failing check asks you to install it). Without --run or --check it lists the steps.
  --user   the user's store (${RepairPatterns.userFile()}) instead of the project's
  --json   print JSON
Exit codes: 0 done, 1 no such pattern or a usage error.
`

/** `aircoding knowledge list|show|forget`: reads and trims the pattern stores; never touches a run. */
export async function knowledgeCommand(argv: string[]): Promise<number> {
  const { values, positionals } = Args.parse(
    "knowledge",
    argv,
    { user: { type: "boolean" }, json: { type: "boolean" }, run: { type: "string" }, check: { type: "string" }, install: { type: "string" }, reason: { type: "string" } } as const,
    3,
  )
  const [verb, ...rest] = positionals
  if (values.help || !verb) {
    process.stdout.write(KNOWLEDGE_HELP)
    if (values.help) return 0
    throw new UsageError("say what to do: list, show <id>, forget <id> or setup", "knowledge")
  }
  if (verb === "setup") return setup(resolve(rest[0] ?? "."), values)
  const verbs = ["list", "show", "forget", "setup"]
  if (!verbs.includes(verb)) {
    const near = Strict.nearest(verb, verbs)
    throw new UsageError(`unknown verb '${verb}'${near ? `; did you mean ${near}?` : ` (${verbs.join(", ")})`}`, "knowledge")
  }
  const needsId = verb === "show" || verb === "forget"
  if (needsId && !rest[0]) throw new UsageError(`${verb} needs the id of a pattern (aircoding knowledge list shows them)`, "knowledge")
  if (rest.length > (needsId ? 2 : 1)) throw new UsageError(`unexpected argument '${rest[needsId ? 2 : 1]}'`, "knowledge")
  const id = needsId ? rest[0]! : undefined
  const root = resolve((needsId ? rest[1] : rest[0]) ?? ".")
  const file = values.user ? RepairPatterns.userFile() : RepairPatterns.projectFile(root)
  const patterns = RepairPatterns.read(file)
  const find = (key: string) => patterns.find((p) => p.id === key) ?? (key.length >= 4 ? patterns.find((p) => p.id.startsWith(key)) : undefined)
  if (verb === "list") {
    if (values.json) process.stdout.write(JSON.stringify(patterns, null, 2) + "\n")
    else if (patterns.length === 0) process.stdout.write(`No repair patterns in ${file}.\n`)
    else
      for (const p of patterns)
        process.stdout.write(`${p.id}  ${p.count}×  ${p.fingerprint.gate}${p.fingerprint.check ? ` ${p.fingerprint.check}` : ""}: ${p.fingerprint.error || "(no error text)"}  (last ${p.lastSeen.slice(0, 10)})\n`)
    return 0
  }
  const pattern = find(id!)
  if (!pattern) {
    process.stderr.write(`aircoding knowledge: no pattern ${id} in ${file}; \`aircoding knowledge list${values.user ? " --user" : ""}\` shows the ids\n`)
    return 1
  }
  if (verb === "show") {
    if (values.json) process.stdout.write(JSON.stringify(pattern, null, 2) + "\n")
    else
      process.stdout.write(
        [
          `pattern ${pattern.id} — seen ${pattern.count}× (first ${pattern.firstSeen}, last ${pattern.lastSeen})`,
          `failure: gate ${pattern.fingerprint.gate}${pattern.fingerprint.check ? `, check ${pattern.fingerprint.check}` : ""}${pattern.fingerprint.fileKind ? `, in a ${pattern.fingerprint.fileKind} file` : ""}`,
          `error:   ${pattern.fingerprint.error || "(none)"}`,
          `cause:   ${pattern.rootCause}`,
          `fix:     ${pattern.fix}`,
          `verify:  ${pattern.verify}`,
        ].join("\n") + "\n",
      )
    return 0
  }
  RepairPatterns.forget(file, pattern.id)
  process.stdout.write(`Forgot pattern ${pattern.id} (${file}).\n`)
  return 0
}

function setup(root: string, values: { run?: string; check?: string; install?: string; reason?: string; json?: boolean }): number {
  if (!values.run && !values.check) {
    const steps = SetupSteps.read(root)
    if (values.json) process.stdout.write(JSON.stringify(steps, null, 2) + "\n")
    else if (steps.length === 0) process.stdout.write(`No setup steps in ${SetupSteps.RULES_FILE}.\n`)
    else for (const s of steps) process.stdout.write(`${s.id}  ${s.run ? `run: ${s.run}` : `check: ${s.check}${s.install ? `; install: ${s.install}` : ""}`}  (${s.reason})\n`)
    return 0
  }
  // A usage error exits 1 through the one policy (Args.USAGE_EXIT): 2 means a run waits for the person.
  if (values.run && values.check) throw new UsageError("knowledge setup: give --run or --check, not both", "knowledge")
  const step = SetupSteps.record(root, {
    reason: values.reason ?? "recorded after an environment fix",
    ...(values.run ? { run: values.run } : {}),
    ...(values.check ? { check: values.check } : {}),
    ...(values.install ? { install: values.install } : {}),
  })
  process.stdout.write(`Setup step ${step.id} is in ${SetupSteps.RULES_FILE}: every new worktree ${step.run ? "runs it before its first build" : "checks it before building"}. Commit the file to share it.\n`)
  return 0
}

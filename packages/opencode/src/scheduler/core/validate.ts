import type { z } from "zod"
import { Strict } from "./strict"
import { PlanDelta } from "./delta.schema"
import { applyDelta, type DeltaResult } from "./graph"
import { graphIndex, isLive } from "./graph-index"
import { compareIds, idProblem, normaliseRepoPath } from "./names"
import { KIND_RULES, TaskGraph, TaskNode, type WriteEntry } from "./task.schema"
import { findAmbiguousVerb, REFACTOR_FORMS } from "./verbs"
import { parseTaskGraphFast } from "./fast-parse"
import { integrationFirstProblems, type MissingLibrary } from "./integration-first"
import { boundaryProblems, interfaceFiles, LEGACY_RULES, type BoundaryRules } from "./boundary-tests"

/** One problem, said for a person: what is wrong, where, and what to do about it. */
export interface ValidationError {
  /** JSON path inside the document, e.g. tasks[3].deps[0] */
  path: string
  taskId?: string
  message: string
  fix: string
}

/** How many problems a refusal lists; the rest are counted, so a 100k-task graph gets a short answer. */
const MAX_ERRORS = 20

/**
 * The first MAX_ERRORS problems, each cut to a readable length, and one more entry that counts the rest:
 * what the Architect reads must stay small whatever it sent.
 */
export function boundErrors(errors: readonly ValidationError[], limit = MAX_ERRORS): ValidationError[] {
  const { shown, omitted } = Strict.bounded(errors, limit)
  // Invisible characters escaped: a refusal must show the mistake it names (a BOM before an id).
  const out = shown.map((e) => ({
    ...e,
    path: Strict.clip(Strict.visible(e.path), 120),
    ...(e.taskId !== undefined ? { taskId: Strict.clip(Strict.visible(e.taskId), 80) } : {}),
    message: Strict.clip(Strict.visible(e.message), 400),
    fix: Strict.clip(Strict.visible(e.fix), 300),
  }))
  if (omitted > 0)
    out.push({
      path: "(more)",
      message: `${omitted} more problem(s) of the same kinds not listed`,
      fix: "fix the problems above, then check the rest of the document for the same mistakes before sending it again",
    })
  return out
}

/**
 * `boundaryTests`: hold tasks that change a public header to the boundary-test rule (default on). It is a
 * policy for the plans the Architect sends now, checked at the door (air_plan, air_delta); the machine
 * replays logs written before the rule, so it checks structure only.
 */
interface ValidateOptions {
  boundaryTests?: boolean
  /** The house rules' boundary tests (boundary-tests.ts); absent: public headers under include/ only (LEGACY_RULES). */
  boundaries?: BoundaryRules
  /** The house rules' logging library, when the project does not use it yet: the plan must integrate it first. */
  integrationFirst?: MissingLibrary
}

type GraphValidation = { ok: true; graph: TaskGraph } | { ok: false; errors: ValidationError[] }
type DeltaValidation =
  | { ok: true; delta: PlanDelta; result: DeltaResult }
  | { ok: false; errors: ValidationError[] }

/**
 * Checks a task graph and returns it with its paths normalised; the input is never modified.
 * Linear in the size of the graph: maps for lookups, an iterative walk for cycles.
 */
export function validateGraph(input: unknown, options: ValidateOptions = {}): GraphValidation {
  let graph = parseTaskGraphFast(input)
  if (!graph) {
    const parsed = TaskGraph.safeParse(input)
    if (!parsed.success) return { ok: false, errors: boundErrors(zodErrors(TaskGraph, parsed.error, input, "")) }
    graph = parsed.data
  }
  const errors: ValidationError[] = []
  const tasks = graph.tasks.map((task, i) => checkTask(task, `tasks[${i}]`, errors))
  checkIds(tasks, (i) => `tasks[${i}]`, errors)
  checkDeps(tasks, (i) => `tasks[${i}]`, new Map(), errors)
  checkDeployPhases(graph.deployPhases, tasks, errors)
  if (errors.length === 0 && options.boundaryTests !== false) errors.push(...boundaryProblems(tasks, options.boundaries ?? LEGACY_RULES, (i) => `tasks[${i}]`))
  if (errors.length === 0 && options.integrationFirst) errors.push(...integrationFirstProblems(tasks, options.integrationFirst, (i) => `tasks[${i}]`))
  if (errors.length > 0) return { ok: false, errors: boundErrors(errors) }
  return { ok: true, graph: { ...graph, tasks } }
}

/** A deployable phase must be a phase some task of the plan belongs to. */
function checkDeployPhases(phases: readonly number[] | undefined, tasks: readonly TaskNode[], errors: ValidationError[]): void {
  if (!phases?.length) return
  const known = [...new Set(tasks.map((t) => t.phase))].sort((a, b) => a - b)
  phases.forEach((phase, i) => {
    if (!known.includes(phase))
      errors.push({ path: `deployPhases[${i}]`, message: `phase ${phase} is marked deployable, but no task belongs to it; the plan's phases: ${known.join(", ") || "none"}`, fix: `name a phase of the plan, or leave ${phase} out` })
  })
}

/**
 * Checks a plan delta against the graph it changes: the ids it removes or modifies exist and are still
 * live, the tasks it adds are new and sound, and the graph that results is still a valid DAG.
 * `statusOf` gives the runtime status of each task (merged, running …) so that the result can say which
 * tasks must be aborted or reverted.
 */
export function validateDelta(
  graph: TaskGraph,
  input: unknown,
  statusOf?: (id: string) => TaskNode["status"],
  options: ValidateOptions = {},
): DeltaValidation {
  const parsed = PlanDelta.safeParse(input)
  if (!parsed.success) return { ok: false, errors: boundErrors(zodErrors(PlanDelta, parsed.error, input, "")) }
  const delta = parsed.data
  const errors: ValidationError[] = []
  const { indexOf } = graphIndex(graph)
  const removed = new Set<string>()
  const touched = new Set<string>()

  // Built once, on the first unknown id: a delta naming 100k unknown ids stays linear.
  let known: string | null = null
  let near: Map<string, string> | null = null
  const checkExisting = (id: string, path: string, verb: string): boolean => {
    const i = indexOf.get(id)
    if (i === undefined) {
      errors.push({
        path,
        taskId: id,
        message: `the delta ${verb} task ${id}, which is not in the graph; known ids: ${(known ??= knownIds(graph.tasks.map((t) => t.id)))}`,
        fix: `use the id of an existing task${suggestFrom(id, (near ??= squashedIds(indexOf.keys())))}`,
      })
      return false
    }
    if (!isLive(graph.tasks[i]!)) {
      errors.push({
        path,
        taskId: id,
        message: `the delta ${verb} task ${id}, which an earlier change already invalidated`,
        fix: `leave ${id} out; add a new task with a new id instead`,
      })
      return false
    }
    return true
  }

  delta.remove.forEach((id, i) => {
    if (!checkExisting(id, `remove[${i}]`, "removes")) return
    if (removed.has(id)) {
      errors.push({ path: `remove[${i}]`, taskId: id, message: `task ${id} is removed twice`, fix: "list it once" })
      return
    }
    removed.add(id)
    touched.add(id)
  })

  const modify = delta.modify.map((entry, i) => {
    const path = `modify[${i}]`
    if (!checkExisting(entry.id, `${path}.id`, "modifies")) return entry
    if (touched.has(entry.id)) {
      errors.push({
        path: `${path}.id`,
        taskId: entry.id,
        message: removed.has(entry.id)
          ? `task ${entry.id} is both removed and modified`
          : `task ${entry.id} is modified twice`,
        fix: removed.has(entry.id) ? "either remove it or modify it" : "merge the two patches into one",
      })
      return entry
    }
    touched.add(entry.id)
    const current = graph.tasks[indexOf.get(entry.id)!]!
    const patched = checkTask({ ...current, ...entry.patch, id: current.id, status: undefined }, `${path}.patch`, errors)
    const { id: _id, status: _status, ...patch } = patched
    const normalised: PlanDelta["modify"][number] = { id: entry.id, patch: pickPatchKeys(patch, entry.patch) }
    return normalised
  })

  const addedIds = new Map<string, number>()
  const add = delta.add.map((task, i) => {
    const path = `add[${i}]`
    const normalised = checkTask(task, path, errors)
    const problem = idProblem(task.id)
    if (problem) {
      errors.push({ path: `${path}.id`, taskId: task.id, message: `task id ${JSON.stringify(task.id)}: ${problem}`, fix: ID_FIX })
    } else if (indexOf.has(task.id)) {
      errors.push({
        path: `${path}.id`,
        taskId: task.id,
        message: `the delta adds task ${task.id}, but that id is already used${isLive(graph.tasks[indexOf.get(task.id)!]!) ? "" : " by an invalidated task (its branch and tag keep the name)"}`,
        fix: `pick a new id, e.g. ${task.id}b; to change ${task.id}, use modify`,
      })
    } else if (addedIds.has(task.id)) {
      errors.push({ path: `${path}.id`, taskId: task.id, message: `the delta adds task ${task.id} twice (also add[${addedIds.get(task.id)}])`, fix: "give each new task its own id" })
    } else addedIds.set(task.id, i)
    return normalised
  })

  if (errors.length > 0) return { ok: false, errors: boundErrors(errors) }
  const clean: PlanDelta = { ...delta, add, modify }
  const result = applyDelta(graph, statusOf ?? ((id) => graph.tasks[indexOf.get(id)!]?.status ?? "pending"), clean)

  // The graph that results must still be sound; errors point into the delta when the task comes from it.
  const modifiedAt = new Map(clean.modify.map((m, i) => [m.id, i]))
  const pathOf = (i: number): string => {
    const id = result.graph.tasks[i]!.id
    const a = addedIds.get(id)
    if (a !== undefined) return `add[${a}]`
    const m = modifiedAt.get(id)
    if (m !== undefined) return `modify[${m}].patch`
    return `(graph) tasks[${i}]`
  }
  const why = new Map<string, string>()
  for (const impact of result.impacts) if (impact.becomes === "invalidated") why.set(impact.id, impact.reason)
  checkDeps(result.graph.tasks, pathOf, why, errors)
  // Only what the delta adds or changes must bring its boundary tests: a graph accepted earlier is not judged again.
  const fromDelta = (i: number) => addedIds.has(result.graph.tasks[i]!.id) || modifiedAt.has(result.graph.tasks[i]!.id)
  if (errors.length === 0 && options.boundaryTests !== false) errors.push(...boundaryProblems(result.graph.tasks, options.boundaries ?? LEGACY_RULES, pathOf, fromDelta))
  if (errors.length > 0) return { ok: false, errors: boundErrors(errors) }
  return { ok: true, delta: clean, result }
}

const ID_FIX = "use a plain name: a letter or digit first, then letters, digits, _ . - (at most 64), e.g. T-12"

/** Keeps only the keys the author patched, with their normalised values. */
function pickPatchKeys(normalised: Record<string, unknown>, original: Record<string, unknown>): PlanDelta["modify"][number]["patch"] {
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(original)) out[key] = normalised[key]
  return out as PlanDelta["modify"][number]["patch"]
}

/** Checks what one task says on its own and returns a copy with normalised paths. */
function checkTask(task: TaskNode, path: string, errors: ValidationError[]): TaskNode {
  const taskId = task.id
  const where = `task ${taskId}`
  if (task.doneWhen.trim().length === 0)
    errors.push({
      path: `${path}.doneWhen`,
      taskId,
      message: `${where}: doneWhen is empty, so nobody can tell when the task is finished`,
      fix: 'state an observable condition, e.g. "ctest passes test_parser and parse(\\"\\") returns an empty list"',
    })
  const program = KIND_RULES[task.kind].program
  for (const field of ["ui", "service"] as const) {
    if (field === program && task[field] === undefined)
      errors.push({
        path: `${path}.${field}`,
        taskId,
        message: `${where}: a ${field} task must say how to start its program and what to check (${field}), or its ${field === "ui" ? "window" : "service"} cannot be verified`,
        fix:
          field === "ui"
            ? 'add "ui": { "command": "build/app", "checks": { "title": "App", "pixels": [{ "x": 10, "y": 10, "rgb": "#2060c0" }] } }'
            : 'add "service": { "service": { "command": "build/server" }, "ports": [7000], "probe": { "command": "nc", "args": ["-N", "127.0.0.1", "7000"], "input": "PING\\n", "expect": { "contains": "PONG" } } }',
      })
    if (field !== program && task[field] !== undefined)
      errors.push({ path: `${path}.${field}`, taskId, message: `${where}: only a ${field} task has a ${field} field (this one is ${task.kind})`, fix: `make it a ${field} task, or drop the field` })
  }
  if (KIND_RULES[task.kind].needsWriteSet && task.writeSet.length === 0)
    errors.push({
      path: `${path}.writeSet`,
      taskId,
      message: `${where}: a ${task.kind} task has an empty write-set, so conflicts with other tasks cannot be seen`,
      fix: 'list each file it changes, e.g. [{ "path": "src/parser.cpp", "action": "modify", "region": "parseLine" }]',
    })

  const seenEntries = new Set<string>()
  const writeSet: WriteEntry[] = task.writeSet.map((entry, j) => {
    const entryPath = `${path}.writeSet[${j}].path`
    const normal = normaliseRepoPath(entry.path)
    if ("problem" in normal) {
      errors.push({
        path: entryPath,
        taskId,
        message: `${where}: write-set path ${JSON.stringify(entry.path)} is not usable: ${normal.problem}`,
        fix: "give a path relative to the repository root, inside it, e.g. src/parser.cpp",
      })
      return entry
    }
    if (/[*?[\]{}]/.test(normal.path))
      errors.push({
        path: entryPath,
        taskId,
        message: `${where}: write-set path ${JSON.stringify(entry.path)} is a pattern; a write-set names files`,
        fix: "list each file the task touches, one entry per file",
      })
    const key = `${normal.path}\u0000${entry.region ?? ""}`
    if (seenEntries.has(key))
      errors.push({
        path: `${path}.writeSet[${j}]`,
        taskId,
        message: `${where}: ${normal.path}${entry.region ? ` (${entry.region})` : ""} is listed twice in the write-set`,
        fix: "keep one entry per file and region",
      })
    seenEntries.add(key)
    return normal.path === entry.path ? entry : { ...entry, path: normal.path }
  })

  let files = task.files
  if (files) {
    files = files.map((file, j) => {
      const normal = normaliseRepoPath(file)
      if ("problem" in normal) {
        errors.push({
          path: `${path}.files[${j}]`,
          taskId,
          message: `${where}: file to read ${JSON.stringify(file)} is not usable: ${normal.problem}`,
          fix: "give a path relative to the repository root, inside it",
        })
        return file
      }
      return normal.path
    })
  }

  const explicit = task.writeSet.length > 0 && task.keep.length > 0
  if (!explicit) {
    for (const field of ["title", "doneWhen"] as const) {
      const verb = findAmbiguousVerb(task[field], task.kind === "refactor" ? REFACTOR_FORMS : undefined)
      if (!verb) continue
      errors.push({
        path: `${path}.${field}`,
        taskId,
        message: `${where}: "${verb}" in the ${field} does not say what changes${task.writeSet.length === 0 ? " and the write-set is empty" : ""}${task.keep.length === 0 ? " and no keep-constraint says what must stay" : ""}`,
        fix: `say the concrete change instead of "${verb}", or give every file an explicit action in writeSet and at least one entry in keep (what must not change)`,
      })
    }
  }
  return { ...task, writeSet, ...(files ? { files } : {}) }
}

function checkIds(tasks: readonly TaskNode[], pathOf: (i: number) => string, errors: ValidationError[]): void {
  const first = new Map<string, number>()
  tasks.forEach((task, i) => {
    const problem = idProblem(task.id)
    if (problem)
      errors.push({ path: `${pathOf(i)}.id`, taskId: task.id, message: `task id ${JSON.stringify(task.id)}: ${problem}`, fix: ID_FIX })
    const earlier = first.get(task.id)
    if (earlier !== undefined)
      errors.push({
        path: `${pathOf(i)}.id`,
        taskId: task.id,
        message: `task id ${task.id} is used twice: ${pathOf(earlier)} and ${pathOf(i)}`,
        fix: `give one of them a new id, e.g. ${task.id}b, and update the deps that mean it`,
      })
    else first.set(task.id, i)
  })
}

/**
 * Dependencies of live tasks: each must name a live task of the same or an earlier phase, and together
 * they must not form a cycle. `invalidatedBecause` says why a task is gone, for the message.
 */
function checkDeps(
  tasks: readonly TaskNode[],
  pathOf: (i: number) => string,
  invalidatedBecause: ReadonlyMap<string, string>,
  errors: ValidationError[],
): void {
  const indexOf = new Map<string, number>()
  tasks.forEach((task, i) => {
    if (!indexOf.has(task.id)) indexOf.set(task.id, i)
  })
  let allIds: string[] | null = null
  const known = () => (allIds ??= tasks.filter(isLive).map((t) => t.id))
  let nearIds: Map<string, string> | null = null
  const near = () => (nearIds ??= squashedIds(indexOf.keys()))
  const edges: number[][] = tasks.map(() => [])

  tasks.forEach((task, i) => {
    if (!isLive(task)) return
    // A set once a task has many deps: indexOf per dep would be quadratic in them.
    const firstAt = task.deps.length > 16 ? new Map<string, number>() : undefined
    if (firstAt) task.deps.forEach((dep, j) => firstAt.has(dep) || firstAt.set(dep, j))
    task.deps.forEach((dep, j) => {
      const path = `${pathOf(i)}.deps[${j}]`
      if ((firstAt ? firstAt.get(dep) : task.deps.indexOf(dep)) !== j) {
        errors.push({ path, taskId: task.id, message: `task ${task.id}: depends on ${dep} twice`, fix: "list each dependency once" })
        return
      }
      if (dep === task.id) {
        errors.push({ path, taskId: task.id, message: `task ${task.id}: depends on itself`, fix: `remove ${dep} from its deps` })
        return
      }
      const d = indexOf.get(dep)
      if (d === undefined) {
        errors.push({
          path,
          taskId: task.id,
          message: `task ${task.id}: depends on ${dep}, which does not exist; known ids: ${knownIds(known())}`,
          fix: `use one of the known ids${suggestFrom(dep, near())}, or add a task ${dep}`,
        })
        return
      }
      const target = tasks[d]!
      if (!isLive(target)) {
        const why = invalidatedBecause.get(dep)
        errors.push({
          path,
          taskId: task.id,
          message: `task ${task.id}: depends on ${dep}, which ${why ? `this delta invalidates (${why})` : "is invalidated"}`,
          fix: `modify ${task.id} to depend on the task that replaces ${dep}, or remove ${task.id} too`,
        })
        return
      }
      if (target.phase > task.phase) {
        errors.push({
          path,
          taskId: task.id,
          message: `task ${task.id} (phase ${task.phase}) depends on ${dep} (phase ${target.phase}), which cannot start before phase ${task.phase} is merged`,
          fix: `move ${dep} to phase ${task.phase} or earlier, or ${task.id} to phase ${target.phase} or later`,
        })
        return
      }
      edges[i]!.push(d)
    })
  })

  for (const cycle of findCycles(edges, 5)) {
    const all = cycle.map((i) => tasks[i]!.id)
    // A cycle through 10,000 tasks is said by its ends: the start, a count, and how it closes.
    const ids = all.length <= 12 ? all : [...all.slice(0, 5), `… (${all.length - 1} tasks) …`, ...all.slice(-2)]
    const from = cycle[0]!
    const to = cycle[1]!
    const j = tasks[from]!.deps.indexOf(tasks[to]!.id)
    errors.push({
      path: `${pathOf(from)}.deps[${j}]`,
      taskId: tasks[from]!.id,
      message: `dependency cycle: ${ids.join(" → ")} (each depends on the next, so none of them can ever start)`,
      fix: `remove one dependency of the cycle, e.g. ${ids[0]}'s dependency on ${ids[1]}`,
    })
  }
}

/** The legacy rule's question, kept for its callers: does this task change a public header under include/? */
export function changesPublicInterface(task: TaskNode): boolean {
  return interfaceFiles(task).length > 0
}

/**
 * Cycles in a dependency graph given as adjacency lists, found by an iterative depth-first walk (no
 * recursion: a 10,000-task chain must not overflow the stack). Each cycle is returned closed: [a, b, a].
 */
function findCycles(edges: readonly (readonly number[])[], limit: number): number[][] {
  const WHITE = 0
  const GREY = 1
  const BLACK = 2
  const colour = new Uint8Array(edges.length)
  const next = new Uint32Array(edges.length)
  const onStackAt = new Int32Array(edges.length).fill(-1)
  const cycles: number[][] = []
  const stack: number[] = []
  for (let root = 0; root < edges.length && cycles.length < limit; root++) {
    if (colour[root] !== WHITE) continue
    stack.push(root)
    colour[root] = GREY
    onStackAt[root] = 0
    while (stack.length > 0) {
      const node = stack[stack.length - 1]!
      const out = edges[node]!
      if (next[node]! < out.length) {
        const to = out[next[node]!++]!
        if (colour[to] === WHITE) {
          colour[to] = GREY
          onStackAt[to] = stack.length
          stack.push(to)
        } else if (colour[to] === GREY && cycles.length < limit) {
          cycles.push([...stack.slice(onStackAt[to]!), to])
        }
      } else {
        colour[node] = BLACK
        onStackAt[node] = -1
        stack.pop()
      }
    }
  }
  return cycles
}

function knownIds(ids: readonly string[]): string {
  if (ids.length === 0) return "(none)"
  const sorted = ids.length <= 1000 ? [...ids].sort(compareIds) : ids
  if (sorted.length <= 12) return sorted.join(", ")
  return `${sorted.slice(0, 10).join(", ")} … (${sorted.length} in all)`
}

/** Ids by their squashed form (lower case, no separators), built once per check so suggestions stay linear. */
const squashId = (s: string) => s.toLowerCase().replace(/[-_.]/g, "")
function squashedIds(ids: Iterable<string>): Map<string, string> {
  const out = new Map<string, string>()
  for (const id of ids) {
    const key = squashId(id)
    if (!out.has(key)) out.set(key, id)
  }
  return out
}

/** A near miss that differs only in case or separators, e.g. t1 for T-1. */
function suggestFrom(id: string, squashed: ReadonlyMap<string, string>): string {
  const candidate = squashed.get(squashId(id))
  return candidate !== undefined ? ` (did you mean ${candidate}?)` : ""
}


/** zod's issues, turned into errors that name the field, the task and the fix (did-you-mean for unknown keys). */
function zodErrors(schema: z.ZodType, error: z.ZodError, input: unknown, prefix: string): ValidationError[] {
  const out: ValidationError[] = []
  // The same misspelling in 100k tasks is looked up once: keyed by the path without indices.
  const nearby = new Map<string, { known: string[]; near: string | undefined }>()
  for (const issue of error.issues) {
    if (issue.code !== "unrecognized_keys") continue
    const taskId = taskIdAt(input, issue.path)
    const shape = issue.path.map((s) => (typeof s === "number" ? "#" : String(s))).join(".")
    for (const key of issue.keys) {
      const path = prefix + formatPath([...issue.path, key])
      let hit = nearby.get(`${shape}\u0000${key}`)
      if (!hit) {
        const known = Strict.knownKeys(schema, issue.path)
        hit = { known, near: Strict.nearest(key, known) }
        nearby.set(`${shape}\u0000${key}`, hit)
      }
      const { known, near } = hit
      out.push({
        path,
        ...(taskId ? { taskId } : {}),
        message: `${taskId ? `task ${taskId}: ` : ""}${path}: unknown key${near ? `; did you mean ${near}?` : ""}`,
        fix: near ? `rename ${JSON.stringify(key)} to ${JSON.stringify(near)}` : `remove ${JSON.stringify(key)}; known keys: ${known.join(", ")}`,
      })
    }
  }
  const others = error.issues.filter((issue) => issue.code !== "unrecognized_keys")
  return out.concat(others.map((issue) => {
    const path = prefix + formatPath(issue.path)
    const taskId = taskIdAt(input, issue.path)
    const field = String(issue.path[issue.path.length - 1] ?? "document")
    const where = taskId ? `task ${taskId}: ` : ""
    let message = `${where}${path || "(document)"}: ${issue.message}`
    let fix = `correct ${path || "the document"}`
    if (issue.code === "invalid_type" && /received undefined/.test(issue.message)) {
      message = `${where}the field ${JSON.stringify(field)} is missing at ${path}`
      fix = `add ${JSON.stringify(field)} (${issue.expected})`
    } else if (issue.code === "invalid_value") {
      fix = `use one of: ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`
    } else if (issue.code === "invalid_type") {
      fix = `give ${path || "the document"} a value of type ${issue.expected}`
    }
    return { path: path || "(document)", ...(taskId ? { taskId } : {}), message, fix }
  }))
}

export const formatPath = Strict.formatPath

function taskIdAt(input: unknown, path: readonly PropertyKey[]): string | undefined {
  const collection = path[0]
  const i = path[1]
  if ((collection !== "tasks" && collection !== "add") || typeof i !== "number") return undefined
  const list = (input as Record<string, unknown> | null)?.[collection]
  const id = Array.isArray(list) ? (list[i] as { id?: unknown } | undefined)?.id : undefined
  return typeof id === "string" ? id : undefined
}

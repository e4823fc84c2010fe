import type { TaskNode } from "./task.schema"
import { AirPaths } from "./air-paths"

/**
 * The house rule on a plan when the project's logging library is not in the project yet (a fact the runtime reads
 * from the integration branch and passes in): the plan starts with the task that integrates it, in phase 1, and
 * every code task depends on that task, so no code is written against a library the build cannot find. Pure.
 */
export interface MissingLibrary {
  /** The library the rules name, e.g. spdlog. */
  library: string
  /** Its CMake package, for the fix (find_package(<package>)). */
  cmakePackage?: string
  /** The rules let the integration fetch the library (FetchContent) when find_package does not find it. */
  allowNetwork?: boolean
}

/** Said like the plan validation's errors (validate.ts): where, which task, what is wrong, what to do. */
interface Problem {
  path: string
  taskId?: string
  message: string
  fix: string
}

/** Kinds whose sources would call the library. */
const CODE_KINDS: ReadonlySet<TaskNode["kind"]> = new Set(["code", "fix", "refactor", "ui", "service"])
const INTEGRATION_KINDS: ReadonlySet<TaskNode["kind"]> = new Set(["build", "code"])
const BUILD_FILE = /(^|\/)(CMakeLists\.txt|[^/]+\.cmake)$/i
const RULES_FILE = AirPaths.HOUSE_RULES

/** A task that integrates `library`: a build (or code) task that names it in its title and writes a CMake file. */
function integratesLibrary(task: TaskNode, library: string): boolean {
  if (!INTEGRATION_KINDS.has(task.kind)) return false
  const named = new RegExp(`(^|[^A-Za-z0-9_])${library.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}([^A-Za-z0-9_]|$)`, "i").test(task.title)
  return named && task.writeSet.some((entry) => (entry.action === "create" || entry.action === "modify") && BUILD_FILE.test(entry.path))
}

export function integrationFirstProblems(tasks: readonly TaskNode[], missing: MissingLibrary, pathOf: (i: number) => string): Problem[] {
  const { library } = missing
  const find = `${missing.cmakePackage ? `find_package(${missing.cmakePackage}) ` : ""}and the link to it, ${missing.allowNetwork ? "FetchContent only when find_package fails" : "offline: no FetchContent"}`
  const index = tasks.findIndex((task) => task.status !== "invalidated" && integratesLibrary(task, library))
  if (index < 0)
    return [
      {
        path: "tasks",
        message: `the house rules (${RULES_FILE}) name ${library} as the logging library and the project does not use it yet, so the plan must start with a task that integrates it; no task of this plan does`,
        fix: `add a task of kind "build" in phase 1 titled "Integrate ${library}" whose write-set modifies CMakeLists.txt (${find}), and put its id in the deps of every code task`,
      },
    ]
  const integration = tasks[index]!
  const problems: Problem[] = []
  if (integration.phase !== 1)
    problems.push({
      path: `${pathOf(index)}.phase`,
      taskId: integration.id,
      message: `task ${integration.id} integrates ${library} but is in phase ${integration.phase}; the integration comes first`,
      fix: `put ${integration.id} in phase 1`,
    })
  const byId = new Map(tasks.map((task) => [task.id, task]))
  const reaches = new Map<string, boolean>()
  // Iterative and memoised (a 10,000-task chain must not overflow the stack); the graph is acyclic by now.
  const dependsOnIntegration = (start: string): boolean => {
    const stack: { id: string; expanded: boolean }[] = [{ id: start, expanded: false }]
    while (stack.length > 0) {
      const top = stack.pop()!
      if (reaches.has(top.id)) continue
      const deps = byId.get(top.id)?.deps ?? []
      if (!top.expanded) {
        stack.push({ id: top.id, expanded: true })
        for (const dep of deps) if (dep !== integration.id && !reaches.has(dep)) stack.push({ id: dep, expanded: false })
        continue
      }
      reaches.set(top.id, deps.some((dep) => dep === integration.id || reaches.get(dep) === true))
    }
    return reaches.get(start) === true
  }
  tasks.forEach((task, i) => {
    if (task === integration || task.status === "invalidated" || !CODE_KINDS.has(task.kind)) return
    if (dependsOnIntegration(task.id)) return
    problems.push({
      path: `${pathOf(i)}.deps`,
      taskId: task.id,
      message: `task ${task.id} writes code but does not depend on ${integration.id}, the task that integrates ${library}`,
      fix: `add "${integration.id}" to the deps of ${task.id}`,
    })
  })
  return problems
}

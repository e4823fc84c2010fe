import type { TaskNode } from "./task.schema"

/**
 * Tests at every module boundary (issue 40, house rules): a task that adds a module or changes a module's public
 * interface brings the tests of that module (a test task that depends on it, or a test file in its own write-set),
 * and a code task is done only when its tests pass. Judged from the plan alone plus the facts the runtime passes in
 * (the directories the integration branch already has). Pure.
 */
export interface BoundaryRules {
  /** Paths that are a module's public interface (house.json's boundaries.publicInterface, compiled by the runtime). */
  publicInterface: readonly RegExp[]
  /** A task that creates a module (a new directory of sources, a new CMake target directory) needs its tests. */
  modules: boolean
  /** Every code task's doneWhen says its tests pass. */
  doneWhenTests: boolean
  /** The kinds held to the rule; absent: every kind that writes code (CODE_KINDS). */
  kinds?: ReadonlySet<TaskNode["kind"]>
  /** Directories that hold tracked files on the integration branch; absent: new directories are not judged. */
  existingDirs?: ReadonlySet<string>
}

interface Problem {
  path: string
  taskId?: string
  message: string
  fix: string
}

/** Without house rules: only public headers under include/ of the kinds that change code, as before the house rules. */
const LEGACY_INTERFACE_KINDS: ReadonlySet<TaskNode["kind"]> = new Set(["code", "fix", "refactor"])
/** Kinds that write code, so are held to the house rules. */
export const CODE_KINDS: ReadonlySet<TaskNode["kind"]> = new Set(["code", "fix", "refactor", "ui", "service"])

const HEADER = /\.(h|hh|hpp|hxx|h\+\+|inl|ipp|tpp)$/i
const SOURCE = /\.(c|cc|cpp|cxx|c\+\+|m|mm|h|hh|hpp|hxx|h\+\+|inl|ipp|tpp|qml)$/i
const CMAKE_LISTS = /(^|\/)CMakeLists\.txt$/
const TEST_PATH = /(^|\/)(tests?|unittests?|testing)\/|(^|\/|_|-)tests?[_\-.][^/]*$|[_\-]tests?\.[^/]+$/i
/** Public headers under an include/ directory (include/ or libs/x/include/): the default interface. */
const DEFAULT_INTERFACE: readonly RegExp[] = [/(^|\/)include\/.*\.(h|hh|hpp|hxx|h\+\+|inl|ipp|tpp)$/i]
/** The rule as it holds without a house rules file. */
export const LEGACY_RULES: BoundaryRules = { publicInterface: DEFAULT_INTERFACE, modules: false, doneWhenTests: false, kinds: LEGACY_INTERFACE_KINDS }

/** "its tests pass": a word for tests and a word for passing, in English or Chinese. */
const TESTS_WORD = /\b(tests?|ctest|unit[- ]tests?|test_\w+|\w+_test)\b|测试/i
const PASS_WORD = /\b(pass|passes|passed|passing|green|succeed|succeeds)\b|通过/i

const dirOf = (path: string): string => (path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "")

/**
 * The module a path belongs to: the part before its src/ or include/ directory (libs/net for libs/net/src/a.cpp and
 * libs/net/include/net/a.h), else its directory (src/parser for src/parser/x.cpp).
 */
export function moduleOf(path: string): string {
  const dirs = dirOf(path).split("/").filter(Boolean)
  const at = dirs.findIndex((d, i) => i > 0 && (d === "src" || d === "include"))
  if (at > 0) return dirs.slice(0, at).join("/")
  if (dirs[0] === "include" && dirs.length > 1) return dirs.slice(1).join("/")
  return dirs.join("/") || "."
}

const writes = (entry: TaskNode["writeSet"][number]) => entry.action !== "keep"

function carriesTests(task: TaskNode): boolean {
  return task.writeSet.some((entry) => entry.action !== "keep" && entry.action !== "delete" && TEST_PATH.test(entry.path))
}

/** The public-interface files of `task`'s write-set, under `rules`. */
export function interfaceFiles(task: TaskNode, rules: BoundaryRules = LEGACY_RULES): string[] {
  if (!(rules.kinds ?? CODE_KINDS).has(task.kind)) return []
  return task.writeSet.filter((e) => writes(e) && !TEST_PATH.test(e.path) && rules.publicInterface.some((re) => re.test(e.path))).map((e) => e.path)
}

/** The modules `task` adds: a CMakeLists.txt it creates below the root, or sources it creates in a directory the branch lacks. */
function addedModules(task: TaskNode, rules: BoundaryRules): string[] {
  if (!rules.modules || !(rules.kinds ?? CODE_KINDS).has(task.kind)) return []
  const out = new Set<string>()
  for (const entry of task.writeSet) {
    if (entry.action !== "create" || TEST_PATH.test(entry.path)) continue
    const dir = dirOf(entry.path)
    if (dir === "") continue
    if (CMAKE_LISTS.test(entry.path)) out.add(moduleOf(`${dir}/src/x`))
    else if (rules.existingDirs && SOURCE.test(entry.path) && !rules.existingDirs.has(dir)) out.add(moduleOf(entry.path))
  }
  return [...out]
}

/** Whether a doneWhen says the task's tests pass. */
export function saysTestsPass(doneWhen: string): boolean {
  return TESTS_WORD.test(doneWhen) && PASS_WORD.test(doneWhen)
}

/**
 * The problems of `tasks` under the boundary rules. `judged` says which tasks are held to them (all of a new
 * graph; a delta's own tasks): a graph accepted earlier is not judged again.
 */
export function boundaryProblems(tasks: readonly TaskNode[], rules: BoundaryRules, pathOf: (i: number) => string, judged: (i: number) => boolean = () => true): Problem[] {
  const live = (t: TaskNode) => t.status !== "invalidated"
  const tested = new Set<string>()
  for (const task of tasks) if (live(task) && task.kind === "test") for (const dep of task.deps) tested.add(dep)
  const problems: Problem[] = []
  tasks.forEach((task, i) => {
    if (!live(task) || !judged(i)) return
    const slug = task.id.toLowerCase().replace(/[^a-z0-9]+/g, "_")
    const covered = tested.has(task.id) || carriesTests(task)
    const added = covered ? [] : addedModules(task, rules)
    if (added.length > 0)
      problems.push({
        path: `${pathOf(i)}.writeSet`,
        taskId: task.id,
        message: `task ${task.id} adds the module ${added.join(", ")} but no test task depends on it and it writes no test file, so the new module has no tests at its boundary`,
        fix: `add a task of kind "test" with "${task.id}" in its deps that tests ${added.join(", ")} (e.g. tests/test_${added[0]!.replace(/[^A-Za-z0-9]+/g, "_")}.cpp), or put the test file in ${task.id}'s write-set`,
      })
    const headers = covered ? [] : interfaceFiles(task, rules)
    if (headers.length > 0 && added.length === 0) {
      const modules = [...new Set(headers.map(moduleOf))]
      problems.push({
        path: `${pathOf(i)}.writeSet`,
        taskId: task.id,
        message: `task ${task.id} changes a public interface (${headers.join(", ")}) but no test task depends on it and it writes no test file, so nothing checks the module ${modules.join(", ")} at its boundary`,
        fix: `add a task of kind "test" with "${task.id}" in its deps that tests the changed interface (e.g. tests/test_${slug}.cpp), or put the test file in ${task.id}'s write-set`,
      })
    }
    if (rules.doneWhenTests && (rules.kinds ?? CODE_KINDS).has(task.kind) && !saysTestsPass(task.doneWhen))
      problems.push({
        path: `${pathOf(i)}.doneWhen`,
        taskId: task.id,
        message: `task ${task.id} writes code but its doneWhen ("${task.doneWhen}") does not include its tests passing`,
        fix: `end the doneWhen with "and its tests pass" (name them when you can, e.g. "ctest passes test_${slug}")`,
      })
  })
  return problems
}

import type { TaskGraph, TaskNode, WriteEntry } from "./task.schema"
import { isLive } from "./graph-index"

interface Conflict {
  a: string
  b: string
  path: string
  why: string
}

const LINE_RANGE = /^L(\d+)(?:\s*-\s*L?(\d+))?$/i

/**
 * Two entries for the same file conflict unless both only keep it, or they name regions that do not
 * overlap. A create or delete rewrites the whole file, and an entry without a region may touch any part.
 */
export function entriesConflict(a: WriteEntry, b: WriteEntry): string | null {
  if (a.action === "keep" && b.action === "keep") return null
  if (a.action === "create" || a.action === "delete" || b.action === "create" || b.action === "delete")
    return `${a.action} and ${b.action} of the whole file`
  if (a.region === undefined || b.region === undefined) return "one of them touches the whole file"
  return regionsOverlap(a.region, b.region) ? `both touch region ${a.region === b.region ? a.region : `${a.region} / ${b.region}`}` : null
}

function regionsOverlap(a: string, b: string): boolean {
  const ra = LINE_RANGE.exec(a.trim())
  const rb = LINE_RANGE.exec(b.trim())
  if (ra && rb) {
    const [a0, a1] = range(ra)
    const [b0, b1] = range(rb)
    return a0 <= b1 && b0 <= a1
  }
  return a.trim() === b.trim()
}

function range(m: RegExpExecArray): [number, number] {
  const start = Number(m[1])
  const end = m[2] === undefined ? start : Number(m[2])
  return start <= end ? [start, end] : [end, start]
}

/** First conflict between two tasks' write-sets, looking only at the files they share. */
export function tasksConflict(a: TaskNode, b: TaskNode): Conflict | null {
  // Write-sets are a handful of entries: a direct comparison beats building an index for two tasks.
  // (Many tasks at once go through FileIndex.)
  if (a.writeSet.length * b.writeSet.length > 64) return conflictThroughIndex(a, b)
  for (const entry of a.writeSet)
    for (const other of b.writeSet) {
      if (entry.path !== other.path) continue
      const why = entriesConflict(entry, other)
      if (why) return { a: a.id, b: b.id, path: other.path, why }
    }
  return null
}

function conflictThroughIndex(a: TaskNode, b: TaskNode): Conflict | null {
  const index = new FileIndex()
  index.add(a)
  const found = index.conflictFor(b)
  return found ? { ...found, a: a.id, b: b.id } : null
}

/**
 * Holders of files: an index from path to the write entries of a set of tasks, so that a task is compared
 * only with tasks that share one of its files.
 */
export class FileIndex {
  private readonly byPath = new Map<string, { task: TaskNode; entry: WriteEntry }[]>()

  add(task: TaskNode): void {
    for (const entry of task.writeSet) {
      const list = this.byPath.get(entry.path)
      if (list) list.push({ task, entry })
      else this.byPath.set(entry.path, [{ task, entry }])
    }
  }

  /** The first indexed task (other than the task itself) that conflicts with it. */
  conflictFor(task: TaskNode): Conflict | null {
    for (const entry of task.writeSet) {
      const holders = this.byPath.get(entry.path)
      if (!holders) continue
      for (const holder of holders) {
        if (holder.task.id === task.id) continue
        const why = entriesConflict(holder.entry, entry)
        if (why) return { a: holder.task.id, b: task.id, path: entry.path, why }
      }
    }
    return null
  }

  buckets(): IterableIterator<[string, { task: TaskNode; entry: WriteEntry }[]]> {
    return this.byPath.entries()
  }
}

/**
 * Every pair of live tasks whose write-sets conflict, one entry per pair. Tasks meet only inside the bucket
 * of a file they share, so the cost follows the number of sharers per file, not the number of tasks squared.
 */
export function findConflicts(graph: TaskGraph): Conflict[] {
  const index = new FileIndex()
  for (const task of graph.tasks) if (isLive(task)) index.add(task)
  const seen = new Set<string>()
  const out: Conflict[] = []
  for (const [path, holders] of index.buckets()) {
    for (let i = 0; i < holders.length; i++) {
      for (let j = i + 1; j < holders.length; j++) {
        const x = holders[i]!
        const y = holders[j]!
        if (x.task.id === y.task.id) continue
        const why = entriesConflict(x.entry, y.entry)
        if (!why) continue
        const key = x.task.id < y.task.id ? `${x.task.id}\u0000${y.task.id}` : `${y.task.id}\u0000${x.task.id}`
        if (seen.has(key)) continue
        seen.add(key)
        out.push({ a: x.task.id, b: y.task.id, path, why })
      }
    }
  }
  return out
}

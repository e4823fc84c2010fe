import path from "node:path"

/**
 * Which build slot (`build-slot.ts`) a task's gates take: an in-process pool per project. A task's repair attempt
 * goes back to the slot that built its previous attempt when that one is idle (its build is the closest);
 * otherwise the idle slot released last (it holds the newest tree), otherwise a new one. The pool never holds
 * more slots than gate runs that were at once in flight, so it is bounded by the run's concurrency.
 *
 * Only this process's bookkeeping: a slot's build directory, and whether its last use ended, are on disk
 * (`BuildSlot`); after a restart the pool starts empty and hands out `slot-1`, `slot-2`, … again, whose
 * directories are still there.
 */
export namespace SlotPool {
  type Slot = { id: string; busy: boolean; lastTask?: string; released: number }

  const pools = new Map<string, Slot[]>()
  let clock = 0

  /** A slot id for `taskId`'s gates, marked busy until `release`. */
  export function acquire(root: string, taskId: string): string {
    const key = path.resolve(root)
    const slots = pools.get(key) ?? []
    pools.set(key, slots)
    const idle = slots.filter((s) => !s.busy)
    const chosen = idle.find((s) => s.lastTask === taskId) ?? idle.sort((a, b) => b.released - a.released)[0]
    const slot = chosen ?? { id: `slot-${slots.length + 1}`, busy: false, released: 0 }
    if (!chosen) slots.push(slot)
    slot.busy = true
    slot.lastTask = taskId
    return slot.id
  }

  export function release(root: string, id: string): void {
    const slot = pools.get(path.resolve(root))?.find((s) => s.id === id)
    if (!slot) return
    slot.busy = false
    slot.released = ++clock
  }
}

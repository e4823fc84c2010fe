import { expect } from "vitest"
import type { Command } from "../../src/scheduler/core/command"
import { transition } from "../../src/scheduler/core/machine"
import type { SchedulerState } from "../../src/scheduler/core/state"
import { ev, statusOf, type EventInput } from "./fixtures"
import { deepFreeze } from "./invariants"

/** One row of a transition table: a state, an event, and what must come of it. */
export interface TableRow {
  rule: string
  given: () => SchedulerState
  event: EventInput
  statuses?: Record<string, string>
  /** The commands, in order, as the table's `show` writes them. */
  commands: string[]
  check?: (state: SchedulerState, commands: Command[]) => void
}

/** Applies the row's event to its frozen state (a rule that writes in place throws) and checks the outcome. */
export function checkRow(row: TableRow, show: (command: Command) => string): void {
  const given = deepFreeze(row.given())
  const result = transition(given, ev(row.event))
  if ("refused" in result) throw new Error(`refused: ${result.refused}`)
  expect(result.commands.map(show)).toEqual(row.commands)
  for (const [id, status] of Object.entries(row.statuses ?? {})) expect(`${id}:${statusOf(result.state, id)}`).toBe(`${id}:${status}`)
  row.check?.(result.state, result.commands)
  expect(result.state.eventCount).toBe(given.eventCount + 1)
}

/** A command as the fault tables write it: the dispatched task and role, the question asked, else type and task. */
export function showByTask(command: Command): string {
  if (command.type === "dispatch") return `dispatch:${command.taskId}:${command.role}`
  if (command.type === "ask") return `ask:${command.questionId}`
  if ("taskId" in command) return `${command.type}:${command.taskId}`
  return command.type
}

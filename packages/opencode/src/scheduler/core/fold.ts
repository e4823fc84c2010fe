import type { Event } from "./event.schema"
import { Folder, transition } from "./machine"
import { initialState, type SchedulerState } from "./state"

/** state = fold(events): the same events always give the same state. Events the rules refuse are reported. */
export function foldEvents(events: Iterable<Event>, from: SchedulerState = initialState()): { state: SchedulerState; refused: { index: number; reason: string }[] } {
  let state = from
  const refused: { index: number; reason: string }[] = []
  let index = 0
  for (const event of events) {
    const result = transition(state, event)
    if ("refused" in result) refused.push({ index, reason: result.refused })
    else state = result.state
    index++
  }
  return { state, refused }
}

/** The same fold, faster (see Folder); an event the rules refuse sends it back to `foldEvents`, which reports it. */
export function foldEventsFast(events: readonly Event[], from: SchedulerState = initialState()): { state: SchedulerState; refused: { index: number; reason: string }[] } {
  const folder = new Folder(from)
  for (const event of events) if (folder.apply(event)) return foldEvents(events, from)
  return { state: folder.state, refused: [] }
}

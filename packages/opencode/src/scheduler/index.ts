/**
 * The Scheduler core: schemas, validation, graph operations, the pure state machine and its durable store.
 * Import as `import { Scheduler } from "./scheduler"` and use `Scheduler.transition`, `Scheduler.Store` …
 */
export * as Scheduler from "./exports"
export * from "./exports"

/**
 * The process the crash test kills: it opens the store, takes over whatever the last process left, and
 * drives a simulated run through the store as fast as it can until it is killed or the run finishes.
 * Usage: bun crash-child.ts <air-root> <seed>
 */
import { outstanding } from "../../src/scheduler/core/outstanding"
import { Store } from "../../src/scheduler/runtime/store/store"
import { randomGraph, rngFrom, Simulator, TEST_CONFIG } from "./simulate"

const [airRoot, seedText] = process.argv.slice(2)
if (!airRoot || !seedText) throw new Error("usage: crash-child.ts <air-root> <seed>")
const seed = Number(seedText)
const rng = rngFrom(seed)
const store = await Store.open(airRoot, { snapshotEvery: 5, lockTimeoutMs: 10_000 })
const sim = new Simulator(rng, { trouble: 0.3, answers: 3, changes: 1, milestoneFixes: 1 }, undefined, store.state, (_state, event) => store.append(event))
process.stdout.write("ready\n")
const stage = store.state.stage
if (stage === "idle" || stage === "planning" || stage === "confirming" || stage === "confirmed")
  sim.start(randomGraph(rngFrom(seed ^ 0x5eed), { tasks: 40, phases: 2, files: 6, maxDeps: 2 }), { ...TEST_CONFIG, concurrency: 3 })
else sim.adopt(outstanding(store.state))
while (sim.step()) {}
store.close()
process.stdout.write(`finished ${store.state.finished?.status ?? store.state.stage}\n`)

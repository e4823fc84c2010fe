// A deploy in a process of its own, killed (SIGKILL, no handler runs) at the point the test names: a crash of
// AirCoding in the middle of a deploy. Args: a JSON of Deploy.Options without hooks, and the point; `none`
// leaves the kill to the test (it kills this process while a remote step runs).
import { Deploy } from "../../src/scheduler/runtime/deploy/deploy"

const [json, point] = process.argv.slice(2)
const options = JSON.parse(json!) as Deploy.Options
const die = () => {
  process.kill(process.pid, "SIGKILL")
  return new Promise<void>(() => undefined)
}
const hooks: Deploy.Hooks = point === "afterSwitch" ? { afterSwitch: die } : point === "none" ? {} : { afterTransfer: die }
await Deploy.run({ ...options, hooks })
process.exit(3)

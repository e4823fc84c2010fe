// A deploy in a process of its own, killed (SIGKILL, no handler runs) at the point the test names: a crash of
// AirCoding in the middle of a deploy. Args: a JSON of Deploy.Options without hooks, and the point.
import { Deploy } from "../../src/scheduler/runtime/deploy/deploy"

const [json, point] = process.argv.slice(2)
const options = JSON.parse(json!) as Deploy.Options
const die = () => {
  process.kill(process.pid, "SIGKILL")
  return new Promise<void>(() => undefined)
}
await Deploy.run({ ...options, hooks: point === "afterSwitch" ? { afterSwitch: die } : { afterTransfer: die } })
process.exit(3)

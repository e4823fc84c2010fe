// Started by process.test.ts: runs a command whose child hangs, prints the child's pid, and waits to be signalled.
import { Proc } from "../../src/scheduler/runtime/process.ts"

const pidFile = process.argv[2]!
void Proc.run("sh", ["-c", `sleep 1000 & echo $! > ${pidFile}; wait`], { cwd: "/", env: process.env })
setInterval(() => {}, 1000)

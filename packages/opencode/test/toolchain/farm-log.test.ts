import { describe, expect, test } from "vitest"
import { Farm } from "../../src/scheduler/runtime/toolchain/farm.ts"

/**
 * distcc 3.4's verbose log, as a build writes it (lines taken from a real run against a refused port): a host is
 * named by "exec on" before distcc connects, so a compile counts for a host only if it did not fall back after.
 */
const refusedThenLocal = [
  "distcc[24502] exec on 127.0.0.1:1/2: x86_64-linux-gnu-g++ -c a.cpp -o a.o",
  "distcc[24502] (dcc_connect_by_name) connecting to 127.0.0.1 port 1",
  "distcc[24502] ERROR: nonblocking connect to 127.0.0.1:1 failed: Connection refused",
  "distcc[24502] Warning: failed to distribute a.cpp to 127.0.0.1:1/2, running locally instead",
  "distcc[24502] exec on localhost: x86_64-linux-gnu-g++ -c a.cpp -o a.o",
]
const ranRemotely = ["distcc[24600] exec on 127.0.0.1:3632/2: x86_64-linux-gnu-g++ -c b.cpp -o b.o", "distcc[24600] compile b.cpp on 127.0.0.1:3632/2 completed ok"]

/** One compile trying both hosts of a farm that is down, then its own compiler. */
const bothRefused = [
  "distcc[25] exec on 127.0.0.1:33471/2: /usr/bin/c++ -c x.cpp",
  "distcc[25] ERROR: nonblocking connect to 127.0.0.1:33471 failed: Connection refused",
  "distcc[25] exec on 127.0.0.1:42533/2: /usr/bin/c++ -c x.cpp",
  "distcc[25] ERROR: nonblocking connect to 127.0.0.1:42533 failed: Connection refused",
  "distcc[25] Warning: failed to distribute x.cpp to 127.0.0.1:42533/2, running locally instead",
  "distcc[25] exec on localhost: /usr/bin/c++ -c x.cpp",
]

describe("Farm.readLog", () => {
  test("a compile that tried every host and ran locally counts for none of them", () => {
    expect(Farm.readLog(bothRefused.join("\n"))).toEqual({ remote: {}, failedHosts: ["127.0.0.1:33471", "127.0.0.1:42533"], localFallbacks: 1 })
  })

  test("a compile whose host refused and that ran locally counts for no host", () => {
    expect(Farm.readLog(refusedThenLocal.join("\n"))).toEqual({ remote: {}, failedHosts: ["127.0.0.1:1"], localFallbacks: 1 })
  })

  test("interleaved distcc processes: the one that ran remotely counts, the one that fell back does not", () => {
    const lines = [refusedThenLocal[0]!, ranRemotely[0]!, ...refusedThenLocal.slice(1), ranRemotely[1]!]
    expect(Farm.readLog(lines.join("\n"))).toEqual({ remote: { "127.0.0.1:3632": 1 }, failedHosts: ["127.0.0.1:1"], localFallbacks: 1 })
    expect(Farm.describe(Farm.readLog(lines.join("\n")))).toBe("farm: 1 compile(s) sent; 127.0.0.1:1 failed, 1 compile(s) run locally")
  })
})

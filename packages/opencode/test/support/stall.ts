/**
 * A "bounded" check without a wall-clock bound (issue 42 item 7): the test sets up a stall far longer than the
 * bound under test (a command that sleeps, a model that holds its answer) and requires the outcome before the
 * stall would have ended. A loaded machine makes the outcome slower, never the stall shorter, so the check fails
 * only when the bound was not applied. test/read/no-time-bounds.test.ts refuses the other kind.
 */
export type Stall = { ms: number; what: string }

/** The outcome, or a failure naming the stall if the stall would have ended first. */
export async function beforeStallEnds<T>(outcome: Promise<T>, stall: Stall): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const ended = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${stall.what} (${stall.ms / 1000} s) ended before the outcome arrived: the bound under test was not applied`)), stall.ms)
  })
  try {
    return await Promise.race([outcome, ended])
  } finally {
    clearTimeout(timer)
  }
}

/** Polls `check` until it holds; fails naming the stall if it still does not hold when the stall would have ended. */
export async function untilBeforeStallEnds(check: () => boolean | Promise<boolean>, stall: Stall): Promise<void> {
  const end = Date.now() + stall.ms
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`${stall.what} (${stall.ms / 1000} s) ended and the condition still did not hold: the bound under test was not applied`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

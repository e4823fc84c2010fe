/**
 * One kind of serialiser: a promise chain per key. Work given for a key runs after every earlier work of
 * that key has settled (success or failure: one failure never blocks the queue), in the order given;
 * different keys run concurrently. The chain is joined synchronously, so the order is the call order.
 * Keys are dropped once their chain is idle (no growth over a long run).
 */
export class Serial {
  private readonly chains = new Map<string, Promise<unknown>>()

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.chains.get(key) ?? Promise.resolve()
    const next = previous.then(work, work)
    const settled = next.catch(() => undefined)
    this.chains.set(key, settled)
    void settled.then(() => {
      if (this.chains.get(key) === settled) this.chains.delete(key)
    })
    return next
  }

  /** Keys with work queued or running (for tests and diagnostics). */
  get busy(): number {
    return this.chains.size
  }
}

/** A single chain (a Serial with one key), for an object that orders its own work. */
export class Queue {
  private readonly serial = new Serial()
  run<T>(work: () => Promise<T>): Promise<T> {
    return this.serial.run("", work)
  }
}

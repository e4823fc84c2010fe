import { describe, expect, it } from "vitest"
import { startScriptedModel } from "../src/index.ts"
import { openCodeLike, post, system, user } from "./helpers.ts"

const scenario = { name: "s", scripts: [{ agent: "a", steps: [{ text: "hi" }] }] }

describe("server lifecycle", () => {
  it("refuses a taken port with a message that says how to fix it", async () => {
    const first = await startScriptedModel({ scenario })
    try {
      await expect(startScriptedModel({ scenario, port: first.port })).rejects.toThrow(`cannot listen on 127.0.0.1:${first.port}`)
    } finally {
      await first.close()
    }
  })

  it("closes at once even while a client keeps its connection alive and another waits on a held answer", async () => {
    // The held answer is the stall: 60 s, far longer than closing takes. close() must not wait for it.
    const stallMs = 60_000
    const m = await startScriptedModel({ scenario: { ...scenario, inject: [{ fault: "stall", match: "^held", stallMs }] } })
    expect((await post(m, openCodeLike([system("a"), user("x")]))).status).toBe(200)
    const held = post(m, openCodeLike([system("a"), user("held")])).then(
      (r) => r.text().then(() => "answered"),
      () => "cut",
    )
    // Give the held request time to reach the server (no assertion hangs on this wait).
    await new Promise((resolve) => setTimeout(resolve, 300))
    let timer: ReturnType<typeof setTimeout> | undefined
    const stallEnded = new Promise<string>((resolve) => (timer = setTimeout(() => resolve("the stall ended first"), stallMs)))
    expect(await Promise.race([m.close().then(() => "closed"), stallEnded])).toBe("closed")
    clearTimeout(timer)
    expect(await held).toBe("cut")
    await expect(fetch(`${m.url}/models`)).rejects.toThrow()
  })

  it("serves on the requested port and host", async () => {
    const probe = await startScriptedModel({ scenario })
    const port = probe.port
    await probe.close()
    const m = await startScriptedModel({ scenario, port, host: "127.0.0.1" })
    try {
      expect(m.url).toBe(`http://127.0.0.1:${port}/v1`)
      expect((await fetch(`${m.url}/models`)).status).toBe(200)
    } finally {
      await m.close()
    }
  })
})

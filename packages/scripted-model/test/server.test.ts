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

  it("closes promptly even while a client keeps its connection alive", async () => {
    const m = await startScriptedModel({ scenario })
    expect((await post(m, openCodeLike([system("a"), user("x")]))).status).toBe(200)
    const t0 = Date.now()
    await m.close()
    expect(Date.now() - t0).toBeLessThan(2000)
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

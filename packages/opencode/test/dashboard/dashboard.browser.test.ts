import { mkdirSync } from "node:fs"
import { join } from "node:path"
import type { BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { DashboardServer } from "../../src/dashboard/server"
import { KEYS } from "../../src/text/words"
import { makeProgramRun } from "../support/program-evidence"
import { append, ARTIFACTS, copyFixture, keepFirst, launchChromium } from "./helpers"

/**
 * The dashboard in headless Chromium against the recorded run (a copy per server): what a person
 * sees must follow the log live, and the evidence must be one click away.
 */
let browser: { context: BrowserContext; close: () => Promise<void> }
const cleanups: (() => Promise<void> | void)[] = []

beforeAll(async () => {
  browser = await launchChromium()
})

afterAll(async () => {
  for (const c of cleanups.reverse()) await c()
  await browser?.close()
})

async function serve(opts: { keep?: number; lang?: "en" | "zh-CN"; token?: string; program?: boolean } = {}) {
  const copy = copyFixture()
  // T-1 a ui task and T-3 a service task, with their capture and probe on disk.
  if (opts.program) makeProgramRun(copy.root)
  const lines = opts.keep !== undefined ? keepFirst(copy.root, opts.keep) : []
  const running = await DashboardServer.start({ root: copy.root, lang: opts.lang ?? "en", port: 0, pollMs: 50, token: opts.token })
  cleanups.push(copy.cleanup, () => running.close())
  return { root: copy.root, url: running.url, lines }
}

async function open(url: string): Promise<Page> {
  const page = await browser.context.newPage()
  const errors: string[] = []
  page.on("pageerror", (e) => errors.push(e.message))
  cleanups.push(() => {
    expect(errors, "the page threw").toEqual([])
  })
  await page.goto(url)
  await page.locator("#live.on").waitFor()
  return page
}

const node = (page: Page, id: string) => page.locator(`#graph g.node[data-task="${id}"]`)

describe("dashboard in headless Chromium", () => {
  test("every task node of the recorded run is drawn with its state, with edges for dependencies", async () => {
    const { url } = await serve()
    const page = await open(url)
    await expect.poll(() => page.locator("#graph g.node").count()).toBe(3)
    for (const id of ["T-1", "T-2", "T-3"]) expect(await node(page, id).getAttribute("data-state")).toBe("merged")
    expect(await page.locator("#graph path.edge").count()).toBe(2)
    expect(await page.locator('#graph path.edge[data-from="T-1"][data-to="T-2"]').count()).toBe(1)
    expect(await node(page, "T-1").locator("rect").getAttribute("fill")).toBe("#15803d")
    expect(await page.locator("#timeline li").count()).toBe(32)
    expect(await page.locator("#run-status").textContent()).toBe("done")
    expect(await page.locator("#waiting").textContent()).toContain("nothing: the run is finished")
    expect(await page.locator("#budgets").textContent()).toContain("T-2 1/3 (2 left)")
    await page.close()
  })

  test("an event appended to the log shows up on the page without a reload", async () => {
    // Stop the log right after T-2 failed cppcheck: T-2 debugging, T-3 in review.
    const { root, url, lines } = await serve({ keep: 21 })
    const page = await open(url)
    await expect.poll(() => node(page, "T-2").getAttribute("data-state")).toBe("debugging")
    expect(await node(page, "T-3").getAttribute("data-state")).toBe("reviewing")
    expect(await page.locator("#timeline li").count()).toBe(21)
    await page.evaluate(() => ((window as unknown as { sameDocument: boolean }).sameDocument = true))

    append(root, lines.slice(21, 25)) // the debugger starts; T-3's review passes and it merges
    await expect.poll(() => node(page, "T-3").getAttribute("data-state"), { timeout: 10_000 }).toBe("merged")
    await page.locator('#timeline li[data-seq="25"][data-type="merge.succeeded"]').waitFor()
    expect(await page.locator("#timeline li").count()).toBe(25)
    expect(await page.locator("#waiting").textContent()).toContain("the debugger on T-2 (session ses_t2_dbg2)")
    expect(await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument)).toBe(true)
    mkdirSync(ARTIFACTS, { recursive: true })
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-mid-run.png"), fullPage: true })

    append(root, lines.slice(25)) // the rest of the run
    await expect.poll(() => node(page, "T-2").getAttribute("data-state"), { timeout: 10_000 }).toBe("merged")
    await expect.poll(() => page.locator("#run-status").textContent()).toBe("done")
    await page.close()
  })

  test("the evidence view of a task opens and shows its cppcheck output; a screenshot is kept", async () => {
    const { url } = await serve()
    const page = await open(url)
    await node(page, "T-2").click()
    const evidence = page.locator('#evidence[data-task="T-2"]')
    await evidence.locator('.attempt[data-attempt="1"]').waitFor()
    // The failed gate run opens on the failing log.
    const cppcheck = evidence.locator('.attempt[data-attempt="1"] details.log-cppcheck')
    expect(await cppcheck.getAttribute("open")).not.toBeNull()
    await expect.poll(() => cppcheck.locator("pre").innerText()).toContain("src/parser.cpp:42:error:uninitvar:Uninitialized variable: result")
    expect(await evidence.locator('.attempt[data-attempt="1"] pre.message').innerText()).toContain("Analysis of src/parser.cpp failed")
    // The passing run's logs are one click away.
    const fixed = evidence.locator('.attempt[data-attempt="2"] details.log-cppcheck')
    await fixed.locator("summary").click()
    // A log is fetched when its details open: read once it has come.
    await expect.poll(() => fixed.locator("pre").innerText()).toContain("Checking src/parser.cpp")
    expect(await evidence.locator(".sessions").innerText()).toMatch(/ses_t2_exec1[\s\S]*ses_t2_dbg2[\s\S]*ses_t2_rev1/)
    expect(await evidence.locator(".review").getAttribute("data-verdict")).toBe("pass")
    await evidence.locator('.attempt[data-attempt="2"] details.log-diff summary').click()
    await expect.poll(() => evidence.locator('.attempt[data-attempt="2"] details.log-diff pre').innerText()).toContain("double result = 0.0;")
    await fixed.locator("summary").click()
    await evidence.locator('.attempt[data-attempt="2"] details.log-diff summary').click()
    mkdirSync(ARTIFACTS, { recursive: true })
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-recorded-run.png"), fullPage: true })
    await page.locator("#close-evidence").click()
    await expect.poll(() => page.locator("#evidence").getAttribute("data-task")).toBe("")
    await page.close()
  })

  test("a ui task's evidence shows its before and after pictures and the changed share; a service task's its network summary", async () => {
    const { url } = await serve({ program: true, token: "s3cret-token-0123456789" })
    const page = await open(url)
    await node(page, "T-1").click()
    const capture = page.locator('#evidence[data-task="T-1"] .attempt[data-attempt="1"] .program .capture')
    await capture.waitFor()
    for (const shot of ["before", "screenshot"]) {
      const img = capture.locator(`.shot-${shot} img`)
      // Loaded through the dashboard's route (with the token's cookie): the planted 32x24 PNG.
      await expect.poll(() => img.evaluate((i: HTMLImageElement) => i.complete && i.naturalWidth)).toBe(32)
    }
    expect(await capture.locator("figcaption").allInnerTexts()).toEqual(["Before: the base", "After: the task's build"])
    expect(await capture.locator("h5 .changed").innerText()).toBe("99.0% of the pixels changed")
    expect(await capture.locator(".windows").innerText()).toContain("Air UI demo 320×240")
    mkdirSync(ARTIFACTS, { recursive: true })
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-ui-capture.png"), fullPage: true })
    await node(page, "T-3").click()
    const network = page.locator('#evidence[data-task="T-3"] .program .network')
    await network.waitFor()
    expect(await network.locator("pre.summary").innerText()).toContain("#1 127.0.0.1:40000 → 127.0.0.1:7000: closed (FIN), 10 packets")
    expect(await network.locator(".files a").first().getAttribute("href")).toContain("api/tasks/T-3/files/1/probe/capture.pcap")
    await page.close()
  })

  test("the first paint has the words and the run's state, before the live stream says anything", async () => {
    // Two events in: the plan waits for the user's confirmation.
    const { url } = await serve({ keep: 2, lang: "zh-CN" })
    const page = await browser.context.newPage()
    await page.route("**/api/stream**", (route) => route.abort()) // no stream: only the first HTML speaks
    await page.goto(url)
    await page.locator("#graph-panel h2").waitFor()
    const text = (await page.locator("body").innerText()).replace(/\s+/g, " ")
    expect(KEYS.filter((key) => text.includes(key))).toEqual([]) // event types (run.started) are ids, not keys
    expect(await page.locator("#graph-panel h2").textContent()).toBe("任务图")
    expect(await page.locator("#run-status").textContent()).toBe("等待中")
    expect(await page.locator("#waiting").textContent()).toContain("你对计划的确认")
    await page.close()
  })

  test("the page speaks the configured language", async () => {
    const { url } = await serve({ lang: "zh-CN" })
    const page = await open(url)
    await expect.poll(() => page.locator("#graph-panel h2").textContent()).toBe("任务图")
    expect(await node(page, "T-1").locator("text.node-state").textContent()).toBe("已合并")
    expect(await page.locator("html").getAttribute("lang")).toBe("zh-CN")
    await page.close()
  })

  test("with a token, the page works from the printed URL and refuses a request without it", async () => {
    const token = "0123456789abcdef0123"
    const { url } = await serve({ token })
    expect(url).toContain(`?token=${token}`)
    const page = await open(url)
    await expect.poll(() => page.locator("#graph g.node").count()).toBe(3)
    await page.close()
    const bare = url.replace(/\?token=.*$/, "")
    expect((await fetch(bare + "api/run")).status).toBe(401)
    expect((await fetch(bare + "api/run", { headers: { authorization: `Bearer ${token}` } })).status).toBe(200)
  })
})

import { existsSync } from "node:fs"
import { mkdir } from "node:fs/promises"
import { dirname, join } from "node:path"
import { HouseRules } from "../scheduler/runtime/house/rules"
import { writeFileAtomic } from "../scheduler/runtime/store/atomic"
import { LoggingDetect } from "./logging-detect"

/**
 * `aircoding init`'s step for the house rules: `.air/shared/rules/house.json` written from what the project already
 * logs with (kept when it exists, unless detection is asked again), and one line per decision for people.
 */
export namespace HouseInit {
  export interface Outcome {
    file: string
    rules: HouseRules.Loaded
    reasons: string[]
  }

  export async function run(root: string, redetect: boolean): Promise<Outcome> {
    const file = join(root, HouseRules.RULES_PATH)
    if (existsSync(file) && !redetect) {
      const rules = HouseRules.load(root)!
      return { file, rules, reasons: [`kept the house rules of the existing ${HouseRules.RULES_PATH} (--redetect detects them again)`, ...rules.warnings] }
    }
    const found = await LoggingDetect.detect(root)
    const logging =
      found.library === "none" ? { library: "spdlog" } : found.library === "own" ? { library: "own", include: found.include, calls: found.calls } : { library: found.library }
    const text = JSON.stringify({ schemaVersion: 1, logging }, null, 2) + "\n"
    // Checked as it will be read: init never writes a file the run would refuse.
    const rules = HouseRules.parse(text, file)
    await mkdir(dirname(file), { recursive: true })
    await writeFileAtomic(file, text, { backup: false })
    return { file, rules, reasons: [reason(found, rules)] }
  }

  function reason(found: LoggingDetect.Found, rules: HouseRules.Loaded): string {
    const calls = rules.logging?.calls.join(", ") ?? ""
    if (found.library === "none")
      return `logging: no logging library found, so the rule is spdlog: the first plan integrates it (find_package, offline), and new code logs with ${calls} instead of std::cout/printf`
    const name = found.library === "own" ? `its own logging header ${found.where}` : found.library === "qt" ? "Qt's logging" : found.library
    return `logging: the project uses ${name} (seen in ${found.where}), so the rule is that library (no spdlog imposed): new code logs with ${calls} instead of std::cout/printf`
  }
}

import { readFile } from "node:fs/promises"
import path from "node:path"
import { describe, expect, test } from "vitest"
import { Init } from "../../src/cli/init.ts"
import { HouseInit } from "../../src/knowledge/house-init.ts"
import { LoggingDetect } from "../../src/knowledge/logging-detect.ts"
import { HouseRules } from "../../src/scheduler/runtime/house/rules.ts"
import { LibraryUse } from "../../src/scheduler/runtime/house/library-use.ts"
import { validateGraph } from "../../src/scheduler/core/validate.ts"
import { graphOf, task } from "../scheduler/fixtures.ts"
import { createCppRepo } from "../runtime/cpp-repo.ts"

const SPDLOG_MAIN = `#include <spdlog/spdlog.h>\nint main() { spdlog::info("up"); }\n`
const GLOG_MAIN = `#include <glog/logging.h>\nint main(int, char** argv) { google::InitGoogleLogging(argv[0]); LOG(INFO) << "up"; }\n`
const QT_MAIN = `#include <QLoggingCategory>\nQ_LOGGING_CATEGORY(app, "app")\nint main() { qCInfo(app) << "up"; }\n`
const OWN_LOG_H = `#pragma once\n#include <cstdio>\n#define LOG_INFO(...) app::log(1, __VA_ARGS__)\n#define LOG_ERROR(...) app::log(3, __VA_ARGS__)\nnamespace app { void log(int level, const char* fmt, ...); }\n`

/** A small project the test writes: the calc library plus `files`, committed. */
async function project(files: Record<string, string | null>) {
  return createCppRepo({ files })
}

describe("aircoding init detects what the project logs with and writes the matching rule", () => {
  test.each([
    ["spdlog (its include)", { "src/main.cpp": SPDLOG_MAIN }, "spdlog"],
    ["glog (its include)", { "src/main.cpp": GLOG_MAIN }, "glog"],
    ["Qt's logging (QLoggingCategory)", { "src/main.cpp": QT_MAIN }, "qt"],
  ])("%s → that library, never spdlog imposed on it", async (_what, files, library) => {
    const repo = await project(files)
    try {
      expect(await LoggingDetect.detect(repo.root)).toEqual({ library, where: "src/main.cpp" })
      const outcome = await HouseInit.run(repo.root, false)
      expect(outcome.rules.logging?.library).toBe(library)
      expect(outcome.reasons[0]).toContain("no spdlog imposed")
      expect(JSON.parse(await readFile(path.join(repo.root, HouseRules.RULES_PATH), "utf8"))).toEqual({ schemaVersion: 1, logging: { library } })
    } finally {
      await repo.cleanup()
    }
  })

  test("a project using glog gets no spdlog task: its rule asks for no integration, and a plan without one is accepted", async () => {
    // As the orchestrator judges air_plan: the rules from the project, the library's use from the integration branch.
    const plan = graphOf(task("T-1", { title: "Log the start-up", writeSet: [{ path: "src/main.cpp", action: "modify" }], doneWhen: "start-up is logged and the tests pass" }))
    const judge = async (root: string) => validateGraph(plan, { ...(await missingOn(root)) })
    const missingOn = async (root: string) => {
      const missing = await LibraryUse.missing(root, "main", HouseRules.load(root))
      return missing ? { integrationFirst: missing } : {}
    }
    const glog = await project({ "src/main.cpp": GLOG_MAIN })
    const none = await project({})
    try {
      await HouseInit.run(glog.root, false)
      expect(HouseRules.load(glog.root)?.logging?.library).toBe("glog")
      expect(await LibraryUse.missing(glog.root, "main", HouseRules.load(glog.root))).toBeUndefined()
      expect(await judge(glog.root)).toMatchObject({ ok: true })
      // The same plan in a project with no logging: init's rule is spdlog, and the plan must integrate it first.
      await HouseInit.run(none.root, false)
      const refused = await judge(none.root)
      expect(refused.ok).toBe(false)
      if (!refused.ok) expect(refused.errors[0]!.message).toMatch(/name spdlog as the logging library and the project does not use it yet/)
    } finally {
      await glog.cleanup()
      await none.cleanup()
    }
  })

  test("glog found by its CMake package alone (no source includes it yet)", async () => {
    const repo = await project({ "CMakeLists.txt": "cmake_minimum_required(VERSION 3.16)\nproject(x CXX)\nfind_package(glog REQUIRED)\n" })
    try {
      expect(await LoggingDetect.detect(repo.root)).toEqual({ library: "glog", where: "CMakeLists.txt" })
    } finally {
      await repo.cleanup()
    }
  })

  test("the project's own logging header → the rule names it, its include and its macros", async () => {
    const repo = await project({ "include/app/log.h": OWN_LOG_H })
    try {
      expect(await LoggingDetect.detect(repo.root)).toEqual({ library: "own", where: "include/app/log.h", include: '"app/log.h"', calls: ["LOG_INFO", "LOG_ERROR"] })
      const outcome = await HouseInit.run(repo.root, false)
      expect(outcome.rules.logging).toMatchObject({ library: "own", include: '"app/log.h"', calls: ["LOG_INFO", "LOG_ERROR"] })
    } finally {
      await repo.cleanup()
    }
  })

  test("vendored code's logging is not the project's", async () => {
    const repo = await project({ "third_party/lib/src/x.cpp": SPDLOG_MAIN, "third_party/lib/log.h": OWN_LOG_H })
    try {
      expect(await LoggingDetect.detect(repo.root)).toEqual({ library: "none" })
    } finally {
      await repo.cleanup()
    }
  })

  test("no logging at all → spdlog, integrated first; init says so, keeps the file on a second run, and detects again when asked", async () => {
    const repo = await project({})
    try {
      expect(await LoggingDetect.detect(repo.root)).toEqual({ library: "none" })
      const outcome = await Init.run(repo.root, { noBaseline: true })
      expect(outcome.house?.rules.logging).toMatchObject({ library: "spdlog", integrationFirst: true })
      const text = Init.describe(outcome)
      expect(text).toContain(`House rules in ${HouseRules.RULES_PATH}:`)
      expect(text).toContain("no logging library found, so the rule is spdlog: the first plan integrates it")
      // A person's edit is kept; --redetect writes it again from the tree.
      await repo.write(HouseRules.RULES_PATH, JSON.stringify({ schemaVersion: 1, logging: { library: "glog" } }))
      expect((await HouseInit.run(repo.root, false)).rules.logging?.library).toBe("glog")
      expect((await HouseInit.run(repo.root, true)).rules.logging?.library).toBe("spdlog")
    } finally {
      await repo.cleanup()
    }
  })

  test("the header's include and calls: below include/, or by name; macros first, else logging functions", () => {
    expect(LoggingDetect.includePath("libs/net/include/net/logger.hpp")).toBe("net/logger.hpp")
    expect(LoggingDetect.includePath("src/util/log.h")).toBe("log.h")
    expect(LoggingDetect.declaredCalls("void log_info(const char* m);\nvoid log_error(const char* m);\nint other();\n")).toEqual(["log_info", "log_error"])
    expect(LoggingDetect.declaredCalls("#pragma once\n")).toEqual([])
  })
})

import { describe, expect, test } from "vitest"
import { ForbiddenCalls } from "../../src/scheduler/runtime/house/forbidden-calls.ts"
import { HouseRules } from "../../src/scheduler/runtime/house/rules.ts"

const spdlog = HouseRules.parse(JSON.stringify({ schemaVersion: 1, logging: { library: "spdlog" } })).logging!
const qt = HouseRules.parse(JSON.stringify({ schemaVersion: 1, logging: { library: "qt" } })).logging!

/** A patch that adds `lines` to `file` as a new file. */
function added(file: string, lines: string[]): string {
  return [`diff --git a/${file} b/${file}`, "new file mode 100644", "--- /dev/null", `+++ b/${file}`, `@@ -0,0 +1,${lines.length} @@`, ...lines.map((l) => `+${l}`), ""].join("\n")
}

describe("the logging rule over the lines a patch adds", () => {
  test.each([
    ['  std::cout << "hi";', "std::cout"],
    ["  cout << x << endl;", "std::cout"],
    ['  std::cerr << "bad";', "std::cerr"],
    ['  printf("%d", n);', "printf"],
    ['  std::printf("%d", n);', "printf"],
    ['  fprintf(stderr, "oops");', "fprintf(stdout|stderr)"],
    ['  puts("x");', "puts"],
    ['  qDebug() << "x";', "qDebug"],
  ])("%s is found as %s", (line, call) => {
    expect(ForbiddenCalls.scan(added("src/a.cpp", ["int f() {", line, "}"]), spdlog)).toEqual([{ file: "src/a.cpp", line: 2, call, text: line.trim() }])
  })

  test.each([
    ['  spdlog::info("hi {}", n);'],
    ["  // was std::cout << x;"],
    ['  log("use printf( here");'],
    ["  /* printf(x) */ int y = 0;"],
    ["   * prints with std::cout"],
    ['  fprintf(file, "%d", n);'],
    ["  my_printf(x);"],
    ["  out.puts(x);"],
    ["  int cout_total = 0;"],
  ])("%s is not a forbidden call", (line) => {
    expect(ForbiddenCalls.scan(added("src/a.cpp", [line]), spdlog)).toEqual([])
  })

  test("Qt's rule lets qDebug through and still refuses std::cout", () => {
    expect(ForbiddenCalls.scan(added("src/w.cpp", ['qDebug() << "x";', 'std::cout << "y";']), qt).map((f) => f.call)).toEqual(["std::cout"])
  })

  test("test files, exempt paths and files that are not C/C++ are skipped", () => {
    const line = ['std::cout << "x";']
    for (const file of ["tests/a_test.cpp", "test/calc_test.cpp", "src/net/client_test.cc", "lib/x/tests/t.cpp", "README.md", "tools/gen.py"])
      expect(ForbiddenCalls.scan(added(file, line), spdlog), file).toEqual([])
    expect(ForbiddenCalls.scan(added("tools/dump.cpp", line), { ...spdlog, exempt: ["tools/**"] })).toEqual([])
    expect(ForbiddenCalls.scan(added("tools/dump.cpp", line), spdlog)).toHaveLength(1)
  })

  test("a line the patch only moves or re-indents is inherited; the line numbers are the new file's", () => {
    const patch = [
      "diff --git a/src/a.cpp b/src/a.cpp",
      "--- a/src/a.cpp",
      "+++ b/src/a.cpp",
      "@@ -3,2 +3,3 @@ int main() {",
      "-std::cout << old;",
      "+    std::cout << old;",
      "+    std::cerr << fresh;",
      "   return 0;",
      "",
    ].join("\n")
    expect(ForbiddenCalls.scan(patch, spdlog)).toEqual([{ file: "src/a.cpp", line: 4, call: "std::cerr", text: "std::cerr << fresh;" }])
  })

  test("the rule's own expression is what is searched: a project that forbids its old macro gets it refused", () => {
    const rule = { ...spdlog, forbidden: [{ call: "OLD_TRACE", pattern: String.raw`\bOLD_TRACE\s*\(` }] }
    expect(ForbiddenCalls.scan(added("src/a.cpp", ['OLD_TRACE("x");', 'std::cout << "y";']), rule)).toEqual([{ file: "src/a.cpp", line: 1, call: "OLD_TRACE", text: 'OLD_TRACE("x");' }])
  })
})

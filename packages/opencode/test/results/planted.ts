/**
 * A small CMake project for the never-a-false-pass tests and the bench: a library with a constant in its
 * header, a test that checks a return value and an environment variable the toolchain names, and a test
 * that reads a data file. Each planted change below breaks exactly one thing. The variable is CTEST_…:
 * the sandbox passes build families (CTEST_, CMAKE_…) and drops other names.
 */
export const PLANTED_FILES: Record<string, string> = {
  "include/calc.h": `#pragma once\nconstexpr int kBase = 0;\nint add(int a, int b);\n`,
  "src/calc.cpp": `#include "calc.h"\nint add(int a, int b) { return a + b + kBase; }\n`,
  "test/calc_test.cpp": `#include "calc.h"
#include <cstdio>
#include <cstdlib>
int main() {
  if (add(2, 3) != 5) { std::printf("FAIL: add(2, 3) is %d\\n", add(2, 3)); return 1; }
  const char* expect = std::getenv("CTEST_CALC_EXPECT");
  if (expect && std::atoi(expect) != add(2, 3)) { std::printf("FAIL: CTEST_CALC_EXPECT=%s\\n", expect); return 1; }
  return 0;
}
`,
  "test/data_test.cpp": `#include "calc.h"
#include <cstdio>
int main(int argc, char** argv) {
  std::FILE* f = argc > 1 ? std::fopen(argv[1], "r") : nullptr;
  int expected = -1;
  if (!f || std::fscanf(f, "%d", &expected) != 1) { std::printf("FAIL: no data\\n"); return 1; }
  std::fclose(f);
  if (expected != add(2, 3)) { std::printf("FAIL: data says %d\\n", expected); return 1; }
  return 0;
}
`,
  "test/data/expected.txt": "5\n",
  "CMakeLists.txt": `cmake_minimum_required(VERSION 3.16)
project(calc CXX)
set(CMAKE_CXX_STANDARD 17)
add_library(calc src/calc.cpp)
target_include_directories(calc PUBLIC include)
enable_testing()
add_executable(calc_test test/calc_test.cpp)
target_link_libraries(calc_test calc)
target_link_options(calc_test PRIVATE -Wl,-z,now)
add_test(NAME calc_test COMMAND calc_test)
add_executable(data_test test/data_test.cpp)
target_link_libraries(data_test calc)
add_test(NAME data_test COMMAND data_test \${CMAKE_SOURCE_DIR}/test/data/expected.txt)
`,
}

export const PLANTED_RULES = {
  schemaVersion: 1,
  build: ["cmake -S . -B .air-build -G Ninja", "cmake --build .air-build"],
  test: ["ctest --test-dir .air-build --output-on-failure"],
  cache: { tool: "none", results: { env: ["CTEST_CALC_EXPECT"] } },
}

/** Each change, as file → new content, and the test it breaks ("build" when the build fails). */
export const PLANTED_CHANGES: { name: string; files?: Record<string, string>; env?: Record<string, string>; breaks: string }[] = [
  { name: "a changed return value in a source", files: { "src/calc.cpp": `#include "calc.h"\nint add(int a, int b) { return a + b + kBase + 1; }\n` }, breaks: "calc_test" },
  { name: "a changed constant in a header", files: { "include/calc.h": `#pragma once\nconstexpr int kBase = 2;\nint add(int a, int b);\n` }, breaks: "calc_test" },
  { name: "a changed test data file", files: { "test/data/expected.txt": "6\n" }, breaks: "data_test" },
  {
    name: "a changed linker flag",
    files: { "CMakeLists.txt": PLANTED_FILES["CMakeLists.txt"]!.replace("-Wl,-z,now", "-Wl,--wrap=_Z3addii") },
    breaks: "build",
  },
  { name: "a changed environment variable the toolchain names", env: { CTEST_CALC_EXPECT: "6" }, breaks: "calc_test" },
]

export const FLAKY_TEST_CPP = `#include <cstdio>
// Fails on its first run in a build directory, passes after: a flaky test.
int main(int argc, char** argv) {
  if (std::FILE* f = std::fopen(argv[1], "r")) { std::fclose(f); return 0; }
  if (std::FILE* f = std::fopen(argv[1], "w")) std::fclose(f);
  std::printf("FAIL: flaky first run\\n");
  return 1;
}
`
export const FLAKY_CMAKE = `add_executable(flaky_test test/flaky_test.cpp)
add_test(NAME flaky_test COMMAND flaky_test \${CMAKE_BINARY_DIR}/flaky.count)
`

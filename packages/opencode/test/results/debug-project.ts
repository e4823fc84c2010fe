/**
 * A small Debug CMake project (issue 38): a library whose assert names its source file (`__FILE__`), two
 * test executables (one reading a data file), and a benchmark program no test contains, as leveldb's
 * db_bench. Built with ccache, as shipped.
 */
export const DEBUG_FILES: Record<string, string> = {
  "include/calc.h": `#pragma once\nint add(int a, int b);\n`,
  "src/calc.cpp": `#include "calc.h"\n#include <cassert>\nint add(int a, int b) {\n  assert(a > -1000000 && "add: a out of range");\n  return a + b;\n}\n`,
  "test/calc_test.cpp": `#include "calc.h"\n#include <cassert>\nint main() {\n  assert(add(2, 3) == 5);\n  return add(2, 3) == 5 ? 0 : 1;\n}\n`,
  "test/data_test.cpp": `#include "calc.h"
#include <cstdio>
int main(int argc, char** argv) {
  std::FILE* f = argc > 1 ? std::fopen(argv[1], "r") : nullptr;
  int expected = -1;
  if (!f || std::fscanf(f, "%d", &expected) != 1) { std::printf("FAIL: no data\\n"); return 1; }
  std::fclose(f);
  return expected == add(2, 3) ? 0 : 1;
}
`,
  "test/data/expected.txt": "5\n",
  "tools/bench.cpp": `// a benchmark\n#include "calc.h"\n#include <cstdio>\nint main() {\n  long sum = 0;\n  for (int i = 0; i < 1000; i++) sum += add(i, 1);\n  std::printf("%ld\\n", sum);\n}\n`,
  "CMakeLists.txt": `cmake_minimum_required(VERSION 3.16)
project(calc CXX)
set(CMAKE_CXX_STANDARD 17)
add_library(calc src/calc.cpp)
target_include_directories(calc PUBLIC include)
add_executable(bench tools/bench.cpp)
target_link_libraries(bench calc)
enable_testing()
add_executable(calc_test test/calc_test.cpp)
target_link_libraries(calc_test calc)
add_test(NAME calc_test COMMAND calc_test)
add_executable(data_test test/data_test.cpp)
target_link_libraries(data_test calc)
add_test(NAME data_test COMMAND data_test \${CMAKE_SOURCE_DIR}/test/data/expected.txt)
`,
}

export const DEBUG_RULES = {
  schemaVersion: 1,
  build: ["cmake -S . -B .air-build -G Ninja -DCMAKE_BUILD_TYPE=Debug", "cmake --build .air-build"],
  test: ["ctest --test-dir .air-build --output-on-failure"],
  cache: { tool: "auto" },
}

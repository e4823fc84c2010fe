import { CALC_CPP, CALC_H, CALC_TEST_CPP, CMAKELISTS, type Workspace } from "./cpp-repo.ts"

/**
 * Two changes to the calc project that each build and pass alone and break the build together: the
 * merge build's standard case (issue 12, item 4).
 */

/** Renames add() to plus() everywhere it is defined and used (as of the first commit). */
export async function renameAdd(ws: Workspace) {
  await ws.write("include/calc.h", CALC_H.replace("int add(", "int plus("))
  await ws.write("src/calc.cpp", CALC_CPP.replace("int add(", "int plus("))
  await ws.write("test/calc_test.cpp", CALC_TEST_CPP.replace('check("add(2, 3)", add(2, 3), 5)', 'check("plus(2, 3)", plus(2, 3), 5)'))
  await ws.commitAll("rename add to plus")
}

/** A new file that calls add(): builds alone, not on top of the rename. */
export async function callAdd(ws: Workspace) {
  await ws.write("src/twice.cpp", '#include "calc.h"\n\nint twice(int a) {\n  return add(a, a);\n}\n')
  await ws.write("CMakeLists.txt", CMAKELISTS.replace("add_library(calc src/calc.cpp)", "add_library(calc src/calc.cpp src/twice.cpp)"))
  await ws.commitAll("add twice()")
}

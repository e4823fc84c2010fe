import { readFileSync } from "node:fs"
import { PNG } from "pngjs"

/**
 * A tiny Xlib program for the ui-task tests: a 320x240 window in the colour of src/colour.h, titled TITLE, with a
 * white badge (`badge`, 40x20 by default) at (10, 10) drawn on Expose (so the window is not one colour). `draws: false`
 * plants the same window mapped and never drawn: one colour, which the ui-capture gate calls blank.
 */
export const TITLE = "Air UI demo"
export const OLD_COLOUR = "#3366cc"
export const NEW_COLOUR = "#2e8b57"
export const hex = (colour: string) => `0x${colour.slice(1)}`

export const COLOUR_H = (colour: string) => `#pragma once\n\n// The window's background.\n#define APP_COLOUR ${hex(colour)}\n#define APP_TITLE "${TITLE}"\n`

export const APP_CPP = (draws: boolean, badge = { width: 40, height: 20 }) => `#include <X11/Xlib.h>
#include <cstdio>
#include "colour.h"

int main() {
  Display* display = XOpenDisplay(nullptr);
  if (!display) {
    std::fprintf(stderr, "cannot open the display\\n");
    return 2;
  }
  const int screen = DefaultScreen(display);
  Window window = XCreateSimpleWindow(display, RootWindow(display, screen), 0, 0, 320, 240, 0, 0, APP_COLOUR);
  XStoreName(display, window, APP_TITLE);
  XSelectInput(display, window, ExposureMask);
  XMapWindow(display, window);
  GC gc = XCreateGC(display, window, 0, nullptr);
  XSetForeground(display, gc, 0xffffff);
  for (;;) {
    XEvent event;
    XNextEvent(display, &event);
${draws ? `    if (event.type == Expose) {\n      XFillRectangle(display, window, gc, 10, 10, ${badge.width}, ${badge.height});\n      XFlush(display);\n    }\n` : "    (void)gc;\n"}  }
}
`

/** The window's centre, where the colour is checked. */
export const CENTRE = { x: 160, y: 120 }

/** A pixel of a PNG as `#rrggbb`, read with pngjs (the test's own reading, not the gate's). */
export function pixel(file: string, x: number, y: number): string {
  const png = PNG.sync.read(readFileSync(file))
  const i = (png.width * y + x) * 4
  return "#" + [png.data[i]!, png.data[i + 1]!, png.data[i + 2]!].map((c) => c.toString(16).padStart(2, "0")).join("")
}

export const VERSION_H = (version: string) => `#pragma once\n\n#define APP_VERSION "${version}"\n`
const CMAKELISTS = `cmake_minimum_required(VERSION 3.16)
project(uiapp CXX)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
find_package(X11 REQUIRED)

add_executable(app src/app.cpp)
target_include_directories(app PRIVATE src)
target_link_libraries(app PRIVATE X11::X11)

enable_testing()
add_executable(version_test test/version_test.cpp)
target_include_directories(version_test PRIVATE src)
add_test(NAME version_test COMMAND version_test)
`
const VERSION_TEST = `#include "version.h"
#include <cstring>

int main() { return std::strlen(APP_VERSION) > 0 ? 0 : 1; }
`

/** The program as the ui tasks' specs start it, from the toolchain's build directory. */
export const APP_COMMAND = ".air-build/app"

/**
 * The small CMake project of the ui e2e runs (the real cmake, Ninja and g++): the Xlib program in OLD_COLOUR, a
 * version header with its test, and a toolchain with cppcheck on (a code task requires its analysis).
 */
export function uiProjectFiles(): Record<string, string> {
  const toolchain = {
    schemaVersion: 1,
    build: ["cmake -S . -B .air-build -G Ninja", "cmake --build .air-build"],
    test: ["ctest --test-dir .air-build --output-on-failure"],
    analysis: { cppcheck: { enabled: true } },
  }
  return {
    ".air/shared/rules/toolchain.json": JSON.stringify(toolchain),
    "CMakeLists.txt": CMAKELISTS,
    "src/app.cpp": APP_CPP(true),
    "src/colour.h": COLOUR_H(OLD_COLOUR),
    "src/version.h": VERSION_H("1.0"),
    "test/version_test.cpp": VERSION_TEST,
  }
}

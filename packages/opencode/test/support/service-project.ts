import { readdirSync, readlinkSync } from "node:fs"

/**
 * The small CMake project of the service e2e runs (the real cmake, Ninja, g++ and ctest): a TCP line service on
 * 127.0.0.1:7000 answering every line with SERVICE_REPLY (src/reply.h, "PONG v1"), and a library with its test.
 */
const SERVER = `#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cstdio>
#include <cstring>
#include "reply.h"

// Answers every line it reads with SERVICE_REPLY and a newline, on 127.0.0.1:7000.
int main() {
  int server = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(server, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_port = htons(7000);
  at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(server, reinterpret_cast<sockaddr*>(&at), sizeof at) != 0 || listen(server, 8) != 0) {
    std::perror("listen on 7000");
    return 2;
  }
  const char reply[] = SERVICE_REPLY "\\n";
  for (;;) {
    int client = accept(server, nullptr, nullptr);
    if (client < 0) continue;
    char buf[512];
    ssize_t n;
    while ((n = read(client, buf, sizeof buf)) > 0) {
      for (ssize_t i = 0; i < n; i++)
        if (buf[i] == '\\n') send(client, reply, sizeof reply - 1, MSG_NOSIGNAL);
    }
    close(client);
  }
}
`
const FILES: Record<string, string> = {
  "CMakeLists.txt": `cmake_minimum_required(VERSION 3.16)
project(lineservice CXX)
set(CMAKE_CXX_STANDARD 17)
add_executable(server src/server.cpp)
add_library(util src/util.cpp)
add_executable(util_test tests/util_test.cpp)
target_include_directories(util_test PRIVATE src)
target_link_libraries(util_test util)
enable_testing()
add_test(NAME util_test COMMAND util_test)
`,
  "src/reply.h": `#pragma once
#define SERVICE_REPLY "PONG v1"
`,
  "src/server.cpp": SERVER,
  "src/util.h": "#pragma once\nint twice(int x);\n",
  "src/util.cpp": '#include "util.h"\nint twice(int x) { return x + x; }\n',
  "tests/util_test.cpp": '#include "util.h"\nint main() { return twice(2) == 4 ? 0 : 1; }\n',
  ".gitignore": ".air-build/\n",
}

/** A service task's field: the server from the build, port 7000, and `nc` sending PING, whose reply must hold `reply`. */
export const serviceField = (reply: string) => ({
  service: { command: ".air-build/server" },
  ports: [7000],
  probe: { command: "nc", args: ["-N", "127.0.0.1", "7000"], input: "PING\n", expect: { contains: reply } },
})

/** The toolchain's build, which the reproduction a worker runs repeats before it starts the service. */
export const SERVICE_BUILD = ["cmake -S . -B .air-build -G Ninja", "cmake --build .air-build"]

/** The project's files with its toolchain; cppcheck stays on (its default): the analysis is required of service and code tasks alike. */
export function serviceProjectFiles(): Record<string, string> {
  const toolchain = { schemaVersion: 1, build: SERVICE_BUILD, test: ["ctest --test-dir .air-build --output-on-failure"] }
  return { ...FILES, ".air/shared/rules/toolchain.json": JSON.stringify(toolchain) }
}

/** Live processes running a program built in the project (its worktrees' servers): what no probe may leave behind. */
export function projectPrograms(project: string): string[] {
  const found: string[] = []
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const exe = readlinkSync(`/proc/${pid}/exe`)
      if (exe.startsWith(project + "/")) found.push(`${pid} ${exe}`)
    } catch {
      // gone, or not ours to read
    }
  }
  return found
}

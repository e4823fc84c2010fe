/**
 * The logging libraries a house rule may name, with what a project that uses each one writes: its include, the
 * calls new code logs with, its CMake package, the channels it replaces, and how to tell from the tree that the
 * project already uses it. `own` is the project's own logging header: its include and calls come from the rules.
 */
export namespace LoggingLibraries {
  export const NAMES = ["spdlog", "glog", "qt", "own"] as const
  export type Name = (typeof NAMES)[number]

  /** A channel new code must not write through: its name for people and the expression that finds a call. */
  export type Channel = { call: string; pattern: string }

  /**
   * The channels, as expressions over one line of C++ (comments and string literals blanked first). The look-behind
   * keeps `my_printf(` and `obj.puts(` out; `std::` is optional because `using namespace std;` is common.
   */
  export const CHANNELS = {
    cout: { call: "std::cout", pattern: String.raw`(?:\bstd::|(?<![\w:.>]))cout\b` },
    cerr: { call: "std::cerr", pattern: String.raw`(?:\bstd::|(?<![\w:.>]))cerr\b` },
    printf: { call: "printf", pattern: String.raw`(?:\bstd::|(?<![\w:.>]))printf\s*\(` },
    fprintf: { call: "fprintf(stdout|stderr)", pattern: String.raw`(?:\bstd::|(?<![\w:.>]))fprintf\s*\(\s*(?:stdout|stderr)\b` },
    puts: { call: "puts", pattern: String.raw`(?:\bstd::|(?<![\w:.>]))puts\s*\(` },
    qDebug: { call: "qDebug", pattern: String.raw`(?<![\w:.>])qDebug\s*\(` },
  } as const satisfies Record<string, Channel>

  export interface Library {
    include?: string
    calls?: readonly string[]
    cmake?: { package: string; target: string }
    forbidden: readonly Channel[]
    /**
     * An extended regular expression (git grep -E) that finds the library in a tree: its include or its CMake
     * package. Absent for `own`, whose header is in the project by definition.
     */
    usedWhen?: string
    /**
     * The compile definition that fixes the library's active level at build time: the integration must set it by
     * build type (a Debug and a Release configure give different values), checked from compile_commands.json.
     */
    levelDefine?: string
  }

  const { cout, cerr, printf, fprintf, puts, qDebug } = CHANNELS

  export const TABLE: Record<Name, Library> = {
    spdlog: {
      include: "<spdlog/spdlog.h>",
      calls: ["spdlog::debug", "spdlog::info", "spdlog::warn", "spdlog::error"],
      cmake: { package: "spdlog", target: "spdlog::spdlog" },
      forbidden: [cout, cerr, printf, fprintf, puts, qDebug],
      usedWhen: String.raw`find_package[[:space:]]*\([[:space:]]*spdlog|FetchContent_Declare[[:space:]]*\([[:space:]]*spdlog|#[[:space:]]*include[[:space:]]*[<"]spdlog/`,
      levelDefine: "SPDLOG_ACTIVE_LEVEL",
    },
    glog: {
      include: "<glog/logging.h>",
      calls: ["LOG(INFO)", "LOG(WARNING)", "LOG(ERROR)", "VLOG(1)"],
      cmake: { package: "glog", target: "glog::glog" },
      forbidden: [cout, cerr, printf, fprintf, puts, qDebug],
      usedWhen: String.raw`find_package[[:space:]]*\([[:space:]]*glog|#[[:space:]]*include[[:space:]]*[<"]glog/`,
    },
    // Qt's own logging: qDebug and the categorised qCDebug are the library, the C streams are not.
    qt: {
      include: "<QLoggingCategory>",
      calls: ["qCDebug(category)", "qCInfo(category)", "qCWarning(category)", "qCCritical(category)"],
      forbidden: [cout, cerr, printf, fprintf, puts],
      usedWhen: String.raw`QLoggingCategory|#[[:space:]]*include[[:space:]]*<Q(t)?Debug>|qC?(Debug|Info|Warning|Critical)[[:space:]]*\(`,
    },
    own: { forbidden: [cout, cerr, printf, fprintf, puts, qDebug] },
  }
}

import { describe, expect, test } from "vitest"
import { TestRunners } from "../../src/scheduler/runtime/gates/runners/index.ts"

/** Which runner a test command runs, and how it is asked for its report (the commands the gate then runs). */
describe("test commands recognised by their runner", () => {
  test("each runner's commands, after `cd <dir> &&` and variable assignments; a pipe or list is nobody's", () => {
    const of = (command: string) => TestRunners.of(command)?.framework
    expect(of("pytest -q")).toBe("pytest")
    expect(of("python3 -m pytest tests")).toBe("pytest")
    expect(of("cd python && .venv/bin/pytest")).toBe("pytest")
    expect(of("npx vitest run")).toBe("vitest")
    expect(of("cd web && node_modules/.bin/vitest run")).toBe("vitest")
    expect(of("npx jest --ci")).toBe("jest")
    expect(of("GOCACHE=$PWD/.cache go test ./...")).toBe("go")
    expect(of("cargo test --workspace")).toBe("cargo")
    expect(of("cargo +stable test")).toBe("cargo")
    for (const other of ["ctest --test-dir build", "pytest | tee log", "pytest; true", "make test", "go vet ./...", "cargo build", "sh -c 'pytest'"]) expect(of(other), other).toBeUndefined()
  })

  test("asked for a report a program reads; a command with its own reporter is left as it is", () => {
    const ask = (command: string) => TestRunners.of(command)!.instrument(command, "/w/.air-build/0-report")
    expect(ask("cd python && pytest -q")).toBe("cd python && pytest -q --junitxml='/w/.air-build/0-report'")
    expect(ask("pytest --junitxml=out.xml")).toBeUndefined()
    expect(ask("npx vitest run")).toBe("npx vitest run --reporter=default --reporter=json --outputFile.json='/w/.air-build/0-report'")
    expect(ask("npx vitest run --reporter=junit")).toBeUndefined()
    expect(ask("npx jest")).toBe("npx jest --json --outputFile='/w/.air-build/0-report'")
    expect(ask("go test -race ./...")).toBe("go test -json -race ./...")
    expect(ask("go test -json ./...")).toBe("go test -json ./...")
    expect(ask("cargo test")).toBe("cargo test")
  })
})

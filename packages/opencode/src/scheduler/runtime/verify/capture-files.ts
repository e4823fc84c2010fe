import { closeSync, fstatSync, openSync, readSync, writeFileSync } from "node:fs"
import { Proc } from "../process"
import { Sandbox } from "../sandbox/sandbox"
import { DisplaySandbox } from "./display-sandbox"
import { UiVerdict } from "./ui-verdict"
import type { WindowTree } from "./window-tree"

/** The files a capture reads (the screen dump, the program's streams) and writes (windows.json, program.log). */
export namespace CaptureFiles {
  /** Bytes of each stream put in the result and program.log (head and tail halves). */
  export const STREAM_CAP = 64 * 1024

  export type Program = { exitCode: number | null; stoppedByCapture: boolean; stdout: string; stderr: string }

  export function readBytes(path: string): Buffer {
    const fd = openSync(path, "r")
    try {
      const size = fstatSync(fd).size
      const buf = Buffer.alloc(size)
      let at = 0
      while (at < size) {
        const n = readSync(fd, buf, at, size - at, at)
        if (n === 0) break
        at += n
      }
      return buf.subarray(0, at)
    } finally {
      closeSync(fd)
    }
  }

  /** A file's text with the middle dropped past the cap (a program that prints without end); "" when absent. */
  export function readCapped(path: string): string {
    let fd: number
    try {
      fd = openSync(path, "r")
    } catch {
      return ""
    }
    try {
      const size = fstatSync(fd).size
      if (size <= STREAM_CAP) {
        const buf = Buffer.alloc(size)
        readSync(fd, buf, 0, size, 0)
        return buf.toString("utf8")
      }
      const half = STREAM_CAP / 2
      const head = Buffer.alloc(half)
      const tail = Buffer.alloc(half)
      readSync(fd, head, 0, half, 0)
      readSync(fd, tail, 0, half, size - half)
      const cut = size >= DisplaySandbox.STREAM_DISK_CAP ? `; the stream was cut at ${DisplaySandbox.STREAM_DISK_CAP} bytes` : ""
      return `${head.toString("utf8")}\n[… ${size - STREAM_CAP} bytes dropped${cut} …]\n${tail.toString("utf8")}`
    } finally {
      closeSync(fd)
    }
  }

  /** program.log: the command, how it ended, its streams; Xvfb's and bwrap's words when the capture failed. */
  export function programLog(p: { command: string; args: readonly string[]; cwd: string; program: Program; sandbox: Proc.Result | undefined; xvfbLog: string; withDiagnostics: boolean }): string {
    const { program } = p
    const status = program.exitCode !== null ? `exited with ${UiVerdict.exitStatus(program.exitCode)}` : program.stoppedByCapture ? "still running: stopped by the capture" : "did not start"
    const parts = [`$ ${[p.command, ...p.args].map(Sandbox.quote).join(" ")}`, `cwd: ${p.cwd}`, `status: ${status}`, `--- stdout ---`, program.stdout, `--- stderr ---`, program.stderr]
    if (p.withDiagnostics) {
      parts.push(`--- Xvfb ---`, p.xvfbLog)
      if (p.sandbox) parts.push(`--- sandbox (bwrap ${Proc.describe(p.sandbox)}) ---`, p.sandbox.stderr)
    }
    return parts.join("\n") + "\n"
  }

  export function writeEvidence(files: { windows: string; log: string }, screen: { width: number; height: number }, tree: { windows: WindowTree.Window[]; shown: number }, log: string): void {
    writeFileSync(files.windows, JSON.stringify({ screen, shown: tree.shown, windows: tree.windows }, null, 2) + "\n")
    writeFileSync(files.log, log)
  }
}

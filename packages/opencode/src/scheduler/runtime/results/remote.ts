import { connect } from "node:net"

/**
 * A results store on a server the team already runs, by URL:
 *
 * - `http(s)://host[:port]/path`: GET and PUT of `<path>/ac/<key>` (the action-cache layout bazel-remote and
 *   ccache's HTTP storage use; nginx with WebDAV PUT works too). 404 is a miss.
 * - `redis://[:password@]host[:port][/db]`: GET and SET of `aircoding:results:<key>`.
 *
 * Every failure (refused, timed out, a 5xx) is a miss or a skipped write, never an error: the store only
 * saves time, it never decides a verdict.
 */
export namespace RemoteStore {
  export const TIMEOUT_MS = 5_000

  export interface Backend {
    readonly where: string
    get(key: string): Promise<string | undefined>
    put(key: string, value: string): Promise<boolean>
  }

  export function open(url: string): Backend {
    const parsed = new URL(url)
    if (parsed.protocol === "redis:") return redis(parsed)
    return http(url.replace(/\/+$/, ""))
  }

  function http(base: string): Backend {
    const at = (key: string) => `${base}/ac/${key}`
    return {
      where: base,
      async get(key) {
        try {
          const response = await fetch(at(key), { signal: AbortSignal.timeout(TIMEOUT_MS) })
          return response.ok ? await response.text() : undefined
        } catch {
          return undefined
        }
      },
      async put(key, value) {
        try {
          const response = await fetch(at(key), { method: "PUT", body: value, headers: { "content-type": "application/json" }, signal: AbortSignal.timeout(TIMEOUT_MS) })
          return response.ok
        } catch {
          return false
        }
      },
    }
  }

  function redis(url: URL): Backend {
    const host = url.hostname || "127.0.0.1"
    const port = Number(url.port || 6379)
    const password = decodeURIComponent(url.password || "")
    const db = url.pathname.replace(/^\//, "")
    const prefix = "aircoding:results:"
    const preamble: string[][] = [...(password ? [["AUTH", password]] : []), ...(db ? [["SELECT", db]] : [])]
    return {
      where: `redis://${host}:${port}${db ? `/${db}` : ""}`,
      async get(key) {
        const replies = await Resp.call(host, port, [...preamble, ["GET", prefix + key]]).catch(() => undefined)
        const reply = replies?.at(-1)
        return typeof reply === "string" ? reply : undefined
      },
      async put(key, value) {
        const replies = await Resp.call(host, port, [...preamble, ["SET", prefix + key, value]]).catch(() => undefined)
        return replies?.at(-1) === "OK"
      },
    }
  }

  /** Just enough of Redis's protocol (RESP2) for AUTH, SELECT, GET and SET on one short connection. */
  export namespace Resp {
    export type Reply = string | null | number | Error

    export function encode(args: readonly string[]): Buffer {
      const parts = [`*${args.length}\r\n`]
      for (const arg of args) parts.push(`$${Buffer.byteLength(arg)}\r\n${arg}\r\n`)
      return Buffer.from(parts.join(""))
    }

    /** The replies to `commands`, in order; rejects on a connection error or the timeout. */
    export function call(host: string, port: number, commands: readonly (readonly string[])[]): Promise<Reply[]> {
      return new Promise((resolve, reject) => {
        const socket = connect({ host, port })
        let buffer = Buffer.alloc(0)
        const replies: Reply[] = []
        const done = (error?: Error) => {
          socket.destroy()
          if (error) reject(error)
          else resolve(replies)
        }
        socket.setTimeout(TIMEOUT_MS, () => done(new Error("redis: timed out")))
        socket.on("error", done)
        socket.on("connect", () => socket.write(Buffer.concat(commands.map(encode))))
        socket.on("data", (chunk) => {
          buffer = Buffer.concat([buffer, chunk])
          while (true) {
            const parsed = parse(buffer)
            if (!parsed) return
            replies.push(parsed.reply)
            buffer = buffer.subarray(parsed.used)
            if (replies.length === commands.length) return done()
          }
        })
      })
    }

    /** One reply from the front of `buffer`, or undefined when it is not all there yet. */
    export function parse(buffer: Buffer): { reply: Reply; used: number } | undefined {
      const end = buffer.indexOf("\r\n")
      if (end < 0) return undefined
      const head = buffer.subarray(1, end).toString()
      switch (String.fromCharCode(buffer[0]!)) {
        case "+":
          return { reply: head, used: end + 2 }
        case "-":
          return { reply: new Error(head), used: end + 2 }
        case ":":
          return { reply: Number(head), used: end + 2 }
        case "$": {
          const length = Number(head)
          if (length < 0) return { reply: null, used: end + 2 }
          if (buffer.length < end + 2 + length + 2) return undefined
          return { reply: buffer.subarray(end + 2, end + 2 + length).toString(), used: end + 2 + length + 2 }
        }
        default:
          return { reply: new Error(`redis: unexpected reply ${JSON.stringify(buffer.subarray(0, 20).toString())}`), used: buffer.length }
      }
    }
  }
}

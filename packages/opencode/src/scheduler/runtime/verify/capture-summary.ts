import { z } from "zod"
import { Pcap } from "./pcap"

/**
 * What a capture shows, for a person and for the Reviewer: the TCP connections (who opened them, to which
 * port, how they ended), the payload bytes each way, exact, and the first lines each way; and whatever was
 * not TCP. Written as summary.json (this schema) and summary.txt (`render`).
 */
export namespace CaptureSummary {
  /** Lines and bytes of a direction's payload kept for people: enough to see a protocol's greeting and reply. */
  export const FIRST_LINES = 5
  const FIRST_BYTES = 2048
  const LINE_WIDTH = 160

  export const Endpoint = z.object({ address: z.string(), port: z.number().int() }).strict()
  export type Endpoint = z.infer<typeof Endpoint>

  export const Direction = z
    .object({
      /** TCP payload bytes sent this way, exact (from the headers; a retransmission counted once). */
      bytes: z.number().int().nonnegative(),
      segments: z.number().int().nonnegative(),
      /** The first lines of the payload, as text (control bytes escaped). */
      firstLines: z.array(z.string()),
      /** Part of the payload was not in the file (snaplen): the first lines may miss bytes, marked "…". */
      cut: z.boolean(),
    })
    .strict()
  export type Direction = z.infer<typeof Direction>

  export const Connection = z
    .object({
      client: Endpoint,
      server: Endpoint,
      /** The client's SYN is in the capture (else the connection was already open when the capture began). */
      opened: z.boolean(),
      /** The server answered the SYN with a reset: nothing listened on that port. */
      refused: z.boolean(),
      ended: z.enum(["fin", "rst", "open"]),
      packets: z.number().int().nonnegative(),
      toServer: Direction,
      toClient: Direction,
    })
    .strict()
  export type Connection = z.infer<typeof Connection>

  export const Summary = z
    .object({
      linkType: z.number().int(),
      snaplen: z.number().int(),
      packets: z.number().int().nonnegative(),
      /** Every IP address seen in the capture. */
      addresses: z.array(z.string()),
      connections: z.array(Connection),
      /** Packets that were not TCP, by what they were ("UDP 127.0.0.1 → 127.0.0.1": 3). */
      other: z.record(z.string(), z.number().int()),
      /** The capture stopped at its packet limit: traffic after it is not in the file, and the counts are a lower bound. */
      packetLimitReached: z.boolean(),
      /** The file ended inside a record (the capture was killed while writing). */
      truncatedTail: z.boolean(),
    })
    .strict()
  export type Summary = z.infer<typeof Summary>

  /**
   * The summary of a capture file. `servicePorts` decide which side is the server of a connection whose SYN
   * the capture missed; `maxPackets` is the capture's limit (reached: the counts are a lower bound).
   */
  export function fromPcap(data: Buffer, options: { servicePorts: readonly number[]; maxPackets?: number }): Summary {
    const file = Pcap.read(data)
    const connections = new Map<string, Builder>()
    const order: Builder[] = []
    const other: Record<string, number> = {}
    const addresses = new Set<string>()
    for (const packet of file.packets) {
      const decoded = Pcap.decode(packet, file.linkType)
      if (decoded.kind === "other") {
        if (decoded.source) addresses.add(decoded.source)
        if (decoded.destination) addresses.add(decoded.destination)
        const key = decoded.source ? `${decoded.what} ${decoded.source} → ${decoded.destination}` : decoded.what
        other[key] = (other[key] ?? 0) + 1
        continue
      }
      const s = decoded.segment
      addresses.add(s.source)
      addresses.add(s.destination)
      const a = `${s.source}|${s.sourcePort}`
      const b = `${s.destination}|${s.destinationPort}`
      const key = a < b ? `${a}|${b}` : `${b}|${a}`
      let c = connections.get(key)
      // A new SYN on a finished 4-tuple is a new connection (a client reusing its port).
      if (c && s.flags.syn && !s.flags.ack && c.ended !== "open") c = undefined
      if (!c) {
        c = new Builder(s, options.servicePorts)
        connections.set(key, c)
        order.push(c)
      }
      c.add(s)
    }
    return Summary.parse({
      linkType: file.linkType,
      snaplen: file.snaplen,
      packets: file.packets.length,
      addresses: [...addresses].sort(),
      connections: order.map((c) => c.done()),
      other,
      packetLimitReached: options.maxPackets !== undefined && file.packets.length >= options.maxPackets,
      truncatedTail: file.truncatedTail,
    })
  }

  /** One direction's stream: counts new sequence space only, so a retransmitted segment is not counted twice. */
  class Stream {
    bytes = 0
    segments = 0
    cut = false
    private end: number | undefined
    private text: Buffer[] = []
    private kept = 0

    add(s: Pcap.Segment): void {
      if (s.flags.syn) this.end = (s.seq + 1) >>> 0
      if (s.payloadLength === 0) return
      this.segments++
      const stop = (s.seq + s.payloadLength) >>> 0
      // Bytes beyond what this direction already sent (32-bit sequence arithmetic).
      const fresh = this.end === undefined ? s.payloadLength : Math.max(0, Math.min(s.payloadLength, diff(stop, this.end)))
      if (fresh === 0) return
      const skip = s.payloadLength - fresh
      this.bytes += fresh
      if (this.end === undefined || diff(stop, this.end) > 0) this.end = stop
      if (this.kept < FIRST_BYTES) {
        const present = s.payload.subarray(Math.min(skip, s.payload.length))
        this.text.push(present.subarray(0, FIRST_BYTES - this.kept))
        this.kept += present.length
        if (s.payload.length < s.payloadLength) {
          this.cut = true
          this.text.push(Buffer.from("…"))
        }
      }
    }

    done(): Direction {
      return { bytes: this.bytes, segments: this.segments, firstLines: firstLines(Buffer.concat(this.text)), cut: this.cut }
    }
  }

  /** a − b in 32-bit sequence space, signed. */
  function diff(a: number, b: number): number {
    return ((a - b + 0x80000000) >>> 0) - 0x80000000
  }

  class Builder {
    readonly client: Endpoint
    readonly server: Endpoint
    opened = false
    refused = false
    ended: "fin" | "rst" | "open" = "open"
    packets = 0
    private readonly toServer = new Stream()
    private readonly toClient = new Stream()

    constructor(first: Pcap.Segment, servicePorts: readonly number[]) {
      const from = { address: first.source, port: first.sourcePort }
      const to = { address: first.destination, port: first.destinationPort }
      // The SYN's sender is the client; without one, the side on a service port is the server, else the lower port.
      const sourceIsServer = first.flags.syn ? first.flags.ack : servicePorts.includes(from.port) && !servicePorts.includes(to.port) ? true : !servicePorts.includes(to.port) && from.port < to.port
      ;[this.client, this.server] = sourceIsServer ? [to, from] : [from, to]
    }

    add(s: Pcap.Segment): void {
      this.packets++
      const toServer = s.destination === this.server.address && s.destinationPort === this.server.port
      if (s.flags.syn && !s.flags.ack) this.opened = true
      if (s.flags.rst) {
        if (!toServer && this.toClient.segments === 0 && this.toServer.segments === 0) this.refused = true
        this.ended = "rst"
      } else if (s.flags.fin && this.ended === "open") this.ended = "fin"
      ;(toServer ? this.toServer : this.toClient).add(s)
    }

    done(): Connection {
      return {
        client: this.client,
        server: this.server,
        opened: this.opened,
        refused: this.refused,
        ended: this.ended,
        packets: this.packets,
        toServer: this.toServer.done(),
        toClient: this.toClient.done(),
      }
    }
  }

  function firstLines(bytes: Buffer): string[] {
    if (bytes.length === 0) return []
    const lines = bytes.toString("utf8").split("\n")
    if (lines.at(-1) === "") lines.pop()
    return lines.slice(0, FIRST_LINES).map((l) => {
      const shown = JSON.stringify(l.replace(/\r$/, "")).slice(1, -1)
      return shown.length > LINE_WIDTH ? shown.slice(0, LINE_WIDTH) + "…" : shown
    })
  }

  export function endpoint(e: Endpoint): string {
    return e.address.includes(":") ? `[${e.address}]:${e.port}` : `${e.address}:${e.port}`
  }

  /** summary.txt: what a person reads first. */
  export function render(summary: Summary, context: { file: string; interfaces: readonly string[]; limits: string }): string {
    const out: string[] = []
    out.push(`capture: ${context.file}: ${summary.packets} packet${summary.packets === 1 ? "" : "s"} on the service's loopback (${context.limits})`)
    if (summary.packetLimitReached) out.push(`  the capture stopped at its packet limit: later traffic is not in the file, and the byte counts below are a lower bound`)
    if (summary.truncatedTail) out.push(`  the file ends inside a packet (the capture was stopped while writing); that packet is left out`)
    out.push(`network: the service's own namespace, interfaces: ${context.interfaces.join(", ") || "none"}; no route leads anywhere else, so nothing it sends can leave it`)
    out.push(`addresses seen: ${summary.addresses.join(", ") || "none"}`)
    out.push(`connections: ${summary.connections.length}`)
    summary.connections.forEach((c, i) => {
      const how = c.refused ? "refused (reset: nothing listened there)" : c.ended === "fin" ? "closed (FIN)" : c.ended === "rst" ? "reset" : "still open when the capture ended"
      out.push(`  #${i + 1} ${endpoint(c.client)} → ${endpoint(c.server)}${c.opened ? "" : " (opened before the capture)"}: ${how}, ${c.packets} packets`)
      for (const [label, d] of [
        ["client → server", c.toServer],
        ["server → client", c.toClient],
      ] as const) {
        out.push(`     ${label}: ${d.bytes} byte${d.bytes === 1 ? "" : "s"}${d.cut ? " (payload cut at the snaplen in the file)" : ""}`)
        for (const line of d.firstLines) out.push(`       | ${line}`)
      }
    })
    const others = Object.entries(summary.other)
    out.push(`other packets: ${others.length === 0 ? "none" : others.map(([what, n]) => `${what} ×${n}`).join("; ")}`)
    return out.join("\n") + "\n"
  }
}

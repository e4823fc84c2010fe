/**
 * The pcap reader and the capture summary on files built byte by byte: what a real capture rarely shows on
 * loopback (a retransmission, a payload cut by the snaplen, IPv6, Linux's cooked link type, a torn tail)
 * must still count exactly. The service probe's own test reads tcpdump's real files.
 */
import { describe, expect, test } from "vitest"
import { CaptureSummary } from "../../src/scheduler/runtime/verify/capture-summary"
import { Pcap } from "../../src/scheduler/runtime/verify/pcap"
import { ProbeTools } from "../../src/scheduler/runtime/verify/probe-tools"

type Seg = { from: [string, number]; to: [string, number]; seq: number; ack?: number; flags: string; payload?: string; wireExtra?: number }

const FLAG = { F: 0x01, S: 0x02, R: 0x04, P: 0x08, A: 0x10 } as const

function tcp(s: Seg): Buffer {
  const payload = Buffer.from(s.payload ?? "")
  const h = Buffer.alloc(20)
  h.writeUInt16BE(s.from[1], 0)
  h.writeUInt16BE(s.to[1], 2)
  h.writeUInt32BE(s.seq >>> 0, 4)
  h.writeUInt32BE((s.ack ?? 0) >>> 0, 8)
  h[12] = 5 << 4
  h[13] = [...s.flags].reduce((bits, f) => bits | FLAG[f as keyof typeof FLAG], 0)
  return Buffer.concat([h, payload])
}

function ipv4(s: Seg): Buffer {
  const body = tcp(s)
  const h = Buffer.alloc(20)
  h[0] = 0x45
  // The length on the wire: `wireExtra` payload bytes beyond what the file holds (a snaplen cut).
  h.writeUInt16BE(20 + body.length + (s.wireExtra ?? 0), 2)
  h[9] = 6
  Buffer.from(s.from[0].split(".").map(Number)).copy(h, 12)
  Buffer.from(s.to[0].split(".").map(Number)).copy(h, 16)
  return Buffer.concat([h, body])
}

function ipv6(s: Seg): Buffer {
  const body = tcp(s)
  const h = Buffer.alloc(40)
  h[0] = 0x60
  h.writeUInt16BE(body.length + (s.wireExtra ?? 0), 4)
  h[6] = 6
  const addr = (a: string) => (a === "::1" ? Buffer.concat([Buffer.alloc(15), Buffer.from([1])]) : Buffer.alloc(16))
  addr(s.from[0]).copy(h, 8)
  addr(s.to[0]).copy(h, 24)
  return Buffer.concat([h, body])
}

function pcap(linkType: number, frames: Buffer[], options: { bigEndian?: boolean } = {}): Buffer {
  const u32 = (n: number) => {
    const b = Buffer.alloc(4)
    if (options.bigEndian) b.writeUInt32BE(n >>> 0)
    else b.writeUInt32LE(n >>> 0)
    return b
  }
  const u16 = (n: number) => {
    const b = Buffer.alloc(2)
    if (options.bigEndian) b.writeUInt16BE(n)
    else b.writeUInt16LE(n)
    return b
  }
  const parts: Buffer[] = [u32(0xa1b2c3d4), u16(2), u16(4), u32(0), u32(0), u32(65535), u32(linkType)]
  frames.forEach((f, i) => parts.push(u32(1_700_000_000 + i), u32(0), u32(f.length), u32(f.length), f))
  return Buffer.concat(parts)
}

const ethernet = (ip: Buffer, type = 0x0800) => {
  const h = Buffer.alloc(14)
  h.writeUInt16BE(type, 12)
  return Buffer.concat([h, ip])
}

const C: [string, number] = ["127.0.0.1", 40000]
const S: [string, number] = ["127.0.0.1", 7000]

describe("CaptureSummary.fromPcap", () => {
  test("a retransmitted segment is counted once; a cut payload counts its wire length", () => {
    const file = pcap(Pcap.LINK.EN10MB, [
      ethernet(ipv4({ from: C, to: S, seq: 100, flags: "S" })),
      ethernet(ipv4({ from: S, to: C, seq: 900, ack: 101, flags: "SA" })),
      ethernet(ipv4({ from: C, to: S, seq: 101, ack: 901, flags: "A" })),
      ethernet(ipv4({ from: C, to: S, seq: 101, ack: 901, flags: "PA", payload: "PING\n" })),
      // The same bytes again (a retransmission), then the next ones.
      ethernet(ipv4({ from: C, to: S, seq: 101, ack: 901, flags: "PA", payload: "PING\n" })),
      ethernet(ipv4({ from: C, to: S, seq: 106, ack: 901, flags: "PA", payload: "PING\n" })),
      // The reply: 10 bytes in the file, 1000 more on the wire.
      ethernet(ipv4({ from: S, to: C, seq: 901, ack: 111, flags: "PA", payload: "PONG\nPONG", wireExtra: 1000 })),
      ethernet(ipv4({ from: C, to: S, seq: 111, ack: 1910, flags: "FA" })),
      ethernet(ipv4({ from: S, to: C, seq: 1910, ack: 112, flags: "FA" })),
    ])
    const s = CaptureSummary.fromPcap(file, { servicePorts: [7000] })
    expect(s.connections).toHaveLength(1)
    const c = s.connections[0]!
    expect(c.client).toEqual({ address: "127.0.0.1", port: 40000 })
    expect(c.server).toEqual({ address: "127.0.0.1", port: 7000 })
    expect(c.toServer.bytes).toBe(10)
    expect(c.toClient.bytes).toBe(1009)
    expect(c.toClient.cut).toBe(true)
    expect(c.toClient.firstLines).toEqual(["PONG", "PONG…"])
    expect(c.toServer.firstLines).toEqual(["PING", "PING"])
    expect(c).toMatchObject({ opened: true, refused: false, ended: "fin", packets: 9 })
  })

  test("a refused connection (a reset answering the SYN) is named as such", () => {
    const file = pcap(Pcap.LINK.EN10MB, [ethernet(ipv4({ from: C, to: ["127.0.0.1", 7001], seq: 5, flags: "S" })), ethernet(ipv4({ from: ["127.0.0.1", 7001], to: C, seq: 0, ack: 6, flags: "RA" }))])
    const c = CaptureSummary.fromPcap(file, { servicePorts: [7000] }).connections[0]!
    expect(c).toMatchObject({ refused: true, ended: "rst", server: { port: 7001 } })
    expect(CaptureSummary.render(CaptureSummary.fromPcap(file, { servicePorts: [7000] }), { file: "capture.pcap", interfaces: ["lo"], limits: "x" })).toContain(
      "#1 127.0.0.1:40000 → 127.0.0.1:7001: refused (reset: nothing listened there), 2 packets",
    )
  })

  test("IPv6 in Linux's cooked capture (SLL2), big-endian file; without a SYN the service port decides the server", () => {
    const sll2 = (ip: Buffer) => {
      const h = Buffer.alloc(20)
      h.writeUInt16BE(0x86dd, 0)
      return Buffer.concat([h, ip])
    }
    const file = pcap(Pcap.LINK.LINUX_SLL2, [sll2(ipv6({ from: ["::1", 7000], to: ["::1", 50000], seq: 1, flags: "PA", payload: "hello\r\n" }))], { bigEndian: true })
    const s = CaptureSummary.fromPcap(file, { servicePorts: [7000] })
    expect(s.addresses).toEqual(["::1"])
    expect(s.connections[0]).toMatchObject({ opened: false, server: { address: "::1", port: 7000 }, client: { port: 50000 }, toClient: { bytes: 7, firstLines: ["hello"] } })
  })

  test("what is not TCP is counted by kind; the packet limit and a torn tail are said", () => {
    const udp = Buffer.from(ipv4({ from: C, to: S, seq: 0, flags: "" }))
    udp[9] = 17
    const arp = ethernet(Buffer.alloc(28), 0x0806)
    const whole = pcap(Pcap.LINK.EN10MB, [ethernet(udp), arp])
    const torn = whole.subarray(0, whole.length - 5)
    const s = CaptureSummary.fromPcap(torn, { servicePorts: [7000], maxPackets: 1 })
    expect(s.other).toEqual({ "UDP 127.0.0.1 → 127.0.0.1": 1 })
    expect(s).toMatchObject({ packets: 1, packetLimitReached: true, truncatedTail: true })
  })

  test("a file that is not a classic pcap is refused, naming what it is", () => {
    expect(() => Pcap.read(Buffer.from("0a0d0d0a000000000000000000000000000000000000000000", "hex"))).toThrow(/not a classic pcap file \(magic 0x0a0d0d0a; pcapng is not read here/)
    expect(() => Pcap.read(Buffer.alloc(3))).toThrow("not a pcap file: 3 bytes, shorter than the 24-byte header")
  })
})

describe("ProbeTools.privileges", () => {
  test("names each capability a process lacks, and why the probe needs it", () => {
    expect(ProbeTools.privileges("CapEff:\t000001ffffffffff\n")).toEqual({ ok: true })
    const user = ProbeTools.privileges("CapEff:\t0000000000000000\n")
    expect(user.ok).toBe(false)
    expect(!user.ok && user.message).toMatch(/^the service probe needs CAP_SYS_ADMIN \(to start the service, its capture and its probe in the service's network namespace\) and CAP_NET_RAW \(for tcpdump to capture there\), which this process lacks: run AirCoding as root/)
    // A container's root without CAP_SYS_ADMIN (Docker's default set: net_raw kept, sys_admin dropped).
    const docker = ProbeTools.privileges("CapEff:\t00000000a80425fb\n")
    expect(!docker.ok && docker.message).toMatch(/^the service probe needs CAP_SYS_ADMIN \(.*\), which this process lacks/)
  })
})

/**
 * The CIDR functions of Nomad's jobspec2 (go-cty-funcs/cidr): `cidrhost`, `cidrnetmask`,
 * `cidrsubnet` and `cidrsubnets`, for IPv4 and IPv6 prefixes, with addresses as BigInt.
 */
import { isIP } from "node:net";
import type { HclFunction } from "./evaluate.js";
import { arity, fail } from "./functions_collections.js";
import { toNum, toStr } from "./values.js";

interface Prefix {
  addr: bigint;
  len: number;
  bits: 32 | 128;
}

function parseAddr(s: string): { addr: bigint; bits: 32 | 128 } {
  const v = isIP(s);
  if (v === 4) return { addr: s.split(".").reduce((a, o) => (a << 8n) | BigInt(o), 0n), bits: 32 };
  if (v !== 6) throw fail(`invalid CIDR address ${JSON.stringify(s)}.`);
  const [head, tail] = s.includes("::") ? s.split("::") : [s, undefined];
  const hs = head ? head.split(":") : [];
  const ts = tail ? tail.split(":") : [];
  const groups =
    tail === undefined ? hs : [...hs, ...Array<string>(8 - hs.length - ts.length).fill("0"), ...ts];
  return { addr: groups.reduce((a, g) => (a << 16n) | BigInt(parseInt(g, 16)), 0n), bits: 128 };
}

function parsePrefix(s: string): Prefix {
  const m = /^(.+)\/(\d+)$/.exec(s);
  if (!m) throw fail(`invalid CIDR address ${JSON.stringify(s)}.`);
  const { addr, bits } = parseAddr(m[1]!);
  const len = Number(m[2]);
  if (len > bits) throw fail(`invalid CIDR address ${JSON.stringify(s)}.`);
  const host = (1n << BigInt(bits - len)) - 1n;
  return { addr: addr & ~host, len, bits };
}

function format(addr: bigint, bits: 32 | 128): string {
  if (bits === 32) return [24n, 16n, 8n, 0n].map((sh) => String((addr >> sh) & 255n)).join(".");
  const groups = Array.from({ length: 8 }, (_, i) => ((addr >> BigInt(112 - 16 * i)) & 0xffffn).toString(16));
  // The longest run of zero groups (two or more) is written "::", as Go's net.IP.String does.
  let best = [-1, 0];
  for (let i = 0; i < 8;) {
    let j = i;
    while (j < 8 && groups[j] === "0") j++;
    if (j - i > best[1]! && j - i > 1) best = [i, j - i];
    i = j === i ? i + 1 : j;
  }
  if (best[0]! < 0) return groups.join(":");
  return `${groups.slice(0, best[0]).join(":")}::${groups.slice(best[0]! + best[1]!).join(":")}`;
}

function subnet(p: Prefix, newbits: number, num: bigint): Prefix {
  const len = p.len + newbits;
  if (!Number.isInteger(newbits) || newbits < 0 || len > p.bits)
    throw fail(`insufficient address space to extend prefix of ${p.len} by ${newbits}.`);
  if (num < 0n || num >= 1n << BigInt(newbits))
    throw fail(`prefix extension of ${newbits} does not accommodate a subnet numbered ${num}.`);
  return { addr: p.addr | (num << BigInt(p.bits - len)), len, bits: p.bits };
}

export const cidrFunctions: Record<string, HclFunction> = {
  cidrhost: (a) => {
    arity(a, 2);
    const p = parsePrefix(toStr(a[0]!, "prefix"));
    const n = BigInt(toNum(a[1]!, "hostnum"));
    const size = 1n << BigInt(p.bits - p.len);
    const host = n < 0n ? size + n : n;
    if (host < 0n || host >= size)
      throw fail(`prefix of ${p.len} does not accommodate a host numbered ${n}.`);
    return format(p.addr | host, p.bits);
  },
  cidrnetmask: (a) => {
    arity(a, 1);
    const p = parsePrefix(toStr(a[0]!, "prefix"));
    if (p.bits !== 32) throw fail("only IPv4 networks have a netmask.");
    return format(((1n << 32n) - 1n) ^ ((1n << BigInt(32 - p.len)) - 1n), 32);
  },
  cidrsubnet: (a) => {
    arity(a, 3);
    const s = subnet(
      parsePrefix(toStr(a[0]!, "prefix")),
      toNum(a[1]!, "newbits"),
      BigInt(toNum(a[2]!, "netnum")),
    );
    return `${format(s.addr, s.bits)}/${s.len}`;
  },
  cidrsubnets: (a) => {
    arity(a, 1, -1);
    const p = parsePrefix(toStr(a[0]!, "prefix"));
    let next = p.addr;
    return a.slice(1).map((x) => {
      const nb = toNum(x, "newbits");
      const len = p.len + nb;
      if (!Number.isInteger(nb) || nb < 1 || len > p.bits)
        throw fail(
          `would extend prefix to ${len} bits, which is too long for an IPv${p.bits === 32 ? 4 : 6} address.`,
        );
      const step = 1n << BigInt(p.bits - len);
      const start = ((next + step - 1n) / step) * step;
      if (start + step > p.addr + (1n << BigInt(p.bits - p.len)))
        throw fail(
          `not enough remaining address space for a subnet with a prefix of ${len} bits after ${format(next, p.bits)}.`,
        );
      next = start + step;
      return `${format(start, p.bits)}/${len}`;
    });
  },
};

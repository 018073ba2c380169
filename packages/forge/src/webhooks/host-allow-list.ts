/**
 * Gitea's `[webhook] ALLOWED_HOST_LIST` (modules/hostmatcher): a comma-separated list of built-in
 * address classes (`external`, `private`, `loopback`, `*`), CIDRs and host-name globs. A delivery may
 * connect only where the list allows the host name it was given or the address it actually connects
 * to (hook-client.ts checks both, after resolving the name once).
 */
import ipaddr from 'ipaddr.js';
import { compileGlob } from './glob.js';

export interface HostAllowList {
  /** The configured text, for error messages. */
  readonly source: string;
  /** Whether a connection to `ip`, reached through the name `host`, is allowed. */
  allows(host: string, ip: string): boolean;
}

type IpClass = 'external' | 'private' | 'loopback';

/** Address ranges ipaddr.js names that are public (routable, unicast) and not reserved. */
function classOf(address: ipaddr.IPv4 | ipaddr.IPv6): IpClass | 'other' {
  const ip =
    address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()
      ? (address as ipaddr.IPv6).toIPv4Address()
      : address;
  const range = ip.range();
  if (range === 'loopback') return 'loopback';
  if (range === 'private' || range === 'uniqueLocal') return 'private';
  if (range === 'unicast') return 'external';
  // linkLocal, carrierGradeNat (shared), unspecified, broadcast, multicast, reserved, 6to4, teredo…
  return 'other';
}

/** Parses the list; an entry that is none of the forms is an error naming it (config is checked once). */
export function parseHostAllowList(source: string): HostAllowList {
  const classes = new Set<IpClass>();
  let all = false;
  const cidrs: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]> = [];
  const hosts: RegExp[] = [];
  for (const raw of source.split(',')) {
    const entry = raw.trim().toLowerCase();
    if (entry === '') continue;
    if (entry === '*') all = true;
    else if (entry === 'external' || entry === 'private' || entry === 'loopback') classes.add(entry);
    else if (entry.includes('/')) {
      try {
        cidrs.push(ipaddr.parseCIDR(entry));
      } catch {
        throw new Error(`webhook.allowed_host_list: "${entry}" is not a valid CIDR`);
      }
    } else {
      const glob = compileGlob(entry);
      if (!glob) throw new Error(`webhook.allowed_host_list: "${entry}" is not a valid host pattern`);
      hosts.push(glob);
    }
  }
  if (!all && classes.size === 0 && cidrs.length === 0 && hosts.length === 0) classes.add('external');
  return {
    source,
    allows(host: string, ip: string): boolean {
      if (all) return true;
      const name = host.toLowerCase().replace(/^\[|\]$/g, '');
      if (hosts.some((glob) => glob.test(name))) return true;
      let address: ipaddr.IPv4 | ipaddr.IPv6;
      try {
        address = ipaddr.process(ip);
      } catch {
        return false;
      }
      const kind = classOf(address);
      if (kind !== 'other' && classes.has(kind)) return true;
      return cidrs.some(([range, bits]) => range.kind() === address.kind() && address.match(range, bits));
    },
  };
}

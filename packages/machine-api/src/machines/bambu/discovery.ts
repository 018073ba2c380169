/**
 * Bambu LAN discovery: printers announce themselves with SSDP-style `NOTIFY * HTTP/1.1` datagrams on UDP
 * port 2021. One listener per port is shared by every Bambu machine that uses it.
 */

import { createSocket, type Socket } from 'node:dgram';
import { isIP } from 'node:net';
import type { Logger } from 'pino';

const BAMBU_NT = 'urn:bambulab-com:device:3dprinter:1';
/** Real announcements are ~400 bytes; anything far larger is not one. */
const MAX_DATAGRAM = 4096;
/** Bound on remembered (sender, reason) pairs, so a chatty bad sender is logged once, not every packet. */
const MAX_REMEMBERED_WARNINGS = 256;

/** What one announcement tells us about a printer. */
export interface BambuAnnouncement {
  host: string;
  serial: string;
  /** `DevName.bambu.com`: the name the user gave the printer, matched against the config `name`. */
  name: string | null;
  /** `DevModel.bambu.com`, e.g. `BL-P001` (X1 Carbon), `C12` (P1S). */
  modelCode: string | null;
}

/** Why a datagram is not a usable announcement; `ignorable` ones are other devices' traffic, not errors. */
export class UnusableDatagram extends Error {
  constructor(
    message: string,
    readonly ignorable: boolean,
  ) {
    super(message);
    this.name = 'UnusableDatagram';
  }
}

/** Parses one datagram; throws `UnusableDatagram` when it is not a well-formed Bambu announcement. */
export function parseAnnouncement(payload: Buffer): BambuAnnouncement {
  const lines = payload
    .toString('utf8')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line.length > 0);
  if (lines[0] !== 'NOTIFY * HTTP/1.1') throw new UnusableDatagram('not an SSDP NOTIFY', true);
  const headers = new Map<string, string>();
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new UnusableDatagram(`header line without a name: ${JSON.stringify(line)}`, false);
    // SSDP header names are case-insensitive; values keep their case.
    headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  const nt = headers.get('nt');
  if (nt !== BAMBU_NT)
    throw new UnusableDatagram(`NT ${JSON.stringify(nt ?? null)} is not a Bambu printer`, true);
  const host = headers.get('location') ?? '';
  if (isIP(host) === 0)
    throw new UnusableDatagram(`Location ${JSON.stringify(host)} is not an IP address`, false);
  const serial = headers.get('usn') ?? '';
  if (!/^[A-Za-z0-9]{6,32}$/.test(serial)) {
    throw new UnusableDatagram(`USN ${JSON.stringify(serial)} is not a printer serial number`, false);
  }
  return {
    host,
    serial,
    name: headers.get('devname.bambu.com') || null,
    modelCode: headers.get('devmodel.bambu.com') || null,
  };
}

type AnnouncementHandler = (announcement: BambuAnnouncement) => void;

/**
 * A UDP listener on one port, bound while at least one machine holds it (`acquire`/`release`), so machines
 * that share port 2021 share one socket.
 */
export class DiscoveryListener {
  private socket: Socket | null = null;
  private readonly handlers = new Set<AnnouncementHandler>();
  private readonly warned = new Set<string>();

  constructor(
    readonly port: number,
    private readonly logger: Logger,
  ) {}

  /** Registers a handler and binds the socket on first use; resolves once the socket listens. */
  async acquire(handler: AnnouncementHandler): Promise<void> {
    this.handlers.add(handler);
    if (this.socket) return;
    // reuseAddr: broadcasts reach every socket bound to the port, so Bambu Studio on the same host still works.
    const socket = createSocket({ type: 'udp4', reuseAddr: true });
    this.socket = socket;
    socket.on('message', (payload, sender) => this.onDatagram(payload, `${sender.address}:${sender.port}`));
    socket.on('error', (error) =>
      this.logger.warn({ err: error, port: this.port }, 'Bambu discovery socket error'),
    );
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(this.port, () => {
        socket.off('error', reject);
        resolve();
      });
    }).catch((error: unknown) => {
      this.socket = null;
      socket.close();
      throw error;
    });
    this.logger.info({ port: this.port }, 'listening for Bambu printer announcements');
  }

  /** Unregisters a handler; the socket closes when the last one is gone. */
  async release(handler: AnnouncementHandler): Promise<void> {
    this.handlers.delete(handler);
    if (this.handlers.size > 0 || !this.socket) return;
    const socket = this.socket;
    this.socket = null;
    await new Promise<void>((resolve) => socket.close(() => resolve()));
  }

  private onDatagram(payload: Buffer, sender: string): void {
    let announcement: BambuAnnouncement;
    try {
      if (payload.length > MAX_DATAGRAM)
        throw new UnusableDatagram(`${payload.length} bytes is too long`, false);
      announcement = parseAnnouncement(payload);
    } catch (error) {
      if (!(error instanceof UnusableDatagram)) throw error;
      this.logUnusable(error, sender);
      return;
    }
    for (const handler of this.handlers) handler(announcement);
  }

  private logUnusable(error: UnusableDatagram, sender: string): void {
    if (error.ignorable) {
      this.logger.debug({ sender, reason: error.message }, 'ignored datagram on the Bambu discovery port');
      return;
    }
    const key = `${sender}\n${error.message}`;
    if (this.warned.has(key)) return;
    if (this.warned.size >= MAX_REMEMBERED_WARNINGS) this.warned.clear();
    this.warned.add(key);
    this.logger.warn({ sender, reason: error.message }, 'ignored a malformed Bambu announcement');
  }
}

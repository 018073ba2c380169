/**
 * Makes the service findable on the local network over mDNS/DNS-SD: as `_machine-api._tcp` with TXT
 * `path=/` (what the anchor advertises and Zoo's modeling app browses for), and as `_octoprint._tcp`
 * once per OctoPrint base (each machine, and the queue) so the slicers' "browse" buttons (PrusaSlicer,
 * OrcaSlicer, Cura's OctoPrint plugin) list them; their TXT `path` is the base path a slicer appends
 * `api/…` to, and `uuid` the base's `upnpUuid`, which Home Assistant's zeroconf discovery makes the
 * device id (the same one its config flow reads from `api/settings`). `close()` sends the goodbye records and closes the multicast socket.
 */

import { hostname } from 'node:os';
import { Bonjour } from 'bonjour-service';
import type { Logger } from 'pino';

export interface Advertisement {
  /** Unpublishes every record (goodbye packets) and closes the responder. */
  close(): Promise<void>;
}

export interface AdvertiseOptions {
  port: number;
  /** Machine ids, each with an OctoPrint base `/octoprint/<id>/`. */
  machineIds: readonly string[];
  /** Whether the farm queue has an OctoPrint base (`/octoprint/queue/`). */
  queue: boolean;
  /** The `upnpUuid` of a base (its `api/settings`), advertised as TXT `uuid` for Home Assistant's discovery. */
  uuidOf: (id: string) => string;
  apiVersion: string;
  logger: Logger;
}

export function advertise(options: AdvertiseOptions): Advertisement {
  const { port, logger } = options;
  // Instance names must be unique on the network: two services on one network (or one host) differ by host and port.
  const where = `${hostname()}:${port}`;
  const bonjour = new Bonjour({}, (error: unknown) =>
    logger.warn({ err: error }, 'mDNS advertisement failed'),
  );
  bonjour.publish({ name: `machine-api ${where}`, type: 'machine-api', port, txt: { path: '/' } });
  const bases = [...options.machineIds.map((id) => ({ id, path: `/octoprint/${id}/` }))];
  if (options.queue) bases.push({ id: 'queue', path: '/octoprint/queue/' });
  for (const base of bases) {
    bonjour.publish({
      name: `${base.id} (machine-api ${where})`,
      type: 'octoprint',
      port,
      txt: {
        path: base.path,
        uuid: options.uuidOf(base.id),
        api: '0.1',
        version: '1.10.0',
        vendor: 'machine-api',
        model: options.apiVersion,
      },
    });
  }
  logger.info({ services: 1 + bases.length }, 'advertising over mDNS');
  return {
    close: () =>
      new Promise<void>((resolve) => {
        bonjour.unpublishAll(() => bonjour.destroy(() => resolve()));
      }),
  };
}

/**
 * OctoPrint base URLs: `/octoprint/{machine_id}/` prints on one machine, `/octoprint/queue/` submits to
 * the farm queue, whose constraints are the query parameters of the base URL
 * (`http://host:8080/octoprint/queue/?material=petg`).
 *
 * Slicers build request URLs by appending to the base as text: PrusaSlicer, OrcaSlicer and SuperSlicer
 * add `/api/version` (or `api/version` after a trailing slash), Cura adds `api/…` after forcing a
 * trailing slash. With a query in the base the request arrives as
 * `/octoprint/queue/?material=petg/api/files/local`: the API path ends up inside the query string. The
 * rewrite below moves it back, `/octoprint/queue/api/files/local?material=petg`, before routing.
 */

import type { InstallSecret } from '../access/install-secret.js';
import { BadRequest } from '../errors.js';
import { FILAMENT_MATERIALS, type MachineType } from '../machines/machine.js';

const IN_QUERY = /^(\/octoprint\/[^/?#]+)\/?\?([^#]*?)\/(api\/[^?#]*)$/;

/** Whether a request path is under an OctoPrint base (answered in OctoPrint's error shape). */
export function isOctoPrintPath(url: string): boolean {
  return url.startsWith('/octoprint/');
}

/**
 * The request URL with an API path that a slicer appended to a query moved back into the path, and runs
 * of slashes in the path made one: `pyoctoprintapi` joins its base and some endpoints with an extra
 * slash (`/octoprint/sim//api/printer/bed`, `//api/system/commands/core/restart`), which OctoPrint's
 * server accepts as the single-slash path.
 */
export function rewriteOctoPrintUrl(url: string): string {
  if (!url.startsWith('/octoprint/')) return url;
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  const collapsed = path.includes('//')
    ? path.replace(/\/{2,}/g, '/') + (query === -1 ? '' : url.slice(query))
    : url;
  const match = IN_QUERY.exec(collapsed);
  if (!match) return collapsed;
  return `${match[1]}/${match[3]}?${match[2]}`;
}

/** Where an OctoPrint base sends prints. */
export type OctoPrintTarget =
  | { kind: 'machine'; machineId: string }
  | { kind: 'queue'; constraints: QueueConstraints };

/** The farm queue's constraints as a base URL's query gives them. */
export interface QueueConstraints {
  machine_ids?: string[];
  material?: string;
  nozzle_diameter?: number;
  machine_type?: MachineType;
}

const MACHINE_TYPES: readonly MachineType[] = ['FusedDeposition', 'Stereolithography', 'Cnc'];

const CONSTRAINT_KEYS = ['machine_ids', 'material', 'nozzle_diameter', 'machine_type'];

/** The target of `/octoprint/{target}/…`; query parameters are constraints of the queue only. */
export function parseTarget(target: string, query: Record<string, unknown>): OctoPrintTarget {
  if (target !== 'queue') return { kind: 'machine', machineId: target };
  const constraints: QueueConstraints = {};
  for (const [key, raw] of Object.entries(query)) {
    if (!CONSTRAINT_KEYS.includes(key)) {
      throw new BadRequest(
        `unknown queue constraint "${key}" in the OctoPrint base URL; expected ${CONSTRAINT_KEYS.join(', ')}`,
      );
    }
    if (typeof raw !== 'string' || raw === '') {
      throw new BadRequest(`queue constraint "${key}" needs one non-empty value`);
    }
    if (key === 'nozzle_diameter') {
      const value = Number(raw);
      if (!/^\d+(\.\d+)?$/.test(raw) || !(value > 0)) {
        throw new BadRequest(
          `queue constraint nozzle_diameter must be a number of millimetres, got "${raw}"`,
        );
      }
      constraints.nozzle_diameter = value;
    } else if (key === 'machine_ids') {
      constraints.machine_ids = raw.split(',').filter(Boolean);
    } else if (key === 'material') {
      if (!(FILAMENT_MATERIALS as readonly string[]).includes(raw)) {
        throw new BadRequest(
          `queue constraint material must be one of ${FILAMENT_MATERIALS.join(', ')}, got "${raw}"`,
        );
      }
      constraints.material = raw;
    } else {
      if (!(MACHINE_TYPES as readonly string[]).includes(raw)) {
        throw new BadRequest(
          `queue constraint machine_type must be one of ${MACHINE_TYPES.join(', ')}, got "${raw}"`,
        );
      }
      constraints.machine_type = raw as MachineType;
    }
  }
  return { kind: 'queue', constraints };
}

/** `machine:<id>` or `queue:<canonical query>`: how a stored file remembers where it prints. */
export function targetKey(target: OctoPrintTarget): string {
  if (target.kind === 'machine') return `machine:${target.machineId}`;
  const query = new URLSearchParams();
  for (const key of CONSTRAINT_KEYS) {
    const value = target.constraints[key as keyof QueueConstraints];
    if (value !== undefined) query.set(key, Array.isArray(value) ? value.join(',') : String(value));
  }
  return `queue:${query.toString()}`;
}

/** The inverse of `targetKey`. */
export function targetFromKey(key: string): OctoPrintTarget {
  if (key.startsWith('machine:')) return { kind: 'machine', machineId: key.slice('machine:'.length) };
  const query = Object.fromEntries(new URLSearchParams(key.slice('queue:'.length)));
  return parseTarget('queue', query);
}

/** The path prefix of a target's base URL, e.g. `/octoprint/sim/` (constraints are not part of it). */
export function basePath(target: OctoPrintTarget): string {
  return target.kind === 'machine'
    ? `/octoprint/${encodeURIComponent(target.machineId)}/`
    : '/octoprint/queue/';
}

/**
 * The `upnpUuid` of an OctoPrint base (`api/settings`' `plugins.discovery`, mDNS TXT `uuid`): derived from
 * the install secret, so it is the same after every restart and differs between machines and installs.
 * Home Assistant makes it the printer's device id.
 */
export function upnpUuid(secret: InstallSecret, targetId: string): string {
  return secret.uuidFor(`octoprint:${targetId}`);
}

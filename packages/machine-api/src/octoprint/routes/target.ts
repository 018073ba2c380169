/** What the OctoPrint routes share: the target of a request, its status, and the operation schema. */

import { type TSchema, Type } from 'typebox';
import type { AppKeyRequests } from '../../access/app-keys.js';
import type { CameraTokens } from '../../access/camera-tokens.js';
import type { InstallSecret } from '../../access/install-secret.js';
import type { Job } from '../../jobs/job.js';
import type { MachineStatus } from '../../machines/machine.js';
import type { MachineRegistry } from '../../machines/registry.js';
import { ref } from '../../server/schemas/refs.js';
import { ok } from '../../server/types.js';
import type { TemperatureService } from '../../temperature/service.js';
import { type OctoPrintTarget, parseTarget } from '../base-url.js';
import { OctoPrintError } from '../schemas/handshake.js';
import type { PushSessions } from '../sessions.js';
import type { StoredFiles, SubmitPrint } from '../stored-files.js';

export interface OctoPrintContext {
  machines: MachineRegistry;
  /** The Application Keys flow (`plugin/appkeys/…`). */
  appKeys: AppKeyRequests;
  /** Whether a machine has a camera (`api/settings` then names its webcam URLs). */
  hasCamera: (machineId: string) => boolean;
  /** The tokens in those URLs. */
  cameraTokens: CameraTokens;
  /** Where each machine's stable `upnpUuid` comes from. */
  installSecret: InstallSecret;
  /** Sessions of the push channel (`api/login` makes them, `/sockjs/websocket` checks them). */
  sessions: PushSessions;
  /** Heater targets (`api/printer/tool`, `api/printer/bed`). */
  temperatures: TemperatureService;
  /** The job a machine runs now, if the service started it. */
  currentJob: (machineId: string) => Promise<Job | null>;
  statusTimeoutMs: number;
  files: StoredFiles;
  submit: SubmitPrint;
  uploadDir: string;
  maxUploadBytes: number;
  version: string;
}

export const TargetParams = Type.Object({
  target: Type.String({
    description: 'A machine id, or `queue` for the farm queue (constraints in the query).',
  }),
});

/** Every OctoPrint operation declares OctoPrint's `{"error"}` body for all 4XX and 5XX statuses. */
export const octoPrintErrorResponses = {
  '4xx': { description: 'Error', content: { 'application/json': { schema: ref(OctoPrintError) } } },
  '5xx': { description: 'Error', content: { 'application/json': { schema: ref(OctoPrintError) } } },
};

/** The schema of an OctoPrint operation answering `response` with 200. */
export function schema<T extends TSchema>(operationId: string, summary: string, response: T) {
  return {
    operationId,
    summary,
    tags: ['octoprint'],
    params: TargetParams,
    response: { 200: ok(response), ...octoPrintErrorResponses },
  };
}

/** The target of the request; 404 for a machine that is not configured. */
export function targetOf(
  machines: MachineRegistry,
  params: { target: string },
  query: unknown,
): OctoPrintTarget {
  const target = parseTarget(params.target, (query ?? {}) as Record<string, unknown>);
  if (target.kind === 'machine') machines.require(target.machineId);
  return target;
}

/** The status of the target machine; null for the queue. */
export async function statusOf(
  context: OctoPrintContext,
  target: OctoPrintTarget,
): Promise<MachineStatus | null> {
  const { machines } = context;
  if (target.kind !== 'machine') return null;
  const [status] = await machines.statuses([machines.require(target.machineId)], context.statusTimeoutMs);
  return status ?? null;
}

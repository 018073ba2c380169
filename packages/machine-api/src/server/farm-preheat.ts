/**
 * `POST /machines/preheat` over the whole farm: this instance's machines are heated by the temperature
 * service, the other instances' ones by their instances — one `POST /machines/{id}/temperature` with the
 * preset each, forwarded with the caller's credentials (forward.ts), so the owner applies its own rules
 * and its own preset of that name. A machine whose instance refuses or does not answer is skipped with
 * that instance's error, as a local machine that cannot be heated is.
 */

import type { FastifyRequest } from 'fastify';
import type { RemoteMachine } from '../farm/farm-machines.js';
import type { PreheatOutcome, PreheatSelection } from '../temperature/service.js';
import { InstanceUnavailable } from './forward.js';
import type { ServerContext } from './types.js';

export async function preheatFarm(
  context: ServerContext,
  request: FastifyRequest,
  preset: string,
  selection: PreheatSelection,
): Promise<PreheatOutcome> {
  const { forwarder, temperatures, machines, farm } = context;
  if (!forwarder) return temperatures.preheat(preset, selection);
  let local = selection;
  let remote: RemoteMachine[];
  if ('machines' in selection) {
    remote = [];
    const own: string[] = [];
    for (const id of selection.machines) {
      const other = machines.get(id) ? undefined : forwarder.remoteFor(id, request);
      if (other) remote.push(other);
      else own.push(id);
    }
    local = { machines: own };
  } else {
    // The same rule as for this instance's machines: the material among the machine's routing facts.
    const { material } = selection;
    remote = farm.remote().filter((machine) => machine.facts.materials.includes(material));
  }
  // First here: an unknown preset or machine id refuses the whole request before anything is heated.
  const outcome = await temperatures.preheat(preset, local);
  const results = await Promise.all(
    remote.map(async (machine) => {
      try {
        const path = `/machines/${encodeURIComponent(machine.id)}/temperature`;
        const answer = await forwarder.call(request, machine, path, { preset });
        if (answer.status === 200) return { id: machine.id, error: null };
        const error = answer.body as { error_code?: string; message?: string } | null;
        return {
          id: machine.id,
          error: {
            error_code: error?.error_code ?? `HTTP${answer.status}`,
            message: error?.message ?? `instance "${machine.instance}" answered ${answer.status}`,
          },
        };
      } catch (error) {
        if (!(error instanceof InstanceUnavailable)) throw error;
        return { id: machine.id, error: { error_code: error.errorCode, message: error.message } };
      }
    }),
  );
  for (const { id, error } of results) {
    if (error === null) outcome.heated.push(id);
    else outcome.skipped.push({ id, ...error });
  }
  outcome.heated.sort();
  outcome.skipped.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return outcome;
}

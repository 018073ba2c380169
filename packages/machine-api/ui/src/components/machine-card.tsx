/**
 * One machine on the overview: what it is, what it does, how far it is, and the controls it allows now.
 * The facts are in ./machine-facts, the controls in ./machine-controls.
 */

import type { Job, Machine } from '../api/client';
import { clock, makeModel, stateName } from '../format';
import { Snapshot } from './camera';
import { MachineControls } from './machine-controls';
import { MachineFacts } from './machine-facts';
import { StateBadge } from './state-badge';

/** How often a card's camera tile is refreshed: a snapshot every few seconds, not a stream per card. */
const TILE_REFRESH_MS = 5000;

/** Why the machine is not simply printing or idle: its failure, why it cannot be controlled, a bed to clear. */
function MachineNotes({ machine }: { machine: Machine }) {
  const state = stateName(machine);
  const awaitingClear = machine.awaiting_clear_since ?? null;
  const printing = state === 'running' || state === 'paused';
  return (
    <>
      {state === 'failed' && machine.state?.state === 'failed' && machine.state.message && (
        <p class="failure">{machine.state.message}</p>
      )}
      {machine.capabilities?.control === false && (
        <p class="failure" data-field="control">
          Cannot be controlled: {machine.capabilities.reason}
        </p>
      )}
      {awaitingClear && !printing && (
        <p class="awaiting" data-field="awaiting-clear">
          Waiting for the bed to be cleared (since {clock(Date.parse(awaitingClear))}).
        </p>
      )}
    </>
  );
}

export function MachineCard({
  machine,
  job,
  picture = true,
}: {
  machine: Machine;
  job: Job | undefined;
  /** Show the camera tile (the machine page shows the live stream instead). */
  picture?: boolean;
}) {
  const state = stateName(machine);
  const id = machine.id;
  const titleId = `machine-${id}`;
  return (
    <article class={`card state-${state}`} aria-labelledby={titleId} data-machine={id}>
      <header class="card-head">
        <h2 id={titleId}>
          <a href={`/ui/machines/${encodeURIComponent(id)}`}>{id}</a>
        </h2>
        <StateBadge machine={machine} />
      </header>
      <p class="muted">{makeModel(machine)}</p>
      {picture && machine.camera && (
        <Snapshot
          path={`/machines/${encodeURIComponent(id)}/snapshot`}
          alt={`Camera of ${id}`}
          refreshMs={TILE_REFRESH_MS}
          camera={machine.camera}
          class="tile"
        />
      )}
      {state === 'offline' ? (
        <p class="offline-note" role="status">
          Not answering. It shows again here as soon as it responds.
        </p>
      ) : (
        <>
          <MachineNotes machine={machine} />
          <MachineFacts machine={machine} job={job} />
          <MachineControls machine={machine} job={job} />
        </>
      )}
    </article>
  );
}

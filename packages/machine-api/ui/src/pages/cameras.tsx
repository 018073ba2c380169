/**
 * `/ui/cameras`: the camera wall, every camera of the farm at once. Snapshots refreshed every two seconds,
 * not live streams: a browser opens at most six connections to one server, and the event stream holds one.
 */

import { Snapshot } from '../components/camera';
import { StateBadge } from '../components/state-badge';
import { loadState, machines } from '../live/farm';
import { useTitle } from '../title';

const WALL_REFRESH_MS = 2000;

export function CameraWall() {
  useTitle('Cameras');
  const withCamera = machines.value.filter((machine) => machine.camera);
  return (
    <section aria-labelledby="cameras-title">
      <h1 id="cameras-title">Cameras</h1>
      {loadState.value === 'loading' && <p aria-busy="true">Loading machines…</p>}
      {loadState.value === 'loaded' && withCamera.length === 0 && (
        <p>
          No machine has a camera. Add <code>camera = {'{ snapshot_url = "…" }'}</code> to a machine, or a
          webcam in Mainsail or Fluidd (see docs/machine-api/cameras.md).
        </p>
      )}
      <div class="wall">
        {withCamera.map((machine) => (
          <figure key={machine.id} class="wall-cell" data-machine={machine.id}>
            <Snapshot
              path={`/machines/${encodeURIComponent(machine.id)}/snapshot`}
              alt={`Camera of ${machine.id}`}
              refreshMs={WALL_REFRESH_MS}
              camera={machine.camera}
            />
            <figcaption>
              <a href={`/ui/machines/${encodeURIComponent(machine.id)}`}>{machine.id}</a>{' '}
              <StateBadge machine={machine} />
            </figcaption>
          </figure>
        ))}
      </div>
    </section>
  );
}

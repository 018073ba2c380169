/**
 * `/ui/machines/:id`: the machine's card, its live camera, its Spoolman spool, its temperatures over the
 * last hour, and its state changes.
 */

import { useEffect } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { LiveStream } from '../components/camera';
import { MachineCard } from '../components/machine-card';
import { SpoolForm } from '../components/spool-form';
import { TemperatureChart } from '../components/temperature-chart';
import { Usage } from '../components/usage';
import { clock, nozzleDiameter, STATE_LABELS } from '../format';
import { currentJobs, loadState, machines } from '../live/farm';
import { stateLog, temperatureLog } from '../live/history';
import { replayMachineHistory } from '../live/replay';
import { useTitle } from '../title';

export default function MachinePage() {
  const { params } = useRoute();
  const id = params.id ?? '';
  useTitle(`Machine ${id}`);
  useEffect(() => {
    // Without the replay the chart would start empty; live events still arrive if it fails.
    replayMachineHistory(id).catch(() => undefined);
  }, [id]);
  const machine = machines.value.find((entry) => entry.id === id);
  if (!machine) {
    return (
      <section>
        <h1>Machine {id}</h1>
        <p>{loadState.value === 'loading' ? 'Loading…' : 'No machine with this id.'}</p>
      </section>
    );
  }
  const samples = temperatureLog.value.get(id) ?? [];
  const changes = stateLog.value.get(id) ?? [];
  const volume = machine.max_part_volume;
  const nozzle = nozzleDiameter(machine);
  return (
    <section aria-labelledby="machine-title">
      <h1 id="machine-title">Machine {id}</h1>
      <div class="cards single">
        <MachineCard machine={machine} job={currentJobs.value.get(id)} picture={false} />
      </div>
      {machine.camera && (
        <>
          <h2>Camera</h2>
          <LiveStream machineId={id} camera={machine.camera} alt={`Live camera of ${id}`} />
        </>
      )}
      <dl class="facts wide">
        <dt>Type</dt>
        <dd>{machine.machine_type}</dd>
        <dt>Serial</dt>
        <dd>{machine.make_model.serial ?? '—'}</dd>
        <dt>Nozzle</dt>
        <dd>{nozzle === null ? '—' : `${nozzle} mm`}</dd>
        <dt>Build volume</dt>
        <dd>{volume ? `${volume.width} × ${volume.depth} × ${volume.height} mm` : '—'}</dd>
      </dl>
      <h2>Prints and filament</h2>
      <SpoolForm machine={machine} />
      <Usage machineId={id} label={`Prints and filament of ${id}`} />
      <h2>Temperatures, last hour</h2>
      {samples.length === 0 ? (
        <p>No readings yet.</p>
      ) : (
        <TemperatureChart
          samples={samples}
          label={`Nozzle and bed temperatures of ${id} over the last hour`}
        />
      )}
      <h2>State history</h2>
      {changes.length === 0 ? (
        <p>No changes seen yet.</p>
      ) : (
        <ol class="timeline" reversed>
          {[...changes].reverse().map((change) => (
            <li key={change.at}>
              <time dateTime={new Date(change.at).toISOString()}>{clock(change.at)}</time>{' '}
              {STATE_LABELS[change.state]}
              {change.message ? `: ${change.message}` : ''}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

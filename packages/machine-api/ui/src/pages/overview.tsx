/** `/ui/`: one card per machine, as the service lists them. */

import { PreheatActions } from '../components/heat';
import { MachineCard } from '../components/machine-card';
import { currentJobs, loadState, machines } from '../live/farm';
import { useTitle } from '../title';

export function Overview() {
  useTitle('Farm');
  const state = loadState.value;
  const list = machines.value;
  const current = currentJobs.value;
  return (
    <section aria-labelledby="overview-title">
      <h1 id="overview-title">Farm</h1>
      {state === 'loaded' && <PreheatActions />}
      {state === 'loading' && <p aria-busy="true">Loading machines…</p>}
      {typeof state === 'object' && (
        <p class="error" role="alert">
          Could not load the farm: {state.error}
        </p>
      )}
      {state === 'loaded' && list.length === 0 && (
        <p>No machines are configured. Add a [machines.&lt;id&gt;] table to the configuration file.</p>
      )}
      <div class="cards">
        {list.map((machine) => (
          <MachineCard key={machine.id} machine={machine} job={current.get(machine.id)} />
        ))}
      </div>
    </section>
  );
}

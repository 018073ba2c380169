/**
 * Assigns the Spoolman spool a machine prints from (`PUT /machines/{id}/spool`): a spool id, an AMS slot
 * for a Bambu printer, or nothing to unassign. Shown when Spoolman is configured; the machine is read
 * again afterwards so its card shows the spool's filament at once.
 */

import { useState } from 'preact/hooks';
import { api, errorText, type Machine, must } from '../api/client';
import { putMachine } from '../live/farm';

export function SpoolForm({ machine }: { machine: Machine }) {
  const [spool, setSpool] = useState('');
  const [slot, setSlot] = useState('');
  const [error, setError] = useState<string | null>(null);
  const id = machine.id;
  if (!machine.spoolman) return null;
  return (
    <form
      class="inline"
      aria-label={`Spool of ${id}`}
      onSubmit={async (event) => {
        event.preventDefault();
        setError(null);
        try {
          await must(
            api.PUT('/machines/{id}/spool', {
              params: { path: { id } },
              body: {
                spool_id: spool.trim() === '' ? null : Number(spool),
                ...(slot.trim() === '' ? {} : { slot: Number(slot) }),
              },
            }),
          );
          putMachine(await must(api.GET('/machines/{id}', { params: { path: { id } } })));
        } catch (e) {
          setError(errorText(e));
        }
      }}
    >
      <label>
        Spoolman spool id (empty unassigns){' '}
        <input
          type="number"
          min={1}
          step={1}
          value={spool}
          onInput={(event) => setSpool((event.currentTarget as HTMLInputElement).value)}
        />
      </label>{' '}
      <label>
        AMS slot (optional){' '}
        <input
          type="number"
          min={0}
          max={15}
          step={1}
          value={slot}
          onInput={(event) => setSlot((event.currentTarget as HTMLInputElement).value)}
        />
      </label>{' '}
      <button type="submit">Assign</button>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}

/**
 * A machine card's controls, those its state allows now: pause, resume, bed cleared, stop (asked first),
 * the heat presets when idle; and the API's message when one is refused.
 */

import { useState } from 'preact/hooks';
import { api, errorText, type Job, type Machine, must } from '../api/client';
import { stateName } from '../format';
import { connection } from '../live/events';
import { putMachine } from '../live/farm';
import { ConfirmButton } from './confirm';
import { PresetButtons } from './heat';

type Action = 'pause' | 'resume' | 'stop' | 'clear';

function call(action: Action, id: string) {
  const params = { params: { path: { id } } };
  switch (action) {
    case 'pause':
      return api.POST('/machines/{id}/pause', params);
    case 'resume':
      return api.POST('/machines/{id}/resume', params);
    case 'stop':
      return api.POST('/machines/{id}/stop', params);
    case 'clear':
      return api.POST('/machines/{id}/clear', params);
  }
}

export function MachineControls({ machine, job }: { machine: Machine; job: Job | undefined }) {
  const [error, setError] = useState<string | null>(null);
  const id = machine.id;
  const state = stateName(machine);
  const printing = state === 'running' || state === 'paused';
  const awaitingClear = machine.awaiting_clear_since ?? null;

  const act = async (action: Action) => {
    setError(null);
    try {
      const answer = await must(call(action, id));
      // While the stream is live its events carry the change, in order; an answer can arrive after a newer
      // event and would put an older picture back.
      if (connection.value !== 'live') putMachine(answer);
    } catch (e) {
      setError(errorText(e));
    }
  };

  return (
    <>
      <div class="actions">
        {state === 'running' && (
          <button type="button" onClick={() => act('pause')}>
            Pause
          </button>
        )}
        {state === 'paused' && (
          <button type="button" onClick={() => act('resume')}>
            Resume
          </button>
        )}
        {awaitingClear && !printing && (
          <button type="button" class="primary" onClick={() => act('clear')}>
            Bed cleared
          </button>
        )}
        {printing && (
          <ConfirmButton
            label="Stop"
            class="danger"
            question={`Stop the print on ${id}?`}
            detail={`The print ${job ? `“${job.job_name}” ` : ''}ends as cancelled and cannot be resumed.`}
            confirmLabel="Stop print"
            onConfirm={() => act('stop')}
          />
        )}
      </div>
      {!printing && !machine.current_job && machine.capabilities?.control !== false && (
        <PresetButtons machineId={id} />
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </>
  );
}

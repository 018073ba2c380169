/** One machine on the overview: what it is, what it does, how far it is, and the controls it allows now. */

import { useState } from 'preact/hooks';
import { api, errorText, type Job, type Machine, must } from '../api/client';
import { celsius, clock, duration, filamentLabel, loadedFilament, makeModel, stateName } from '../format';
import { connection } from '../live/events';
import { putMachine, temperatures } from '../live/farm';
import { Snapshot } from './camera';
import { ConfirmButton } from './confirm';
import { PresetButtons } from './heat';
import { StateBadge } from './state-badge';

/** Time left from the slicer's estimate and the progress the machine reports. */
function timeLeft(job: Job | undefined, progress: number | null | undefined): number | null {
  const estimate = job?.estimate?.print_time_seconds;
  if (estimate === null || estimate === undefined || progress === null || progress === undefined) return null;
  return estimate * (1 - Math.min(100, progress) / 100);
}

/** `212 °C → 215 °C` while heating to a target, `25 °C` without one. */
function reading(value: { current: number; target: number | null } | undefined): string {
  if (!value) return '—';
  return value.target ? `${celsius(value.current)} → ${celsius(value.target)}` : celsius(value.current);
}

/** How often a card's camera tile is refreshed: a snapshot every few seconds, not a stream per card. */
const TILE_REFRESH_MS = 5000;

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
  const [error, setError] = useState<string | null>(null);
  const state = stateName(machine);
  const offline = state === 'offline';
  const progress = machine.progress ?? null;
  const filament = loadedFilament(machine);
  const id = machine.id;
  const titleId = `machine-${id}`;
  const readings = temperatures.value.get(id);
  const awaitingClear = machine.awaiting_clear_since ?? null;
  const printing = state === 'running' || state === 'paused';

  const act = async (action: 'pause' | 'resume' | 'stop' | 'clear') => {
    setError(null);
    const params = { params: { path: { id } } };
    try {
      const call =
        action === 'pause'
          ? api.POST('/machines/{id}/pause', params)
          : action === 'resume'
            ? api.POST('/machines/{id}/resume', params)
            : action === 'stop'
              ? api.POST('/machines/{id}/stop', params)
              : api.POST('/machines/{id}/clear', params);
      const answer = await must(call);
      // While the stream is live its events carry the change, in order; an answer can arrive after a newer
      // event and would put an older picture back.
      if (connection.value !== 'live') putMachine(answer);
    } catch (e) {
      setError(errorText(e));
    }
  };

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
      {offline ? (
        <p class="offline-note" role="status">
          Not answering. It shows again here as soon as it responds.
        </p>
      ) : (
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
          <div class="progress-row">
            <progress
              max={100}
              value={progress ?? 0}
              aria-label={`Progress of ${id}`}
              aria-valuetext={progress === null ? 'no print' : `${progress} percent`}
            />
            <span class="progress-value">{progress === null ? '—' : `${Math.round(progress)} %`}</span>
          </div>
          <dl class="facts">
            <dt>Job</dt>
            <dd>{job ? <a href={`/ui/jobs/${job.id}`}>{job.job_name}</a> : '—'}</dd>
            <dt>Time left</dt>
            <dd data-field="time-left">{duration(timeLeft(job, progress))}</dd>
            <dt>Nozzle</dt>
            <dd data-field="nozzle">{reading(readings?.extruder)}</dd>
            <dt>Bed</dt>
            <dd data-field="bed">{reading(readings?.bed)}</dd>
            <dt>Ready</dt>
            <dd data-field="ready">{machine.ready ? 'Yes, takes the next job' : 'No'}</dd>
            <dt>Filament</dt>
            <dd>
              {filament ? (
                <>
                  {filament.color && (
                    <span class="swatch" style={{ background: `#${filament.color}` }} aria-hidden="true" />
                  )}
                  {filamentLabel(filament)}
                </>
              ) : (
                '—'
              )}
            </dd>
          </dl>
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
      )}
    </article>
  );
}

/**
 * What a machine card tells about the print: progress, job, time left, temperatures, readiness, filament
 * (and its Spoolman spool), and on a farm of several instances the instance that drives the machine.
 */

import type { Job, Machine } from '../api/client';
import { celsius, duration, filamentLabel, loadedFilament } from '../format';
import { temperatures } from '../live/farm';

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

function Filament({ machine }: { machine: Machine }) {
  const filament = loadedFilament(machine);
  return (
    <>
      {filament?.color && (
        <span class="swatch" style={{ background: `#${filament.color}` }} aria-hidden="true" />
      )}
      {filament ? filamentLabel(filament) : '—'}
      <Spools machine={machine} />
    </>
  );
}

/** The Spoolman spools the machine prints from (when Spoolman is configured), and why one was dropped. */
function Spools({ machine }: { machine: Machine }) {
  const spoolman = machine.spoolman;
  if (!spoolman) return null;
  return (
    <span data-field="spools">
      {spoolman.spools.map((spool) => (
        <span key={spool.slot ?? -1} class="spool">
          {' · '}
          {spool.slot === null ? '' : `slot ${spool.slot}: `}spool #{spool.spool_id}
          {spool.remaining_weight === null ? '' : `, ${Math.round(spool.remaining_weight)} g left`}
        </span>
      ))}
      {spoolman.notice && (
        <span class="error" role="status">
          {' '}
          {spoolman.notice}
        </span>
      )}
    </span>
  );
}

export function MachineFacts({ machine, job }: { machine: Machine; job: Job | undefined }) {
  const id = machine.id;
  const progress = machine.progress ?? null;
  const readings = temperatures.value.get(id);
  return (
    <>
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
          <Filament machine={machine} />
        </dd>
        {machine.instance !== undefined && (
          <>
            <dt>Instance</dt>
            <dd data-field="instance">{machine.instance}</dd>
          </>
        )}
      </dl>
    </>
  );
}

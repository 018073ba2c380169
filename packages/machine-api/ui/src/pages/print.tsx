/**
 * `/ui/print`: send a design (STL, 3MF, OBJ or G-code) to one machine (`POST /print`) or queue it for any
 * machine with a material / nozzle (`POST /queue`): drop or pick the file, name the job, pick a filament;
 * the upload shows its progress and the API's own message on refusal.
 */

import { useState } from 'preact/hooks';
import { errorText } from '../api/client';
import { type PrintAnswer, type QueueAnswer, upload } from '../api/upload';
import { bytes, filamentLabel, filaments, nozzleDiameter, STATE_LABELS, stateName } from '../format';
import { machines } from '../live/farm';
import { useTitle } from '../title';

const ACCEPT = '.stl,.3mf,.obj,.gcode,.gco,.g';

/** "benchy.gcode.3mf" → "benchy". */
function baseName(name: string): string {
  return name.replace(/(\.gcode)?\.(stl|3mf|obj|gcode|gco|g)$/i, '') || name;
}

export function SendPrint() {
  useTitle('Send a print');
  const list = machines.value;
  const [file, setFile] = useState<File | null>(null);
  const [dragging, setDragging] = useState(false);
  const [machineId, setMachineId] = useState('');
  const [jobName, setJobName] = useState('');
  const [filamentIdx, setFilamentIdx] = useState('');
  const [sent, setSent] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [accepted, setAccepted] = useState<PrintAnswer | null>(null);
  const [queued, setQueued] = useState<QueueAnswer | null>(null);
  const [target, setTarget] = useState<'machine' | 'any'>('machine');
  const [material, setMaterial] = useState('');
  const [nozzle, setNozzle] = useState('');
  const [priority, setPriority] = useState('0');

  const machine = list.find((entry) => entry.id === machineId);
  const choices = target === 'machine' && machine ? filaments(machine) : [];
  const sending = sent !== null && accepted === null && queued === null && error === null;
  // What the farm has, to choose constraints from.
  const materials = [
    ...new Set(list.flatMap((entry) => filaments(entry).map((f) => f.material.type))),
  ].sort();
  const nozzles = [...new Set(list.map(nozzleDiameter).filter((d) => d !== null))].sort((a, b) => a - b);

  const choose = (chosen: File | undefined) => {
    if (!chosen) return;
    setFile(chosen);
    if (!jobName) setJobName(baseName(chosen.name));
    setAccepted(null);
    setQueued(null);
    setError(null);
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    if (!file) {
      setError('Choose a file to print.');
      return;
    }
    setError(null);
    setAccepted(null);
    setQueued(null);
    setSent(0);
    const params: Record<string, unknown> =
      target === 'machine'
        ? { machine_id: machineId, job_name: jobName }
        : {
            job_name: jobName,
            priority: Number(priority),
            ...(material ? { material } : {}),
            ...(nozzle ? { nozzle_diameter: Number(nozzle) } : {}),
          };
    if (target === 'machine' && filamentIdx !== '') {
      params.slicer_configuration = { filament_idx: Number(filamentIdx) };
    }
    const form = new FormData();
    form.append('params', JSON.stringify(params));
    form.append('file', file, file.name);
    try {
      if (target === 'machine') setAccepted(await upload<PrintAnswer>('/print', form, setSent));
      else setQueued(await upload<QueueAnswer>('/queue', form, setSent));
    } catch (e) {
      setError(errorText(e));
    }
  };

  return (
    <section aria-labelledby="print-title">
      <h1 id="print-title">Send a print</h1>
      <form class="stack" onSubmit={submit}>
        <label
          class={`dropzone${dragging ? ' dragging' : ''}`}
          onDragOver={(event) => {
            event.preventDefault();
            setDragging(true);
          }}
          onDragLeave={() => setDragging(false)}
          onDrop={(event) => {
            event.preventDefault();
            setDragging(false);
            choose(event.dataTransfer?.files[0]);
          }}
        >
          <span>
            {file ? (
              <>
                <strong>{file.name}</strong> ({bytes(file.size)})
              </>
            ) : (
              'Drop an STL, 3MF, OBJ or G-code file here, or choose one'
            )}
          </span>
          <input
            type="file"
            name="file"
            accept={ACCEPT}
            onChange={(event) => choose((event.currentTarget as HTMLInputElement).files?.[0])}
          />
        </label>

        <fieldset>
          <legend>Send to</legend>
          <label class="check">
            <input
              type="radio"
              name="target"
              checked={target === 'machine'}
              onChange={() => setTarget('machine')}
            />
            One machine
          </label>
          <label class="check">
            <input type="radio" name="target" checked={target === 'any'} onChange={() => setTarget('any')} />
            Any machine with…
          </label>
        </fieldset>

        {target === 'machine' ? (
          <label>
            Machine
            <select
              name="machine"
              required
              value={machineId}
              onChange={(event) => {
                setMachineId((event.currentTarget as HTMLSelectElement).value);
                setFilamentIdx('');
              }}
            >
              <option value="" disabled>
                Choose a machine
              </option>
              {list.map((entry) => (
                <option key={entry.id} value={entry.id}>
                  {entry.id} — {STATE_LABELS[stateName(entry)]}
                </option>
              ))}
            </select>
          </label>
        ) : (
          <div class="filters">
            <label>
              Material
              <select
                name="material"
                value={material}
                onChange={(event) => setMaterial((event.currentTarget as HTMLSelectElement).value)}
              >
                <option value="">Any material</option>
                {materials.map((type) => (
                  <option key={type} value={type}>
                    {type.toUpperCase().replace('_', ' ')}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Nozzle
              <select
                name="nozzle"
                value={nozzle}
                onChange={(event) => setNozzle((event.currentTarget as HTMLSelectElement).value)}
              >
                <option value="">Any nozzle</option>
                {nozzles.map((diameter) => (
                  <option key={diameter} value={String(diameter)}>
                    {diameter} mm
                  </option>
                ))}
              </select>
            </label>
            <label>
              Priority
              <input
                type="number"
                name="priority"
                step={1}
                value={priority}
                onInput={(event) => setPriority((event.currentTarget as HTMLInputElement).value)}
              />
            </label>
          </div>
        )}

        <label>
          Job name
          <input
            name="job_name"
            required
            value={jobName}
            onInput={(event) => setJobName((event.currentTarget as HTMLInputElement).value)}
          />
        </label>

        {choices.length > 0 && (
          <label>
            Filament
            <select
              name="filament"
              value={filamentIdx}
              onChange={(event) => setFilamentIdx((event.currentTarget as HTMLSelectElement).value)}
            >
              <option value="">The loaded filament</option>
              {choices.map((filament, index) => (
                <option key={`${index}`} value={String(index)}>
                  {index}: {filamentLabel(filament)}
                </option>
              ))}
            </select>
          </label>
        )}

        <div>
          <button type="submit" class="primary" disabled={sending}>
            {sending ? 'Sending…' : target === 'machine' ? 'Send to machine' : 'Add to queue'}
          </button>
        </div>

        {sent !== null && (
          <label>
            Upload
            <progress max={1} value={sent} aria-valuetext={`${Math.round(sent * 100)} percent sent`} />
          </label>
        )}
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        {accepted && (
          <p class="notice" role="status">
            Accepted: <a href={`/ui/jobs/${accepted.job_id}`}>{accepted.parameters.job_name}</a> on{' '}
            {accepted.parameters.machine_id}.
          </p>
        )}
        {queued && (
          <p class="notice" role="status">
            Queued: <a href={`/ui/jobs/${queued.id}`}>{queued.job_name}</a>, position {queued.position}.
          </p>
        )}
      </form>
    </section>
  );
}

/**
 * `/ui/print`: send a design (STL, 3MF, OBJ or G-code) to one machine (`POST /print`) or queue it for any
 * machine with a material / nozzle (`POST /queue`): drop or pick the file, name the job, pick a filament;
 * the upload shows its progress and the API's own message on refusal. The parts are in ../print/.
 */

import { useState } from 'preact/hooks';
import { filaments, nozzleDiameter } from '../format';
import { machines } from '../live/farm';
import { DesignDropzone } from '../print/dropzone';
import {
  designTypeHint,
  FilamentField,
  MachineField,
  type PrintTarget,
  type QueueChoice,
  QueueFields,
  TargetChoice,
} from '../print/fields';
import { PrintOutcome } from '../print/outcome';
import { usePrintUpload } from '../print/use-print-upload';
import { useTitle } from '../title';

/** "benchy.gcode.3mf" → "benchy". */
function baseName(name: string): string {
  return name.replace(/(\.gcode)?\.(stl|3mf|obj|gcode|gco|g)$/i, '') || name;
}

/** The `params` part of the request, for one machine or for the queue. */
function printParams(
  target: PrintTarget,
  fields: { machineId: string; jobName: string; filamentIdx: string; queue: QueueChoice },
): Record<string, unknown> {
  const { machineId, jobName, filamentIdx, queue } = fields;
  if (target === 'any') {
    return {
      job_name: jobName,
      priority: Number(queue.priority),
      ...(queue.material ? { material: queue.material } : {}),
      ...(queue.nozzle ? { nozzle_diameter: Number(queue.nozzle) } : {}),
    };
  }
  return {
    machine_id: machineId,
    job_name: jobName,
    ...(filamentIdx !== '' ? { slicer_configuration: { filament_idx: Number(filamentIdx) } } : {}),
  };
}

export function SendPrint() {
  useTitle('Send a print');
  const list = machines.value;
  const [file, setFile] = useState<File | null>(null);
  const [target, setTarget] = useState<PrintTarget>('machine');
  const [machineId, setMachineId] = useState('');
  const [jobName, setJobName] = useState('');
  const [filamentIdx, setFilamentIdx] = useState('');
  const [queue, setQueue] = useState<QueueChoice>({ material: '', nozzle: '', priority: '0' });
  const upload = usePrintUpload();

  const machine = list.find((entry) => entry.id === machineId);
  const choices = target === 'machine' && machine ? filaments(machine) : [];
  // What the farm has, to choose constraints from.
  const materials = [
    ...new Set(list.flatMap((entry) => filaments(entry).map((f) => f.material.type))),
  ].sort();
  const nozzles = [...new Set(list.map(nozzleDiameter).filter((d) => d !== null))].sort((a, b) => a - b);

  const choose = (chosen: File | undefined) => {
    if (!chosen) return;
    setFile(chosen);
    if (!jobName) setJobName(baseName(chosen.name));
    upload.reset();
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    if (!file) {
      upload.fail('Choose a file to print.');
      return;
    }
    await upload.send(target, printParams(target, { machineId, jobName, filamentIdx, queue }), file);
  };

  return (
    <section aria-labelledby="print-title">
      <h1 id="print-title">Send a print</h1>
      <form class="stack" onSubmit={submit}>
        <DesignDropzone file={file} onChoose={choose} />
        <TargetChoice target={target} onChange={setTarget} />
        {target === 'machine' ? (
          <MachineField
            machines={list}
            designType={file ? designTypeHint(file.name) : null}
            value={machineId}
            onChange={(id) => {
              setMachineId(id);
              setFilamentIdx('');
            }}
          />
        ) : (
          <QueueFields materials={materials} nozzles={nozzles} value={queue} onChange={setQueue} />
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
          <FilamentField filaments={choices} value={filamentIdx} onChange={setFilamentIdx} />
        )}

        <div>
          <button type="submit" class="primary" disabled={upload.sending}>
            {upload.sending ? 'Sending…' : target === 'machine' ? 'Send to machine' : 'Add to queue'}
          </button>
        </div>

        <PrintOutcome upload={upload} />
      </form>
    </section>
  );
}

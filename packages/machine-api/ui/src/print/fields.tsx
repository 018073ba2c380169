/**
 * The choices of a print form: where it goes (one machine, or any machine with a material / nozzle, at
 * a priority) and with which filament.
 */

import type { Filament, Machine } from '../api/client';
import { filamentLabel, STATE_LABELS, stateName } from '../format';

export type PrintTarget = 'machine' | 'any';

/** The constraints of a queued print (`POST /queue`), as the form's text values. */
export interface QueueChoice {
  material: string;
  nozzle: string;
  priority: string;
}

const selected = (event: Event) => (event.currentTarget as HTMLSelectElement).value;

export function TargetChoice(props: { target: PrintTarget; onChange: (target: PrintTarget) => void }) {
  const { target, onChange } = props;
  return (
    <fieldset>
      <legend>Send to</legend>
      <label class="check">
        <input
          type="radio"
          name="target"
          checked={target === 'machine'}
          onChange={() => onChange('machine')}
        />
        One machine
      </label>
      <label class="check">
        <input type="radio" name="target" checked={target === 'any'} onChange={() => onChange('any')} />
        Any machine with…
      </label>
    </fieldset>
  );
}

/** The design type a file name suggests (the service decides from the content; this only guides the choice). */
export function designTypeHint(fileName: string): DesignType | null {
  const match = /\.(stl|3mf|obj|gcode|gco|g)$/i.exec(fileName);
  if (!match?.[1]) return null;
  const extension = match[1].toLowerCase();
  return extension === 'stl' || extension === '3mf' || extension === 'obj' ? extension : 'gcode';
}

type DesignType = NonNullable<Machine['design_types']>[number];

/** Whether the service says the machine prints this type (`design_types`, the service's one rule). */
function prints(machine: Machine, type: DesignType | null): boolean {
  return type === null || (machine.design_types ?? []).includes(type);
}

export function MachineField(props: {
  machines: readonly Machine[];
  value: string;
  onChange: (id: string) => void;
  /** The chosen file's type, by its name: a machine that does not print it cannot be chosen. */
  designType: DesignType | null;
}) {
  return (
    <label>
      Machine
      <select
        name="machine"
        required
        value={props.value}
        onChange={(event) => props.onChange(selected(event))}
      >
        <option value="" disabled>
          Choose a machine
        </option>
        {props.machines.map((entry) => (
          <option key={entry.id} value={entry.id} disabled={!prints(entry, props.designType)}>
            {entry.id} — {STATE_LABELS[stateName(entry)]}
            {entry.design_types?.length === 1 ? ' (G-code only)' : ''}
          </option>
        ))}
      </select>
    </label>
  );
}

/** Material and nozzle offered are those the farm has. */
export function QueueFields(props: {
  materials: string[];
  nozzles: number[];
  value: QueueChoice;
  onChange: (value: QueueChoice) => void;
}) {
  const { value, onChange } = props;
  return (
    <div class="filters">
      <label>
        Material
        <select
          name="material"
          value={value.material}
          onChange={(event) => onChange({ ...value, material: selected(event) })}
        >
          <option value="">Any material</option>
          {props.materials.map((type) => (
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
          value={value.nozzle}
          onChange={(event) => onChange({ ...value, nozzle: selected(event) })}
        >
          <option value="">Any nozzle</option>
          {props.nozzles.map((diameter) => (
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
          value={value.priority}
          onInput={(event) =>
            onChange({ ...value, priority: (event.currentTarget as HTMLInputElement).value })
          }
        />
      </label>
    </div>
  );
}

export function FilamentField(props: {
  filaments: Filament[];
  value: string;
  onChange: (index: string) => void;
}) {
  return (
    <label>
      Filament
      <select name="filament" value={props.value} onChange={(event) => props.onChange(selected(event))}>
        <option value="">The loaded filament</option>
        {props.filaments.map((filament, index) => (
          <option key={`${index}`} value={String(index)}>
            {index}: {filamentLabel(filament)}
          </option>
        ))}
      </select>
    </label>
  );
}

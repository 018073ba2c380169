/**
 * Temperature presets on the dashboard: a button per preset on each machine card, and a "Pre-heat all
 * <material>" action on the overview for every preset named after a filament material. The presets are
 * read once with the farm (live/farm.ts).
 */

import { useState } from 'preact/hooks';
import { api, errorText, must, type Schemas } from '../api/client';
import { connection } from '../live/events';
import { presets, putMachine } from '../live/farm';

type Preset = Schemas['TemperaturePreset'];

/** The filament materials a preset may be named after; those get a farm-wide pre-heat action. */
const MATERIALS = new Set(['pla', 'pla_support', 'abs', 'petg', 'nylon', 'tpu', 'pva', 'hips', 'composite']);

const label = (name: string) => name.toUpperCase();

function describe(preset: Preset): string {
  const parts = [
    preset.tool !== null ? `nozzle ${preset.tool} °C` : null,
    preset.bed !== null ? `bed ${preset.bed} °C` : null,
  ].filter(Boolean);
  return parts.join(', ');
}

/** The preset buttons of one machine card (shown while the machine is not printing). */
export function PresetButtons({ machineId }: { machineId: string }) {
  const [error, setError] = useState<string | null>(null);
  const list = presets.value;
  if (list.length === 0) return null;
  const send = async (body: Schemas['TemperatureRequest']) => {
    setError(null);
    try {
      const answer = await must(
        api.POST('/machines/{id}/temperature', { params: { path: { id: machineId } }, body }),
      );
      if (connection.value !== 'live') putMachine(answer);
    } catch (e) {
      setError(errorText(e));
    }
  };
  return (
    <>
      <fieldset class="presets" aria-label={`Temperature presets of ${machineId}`}>
        {list.map((preset) => (
          <button
            type="button"
            key={preset.name}
            title={describe(preset)}
            onClick={() => send({ preset: preset.name })}
          >
            {label(preset.name)}
          </button>
        ))}
        <button type="button" title="nozzle and bed off" onClick={() => send({ tool: 0, bed: 0 })}>
          Heaters off
        </button>
      </fieldset>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </>
  );
}

/** "Pre-heat all PLA": the preset on every machine with that material loaded; says what was skipped and why. */
export function PreheatActions() {
  const [result, setResult] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const list = presets.value.filter((preset) => MATERIALS.has(preset.name));
  if (list.length === 0) return null;
  const preheat = async (preset: Preset) => {
    setError(null);
    setResult(null);
    try {
      const answer = await must(
        api.POST('/machines/preheat', {
          body: { preset: preset.name, material: preset.name as Schemas['PreheatRequest']['material'] },
        }),
      );
      const heated = answer.heated.length ? `Heating ${answer.heated.join(', ')}.` : 'No machine was heated.';
      const skipped = answer.skipped.map((s) => ` Skipped ${s.id}: ${s.message}.`).join('');
      setResult(`${label(preset.name)}: ${heated}${skipped}`);
    } catch (e) {
      setError(errorText(e));
    }
  };
  return (
    <div class="preheat">
      <div class="actions">
        {list.map((preset) => (
          <button
            type="button"
            key={preset.name}
            title={`${describe(preset)} on every machine with ${label(preset.name)} loaded`}
            onClick={() => preheat(preset)}
          >
            Pre-heat all {label(preset.name)}
          </button>
        ))}
      </div>
      {result && (
        <p role="status" data-field="preheat-result">
          {result}
        </p>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

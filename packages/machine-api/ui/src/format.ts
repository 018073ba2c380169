/** How numbers, times and states read on the page. */

import type { Filament, Job, Machine, MachineStateName } from './api/client';

/** `1 h 05 min`, `4 min 10 s`, `12 s`. */
export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '—';
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = s % 60;
  if (h > 0) return `${h} h ${String(m).padStart(2, '0')} min`;
  if (m > 0) return `${m} min ${String(rest).padStart(2, '0')} s`;
  return `${rest} s`;
}

/** Seconds between two ISO timestamps, or null when either is missing. */
export function secondsBetween(
  from: string | null | undefined,
  to: string | null | undefined,
): number | null {
  if (!from || !to) return null;
  return (Date.parse(to) - Date.parse(from)) / 1000;
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
const time = new Intl.DateTimeFormat(undefined, { timeStyle: 'medium' });

export function when(iso: string | null | undefined): string {
  return iso ? dateTime.format(new Date(iso)) : '—';
}

export function clock(at: number): string {
  return time.format(new Date(at));
}

/** `812 B`, `2.0 KiB`, `10.5 MiB`. */
export function bytes(size: number): string {
  if (size < 1024) return `${size} B`;
  if (size < 1024 * 1024) return `${(size / 1024).toFixed(1)} KiB`;
  return `${(size / 1024 / 1024).toFixed(1)} MiB`;
}

export function celsius(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : `${Math.round(value)} °C`;
}

export const STATE_LABELS: Record<MachineStateName, string> = {
  idle: 'Idle',
  running: 'Printing',
  paused: 'Paused',
  complete: 'Print finished',
  failed: 'Failed',
  offline: 'Offline',
  unknown: 'Unknown',
};

export function stateName(machine: Machine): MachineStateName {
  return machine.state?.state ?? 'unknown';
}

/** "Zoo Corporation Null Machine" from whichever parts are known. */
export function makeModel(machine: Machine): string {
  const { manufacturer, model } = machine.make_model;
  return [manufacturer, model].filter(Boolean).join(' ') || 'Unknown make';
}

/** The filament loaded now, if the machine (or its configuration) says. */
export function loadedFilament(machine: Machine): Filament | null {
  const hardware = machine.hardware_configuration;
  if (hardware?.type !== 'fdm') return null;
  const index = hardware.config.loaded_filament_idx ?? (hardware.config.filaments.length === 1 ? 0 : null);
  return index === null ? null : (hardware.config.filaments[index] ?? null);
}

export function filamentLabel(filament: Filament): string {
  const material = filament.material.type.toUpperCase().replace('_', ' ');
  return filament.name ? `${filament.name} (${material})` : material;
}

/** The machine's filaments, for choosing one when printing. */
export function filaments(machine: Machine): Filament[] {
  const hardware = machine.hardware_configuration;
  return hardware?.type === 'fdm' ? hardware.config.filaments : [];
}

export function nozzleDiameter(machine: Machine): number | null {
  const hardware = machine.hardware_configuration;
  return hardware?.type === 'fdm' ? hardware.config.nozzle_diameter : null;
}

/** `12.5 g · 4.19 m · 0.31` for a job: what it used once finished, else what it is estimated to need. */
export function filamentText(filament: Job['filament'] | undefined): string {
  if (!filament) return '—';
  const used = filament.used_g !== null || filament.used_m !== null;
  const grams = used ? filament.used_g : filament.estimated_g;
  const metres = used ? filament.used_m : filament.estimated_m;
  const parts = [
    grams === null ? null : `${grams.toFixed(1)} g`,
    metres === null ? null : `${metres.toFixed(2)} m`,
    filament.cost === null ? null : filament.cost.toFixed(2),
  ].filter((part) => part !== null);
  return parts.length === 0 ? '—' : `${used ? '' : '≈ '}${parts.join(' · ')}`;
}

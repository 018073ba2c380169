/**
 * Heater targets for the machines of the farm: one machine (`POST /machines/{id}/temperature`, the
 * OctoPrint `api/printer/tool` and `api/printer/bed` bases) or many at once (`POST /machines/preheat`).
 *
 * How to call it (OctoPrint bases and any other edge):
 *
 *   await temperatures.set(machineId, { tool: 215 });        // tool 0 only; `bed` alike; both at once
 *   await temperatures.set(machineId, temperatures.preset('pla'));
 *
 * `set` resolves once the machine has accepted the targets, and throws:
 *   NotFound 404           no machine with that id;
 *   BadRequest 400         a target above the machine's `max_tool_temp` / `max_bed_temp`, or below 0;
 *   MachineError 409       the machine prints (or a job is on its way to it), is offline, cannot be given
 *                          temperatures at all, or its device refused the command;
 * and `preset(name)` throws BadRequest 400 for a preset the configuration does not have.
 * Every check runs before anything is sent, so a refused request changes nothing.
 */

import type { TemperaturePreset } from '../config/presets.js';
import { BadRequest, NotFound, ServiceError } from '../errors.js';
import { type HeaterTargets, MachineError } from '../machines/machine.js';
import type { MachineObserver, ObservedMachine } from '../machines/observer.js';
import type { MachineRegistry, RegisteredMachine } from '../machines/registry.js';
import { factsOf } from '../queue/routing.js';

/** Which machines a pre-heat is for: named ones, or every machine with a filament material loaded. */
export type PreheatSelection = { machines: readonly string[] } | { material: string };

export interface PreheatOutcome {
  preset: string;
  /** The machines that accepted the targets, in the registry's order. */
  heated: string[];
  /** The machines left as they were, with the error `set` would have answered for each. */
  skipped: { id: string; error_code: string; message: string }[];
}

/** States in which the heaters are free: anything but a print (running or paused) or an absent machine. */
const COMMANDABLE = new Set(['idle', 'complete', 'failed']);

export class TemperatureService {
  private readonly byName: Map<string, TemperaturePreset>;

  constructor(
    private readonly machines: MachineRegistry,
    private readonly observer: MachineObserver,
    presets: readonly TemperaturePreset[],
  ) {
    this.byName = new Map(presets.map((preset) => [preset.name, preset]));
  }

  /** The configured presets, sorted by name. */
  presets(): TemperaturePreset[] {
    return [...this.byName.values()];
  }

  /** The targets of a configured preset; 400 naming the known ones otherwise. */
  preset(name: string): HeaterTargets {
    const preset = this.byName.get(name);
    if (!preset) {
      const known = [...this.byName.keys()].map((n) => `"${n}"`).join(', ');
      throw new BadRequest(
        `no temperature preset "${name}"; ${known ? `configured: ${known}` : 'the configuration has no [presets.<name>] table'}`,
      );
    }
    return {
      ...(preset.tool !== null ? { tool: preset.tool } : {}),
      ...(preset.bed !== null ? { bed: preset.bed } : {}),
    };
  }

  /** Checks, then sends `targets` to the machine (see the module comment for what it throws). */
  async set(machineId: string, targets: HeaterTargets): Promise<void> {
    const entry = this.machines.require(machineId);
    checkLimits(entry, targets);
    const refused = await this.refusal(entry);
    if (refused) throw refused;
    await entry.machine.setTemperatures!(targets);
    // A status read right after shows the new set points.
    await this.observer.refresh(entry.id).catch(() => undefined);
  }

  /**
   * Applies a preset to several machines at once. Every named machine must exist (404 otherwise, before
   * anything is sent); each one that refuses (printing, offline, over its limits, the device saying no) is
   * skipped and named with its reason, while the others are heated.
   */
  async preheat(presetName: string, selection: PreheatSelection): Promise<PreheatOutcome> {
    const targets = this.preset(presetName);
    let entries: RegisteredMachine[];
    if ('machines' in selection) {
      entries = selection.machines.map((id) => this.machines.require(id));
    } else {
      const material = selection.material;
      entries = this.machines.machines.filter((entry) => {
        const reported = this.observer.current(entry.id)?.status.hardware;
        return factsOf(this.machines, entry, reported).materials.includes(material);
      });
    }
    const results = await Promise.all(
      entries.map(async (entry) => {
        try {
          await this.set(entry.id, targets);
          return { id: entry.id, error: null };
        } catch (error) {
          return { id: entry.id, error };
        }
      }),
    );
    const outcome: PreheatOutcome = { preset: presetName, heated: [], skipped: [] };
    for (const { id, error } of results) {
      if (error === null) outcome.heated.push(id);
      else if (error instanceof ServiceError && !(error instanceof NotFound))
        outcome.skipped.push({ id, error_code: error.errorCode, message: error.message });
      else throw error;
    }
    return outcome;
  }

  /**
   * Why the machine cannot be given temperatures now, as the error `set` would throw; null when it can.
   * Limits are not part of it: they depend on the targets.
   */
  async refusal(entry: RegisteredMachine): Promise<MachineError | null> {
    if (!entry.machine.setTemperatures) {
      return new MachineError(
        'MachineRejected',
        `machine "${entry.id}" cannot be given temperatures (its backend has no heater command)`,
      );
    }
    const observed: ObservedMachine = await this.observer.fresh(entry.id);
    const { state } = observed.status.state;
    if (state === 'running' || state === 'paused' || observed.busy) {
      return new MachineError(
        'MachineBusy',
        `machine "${entry.id}" is printing (${observed.busy && state !== 'running' && state !== 'paused' ? 'a job is on its way to it' : state}); temperatures are the print's until it ends`,
      );
    }
    if (!COMMANDABLE.has(state)) {
      return new MachineError(
        'MachineRejected',
        `machine "${entry.id}" is ${state}; it cannot be given temperatures until it answers`,
      );
    }
    return null;
  }
}

/** 400 for a target the machine must never be sent (its configured limits; negative is never valid). */
export function checkLimits(entry: RegisteredMachine, targets: HeaterTargets): void {
  const checks = [
    ['tool', targets.tool, entry.common.maxToolTemp, 'max_tool_temp'],
    ['bed', targets.bed, entry.common.maxBedTemp, 'max_bed_temp'],
  ] as const;
  for (const [name, value, max, key] of checks) {
    if (value === undefined) continue;
    if (!Number.isFinite(value) || value < 0)
      throw new BadRequest(`${name}: expected a temperature ≥ 0 °C, got ${value}`);
    if (value > max) {
      throw new BadRequest(
        `${name}: ${value} °C is above machine "${entry.id}"'s limit of ${max} °C (${key} in its configuration)`,
      );
    }
  }
  if (targets.tool === undefined && targets.bed === undefined)
    throw new BadRequest('expected a "tool" target, a "bed" target or both (°C)');
}

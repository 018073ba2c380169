/**
 * The configured machines: built from their definitions by their backends, started and closed together,
 * looked up by id. Every configured machine is listed from start-up on, whether or not it answers.
 */

import type { Logger } from 'pino';
import type { CommonMachineConfig } from '../config/machine-keys.js';
import type { MachineDefinition } from '../config.js';
import { NotFound } from '../errors.js';
import { buildVolumeFromProfile } from '../slicer/profile.js';
import type { MachineBackend } from './backend.js';
import type { Machine, MachineIdentity, MachineStatus, Volume } from './machine.js';
import { designKindsOf, type MachinePrints } from './prints.js';

export interface RegisteredMachine {
  id: string;
  machine: Machine;
  common: CommonMachineConfig;
  /** The bed of the slicer profile, the last resort for `max_part_volume`. */
  profileVolume: Volume | null;
}

const OFFLINE: MachineStatus = { state: { state: 'offline' }, progress: null, temperatures: {}, extra: null };

export class MachineRegistry {
  private readonly byId: Map<string, RegisteredMachine>;

  private constructor(
    /** Sorted by id. */
    readonly machines: readonly RegisteredMachine[],
    private readonly logger: Logger,
  ) {
    this.byId = new Map(machines.map((entry) => [entry.id, entry]));
  }

  /** Creates every machine through its backend (no device I/O yet: `start()` does that). */
  static async create(
    definitions: readonly MachineDefinition[],
    context: { logger: Logger; configDir: string; dataDir: string },
  ): Promise<MachineRegistry> {
    const groups = new Map<MachineBackend, MachineDefinition[]>();
    for (const definition of definitions) {
      groups.set(definition.backend, [...(groups.get(definition.backend) ?? []), definition]);
    }
    const entries: RegisteredMachine[] = [];
    for (const [backend, group] of groups) {
      const created = backend.create(
        group.map((definition) => ({ id: definition.id, config: definition.settings })),
        { ...context, logger: context.logger.child({ backend: backend.type }) },
      );
      for (const [index, definition] of group.entries()) {
        const machine = created[index];
        if (!machine || machine.id !== definition.id) {
          throw new Error(`backend ${backend.type} did not create machine "${definition.id}"`);
        }
        const ini = definition.common.slicer?.config;
        const profileVolume = ini ? await buildVolumeFromProfile(ini) : null;
        entries.push({ id: definition.id, machine, common: definition.common, profileVolume });
      }
    }
    entries.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return new MachineRegistry(entries, context.logger);
  }

  get(id: string): RegisteredMachine | undefined {
    return this.byId.get(id);
  }

  /** The machine with this id, or `NotFound`. */
  require(id: string): RegisteredMachine {
    const entry = this.byId.get(id);
    if (!entry) throw new NotFound(`no machine with id "${id}"`);
    return entry;
  }

  /** The reported build volume: config override, else the machine's own knowledge, else the profile's bed. */
  maxPartVolume(
    entry: RegisteredMachine,
    identity: MachineIdentity = entry.machine.identity(),
  ): Volume | null {
    return entry.common.maxPartVolume ?? identity.maxPartVolume ?? entry.profileVolume;
  }

  /** What the machine can print (prints.ts has the rule). */
  prints(entry: RegisteredMachine, identity: MachineIdentity = entry.machine.identity()): MachinePrints {
    return { designKinds: designKindsOf(entry), maxPartVolume: this.maxPartVolume(entry, identity) };
  }

  /**
   * Status of each given machine, in order. A machine that throws or does not answer within `timeoutMs`
   * is reported `offline`; one shared timer bounds the whole call.
   */
  async statuses(entries: readonly RegisteredMachine[], timeoutMs: number): Promise<MachineStatus[]> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<MachineStatus>((resolve) => {
      timer = setTimeout(() => resolve(OFFLINE), timeoutMs);
    });
    try {
      return await Promise.all(
        entries.map((entry) =>
          Promise.race([
            entry.machine.status().catch((error: unknown) => {
              this.logger.warn({ err: error, machine: entry.id }, 'machine status failed');
              return OFFLINE;
            }),
            deadline,
          ]),
        ),
      );
    } finally {
      clearTimeout(timer);
    }
  }

  /** Starts every machine's background work; a machine that fails to start is logged and stays listed. */
  async start(): Promise<void> {
    await Promise.all(
      this.machines.map((entry) =>
        entry.machine.start().catch((error: unknown) => {
          this.logger.error({ err: error, machine: entry.id }, 'machine failed to start');
        }),
      ),
    );
  }

  /** Closes every machine, waiting for all of them even if some fail. */
  async close(): Promise<void> {
    await Promise.all(
      this.machines.map((entry) =>
        entry.machine.close().catch((error: unknown) => {
          this.logger.warn({ err: error, machine: entry.id }, 'machine failed to close cleanly');
        }),
      ),
    );
  }
}

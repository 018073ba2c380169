/**
 * Which Spoolman spool each machine prints from (per AMS slot on a machine that has them), kept in the
 * jobs database and in memory: the machine list, the queue's spool rule and the runner read it
 * synchronously. A spool is checked against Spoolman when assigned (nothing is stored for a spool
 * Spoolman does not have); what Spoolman said is kept with the assignment and refreshed after every use
 * report, so the last known remaining weight stands in while Spoolman cannot be reached.
 *
 * The per-machine state is a frozen object replaced on every change: whoever keeps something derived
 * from it (the machine list's serialised entries) compares it by identity.
 */

import type { Logger } from 'pino';
import { BadRequest, ServiceError } from '../errors.js';
import type { MachineRegistry, RegisteredMachine } from '../machines/registry.js';
import { type Spool, type SpoolmanClient, SpoolmanUnavailable, SpoolNotFound } from './client.js';
import type { Assignment, SpoolStore } from './store.js';
import { WHOLE_MACHINE } from './tables.js';

/** What a machine prints from, as the machine list and `PUT /machines/{id}/spool` show it. */
export interface MachineSpools {
  /** By slot (`WHOLE_MACHINE` first, then AMS slots in order). */
  readonly assignments: readonly Assignment[];
  /** Why a spool was unassigned without anyone asking (Spoolman no longer has it), until the next change. */
  readonly notice: string | null;
}

const NONE: MachineSpools = Object.freeze({ assignments: Object.freeze([]), notice: null });

export class SpoolmanNotConfigured extends ServiceError {
  constructor() {
    super(
      409,
      'SpoolmanNotConfigured',
      'no Spoolman server is configured: add [spoolman] url = "http://…" to the configuration to assign spools',
    );
  }
}

export class SpoolmanDown extends ServiceError {
  constructor(message: string) {
    super(503, 'SpoolmanUnavailable', `${message}; the spool was not assigned, try again later`);
  }
}

export class SpoolAssignments {
  private readonly byMachine = new Map<string, MachineSpools>();
  private readonly listeners = new Set<(machineId: string) => void>();

  constructor(
    private readonly store: SpoolStore,
    private readonly client: SpoolmanClient | null,
    private readonly machines: MachineRegistry,
    private readonly logger: Logger,
  ) {}

  get configured(): boolean {
    return this.client !== null;
  }

  /** Loads the stored assignments of the configured machines. */
  async start(): Promise<void> {
    const grouped = new Map<string, Assignment[]>();
    for (const assignment of await this.store.assignments()) {
      if (!this.machines.get(assignment.machineId)) continue;
      grouped.set(assignment.machineId, [...(grouped.get(assignment.machineId) ?? []), assignment]);
    }
    for (const [machineId, assignments] of grouped) this.set(machineId, assignments, null);
  }

  /** Calls `listener` with the machine whose spools changed; returns the unsubscribe function. */
  onChange(listener: (machineId: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The machine's spools (the same object until they change). */
  of(machineId: string): MachineSpools {
    return this.byMachine.get(machineId) ?? NONE;
  }

  /**
   * The spool a job on the machine prints from: the slot's on a machine with slots (`slot` is the filament
   * index the job uses, null when unknown), else the machine's one spool.
   */
  spoolFor(entry: RegisteredMachine, slot: number | null): Assignment | undefined {
    const wanted = entry.machine.filamentSlots ? slot : WHOLE_MACHINE;
    if (wanted === null) return undefined;
    return this.of(entry.id).assignments.find((assignment) => assignment.slot === wanted);
  }

  /**
   * Assigns `spoolId` (null: unassigns) to the machine or one of its AMS slots. The spool must exist in
   * Spoolman; its filament is what the machine reports from then on.
   */
  async assign(machineId: string, slot: number | null, spoolId: number | null): Promise<MachineSpools> {
    const client = this.client;
    if (!client) throw new SpoolmanNotConfigured();
    const entry = this.machines.require(machineId);
    const slots = entry.machine.filamentSlots ?? 0;
    if (slot !== null && slots === 0)
      throw new BadRequest(`machine "${entry.id}" has no AMS slots; assign its spool without "slot"`);
    if (slot !== null && slot >= slots)
      throw new BadRequest(`machine "${entry.id}" has AMS slots 0 to ${slots - 1}, not ${slot}`);
    const key = slot ?? WHOLE_MACHINE;
    if (spoolId === null) {
      await this.store.unassign(entry.id, key);
      this.set(
        entry.id,
        this.of(entry.id).assignments.filter((a) => a.slot !== key),
        null,
      );
      return this.of(entry.id);
    }
    let spool: Spool;
    try {
      spool = await client.spool(spoolId);
    } catch (error) {
      if (error instanceof SpoolNotFound)
        throw new ServiceError(400, 'UnknownSpool', `Spoolman has no spool ${spoolId}`);
      if (error instanceof SpoolmanUnavailable) throw new SpoolmanDown(error.message);
      throw new SpoolmanDown(error instanceof Error ? error.message : 'Spoolman failed');
    }
    const assignment: Assignment = {
      machineId: entry.id,
      slot: key,
      spoolId,
      assignedAt: new Date().toISOString(),
      spool,
    };
    await this.store.assign(assignment);
    const others = this.of(entry.id).assignments.filter((a) => a.slot !== key);
    this.set(entry.id, [...others, assignment], null);
    this.logger.info({ machine: entry.id, slot, spool: spoolId }, 'spool assigned');
    return this.of(entry.id);
  }

  /** Keeps what Spoolman now says of a spool (after a use report, a periodic read). */
  async remember(spool: Spool): Promise<void> {
    await this.store.rememberSpool(spool);
    for (const [machineId, spools] of this.byMachine) {
      if (!spools.assignments.some((a) => a.spoolId === spool.id)) continue;
      this.set(
        machineId,
        spools.assignments.map((a) => (a.spoolId === spool.id ? { ...a, spool } : a)),
        spools.notice,
      );
    }
  }

  /** Spoolman no longer has the spool: it is unassigned everywhere, with a notice on each machine. */
  async forget(spoolId: number, why: string): Promise<void> {
    await this.store.unassignSpool(spoolId);
    for (const [machineId, spools] of this.byMachine) {
      if (!spools.assignments.some((a) => a.spoolId === spoolId)) continue;
      const notice = `spool ${spoolId} was unassigned: ${why}`;
      this.logger.warn({ machine: machineId, spool: spoolId }, notice);
      this.set(
        machineId,
        spools.assignments.filter((a) => a.spoolId !== spoolId),
        notice,
      );
    }
  }

  /** Re-reads every assigned spool (a spool changed in Spoolman's own UI); failures keep the last known. */
  async refreshAll(): Promise<void> {
    if (!this.client) return;
    const ids = new Set([...this.byMachine.values()].flatMap((s) => s.assignments.map((a) => a.spoolId)));
    for (const id of ids) {
      try {
        await this.remember(await this.client.spool(id));
      } catch (error) {
        if (error instanceof SpoolNotFound) await this.forget(id, `Spoolman has no spool ${id}`);
        // Unreachable: the last known state stands until the next read.
      }
    }
  }

  private set(machineId: string, assignments: readonly Assignment[], notice: string | null): void {
    const sorted = [...assignments].sort((a, b) => a.slot - b.slot);
    this.byMachine.set(machineId, Object.freeze({ assignments: Object.freeze(sorted), notice }));
    for (const listener of this.listeners) {
      try {
        listener(machineId);
      } catch (error) {
        this.logger.error({ err: error }, 'spool listener failed');
      }
    }
  }
}

/**
 * Notifications, HTTP-free: managing targets (the API's and the configuration file's), the test message,
 * the delivery log, and the path from a farm event to the outbox (filters, quiet hours). Handlers call
 * this; only `store.ts` holds SQL.
 */

import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { BadRequest, Conflict, NotFound } from '../errors.js';
import type { NotificationPayload, PhotoSource } from './events.js';
import { testNotification } from './facts.js';
import { Outbox } from './outbox.js';
import { passesQuietHours, wants } from './rules.js';
import type { DeliveryStatus, NotificationDeliveryView, NotificationTargetView } from './schemas.js';
import type { DeliveryRow, NotifyStore } from './store.js';
import {
  patched,
  publicView,
  type Target,
  type TargetPatch,
  type TargetSettings,
  targetProblem,
} from './targets.js';
import type { Noticed } from './watch.js';

export interface NotificationServiceOptions {
  store: NotifyStore;
  logger: Logger;
  /** The `[[notify]]` tables of the configuration file, already checked. */
  configured: readonly TargetSettings[];
  /** Tags given to a machine in the configuration (for `machines = [...]` filters). */
  tagsOf(machineId: string): readonly string[];
  /** `[server] public_url`: links in messages point into its dashboard. */
  publicUrl?: string | null;
  photoFor?: PhotoSource;
  pollMs?: number;
}

export class NotificationService {
  readonly outbox: Outbox;
  /** Notices are recorded one after another, so a target gets them in the order they happened. */
  private chain: Promise<void> = Promise.resolve();

  constructor(private readonly options: NotificationServiceOptions) {
    this.outbox = new Outbox({
      store: options.store,
      logger: options.logger,
      ...(options.photoFor ? { photoFor: options.photoFor } : {}),
      ...(options.pollMs ? { pollMs: options.pollMs } : {}),
    });
  }

  /** Brings the configuration file's targets into the table, then starts sending. */
  async start(): Promise<void> {
    const { store, configured } = this.options;
    const now = new Date().toISOString();
    const names = new Set(configured.map((settings) => settings.name));
    for (const target of await store.targets()) {
      if (target.source === 'config' && !names.has(target.settings.name)) await store.deleteTarget(target.id);
    }
    for (const settings of configured) {
      const existing = await store.targetNamed(settings.name);
      if (!existing) {
        await store.insertTarget({
          id: randomUUID(),
          source: 'config',
          settings,
          createdAt: now,
          updatedAt: now,
        });
      } else if (
        existing.source !== 'config' ||
        JSON.stringify(existing.settings) !== JSON.stringify(settings)
      ) {
        // The file is the source of truth for its targets: a target of the same name made over the API
        // becomes the file's (keeping its id and its log).
        await store.updateTarget(existing.id, settings, now, 'config');
      }
    }
    this.outbox.start();
  }

  async close(): Promise<void> {
    await this.chain;
    await this.outbox.close();
  }

  /** Records a farm notification for every target that wants it now (never throws; failures are logged). */
  notice(noticed: Noticed): void {
    this.chain = this.chain.then(() =>
      this.record(noticed).catch((error: unknown) =>
        this.options.logger.error({ err: error, event: noticed.event }, 'could not record a notification'),
      ),
    );
  }

  private async record(noticed: Noticed): Promise<void> {
    const at = new Date(noticed.timestamp);
    const payload: NotificationPayload = {
      type: noticed.event,
      timestamp: noticed.timestamp,
      data: this.withLink(noticed.data),
    };
    for (const target of await this.options.store.targets()) {
      if (!wants(target.settings, noticed.event, noticed.machineId, this.options.tagsOf)) continue;
      if (!passesQuietHours(target.settings, noticed.event, at)) continue;
      await this.outbox.enqueue(target, payload);
    }
  }

  private withLink(data: NotificationPayload['data']): NotificationPayload['data'] {
    const base = this.options.publicUrl?.replace(/\/+$/, '');
    if (!base) return data;
    return { ...data, link: `${base}/ui/${data.job ? `jobs/${encodeURIComponent(data.job.id)}` : ''}` };
  }

  async list(): Promise<NotificationTargetView[]> {
    return (await this.options.store.targets()).map(publicView);
  }

  async get(id: string): Promise<NotificationTargetView> {
    return publicView(await this.require(id));
  }

  async create(settings: TargetSettings): Promise<NotificationTargetView> {
    this.check(settings);
    const { store } = this.options;
    if (await store.targetNamed(settings.name))
      throw new Conflict(`a target named "${settings.name}" exists already`);
    const now = new Date().toISOString();
    const target: Target = { id: randomUUID(), source: 'api', settings, createdAt: now, updatedAt: now };
    await store.insertTarget(target);
    return publicView(target);
  }

  async update(id: string, patch: TargetPatch): Promise<NotificationTargetView> {
    const { store } = this.options;
    const current = this.editable(await this.require(id));
    const settings = patched(current.settings, patch);
    this.check(settings);
    if (settings.name !== current.settings.name && (await store.targetNamed(settings.name))) {
      throw new Conflict(`a target named "${settings.name}" exists already`);
    }
    const now = new Date().toISOString();
    await store.updateTarget(id, settings, now);
    return publicView({ ...current, settings, updatedAt: now });
  }

  async remove(id: string): Promise<void> {
    this.editable(await this.require(id));
    await this.options.store.deleteTarget(id);
  }

  /** Sends the `test` message now, whatever the target's filters, quiet hours and burst limit say. */
  async test(id: string): Promise<NotificationDeliveryView> {
    const target = await this.require(id);
    const payload: NotificationPayload = {
      type: 'test',
      timestamp: new Date().toISOString(),
      data: this.withLink(testNotification(target.settings.name)),
    };
    return deliveryView(await this.outbox.enqueue(target, payload, { bypassBurst: true }));
  }

  async deliveries(filter: {
    target?: string;
    status?: DeliveryStatus;
    limit?: number;
  }): Promise<NotificationDeliveryView[]> {
    const rows = await this.options.store.deliveries({
      ...(filter.target !== undefined ? { targetId: filter.target } : {}),
      ...(filter.status !== undefined ? { status: filter.status } : {}),
      limit: filter.limit ?? 100,
    });
    return rows.map(deliveryView);
  }

  private check(settings: TargetSettings): void {
    const problem = targetProblem(settings);
    if (problem) throw new BadRequest(problem);
    // A file path is the configuration file's business, not something to hand the service over HTTP.
    if (settings.ca_file !== undefined)
      throw new BadRequest('key "ca_file" can only be set in the configuration file');
  }

  private editable(target: Target): Target {
    if (target.source === 'config') {
      throw new Conflict(
        `target "${target.settings.name}" is defined in the configuration file; change it there`,
      );
    }
    return target;
  }

  private async require(id: string): Promise<Target> {
    const target = await this.options.store.target(id);
    if (!target) throw new NotFound(`no notification target with id "${id}"`);
    return target;
  }
}

export function deliveryView(row: DeliveryRow): NotificationDeliveryView {
  return {
    id: row.id,
    target_id: row.target_id,
    target_name: row.target_name,
    event: row.event,
    status: row.status as DeliveryStatus,
    attempts: row.attempts,
    response_status: row.response_status,
    response: row.response,
    error: row.error,
    created_at: row.created_at,
    next_attempt_at: row.status === 'pending' ? (row.hold_until ?? row.next_attempt_at) : null,
    delivered_at: row.delivered_at,
    digest_id: row.digest_id,
  };
}

/** A Bambu Lab printer in LAN mode: found by discovery (or configured host + serial), driven over MQTT/FTPS. */

import type { Logger } from 'pino';
import {
  type ActivePrint,
  type BambuCamera,
  type HeaterTargets,
  type Machine,
  MachineError,
  type MachineIdentity,
  type MachineStatus,
  type PrintRequest,
} from '../machine.js';
import type { BambuSettings } from './config.js';
import type { BambuAnnouncement, DiscoveryListener } from './discovery.js';
import { cameraProtocol, identifyModel } from './models.js';
import { numberField, type Report, stringField } from './report.js';
import { BambuSession, ControlRefused } from './session.js';
import { amsAttached, statusFromReport } from './status.js';
import { followReport, isActive, reportsJob, type TrackedJob, trackJob } from './tracked-job.js';
import { remoteFileName, uploadPrintFile } from './upload.js';

/** Generous: a 100 MB project over the printer's Wi-Fi takes minutes. */
const UPLOAD_TIMEOUT_MS = 10 * 60_000;

export class BambuMachine implements Machine {
  readonly printFormat = 'gcode.3mf' as const;
  /** Up to 4 AMS units of 4 trays, in the order the printer reports them (`hardware_configuration` filaments). */
  readonly filamentSlots = 16;
  private session: BambuSession | null = null;
  private readonly statusListeners = new Set<() => void>();
  private serial: string | null;
  private modelCode: string | null = null;
  private job: TrackedJob | null = null;
  /** True from the moment a print is being handed over, so two prints cannot interleave. */
  private handingOver = false;
  private deviceCamera: BambuCamera | null = null;
  /** Why the printer refused the last command (Authorization Control); null once one is accepted. */
  private controlRefusal: string | null = null;
  /** `Date.now()` of that refusal: a reconnection after it (Developer Mode switched on restarts the printer's broker) clears it. */
  private refusedAt = 0;
  /** A settled job is no longer the printer's current one. */
  private readonly untrack = (job: TrackedJob) => {
    if (this.job === job) this.job = null;
  };
  /** Aborted by close(): ends a wait for the printer's first report. */
  private readonly closing = new AbortController();
  private readonly onAnnouncement = (announcement: BambuAnnouncement) => this.discovered(announcement);

  constructor(
    readonly id: string,
    private readonly settings: BambuSettings,
    private readonly discovery: DiscoveryListener | null,
    private readonly logger: Logger,
  ) {
    this.serial = settings.serial;
  }

  identity(): MachineIdentity {
    const model = identifyModel(this.modelCode, this.serial);
    return {
      machineType: 'FusedDeposition',
      makeModel: { manufacturer: 'Bambu Lab', model: model?.name ?? null, serial: this.serial },
      maxPartVolume: model?.volume ?? null,
    };
  }

  /** The printer's own camera once it has been found (its host comes from discovery or the config). */
  camera(): BambuCamera | null {
    const session = this.session;
    if (!session) return null;
    const protocol = cameraProtocol(identifyModel(this.modelCode, this.serial), session.status ?? null);
    const host = session.currentHost;
    const known = this.deviceCamera;
    if (known && known.host === host && known.protocol === protocol && known.serial === this.serial)
      return known;
    this.deviceCamera = {
      kind: 'bambu',
      protocol,
      host,
      port: protocol === 'rtsps' ? this.settings.rtspPort : this.settings.cameraPort,
      serial: this.serial,
      accessCode: this.settings.accessCode,
    };
    return this.deviceCamera;
  }

  async status(): Promise<MachineStatus> {
    const offline: MachineStatus = {
      state: { state: 'offline' },
      progress: null,
      temperatures: {},
      extra: null,
    };
    const session = this.session;
    if (!session) return offline;
    if (!session.connected) {
      // A refused login is the one failure the user must fix in the config: say so instead of just "offline".
      return session.problem?.includes('access code')
        ? { ...offline, state: { state: 'failed', message: session.problem } }
        : offline;
    }
    const fresh =
      session.lastReportAt !== null && Date.now() - session.lastReportAt <= this.settings.statusTimeoutMs;
    if (this.controlRefusal !== null && (session.connectedAt ?? 0) > this.refusedAt) {
      this.controlRefusal = null;
    }
    if (session.status && fresh) {
      const status = statusFromReport(session.status);
      return this.controlRefusal === null
        ? status
        : { ...status, capabilities: { control: false, reason: this.controlRefusal } };
    }
    const waitingSince = Date.now() - (session.connectedAt ?? 0);
    if (session.lastReportAt === null && waitingSince <= this.settings.statusTimeoutMs) {
      return { ...offline, state: { state: 'unknown' } };
    }
    return offline;
  }

  async print(request: PrintRequest): Promise<ActivePrint> {
    if (this.handingOver || this.job)
      throw new MachineError('MachineBusy', `${this.id} is already printing a job`);
    const session = this.session;
    const current = await this.status();
    if (!session || current.state.state === 'offline' || current.state.state === 'unknown') {
      throw new MachineError('MachineOffline', `${this.id} is not connected or has not reported its status`);
    }
    if (current.state.state === 'failed')
      throw new MachineError('MachineOffline', current.state.message ?? 'failed');
    if (current.state.state !== 'idle') {
      throw new MachineError('MachineBusy', `${this.id} is ${current.state.state}, not idle`);
    }
    // No upload for a job the printer would refuse to start.
    if (this.controlRefusal !== null) throw new MachineError('MachineRejected', this.controlRefusal);
    this.handingOver = true;
    try {
      const fileName = remoteFileName(request.jobName, request.jobId);
      await uploadPrintFile({
        host: session.currentHost,
        port: this.settings.ftpsPort,
        accessCode: this.settings.accessCode,
        localPath: request.filePath,
        remoteName: fileName,
        timeoutMs: UPLOAD_TIMEOUT_MS,
        signal: request.signal,
      });
      request.signal.throwIfAborted();
      return await this.startJob(session, request.jobName, fileName);
    } finally {
      this.handingOver = false;
    }
  }

  /**
   * A job a killed run sent to this printer, found again in the printer's first report after this run
   * connected: still on the printer (PREPARE, RUNNING, PAUSE…) it is followed to its end; ended meanwhile
   * (FINISH, FAILED, kept with its `subtask_name` until the next job) it ends so at once. Null when the
   * printer shows another job or none, or does not report within `status_timeout_secs`.
   */
  async followAgain(job: { jobId: string; jobName: string }): Promise<ActivePrint | null> {
    if (this.handingOver || this.job) return null;
    const report = await this.firstReport();
    // The job is known by the `subtask_name` `project_file` sent (its name), as when it was accepted;
    // `gcode_file` is not compared: what it holds for a project differs between firmwares.
    if (!report || this.job || !reportsJob(report, job.jobName)) return null;
    const { tracked, finished } = trackJob(job.jobName, report, true, this.untrack);
    this.job = tracked;
    this.logger.info(
      { job: job.jobId, state: stringField(report, 'gcode_state') },
      'following a print again',
    );
    this.follow(report);
    return { finished };
  }

  /** The printer's status once a report with its job fields has arrived; null if none comes in time. */
  private firstReport(): Promise<Report | null> {
    // A P1/A1 printer's first delta may come before its full status: wait for the fields that decide.
    const complete = (status: Report | null | undefined): status is Report =>
      status != null &&
      stringField(status, 'gcode_state') !== null &&
      stringField(status, 'subtask_name') !== null;
    const current = this.session?.status;
    if (this.closing.signal.aborted) return Promise.resolve(null);
    if (complete(current)) return Promise.resolve(current);
    return new Promise((resolve) => {
      const done = (status: Report | null) => {
        clearTimeout(timer);
        unsubscribe();
        this.closing.signal.removeEventListener('abort', gone);
        resolve(status);
      };
      const gone = () => done(null);
      const timer = setTimeout(gone, this.settings.statusTimeoutMs);
      // A discovered printer has no session until it is announced: listen on the machine, not a session.
      const unsubscribe = this.onStatusChange(() => {
        const status = this.session?.status;
        if (complete(status)) done(status);
      });
      this.closing.signal.addEventListener('abort', gone, { once: true });
    });
  }

  private async startJob(session: BambuSession, name: string, fileName: string): Promise<ActivePrint> {
    const status = session.status ?? {};
    const { tracked: job, finished } = trackJob(name, status, false, this.untrack);
    this.job = job;
    try {
      await this.send(
        session,
        {
          command: 'project_file',
          param: 'Metadata/plate_1.gcode',
          subtask_name: name,
          url: `ftp://${fileName}`,
          bed_type: 'auto',
          timelapse: false,
          bed_leveling: true,
          flow_cali: true,
          vibration_cali: true,
          layer_inspect: false,
          use_ams: amsAttached(status),
          profile_id: '0',
          project_id: '0',
          subtask_id: '0',
          task_id: '0',
        },
        {
          timeoutMs: this.settings.commandTimeoutMs,
          // A printer that starts our job has accepted it, even if its reply got lost.
          acceptReport: (report) => isActive(report) && stringField(report, 'subtask_name') === name,
        },
      );
    } catch (error) {
      if (this.job === job) this.job = null;
      throw error;
    }
    this.logger.info({ job: name, file: fileName }, 'Bambu printer accepted the job');
    if (session.status) this.follow(session.status);
    return { finished };
  }

  async pause(): Promise<void> {
    await this.command('pause', 'running', (report) => stringField(report, 'gcode_state') === 'PAUSE');
  }

  async resume(): Promise<void> {
    await this.command(
      'resume',
      'paused',
      (report) => isActive(report) && stringField(report, 'gcode_state') !== 'PAUSE',
    );
  }

  async stop(): Promise<void> {
    const job = this.job;
    if (job) job.stopRequested = true;
    await this.command('stop', null, (report) => !isActive(report));
    // A job the printer accepted but never started has nothing left to end with.
    if (job && !job.started && this.job === job) job.settle({ status: 'cancelled' });
  }

  /**
   * `print.gcode_line` with M104/M140, the LAN protocol's way to run G-code; the printer acknowledges it
   * and shows the new `nozzle_target_temper` / `bed_target_temper` in its next report.
   */
  async setTemperatures(targets: HeaterTargets): Promise<void> {
    const session = this.session;
    if (!session) throw new MachineError('MachineOffline', `${this.id} has not been discovered yet`);
    const lines = [
      ...(targets.tool !== undefined ? [`M104 S${targets.tool}`] : []),
      ...(targets.bed !== undefined ? [`M140 S${targets.bed}`] : []),
    ];
    const timeoutMs = this.settings.commandTimeoutMs;
    await this.send(session, { command: 'gcode_line', param: `${lines.join('\n')}\n` }, { timeoutMs });
    await session.waitForStatus(
      (report) =>
        (targets.tool === undefined || numberField(report, 'nozzle_target_temper') === targets.tool) &&
        (targets.bed === undefined || numberField(report, 'bed_target_temper') === targets.bed),
      timeoutMs,
    );
  }

  /**
   * Sends `print.<name>`, waits for the acknowledgement, then (bounded) for a status showing the effect, so
   * the caller's next status read already shows it.
   */
  private async command(
    name: 'pause' | 'resume' | 'stop',
    requiredState: 'running' | 'paused' | null,
    takenEffect: (report: Report) => boolean,
  ): Promise<void> {
    const session = this.session;
    if (!session) throw new MachineError('MachineOffline', `${this.id} has not been discovered yet`);
    if (requiredState) {
      const { state } = (await this.status()).state;
      if (state !== requiredState) {
        throw new MachineError(
          'MachineRejected',
          `cannot ${name} ${this.id}: it is ${state}, not ${requiredState}`,
        );
      }
    }
    const timeoutMs = this.settings.commandTimeoutMs;
    await this.send(session, { command: name, param: '' }, { timeoutMs });
    await session.waitForStatus(takenEffect, timeoutMs);
  }

  /**
   * Every command goes through here: a refusal by Authorization Control is remembered (the machine then
   * reports `capabilities.control = false` and is handed no jobs), an accepted command clears it.
   */
  private async send(
    session: BambuSession,
    fields: Report & { command: string },
    options: { timeoutMs: number; acceptReport?: (status: Report) => boolean },
  ): Promise<Report | null> {
    try {
      const reply = await session.request('print', fields, options);
      this.setControlRefusal(null);
      return reply;
    } catch (error) {
      if (error instanceof ControlRefused) this.setControlRefusal(error.message);
      throw error;
    }
  }

  private setControlRefusal(reason: string | null): void {
    if (this.controlRefusal === reason) return;
    this.controlRefusal = reason;
    this.refusedAt = Date.now();
    if (reason !== null) this.logger.warn({ reason }, 'the Bambu printer refuses control commands');
    for (const listener of this.statusListeners) listener();
  }

  async start(): Promise<void> {
    if (this.settings.host && this.settings.serial) {
      this.connect(this.settings.host, this.settings.serial);
      return;
    }
    await this.discovery?.acquire(this.onAnnouncement);
  }

  async close(): Promise<void> {
    this.closing.abort();
    await this.discovery?.release(this.onAnnouncement);
    this.job?.settle({
      status: 'failed',
      message: 'machine-api shut down before the printer reported the end of the job',
    });
    await this.session?.close();
    this.session = null;
  }

  private discovered(announcement: BambuAnnouncement): void {
    const matches = this.settings.serial
      ? announcement.serial === this.settings.serial
      : announcement.name === this.settings.name;
    if (!matches) return;
    this.modelCode = announcement.modelCode ?? this.modelCode;
    if (this.session) {
      this.session.moveTo(announcement.host);
      return;
    }
    this.logger.info(
      { host: announcement.host, serial: announcement.serial, model: announcement.modelCode },
      'discovered Bambu printer',
    );
    this.connect(announcement.host, announcement.serial);
  }

  onStatusChange(listener: () => void): () => void {
    this.statusListeners.add(listener);
    return () => this.statusListeners.delete(listener);
  }

  private connect(host: string, serial: string): void {
    this.serial = serial;
    const session = new BambuSession({
      host,
      port: this.settings.mqttPort,
      serial,
      accessCode: this.settings.accessCode,
      staleAfterMs: this.settings.statusTimeoutMs,
      logger: this.logger,
    });
    this.session = session;
    session.onReport((report) => {
      this.follow(report);
      for (const listener of this.statusListeners) listener();
    });
    session.start();
  }

  /** Moves the tracked job along with the printer's `gcode_state`. */
  private follow(report: Report): void {
    if (this.job) followReport(this.job, report);
  }
}

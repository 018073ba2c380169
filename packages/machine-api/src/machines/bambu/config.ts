/** The `[machines.<id>]` keys of `type = "Bambu"`. */

import { type Static, Type } from 'typebox';

const Port = Type.Integer({ minimum: 1, maximum: 65535 });

export const BambuConfigSchema = Type.Object({
  name: Type.String({ minLength: 1, description: "The printer's name (`DevName` in its announcements)." }),
  access_code: Type.String({ minLength: 1, description: 'LAN access code shown on the printer screen.' }),
  host: Type.Optional(
    Type.String({
      minLength: 1,
      description: 'Address of the printer; with `serial`, discovery is skipped.',
    }),
  ),
  serial: Type.Optional(
    Type.String({ pattern: '^[A-Za-z0-9]{6,32}$', description: 'Printer serial number.' }),
  ),
  mqtt_port: Type.Optional(Port),
  ftps_port: Type.Optional(Port),
  discovery_port: Type.Optional(Port),
  camera_port: Type.Optional(Port),
  rtsp_port: Type.Optional(Port),
  status_timeout_secs: Type.Optional(
    Type.Number({
      exclusiveMinimum: 0,
      description: 'Without a status report for this long the printer is offline.',
    }),
  ),
  command_timeout_secs: Type.Optional(
    Type.Number({
      exclusiveMinimum: 0,
      description: 'How long to wait for the printer to acknowledge a command.',
    }),
  ),
});

export type BambuConfig = Static<typeof BambuConfigSchema>;

/** The config with every default filled in. */
export interface BambuSettings {
  name: string;
  accessCode: string;
  host: string | null;
  serial: string | null;
  mqttPort: number;
  ftpsPort: number;
  discoveryPort: number;
  /** The P1/A1 JPEG camera stream (TLS). */
  cameraPort: number;
  /** The X1/H2/P2S RTSPS camera stream. */
  rtspPort: number;
  statusTimeoutMs: number;
  commandTimeoutMs: number;
}

/** Applies the defaults: the printer's fixed ports (8883, 990, 2021, cameras 6000 and 322), 30 s status and 30 s command timeouts. */
export function settingsFrom(config: BambuConfig): BambuSettings {
  return {
    name: config.name,
    accessCode: config.access_code,
    host: config.host ?? null,
    serial: config.serial ?? null,
    mqttPort: config.mqtt_port ?? 8883,
    ftpsPort: config.ftps_port ?? 990,
    discoveryPort: config.discovery_port ?? 2021,
    cameraPort: config.camera_port ?? 6000,
    rtspPort: config.rtsp_port ?? 322,
    statusTimeoutMs: (config.status_timeout_secs ?? 30) * 1000,
    commandTimeoutMs: (config.command_timeout_secs ?? 30) * 1000,
  };
}

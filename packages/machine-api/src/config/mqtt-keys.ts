/**
 * The `[mqtt]` table: an MQTT broker to publish every machine's state to, with Home Assistant's MQTT
 * discovery (docs/machine-api/mqtt.md). Absent: no MQTT at all.
 */

import { resolve } from 'node:path';
import { type Static, Type } from 'typebox';
import { ConfigError, checked } from './check.js';

/** MQTT topic levels this service writes: no wildcards, no separators, nothing a broker would refuse. */
const TOPIC_WORD = '^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$';

export const MqttKeys = Type.Object(
  {
    /** `mqtt://host:1883` or `mqtts://host:8883` (TLS). */
    url: Type.String({ pattern: '^mqtts?://[^\\s/]+(:\\d+)?/?$' }),
    username: Type.Optional(Type.String({ minLength: 1 })),
    password: Type.Optional(Type.String()),
    /** A PEM file of the CA that signed the broker's certificate (mqtts only); default: the system's CAs. */
    ca_file: Type.Optional(Type.String({ minLength: 1 })),
    /** First topic level of everything this service publishes (`machine-api/<machine>/state`). */
    topic_prefix: Type.String({ pattern: TOPIC_WORD, default: 'machine-api' }),
    /** Home Assistant's discovery prefix; `discovery = false` publishes no discovery messages. */
    discovery_prefix: Type.String({ pattern: TOPIC_WORD, default: 'homeassistant' }),
    discovery: Type.Boolean({ default: true }),
    /** Accept pause / resume / stop / clear on `<prefix>/<machine>/command`; off unless set. */
    commands: Type.Boolean({ default: false }),
  },
  { additionalProperties: false },
);

export interface MqttSettings {
  url: string;
  username: string | null;
  password: string | null;
  /** Absolute path, or null. */
  caFile: string | null;
  topicPrefix: string;
  discoveryPrefix: string;
  discovery: boolean;
  commands: boolean;
}

/** The `[mqtt]` table, or null when there is none. */
export function parseMqtt(value: unknown, file: string, configDir: string): MqttSettings | null {
  if (value === undefined) return null;
  const where = `${file}: [mqtt]`;
  const keys = checked(MqttKeys, value, where) as Static<typeof MqttKeys>;
  if (keys.ca_file !== undefined && !keys.url.startsWith('mqtts://'))
    throw new ConfigError(`${where}: key "ca_file": only used with an mqtts:// url`);
  if (keys.password !== undefined && keys.username === undefined)
    throw new ConfigError(`${where}: key "password": needs a "username"`);
  return {
    url: keys.url,
    username: keys.username ?? null,
    password: keys.password ?? null,
    caFile: keys.ca_file !== undefined ? resolve(configDir, keys.ca_file) : null,
    topicPrefix: keys.topic_prefix,
    discoveryPrefix: keys.discovery_prefix,
    discovery: keys.discovery,
    commands: keys.commands,
  };
}

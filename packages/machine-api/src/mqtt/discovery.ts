/**
 * Home Assistant's MQTT discovery messages for one machine: one device per machine, its sensors (state,
 * progress, job, nozzle and bed temperatures and targets), a `ready` binary sensor and, when commands are
 * on, pause / resume / stop / clear buttons. All read one retained JSON state topic through value
 * templates, and are available while both the service (its last will) and the machine are.
 *
 * Topics follow https://www.home-assistant.io/integrations/mqtt/#discovery-messages:
 * `<discovery_prefix>/<component>/<node_id>/<object_id>/config`, node and object ids limited to
 * `[a-zA-Z0-9_-]`.
 */

import type { MqttSettings } from '../config/mqtt-keys.js';
import type { MachineMakeModel } from '../machines/machine.js';

export const CONTROL_ACTIONS = ['pause', 'resume', 'stop', 'clear'] as const;
export type ControlAction = (typeof CONTROL_ACTIONS)[number];

/** The topics of one machine under the service's prefix. */
export function machineTopics(prefix: string, machineId: string) {
  const base = `${prefix}/${machineId}`;
  return {
    state: `${base}/state`,
    availability: `${base}/availability`,
    command: `${base}/command`,
    commandResult: `${base}/command/result`,
  };
}

/** The service's own availability topic (its birth message and last will). */
export const serviceStatusTopic = (prefix: string) => `${prefix}/status`;

export interface DiscoveryMessage {
  topic: string;
  /** JSON of the entity's configuration; empty removes an entity published before (a button once commands are off). */
  payload: string;
}

interface Entity {
  component: 'sensor' | 'binary_sensor' | 'button';
  key: string;
  config: Record<string, unknown>;
}

const TEMPERATURE = { device_class: 'temperature', unit_of_measurement: '°C', state_class: 'measurement' };

const SENSORS: Entity[] = [
  {
    component: 'sensor',
    key: 'state',
    config: { name: 'State', value_template: '{{ value_json.state }}', icon: 'mdi:printer-3d' },
  },
  {
    component: 'sensor',
    key: 'progress',
    config: {
      name: 'Progress',
      value_template: '{{ value_json.progress }}',
      unit_of_measurement: '%',
      state_class: 'measurement',
      icon: 'mdi:progress-clock',
    },
  },
  {
    component: 'sensor',
    key: 'job',
    config: { name: 'Job', value_template: '{{ value_json.job }}', icon: 'mdi:file-cog' },
  },
  {
    component: 'sensor',
    key: 'nozzle_temperature',
    config: {
      name: 'Nozzle temperature',
      value_template: '{{ value_json.nozzle_temperature }}',
      ...TEMPERATURE,
    },
  },
  {
    component: 'sensor',
    key: 'nozzle_target',
    config: { name: 'Nozzle target', value_template: '{{ value_json.nozzle_target }}', ...TEMPERATURE },
  },
  {
    component: 'sensor',
    key: 'bed_temperature',
    config: { name: 'Bed temperature', value_template: '{{ value_json.bed_temperature }}', ...TEMPERATURE },
  },
  {
    component: 'sensor',
    key: 'bed_target',
    config: { name: 'Bed target', value_template: '{{ value_json.bed_target }}', ...TEMPERATURE },
  },
  {
    component: 'binary_sensor',
    key: 'ready',
    config: {
      name: 'Ready',
      value_template: "{{ 'ON' if value_json.ready else 'OFF' }}",
      payload_on: 'ON',
      payload_off: 'OFF',
      icon: 'mdi:check-circle-outline',
    },
  },
];

const BUTTON_NAMES: Record<ControlAction, string> = {
  pause: 'Pause',
  resume: 'Resume',
  stop: 'Stop',
  clear: 'Bed cleared',
};

/** `[a-zA-Z0-9_-]` only, as discovery topics and ids require. */
export function discoveryId(value: string): string {
  return value.replace(/[^A-Za-z0-9_-]/g, '_');
}

/** Every discovery message of one machine, in a stable order. */
export function discoveryMessages(
  settings: MqttSettings,
  machine: { id: string; makeModel: MachineMakeModel },
  version: string,
): DiscoveryMessage[] {
  const node = discoveryId(`${settings.topicPrefix}_${machine.id}`);
  const topics = machineTopics(settings.topicPrefix, machine.id);
  const device = {
    identifiers: [node],
    name: machine.id,
    ...(machine.makeModel.manufacturer ? { manufacturer: machine.makeModel.manufacturer } : {}),
    ...(machine.makeModel.model ? { model: machine.makeModel.model } : {}),
    ...(machine.makeModel.serial ? { serial_number: machine.makeModel.serial } : {}),
  };
  const common = {
    device,
    origin: { name: 'machine-api', sw_version: version },
    availability: [
      {
        topic: serviceStatusTopic(settings.topicPrefix),
        payload_available: 'online',
        payload_not_available: 'offline',
      },
      { topic: topics.availability, payload_available: 'online', payload_not_available: 'offline' },
    ],
    availability_mode: 'all',
  };
  const messages: DiscoveryMessage[] = SENSORS.map(({ component, key, config }) => ({
    topic: `${settings.discoveryPrefix}/${component}/${node}/${key}/config`,
    payload: JSON.stringify({ ...config, unique_id: `${node}_${key}`, state_topic: topics.state, ...common }),
  }));
  for (const action of CONTROL_ACTIONS) {
    const topic = `${settings.discoveryPrefix}/button/${node}/${action}/config`;
    const config = {
      name: BUTTON_NAMES[action],
      unique_id: `${node}_${action}`,
      command_topic: topics.command,
      payload_press: action,
      ...common,
    };
    messages.push({ topic, payload: settings.commands ? JSON.stringify(config) : '' });
  }
  return messages;
}

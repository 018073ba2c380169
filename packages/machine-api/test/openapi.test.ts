import { readFileSync } from 'node:fs';
import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MachineApiUnderTest, startMachineApi } from './harness.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const reference = (version: string) =>
  JSON.parse(
    readFileSync(new URL(`./fixtures/machine-api-${version}.openapi.json`, import.meta.url), 'utf8'),
  ) as JsonObject;

/** The seed renames the brand-bearing keys of ExtraMachineInfoResponse; everything else is the anchor's. */
function seedNames(value: Json): Json {
  const text = JSON.stringify(value)
    .replaceAll('"Moonraker"', '"ExtraKindA"')
    .replaceAll('"Bambu"', '"ExtraKindB"');
  return JSON.parse(text);
}

/** Descriptions are prose; the comparison is about structure, names, types, required lists and enums. */
function withoutDescriptions(value: Json): Json {
  if (Array.isArray(value)) return value.map(withoutDescriptions);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== 'description')
      .map(([key, child]) => [key, withoutDescriptions(child as Json)]),
  );
}

const SEED_SCHEMAS = [
  'MachineInfoResponse',
  'MachineMakeModel',
  'MachineType',
  'ExtraMachineInfoResponse',
  'Volume',
  'Pong',
  'PrintParameters',
  'PrintJobResponse',
  'Error',
];

describe('GET / serves the OpenAPI 3.0.3 document', () => {
  let api: MachineApiUnderTest;
  let document: JsonObject;
  let schemas: JsonObject;
  const v010 = seedNames(reference('0.1.0')) as JsonObject;
  const v010Schemas = (v010.components as JsonObject).schemas as JsonObject;
  const v011Schemas = (reference('0.1.1').components as JsonObject).schemas as JsonObject as JsonObject;

  beforeAll(async () => {
    api = await startMachineApi('');
    const response = await fetch(`${api.baseUrl}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    document = (await response.json()) as JsonObject;
    schemas = (document.components as JsonObject).schemas as JsonObject;
  });
  afterAll(() => api.close());

  it('is OpenAPI 3.0.3 titled machine-api, version 0.1.0, and validates with swagger-parser', async () => {
    expect(document.openapi).toBe('3.0.3');
    expect((document.info as JsonObject).title).toBe('machine-api');
    expect((document.info as JsonObject).version).toBe('0.1.0');
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeTruthy();
  });

  it('has every schema of the seed with the seed names, fields, required lists, nullability and enums', () => {
    for (const name of SEED_SCHEMAS) {
      const ours = schemas[name] as JsonObject;
      const theirs = v010Schemas[name] as JsonObject;
      expect(ours, name).toBeDefined();
      if (name === 'MachineInfoResponse' || name === 'PrintParameters') {
        // Compatible additions: every field of the seed is there unchanged, the required list is the seed's.
        expect(ours.required, name).toEqual(theirs.required);
        expect(ours.type).toBe('object');
        for (const [field, schema] of Object.entries(theirs.properties as JsonObject)) {
          expect(
            withoutDescriptions((ours.properties as JsonObject)[field] as Json),
            `${name}.${field}`,
          ).toEqual(withoutDescriptions(schema));
        }
      } else {
        expect(withoutDescriptions(ours), name).toEqual(withoutDescriptions(theirs));
      }
    }
  });

  it('matches the anchor word for word where the seed schemas are described the same way', () => {
    for (const name of ['Volume', 'Pong', 'MachineMakeModel', 'MachineType', 'Error', 'PrintJobResponse']) {
      expect(schemas[name], name).toEqual(v010Schemas[name]);
    }
    expect(schemas.ExtraMachineInfoResponse).toEqual(v010Schemas.ExtraMachineInfoResponse);
    expect((schemas.MachineType as JsonObject).oneOf).toEqual([
      expect.objectContaining({ enum: ['Stereolithography'], type: 'string' }),
      expect.objectContaining({ enum: ['FusedDeposition'], type: 'string' }),
      expect.objectContaining({ enum: ['Cnc'], type: 'string' }),
    ]);
  });

  it('documents the 0.1.1 additions (state, progress, hardware_configuration, slicer_configuration) in their 0.1.1 shapes', () => {
    const properties = (schemas.MachineInfoResponse as JsonObject).properties as JsonObject;
    const v011Properties = (v011Schemas.MachineInfoResponse as JsonObject).properties as JsonObject;
    expect(properties.state).toEqual(v011Properties.state);
    expect(properties.progress).toEqual(v011Properties.progress);
    expect(withoutDescriptions(properties.hardware_configuration as Json)).toEqual({
      ...(withoutDescriptions(v011Properties.hardware_configuration as Json) as JsonObject),
      nullable: true,
    });
    for (const name of ['MachineState', 'FdmHardwareConfiguration', 'SlicerConfiguration']) {
      expect(schemas[name], name).toEqual(v011Schemas[name]);
    }
    for (const name of ['HardwareConfiguration', 'FilamentMaterial', 'Filament']) {
      expect(withoutDescriptions(schemas[name] as Json), name).toEqual(
        withoutDescriptions(v011Schemas[name] as Json),
      );
    }
    expect(((schemas.PrintParameters as JsonObject).properties as JsonObject).slicer_configuration).toEqual(
      ((v011Schemas.PrintParameters as JsonObject).properties as JsonObject).slicer_configuration,
    );
  });

  it('has the seed operations with the anchor operation ids, tags, parameters, bodies and responses', () => {
    const theirPaths = v010.paths as JsonObject;
    const ourPaths = document.paths as JsonObject;
    for (const [path, operations] of Object.entries(theirPaths)) {
      for (const [method, operation] of Object.entries(operations as JsonObject)) {
        const ours = (ourPaths[path] as JsonObject | undefined)?.[method] as JsonObject | undefined;
        expect(ours, `${method} ${path}`).toBeDefined();
        const theirs = operation as JsonObject;
        for (const key of ['operationId', 'tags', 'summary', 'parameters', 'requestBody', 'responses']) {
          expect(ours?.[key], `${method} ${path} ${key}`).toEqual(theirs[key]);
        }
      }
    }
    expect((document.components as JsonObject).responses).toEqual((v010.components as JsonObject).responses);
    expect(document.tags).toEqual(expect.arrayContaining(v010.tags as Json[]));
  });

  it('declares Error (OctoPrintError under an OctoPrint base) for 4XX and 5XX on every operation, with one tag and an operation id each', () => {
    const operationIds = new Set<string>();
    for (const [path, operations] of Object.entries(document.paths as JsonObject)) {
      for (const [method, operation] of Object.entries(operations as JsonObject)) {
        const op = operation as JsonObject;
        const responses = op.responses as JsonObject;
        // Under an OctoPrint base the error body is OctoPrint's `{"error"}`.
        const error = path.startsWith('/octoprint/')
          ? {
              description: 'Error',
              content: { 'application/json': { schema: { $ref: '#/components/schemas/OctoPrintError' } } },
            }
          : { $ref: '#/components/responses/Error' };
        expect(responses['4XX'], `${method} ${path}`).toEqual(error);
        expect(responses['5XX'], `${method} ${path}`).toEqual(error);
        expect(op.tags, `${method} ${path}`).toHaveLength(1);
        expect(typeof op.operationId).toBe('string');
        operationIds.add(op.operationId as string);
      }
    }
    expect([...operationIds].sort()).toEqual(
      [
        'api_get_schema',
        'cancel_job',
        'create_key',
        'delete_stored_file',
        'change_job',
        'clear_machine',
        'get_events',
        'get_event_history',
        'get_queue',
        'queue_file',
        'requeue_job',
        'get_job',
        'get_job_photo',
        'get_machine',
        'get_machine_snapshot',
        'get_machine_stream',
        'get_machines',
        'get_metrics',
        'get_stats',
        'list_jobs',
        'list_files',
        'list_keys',
        'list_key_requests',
        'approve_key_request',
        'deny_key_request',
        'octoprint_appkeys_probe',
        'octoprint_appkeys_request',
        'octoprint_appkeys_poll',
        'octoprint_job_command',
        'octoprint_tool_command',
        'octoprint_bed_command',
        'octoprint_connection',
        'octoprint_connection_command',
        'octoprint_system_commands',
        'octoprint_system_command',
        'octoprint_files',
        'octoprint_push_channel',
        'octoprint_webcam',
        'revoke_camera_token',
        'list_notification_deliveries',
        'list_notification_targets',
        'create_notification_target',
        'get_notification_target',
        'update_notification_target',
        'delete_notification_target',
        'test_notification_target',
        'octoprint_current_user',
        'octoprint_file_command',
        'octoprint_job',
        'octoprint_login',
        'octoprint_printer',
        'octoprint_printer_profiles',
        'octoprint_server',
        'octoprint_settings',
        'octoprint_upload',
        'octoprint_version',
        'pause_machine',
        'ping',
        'print_file',
        'print_stored_file',
        'resume_machine',
        'revoke_key',
        'stop_machine',
        'set_machine_spool',
        'set_machine_temperature',
        'list_temperature_presets',
        'preheat_machines',
      ].sort(),
    );
  });
});

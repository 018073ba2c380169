/**
 * Every wire shape of the HTTP API, once, one file per area (machines, print, queue, jobs, events, keys,
 * errors, meta; the OctoPrint-compatible shapes are in octoprint/schemas/). These TypeBox schemas are
 * registered as shared schemas (their `$id` becomes the OpenAPI component name), referenced by the
 * routes, and give the handlers their types. Routes import a shape from its area's file; this file only
 * lists what is registered.
 */

import { CameraInfo } from './cameras.js';
import { ErrorSchema } from './errors.js';
import { Event, EventType } from './events.js';
import { Job, JobFilament, JobStatus, QueueEntry, SliceEstimate } from './jobs.js';
import {
  ExtraMachineInfoResponse,
  FdmHardwareConfiguration,
  Filament,
  FilamentMaterial,
  HardwareConfiguration,
  MachineCapabilities,
  MachineInfoResponse,
  MachineMakeModel,
  MachineState,
  MachineType,
  TemperatureReading,
  Volume,
} from './machines.js';
import { Pong } from './meta.js';
import { PrintJobResponse, PrintParameters, SlicerConfiguration } from './print.js';
import { JobChange, QueueConstraints, QueueParameters } from './queue.js';
import { MachineSpools, SpoolAssignment, SpoolRequest } from './spools.js';
import { Stats, StatsTotals } from './stats.js';
import { PreheatRequest, PreheatResult, TemperaturePresetInfo, TemperatureRequest } from './temperature.js';

/** Every shared schema, in the order they are registered (references point backwards only). */
export const sharedSchemas = [
  ErrorSchema,
  Pong,
  MachineType,
  MachineMakeModel,
  Volume,
  ExtraMachineInfoResponse,
  MachineState,
  FilamentMaterial,
  Filament,
  FdmHardwareConfiguration,
  HardwareConfiguration,
  TemperatureReading,
  JobStatus,
  CameraInfo,
  MachineCapabilities,
  SpoolAssignment,
  MachineSpools,
  SpoolRequest,
  MachineInfoResponse,
  SlicerConfiguration,
  PrintParameters,
  PrintJobResponse,
  SliceEstimate,
  JobFilament,
  QueueConstraints,
  QueueParameters,
  JobChange,
  Job,
  QueueEntry,
  StatsTotals,
  Stats,
  EventType,
  Event,
  TemperatureRequest,
  PreheatRequest,
  PreheatResult,
  TemperaturePresetInfo,
];

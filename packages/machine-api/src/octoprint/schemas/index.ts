/**
 * The OctoPrint wire shapes slicers read (the fields named in each description are the ones PrusaSlicer,
 * OrcaSlicer, SuperSlicer and Cura's OctoPrint plugin look at). Registered as shared schemas, so they are
 * validated, serialised and documented like the rest of the API. One file per area in this folder.
 */

import {
  AppKeyDecision,
  AppKeyRequestBody,
  AppKeyRequestCreated,
  OctoPrintConnection,
  OctoPrintConnectionCommand,
  OctoPrintSystemCommands,
} from './apps.js';
import { OctoPrintFileCommand, OctoPrintFiles, OctoPrintUploadResult, StoredFileInfo } from './files.js';
import {
  OctoPrintError,
  OctoPrintServer,
  OctoPrintSettings,
  OctoPrintUser,
  OctoPrintVersion,
} from './handshake.js';
import {
  OctoPrintBedCommand,
  OctoPrintJob,
  OctoPrintJobCommand,
  OctoPrintPrinter,
  OctoPrintPrinterProfiles,
  OctoPrintToolCommand,
} from './printer.js';

export const octoPrintSchemas = [
  OctoPrintConnection,
  OctoPrintConnectionCommand,
  OctoPrintSystemCommands,
  OctoPrintFiles,
  OctoPrintToolCommand,
  OctoPrintBedCommand,
  OctoPrintJobCommand,
  AppKeyRequestBody,
  AppKeyRequestCreated,
  AppKeyDecision,
  OctoPrintError,
  OctoPrintVersion,
  OctoPrintServer,
  OctoPrintSettings,
  OctoPrintUser,
  OctoPrintUploadResult,
  OctoPrintFileCommand,
  OctoPrintPrinter,
  OctoPrintJob,
  OctoPrintPrinterProfiles,
  StoredFileInfo,
];

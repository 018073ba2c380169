/**
 * Bambu Lab printers take a `.gcode.3mf`: a 3MF package whose plate G-code is `Metadata/plate_1.gcode`,
 * with its MD5 (uppercase hex) beside it and the small metadata parts Bambu Studio writes for a sliced
 * plate (plate settings, slice info with time/weight, plate JSON), and an empty 3D model. PrusaSlicer
 * cannot write this, so it is packaged here, streaming the G-code through deflate and MD5 in one pass.
 */

import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { ZipFileWriter } from '../design/zip-writer.js';
import type { SliceEstimate } from './slicer.js';

export const PLATE_GCODE_PART = 'Metadata/plate_1.gcode';

export interface PlateFacts {
  estimate: SliceEstimate | null;
  /** Values of the G-code's trailer (`nozzle_diameter`, `filament_type`, `filament_colour`, `printer_model`). */
  trailer: Map<string, string>;
}

/** Writes `outputPath` as a Bambu `.gcode.3mf` holding the G-code at `gcodePath`. */
export async function writeGcode3mf(gcodePath: string, outputPath: string, plate: PlateFacts): Promise<void> {
  const zip = new ZipFileWriter(outputPath);
  try {
    zip.text('[Content_Types].xml', CONTENT_TYPES);
    zip.text('_rels/.rels', ROOT_RELATIONSHIPS);
    zip.text('3D/3dmodel.model', EMPTY_MODEL);
    zip.file(PLATE_GCODE_PART, gcodePath);
    zip.text(`${PLATE_GCODE_PART}.md5`, await md5Of(gcodePath));
    zip.text('Metadata/model_settings.config', MODEL_SETTINGS);
    zip.text('Metadata/_rels/model_settings.config.rels', MODEL_SETTINGS_RELATIONSHIPS);
    zip.text('Metadata/slice_info.config', sliceInfo(plate));
    zip.text('Metadata/plate_1.json', plateJson(plate));
    await zip.close();
  } catch (error) {
    await zip.discard();
    throw error;
  }
}

/** The MD5 Bambu's firmware checks the plate G-code against, upper-case hex. */
async function md5Of(path: string): Promise<string> {
  const md5 = createHash('md5');
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) md5.update(chunk as Buffer);
  return md5.digest('hex').toUpperCase();
}

const CONTENT_TYPES = `<?xml version="1.0" encoding="UTF-8"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">
 <Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>
 <Default Extension="model" ContentType="application/vnd.ms-package.3dmanufacturing-3dmodel+xml"/>
 <Default Extension="png" ContentType="image/png"/>
 <Default Extension="gcode" ContentType="text/x.gcode"/>
</Types>
`;

const ROOT_RELATIONSHIPS = `<?xml version="1.0" encoding="UTF-8"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
 <Relationship Target="/3D/3dmodel.model" Id="rel-1" Type="http://schemas.microsoft.com/3dmanufacturing/2013/01/3dmodel"/>
</Relationships>
`;

/** A sliced plate carries no geometry: the printer only reads the G-code. */
const EMPTY_MODEL = `<?xml version="1.0" encoding="UTF-8"?>
<model unit="millimeter" xml:lang="en-US" xmlns="http://schemas.microsoft.com/3dmanufacturing/core/2015/02" xmlns:BambuStudio="http://schemas.bambulab.com/package/2021">
 <metadata name="Application">machine-api</metadata>
 <metadata name="BambuStudio:3mfVersion">1</metadata>
 <resources/>
 <build/>
</model>
`;

const MODEL_SETTINGS = `<?xml version="1.0" encoding="UTF-8"?>
<config>
  <plate>
    <metadata key="plater_id" value="1"/>
    <metadata key="plater_name" value=""/>
    <metadata key="locked" value="false"/>
    <metadata key="gcode_file" value="${PLATE_GCODE_PART}"/>
    <metadata key="thumbnail_file" value="Metadata/plate_1.png"/>
    <metadata key="pattern_bbox_file" value="Metadata/plate_1.json"/>
  </plate>
</config>
`;

const MODEL_SETTINGS_RELATIONSHIPS = `<?xml version="1.0" encoding="UTF-8"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
 <Relationship Target="/${PLATE_GCODE_PART}" Id="rel-1" Type="http://schemas.bambulab.com/package/2021/gcode"/>
</Relationships>
`;

function sliceInfo({ estimate, trailer }: PlateFacts): string {
  const nozzle = firstOf(trailer.get('nozzle_diameter')) ?? '0.4';
  const grams = estimate?.filamentUsedGrams;
  const meters = estimate?.filamentUsedMm == null ? null : estimate.filamentUsedMm / 1000;
  const filament = {
    id: '1',
    type: firstOf(trailer.get('filament_type')) ?? 'PLA',
    color: firstOf(trailer.get('filament_colour')) ?? '#FFFFFF',
    used_m: meters == null ? '0' : meters.toFixed(2),
    used_g: grams == null ? '0' : grams.toFixed(2),
  };
  return `<?xml version="1.0" encoding="UTF-8"?>
<config>
  <header>
    <header_item key="X-BBL-Client-Type" value="slicer"/>
    <header_item key="X-BBL-Client-Version" value="01.00.00.00"/>
  </header>
  <plate>
    <metadata key="index" value="1"/>
    <metadata key="printer_model_id" value="${xml(trailer.get('printer_model') ?? '')}"/>
    <metadata key="nozzle_diameters" value="${xml(nozzle)}"/>
    <metadata key="prediction" value="${estimate?.printTimeSeconds ?? 0}"/>
    <metadata key="weight" value="${grams == null ? '0' : grams.toFixed(2)}"/>
    <metadata key="outside" value="false"/>
    <metadata key="support_used" value="false"/>
    <metadata key="label_object_enabled" value="false"/>
    <filament ${Object.entries(filament)
      .map(([key, value]) => `${key}="${xml(value)}"`)
      .join(' ')}/>
  </plate>
</config>
`;
}

function plateJson({ trailer }: PlateFacts): string {
  const nozzle = Number(firstOf(trailer.get('nozzle_diameter')) ?? '0.4');
  return `${JSON.stringify({ version: 2, bed_type: 'textured_plate', nozzle_diameter: nozzle, bbox_objects: [] })}\n`;
}

/** First value of a per-extruder list (`0.4,0.4`, `"PLA";"PETG"`). */
function firstOf(value: string | undefined): string | null {
  const first = value?.split(/[,;]/)[0]?.trim().replace(/^"|"$/g, '');
  return first ? first : null;
}

function xml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

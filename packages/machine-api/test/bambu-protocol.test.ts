/** The Bambu backend's pure protocol pieces: announcement parsing, delta merging, names shown to users. */

import { describe, expect, it } from 'vitest';
import { parseAnnouncement, UnusableDatagram } from '../src/machines/bambu/discovery.js';
import { mergeReport } from '../src/machines/bambu/report.js';
import { stageName } from '../src/machines/bambu/stages.js';
import { formatPrintError } from '../src/machines/bambu/status.js';
import { remoteFileName } from '../src/machines/bambu/upload.js';

const JOB_ID = '0b7c5a52-3f7e-4a55-9d1f-6a0f0e5d2c11';

describe('remote file names', () => {
  it.each([
    ['Bracket v2 / final (PLA)', 'Bracket_v2_final_PLA.gcode.3mf'],
    ['Café façade', 'Cafe_facade.gcode.3mf'],
    ['../../etc/passwd', 'etc_passwd.gcode.3mf'],
    ['.hidden', 'hidden.gcode.3mf'],
    ['part.gcode.3mf', 'part.gcode.3mf'],
    ['日本語', `${JOB_ID}.gcode.3mf`],
    ['', `${JOB_ID}.gcode.3mf`],
    ['x'.repeat(300), `${'x'.repeat(80)}.gcode.3mf`],
  ])('%j is stored as %j', (jobName, expected) => {
    expect(remoteFileName(jobName, JOB_ID)).toBe(expected);
  });
});

describe('announcements', () => {
  const packet = (lines: string[]) => Buffer.from(`${lines.join('\r\n')}\r\n\r\n`);
  const valid = [
    'NOTIFY * HTTP/1.1',
    'HOST: 239.255.255.250:1990',
    'Location: 192.168.1.50',
    'NT: urn:bambulab-com:device:3dprinter:1',
    'USN: 01S00C123400001',
    'DevModel.bambu.com: C11',
    'DevName.bambu.com: Garage: P1P',
  ];

  it('reads address, serial, name (colons included) and model code', () => {
    expect(parseAnnouncement(packet(valid))).toEqual({
      host: '192.168.1.50',
      serial: '01S00C123400001',
      name: 'Garage: P1P',
      modelCode: 'C11',
    });
  });

  it.each([
    [
      'a Location that is not an IP address',
      valid.map((l) => (l.startsWith('Location') ? 'Location: x1c.lan' : l)),
      false,
    ],
    ['a missing USN', valid.filter((l) => !l.startsWith('USN')), false],
    ['a header line without a colon', [...valid, 'garbage'], false],
    ['another device type', valid.map((l) => (l.startsWith('NT') ? 'NT: upnp:rootdevice' : l)), true],
    ['an M-SEARCH', ['M-SEARCH * HTTP/1.1', 'ST: ssdp:all'], true],
  ])('rejects %s', (_what, lines, ignorable) => {
    let error: unknown;
    try {
      parseAnnouncement(packet(lines));
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(UnusableDatagram);
    expect((error as UnusableDatagram).ignorable).toBe(ignorable);
  });
});

describe('delta reports', () => {
  it('keeps what a delta does not mention and merges AMS units and trays by id', () => {
    const full = {
      gcode_state: 'IDLE',
      nozzle_diameter: '0.4',
      ams: {
        tray_now: '1',
        ams: [
          {
            id: '0',
            humidity: '4',
            tray: [
              { id: '0', tray_type: 'PLA', remain: 80 },
              { id: '1', tray_type: 'PETG', remain: 50 },
            ],
          },
          { id: '1', humidity: '3', tray: [{ id: '0', tray_type: 'ABS', remain: 10 }] },
        ],
      },
      hms: [{ attr: 1, code: 2 }],
    };
    const merged = mergeReport(full, {
      gcode_state: 'RUNNING',
      ams: { ams: [{ id: '0', tray: [{ id: '1', remain: 49 }] }] },
      hms: [],
    });
    expect(merged).toEqual({
      gcode_state: 'RUNNING',
      nozzle_diameter: '0.4',
      ams: {
        tray_now: '1',
        ams: [
          {
            id: '0',
            humidity: '4',
            tray: [
              { id: '0', tray_type: 'PLA', remain: 80 },
              { id: '1', tray_type: 'PETG', remain: 49 },
            ],
          },
          { id: '1', humidity: '3', tray: [{ id: '0', tray_type: 'ABS', remain: 10 }] },
        ],
      },
      hms: [],
    });
    // The last full status is not modified in place.
    expect(full.ams.ams[0]?.tray[1]?.remain).toBe(50);
  });
});

describe('names shown to users', () => {
  it('names stages from the anchor table and leaves unknown values unnamed', () => {
    expect(stageName(-1)).toBe('nothing');
    expect(stageName(2)).toBe('heatbed_preheating');
    expect(stageName('35')).toBe('nozzle_clog_pause');
    expect(stageName(255)).toBeNull();
    expect(stageName(null)).toBeNull();
  });

  it('writes printer error codes the way the printer screen shows them', () => {
    expect(formatPrintError(0x0300400c)).toBe('0300-400C');
    expect(formatPrintError(117473297)).toBe('0700-8011');
  });
});

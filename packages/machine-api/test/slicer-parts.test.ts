import { describe, expect, it } from 'vitest';
import { ConcurrencyLimit } from '../src/concurrency-limit.js';
import { estimateFromTrailer, parseDuration, parseTrailer } from '../src/slicer/estimate.js';
import { slicerMessage } from '../src/slicer/prusa.js';

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe('ConcurrencyLimit', () => {
  it('runs at most `limit` tasks and starts waiting ones in arrival order as slots free up', async () => {
    const limit = new ConcurrencyLimit(2);
    const gates = [deferred(), deferred(), deferred()];
    const started: number[] = [];
    const runs = gates.map((gate, i) =>
      limit.run(async () => {
        started.push(i);
        await gate.promise;
        return i;
      }),
    );
    await Promise.resolve();
    expect(started).toEqual([0, 1]);
    expect(limit.load).toEqual({ running: 2, waiting: 1 });
    gates[1]!.resolve();
    expect(await runs[1]).toBe(1);
    expect(started).toEqual([0, 1, 2]);
    gates[0]!.resolve();
    gates[2]!.resolve();
    expect(await Promise.all(runs)).toEqual([0, 1, 2]);
    expect(limit.load).toEqual({ running: 0, waiting: 0 });
  });

  it('drops a waiting task whose signal aborts, without taking a slot', async () => {
    const limit = new ConcurrencyLimit(1);
    const gate = deferred();
    const first = limit.run(() => gate.promise);
    const controller = new AbortController();
    let ran = false;
    const second = limit.run(async () => {
      ran = true;
    }, controller.signal);
    const reason = new Error('cancelled');
    controller.abort(reason);
    await expect(second).rejects.toBe(reason);
    expect(limit.load).toEqual({ running: 1, waiting: 0 });
    gate.resolve();
    await first;
    expect(ran).toBe(false);
    expect(limit.load).toEqual({ running: 0, waiting: 0 });
  });
});

describe('G-code trailer estimates', () => {
  it('reads durations with days, hours, minutes and seconds', () => {
    expect(parseDuration('1d 2h 3m 4s')).toBe(93_784);
    expect(parseDuration('13m 45s')).toBe(825);
    expect(parseDuration('59s')).toBe(59);
    expect(parseDuration('unknown')).toBeNull();
  });

  it('sums per-extruder values and treats 0 g (no density in the profile) as unknown', () => {
    const trailer = parseTrailer(
      [
        'G1 X1',
        '; filament used [mm] = 1000.5, 20.25',
        '; filament used [cm3] = 2.40, 0.05',
        '; filament used [g] = 0.00, 0.00',
        '; total filament used [g] = 0.00',
        '; estimated printing time (normal mode) = 1h 2m 3s',
        '; estimated printing time (silent mode) = 2h 0m 0s',
        '; layer_height = 0.2',
      ].join('\n'),
    );
    expect(trailer.get('layer_height')).toBe('0.2');
    expect(estimateFromTrailer(trailer)).toEqual({
      printTimeSeconds: 3723,
      filamentUsedMm: 1020.75,
      filamentUsedCm3: 2.45,
      filamentUsedGrams: null,
    });
  });

  it('is all null for G-code without a trailer', () => {
    expect(estimateFromTrailer(parseTrailer('G28\nG1 X10\n'))).toEqual({
      printTimeSeconds: null,
      filamentUsedMm: null,
      filamentUsedCm3: null,
      filamentUsedGrams: null,
    });
  });
});

describe('slicer messages', () => {
  it('keeps the explanation and drops timestamps, progress and trace noise', () => {
    const output = [
      '[2026-11-22 04:28:31.876871] [0x00007fcd2e857d80] [trace]   Initializing StaticPrintConfigs',
      '10 => Processing triangulated mesh',
      '[2026-11-22 04:28:31.881378] [0x00007fcd2e857d80] [error]   stl_open_count_facets: The input is an empty file: bad.stl',
      'bad.stl: Loading of a model file failed.',
    ].join('\n');
    expect(slicerMessage(output)).toBe(
      'stl_open_count_facets: The input is an empty file: bad.stl; bad.stl: Loading of a model file failed.',
    );
  });

  it('caps long output', () => {
    expect(slicerMessage('x'.repeat(5000)).length).toBe(401);
  });
});

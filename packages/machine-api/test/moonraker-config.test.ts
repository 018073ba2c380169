/** `type = "Moonraker"` tables: the anchor's format is read, mistakes are named with the key at fault. */

import { describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config/check.js';
import { parseConfig } from '../src/config.js';
import { backends } from '../src/machines/backends.js';

const FILE = '/etc/machine-api/machine-api.toml';

function parse(machine: string) {
  return parseConfig(`[machines.neptune]\ntype = "Moonraker"\nfilaments = []\n${machine}`, {
    file: FILE,
    backends,
  });
}

function errorOf(machine: string): string {
  try {
    parse(machine);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('Moonraker configuration', () => {
  it('reads endpoint, variant and api_key, with the timing defaults', () => {
    const [machine] = parse(
      'endpoint = "http://192.168.1.102:7125"\nvariant = "ElegooNeptune4"\napi_key = "abc"',
    ).machines;
    expect(machine?.settings).toEqual({
      endpoint: 'http://192.168.1.102:7125',
      variant: 'ElegooNeptune4',
      api_key: 'abc',
      timeout_seconds: 5,
      poll_interval_seconds: 2,
      lost_print_grace_seconds: 300,
    });
  });

  it('rejects the variant name of the anchor README ("Neptune4"), naming the valid ones', () => {
    expect(errorOf('endpoint = "http://printer.local"\nvariant = "Neptune4"')).toBe(
      `${FILE}: [machines.neptune]: key "variant": expected one of "Generic", "ElegooNeptune4", got "Neptune4"`,
    );
  });

  it('rejects an endpoint that is not an http(s) base URL, and a missing one', () => {
    expect(errorOf('endpoint = "printer.local:7125"\nvariant = "Generic"')).toMatch(
      /key "endpoint": expected a string matching .*, got "printer\.local:7125"$/,
    );
    expect(errorOf('variant = "Generic"')).toMatch(/key "endpoint": expected .*, it is missing$/);
  });

  it('rejects a timeout that is not positive', () => {
    expect(errorOf('endpoint = "http://p"\nvariant = "Generic"\ntimeout_seconds = 0')).toBe(
      `${FILE}: [machines.neptune]: key "timeout_seconds": expected a number > 0, got 0`,
    );
  });
});

// The one switch of every response cache (docs/forge/caching.md): `[cache] enabled` in the config file,
// overridden by FORGE_CACHE=on|off (the forge-nocache test project sets it).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';

const dir = mkdtempSync(join(tmpdir(), 'forge-cache-switch-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function configFile(text: string): string {
  const path = join(dir, `forge-${Math.random().toString(36).slice(2)}.toml`);
  writeFileSync(path, text);
  return path;
}

describe('the cache switch', () => {
  it('is on by default', () => {
    expect(loadConfig({ dataDir: dir, env: {} }).cache).toEqual({ enabled: true });
  });

  it('`[cache] enabled = false` turns it off; FORGE_CACHE overrides the file either way', () => {
    const off = configFile('[cache]\nenabled = false\n');
    expect(loadConfig({ dataDir: dir, configFile: off, env: {} }).cache.enabled).toBe(false);
    expect(loadConfig({ dataDir: dir, configFile: off, env: { FORGE_CACHE: 'on' } }).cache.enabled).toBe(
      true,
    );
    expect(loadConfig({ dataDir: dir, env: { FORGE_CACHE: 'off' } }).cache.enabled).toBe(false);
  });

  it('refuses anything else, naming the variable or the key', () => {
    expect(() => loadConfig({ dataDir: dir, env: { FORGE_CACHE: 'false' } })).toThrow(
      'FORGE_CACHE: expected "on" or "off", got "false"',
    );
    const wrong = configFile('[cache]\nenabled = "no"\n');
    expect(() => loadConfig({ dataDir: dir, configFile: wrong, env: {} })).toThrow(
      `config ${wrong}: key "cache.enabled": must be boolean`,
    );
  });
});

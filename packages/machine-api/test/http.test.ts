import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContractClient } from './contract.js';
import { type MachineApiUnderTest, startMachineApi } from './harness.js';

describe('HTTP conventions', () => {
  let api: MachineApiUnderTest;
  let client: ContractClient;
  beforeAll(async () => {
    api = await startMachineApi('[machines.sim]\ntype = "Noop"\n');
    client = await ContractClient.create(api.baseUrl);
  });
  afterAll(() => api.close());

  it('gives every response a fresh UUID x-request-id and ignores the one a client sends', async () => {
    const first = await fetch(`${api.baseUrl}/ping`, { headers: { 'x-request-id': 'mine' } });
    const second = await fetch(`${api.baseUrl}/ping`);
    const a = first.headers.get('x-request-id');
    const b = second.headers.get('x-request-id');
    expect(a).not.toBe('mine');
    expect(a).toMatch(/^[0-9a-f-]{36}$/);
    expect(b).toMatch(/^[0-9a-f-]{36}$/);
    expect(a).not.toBe(b);
  });

  it('answers an unknown route with 404 NotFound in the Error format', async () => {
    const res = await client.request('GET', '/nothing/here');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      request_id: res.headers.get('x-request-id'),
      error_code: 'NotFound',
      message: 'no route for GET /nothing/here',
    });
  });

  it('answers a wrong method on a known path with 405 and Allow', async () => {
    const res = await client.request('DELETE', '/machines/sim');
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
    expect(res.body).toEqual({
      request_id: res.headers.get('x-request-id'),
      error_code: 'MethodNotAllowed',
      message: 'DELETE is not allowed on /machines/sim; allowed: GET, HEAD',
    });
    const get = await client.request('GET', '/print');
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
  });

  it('lets any origin read, answers read preflights, and refuses write preflights from foreign origins', async () => {
    const simple = await fetch(`${api.baseUrl}/machines`, { headers: { origin: 'http://app.example' } });
    expect(simple.headers.get('access-control-allow-origin')).toBe('*');
    expect(simple.headers.get('access-control-expose-headers')).toBe('x-request-id');
    const readPreflight = await fetch(`${api.baseUrl}/machines`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://app.example',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'x-api-key',
      },
    });
    expect(readPreflight.status).toBe(204);
    expect(readPreflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(readPreflight.headers.get('access-control-allow-methods')).toBe('GET, HEAD');
    expect(readPreflight.headers.get('access-control-allow-headers')).toBe('x-api-key');
    expect(readPreflight.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const writePreflight = await fetch(`${api.baseUrl}/print`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://app.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(writePreflight.headers.get('access-control-allow-origin')).toBeNull();
    expect(writePreflight.headers.get('access-control-allow-methods')).toBeNull();
    const error = await fetch(`${api.baseUrl}/machines/nope`, { headers: { origin: 'http://app.example' } });
    expect(error.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('answers HEAD like GET without a body', async () => {
    const res = await fetch(`${api.baseUrl}/ping`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe('18');
    expect(await res.text()).toBe('');
  });
});

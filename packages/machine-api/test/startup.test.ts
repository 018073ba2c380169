/**
 * Start-up does not wait for the machines: the service listens first and connects to its printers in the
 * background, so a printer whose host accepts the connection and then never answers cannot keep `/ping`
 * or the machine list from answering. Every assertion below is made while that host still holds the
 * machines' connections unanswered (their own timeouts are a minute away).
 */

import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getJson, type MachineApiUnderTest, startMachineApi, waitFor } from './harness.js';

/** Accepts TCP connections and never sends a byte until closed; counts what it holds. */
class HangingHost {
  readonly sockets = new Set<Socket>();
  accepted = 0;
  private constructor(private readonly server: Server) {}

  static async start(): Promise<HangingHost> {
    const server = createServer();
    const host = new HangingHost(server);
    server.on('connection', (socket) => {
      host.accepted += 1;
      host.sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => host.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return host;
  }

  get port(): number {
    const address = this.server.address();
    return typeof address === 'object' && address ? address.port : 0;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

interface Listed {
  id: string;
  state: { state: string };
}

describe('start-up with machines that never answer', () => {
  let host: HangingHost;
  let api: MachineApiUnderTest;
  beforeAll(async () => {
    host = await HangingHost.start();
    api = await startMachineApi(
      `
[machines.klipper]
type = "Moonraker"
endpoint = "http://127.0.0.1:${host.port}"
variant = "Generic"
nozzle_diameter = 0.4
filaments = []
timeout_seconds = 60

[machines.x1c]
type = "Bambu"
name = "X1C"
access_code = "12345678"
host = "127.0.0.1"
serial = "00M09A350100100"
mqtt_port = ${host.port}
status_timeout_secs = 60

[machines.sim]
type = "Noop"
`,
      { listenOnly: true },
    );
  });
  afterAll(async () => {
    await api.close();
    await host.close();
  });

  it('answers /ping and GET /machines while both printers still hang', async () => {
    // Both printers have connected to the host, which has answered neither.
    await waitFor(() => host.accepted >= 2, { what: 'both printers to connect to the hanging host' });

    const ping = await fetch(`${api.baseUrl}/ping`);
    expect(ping.status).toBe(200);
    expect(await ping.json()).toEqual({ message: 'pong' });

    const listed = await getJson<Listed[]>(api.baseUrl, '/machines');
    expect(listed.map((machine) => machine.id)).toEqual(['klipper', 'sim', 'x1c']);
    const state = (id: string) => listed.find((machine) => machine.id === id)?.state.state;
    expect(state('sim')).toBe('idle');
    // Not read yet (`unknown`) or not answering within the service's status deadline (`offline`).
    expect(['unknown', 'offline']).toContain(state('klipper'));
    expect(['unknown', 'offline']).toContain(state('x1c'));

    // Still unresolved: every connection the printers opened is held open, unanswered, by the host.
    expect(host.sockets.size).toBe(host.accepted);
  });
});

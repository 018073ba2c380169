/**
 * `GET /machines` on a 100-machine farm: Noop machines, simulated Moonraker and Bambu printers (the test
 * simulators, running in the bench process), and Moonraker printers whose host refuses connections (offline).
 */
import { createServer } from 'node:net';
import type { Scenario } from '../../../bench/scenario.js';
import { BambuPrinterSim, freeUdpPort } from '../test/sim/bambu.js';
import { MoonrakerSim } from '../test/sim/moonraker.js';

type Start = (
  configToml: string,
  options?: { server?: string },
) => Promise<{ baseUrl: string; stop(): Promise<void> }>;

const NOOP = 70;
const MOONRAKER = 20;
const BAMBU = 4;
const UNREACHABLE = 6;

/** A loopback port nothing listens on (connections are refused at once). */
async function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export function farmScenario(startMachineApi: Start): Scenario {
  return {
    name: 'machine-api GET /machines (100: Noop, Moonraker, Bambu, offline)',
    async prepare() {
      const moonrakers = await Promise.all(Array.from({ length: MOONRAKER }, () => MoonrakerSim.start()));
      const bambus = await Promise.all(
        Array.from({ length: BAMBU }, (_, i) =>
          BambuPrinterSim.start({ serial: `00M09A3501001${String(i).padStart(2, '0')}`, name: `X1C ${i}` }),
        ),
      );
      const discoveryPort = await freeUdpPort();
      const dead = await closedPort();
      const tables: string[] = [];
      for (let i = 0; i < NOOP; i++) {
        tables.push(`[machines.noop-${String(i).padStart(2, '0')}]\ntype = "Noop"\nnozzle_diameter = 0.4\n`);
      }
      for (const [i, sim] of moonrakers.entries()) {
        tables.push(
          `[machines.klipper-${String(i).padStart(2, '0')}]\ntype = "Moonraker"\nendpoint = "${sim.endpoint}"\n` +
            'variant = "Generic"\nnozzle_diameter = 0.4\nfilaments = []\n',
        );
      }
      for (const [i, sim] of bambus.entries()) {
        tables.push(
          `[machines.bambu-${i}]\ntype = "Bambu"\nname = "${sim.name}"\naccess_code = "${sim.accessCode}"\n` +
            `discovery_port = ${discoveryPort}\nmqtt_port = ${sim.mqttPort}\nftps_port = ${sim.ftpsPort}\n`,
        );
      }
      for (let i = 0; i < UNREACHABLE; i++) {
        tables.push(
          `[machines.gone-${i}]\ntype = "Moonraker"\nendpoint = "http://127.0.0.1:${dead}"\n` +
            'variant = "Generic"\nnozzle_diameter = 0.4\ntimeout_seconds = 1\nfilaments = []\n',
        );
      }
      const service = await startMachineApi(tables.join('\n'));
      for (const sim of bambus) sim.announceTo(discoveryPort, 1000);
      // Let every backend connect and report once before measuring.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      return {
        baseUrl: service.baseUrl,
        request: { path: '/machines' },
        notes: { machines: NOOP + MOONRAKER + BAMBU + UNREACHABLE, offline: UNREACHABLE },
        teardown: async () => {
          await service.stop();
          await Promise.all([...moonrakers, ...bambus].map((sim) => sim.close()));
        },
      };
    },
  };
}

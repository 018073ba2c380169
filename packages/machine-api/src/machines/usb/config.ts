/**
 * The keys of a `[machines.<id>]` table with `type = "Usb"` (anchor format, plus our optional `port`).
 * Keys shared by every type (`slicer`, `nozzle_diameter`, `filaments`, …) are parsed by config.ts.
 */

import { type Static, Type } from 'typebox';

const UsbId = Type.Integer({ minimum: 0, maximum: 0xffff });

export const UsbMachineConfigSchema = Type.Object({
  variant: Type.Union([Type.Literal('Generic'), Type.Literal('PrusaMk3')], {
    description: 'Printer family: `Generic` (any Marlin printer) or `PrusaMk3`',
  }),
  baud: Type.Optional(
    Type.Integer({ minimum: 1, description: 'Serial speed; defaults to the variant’s (115200)' }),
  ),
  serial: Type.Optional(Type.String({ description: 'USB serial number to match; unset matches any' })),
  vendor_id: Type.Optional({ ...UsbId, description: 'USB vendor id to match; unset matches any' }),
  product_id: Type.Optional({ ...UsbId, description: 'USB product id to match; unset matches any' }),
  port: Type.Optional(
    Type.String({ minLength: 1, description: 'Device path (e.g. /dev/ttyACM0) to use instead of discovery' }),
  ),
});

export type UsbMachineConfig = Static<typeof UsbMachineConfigSchema>;

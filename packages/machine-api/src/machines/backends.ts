import type { MachineBackend } from './backend.js';
import { bambuBackend } from './bambu/backend.js';
import { moonrakerBackend } from './moonraker/backend.js';
import { noopBackend } from './noop/backend.js';
import { usbBackend } from './usb/backend.js';

/** Every backend the TOML `type` can name; each backend folder adds its entry here. */
// biome-ignore lint/suspicious/noExplicitAny: each backend has its own config type, checked by its schema.
export const backends: MachineBackend<any>[] = [noopBackend, bambuBackend, usbBackend, moonrakerBackend];

import { LazyModule } from '../../lazy-module.js';

/** The serial port library (with its native binding), loaded when a USB printer is first looked for. */
export const serialportLibrary = new LazyModule(() => import('./serial-port.js'));

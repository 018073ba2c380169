#!/usr/bin/env -S node --heap-growing-percent=100
// Installed command; the compiled CLI lives in dist/ (run `npm run build` first).
//
// Why the V8 flag, and why here: uploads stream through the service at hundreds of MB/s, and the chunks
// that live until their bytes are on disk reach the old generation. V8 sets the next old-generation limit
// at 1.1-1.5x the live heap, which kept a mark-compact running every 150-500 ms under upload load; letting
// the old generation grow to twice its live size first halved the mark-compact time and cut the CPU per
// upload by a quarter (bench/results/m-busy-2026-11-24d.md), for at most one live heap of memory.
// V8 flags belong on the command line: Node documents changing them after start-up (v8.setFlagsFromString)
// as unpredictable, and NODE_OPTIONS does not accept this one. So the flag sits on this line: the installed
// `machine-api` command, `npm start` and `npm run bench` all run the service through this file as an
// executable (GNU env's -S splits the line). Run with `node bin/machine-api.js`, the line is a comment and
// V8 sizes the heap on its own; an operator may pass any V8 flag that way (`node --heap-growing-percent=50
// bin/machine-api.js serve`).
import '../dist/cli.js';

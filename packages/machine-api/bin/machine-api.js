#!/usr/bin/env node
// Installed command; the compiled CLI lives in dist/ (run `npm run build` first).
import '../dist/cli.js';

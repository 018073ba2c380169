// The endpoint references in docs/ are generated from the API documents the built services serve
// (scripts/endpoint-docs.ts); this fails when a route changed and `npm run docs:endpoints` was not run.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { repoRoot } from '../scripts/docs/services.js';
import { generateEndpointDocs } from '../scripts/endpoint-docs.js';

it('docs/*/endpoints.md match the served API documents (run `npm run docs:endpoints`)', {
  timeout: 120_000,
}, async () => {
  const generated = await generateEndpointDocs();
  expect([...generated.keys()]).toEqual(['docs/machine-api/endpoints.md', 'docs/forge/endpoints.md']);
  for (const [file, text] of generated) {
    expect(
      readFileSync(join(repoRoot, file), 'utf8'),
      `${file} is out of date: run \`npm run docs:endpoints\``,
    ).toBe(text);
  }
});

/**
 * Writes docs/machine-api/endpoints.md and docs/forge/endpoints.md from the API documents the built
 * services serve (machine-api's OpenAPI 3.0.3 at `GET /`, forge's Swagger 2.0 at `GET /swagger.v1.json`),
 * so the endpoint references are never typed by hand. `npm run docs:endpoints` (builds first);
 * `test/endpoint-docs.test.ts` fails when the files are out of date.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createCheckout, repoRoot, type ServiceName, startService } from './docs/services.js';

interface Reference {
  $ref?: string;
  type?: string;
  items?: Reference;
  schema?: Reference;
  content?: Record<string, { schema?: Reference }>;
}

interface Parameter extends Reference {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
}

interface Operation {
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: Parameter[];
  requestBody?: Reference;
  responses?: Record<string, Reference>;
  'x-required-scope'?: string;
}

interface ApiDocument {
  info: { title: string; version: string };
  basePath?: string;
  paths: Record<string, Record<string, Operation>>;
}

export interface EndpointPage {
  service: ServiceName;
  file: string;
  documentPath: string;
  title: string;
}

export const endpointPages: EndpointPage[] = [
  {
    service: 'machineApi',
    file: 'docs/machine-api/endpoints.md',
    documentPath: '/',
    title: 'machine-api: endpoints',
  },
  {
    service: 'forge',
    file: 'docs/forge/endpoints.md',
    documentPath: '/swagger.v1.json',
    title: 'forge: endpoints',
  },
];

const methods = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options'];

/** A schema as a short name: the referenced definition, `X[]` for arrays, else its type. */
function schemaName(schema: Reference | undefined): string {
  if (!schema) return '';
  if (schema.$ref) return schema.$ref.split('/').pop() ?? '';
  if (schema.type === 'array') return `${schemaName(schema.items) || 'any'}[]`;
  if (schema.schema) return schemaName(schema.schema);
  if (schema.content) {
    return Object.entries(schema.content)
      .map(([type, media]) => schemaName(media.schema) || type)
      .join(', ');
  }
  return schema.type ?? '';
}

const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

/** The operation's summary and, for machine-api, the key scope it needs. */
function what(operation: Operation): string {
  const summary = (operation.summary ?? '').replace(/\.$/, '');
  const scope = operation['x-required-scope'];
  return [summary, scope ? `scope \`${scope}\`` : ''].filter(Boolean).join('; ');
}

function parameters(operation: Operation): string {
  const shown = (operation.parameters ?? []).filter((p) => p.in !== 'path' && p.in !== 'header');
  const names = shown.map((p) => (p.in === 'body' ? `body: ${schemaName(p.schema)}` : `\`${p.name}\``));
  const body = operation.requestBody ? [`body: ${schemaName(operation.requestBody)}`] : [];
  return [...names, ...body].join(', ');
}

function answers(operation: Operation): string {
  return Object.entries(operation.responses ?? {})
    .map(([status, response]) => [status, schemaName(response)].filter(Boolean).join(' '))
    .join(', ');
}

/** The Markdown reference of one served API document. */
export function renderEndpoints(page: EndpointPage, document: ApiDocument): string {
  const groups = new Map<string, string[][]>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of methods) {
      const operation = item[method];
      if (!operation) continue;
      const group = operation.tags?.[0] ?? `/${path.split('/')[1] ?? ''}`;
      const row = [
        `\`${method.toUpperCase()} ${path}\``,
        what(operation),
        parameters(operation),
        answers(operation),
      ];
      groups.set(group, [...(groups.get(group) ?? []), row]);
    }
  }
  // forge's document has no summaries: leave out a column that would be empty.
  const withWhat = [...groups.values()].some((rows) => rows.some((row) => row[1] !== ''));
  const header = withWhat
    ? ['operation', 'what', 'parameters', 'answers']
    : ['operation', 'parameters', 'answers'];
  const table = (rows: string[][]) => [
    `| ${header.join(' | ')} |`,
    `|${' --- |'.repeat(header.length)}`,
    ...rows.map((row) => `| ${(withWhat ? row : [row[0] ?? '', ...row.slice(2)]).map(cell).join(' | ')} |`),
  ];
  const base = document.basePath ? ` Paths are relative to \`${document.basePath}\`.` : '';
  const lines = [
    `# ${page.title}`,
    '',
    `Generated from \`GET ${page.documentPath}\` of the built service (${document.info.title} ${document.info.version})`,
    'by `npm run docs:endpoints`; do not edit by hand. `test/endpoint-docs.test.ts` fails when this file is out of',
    `date. Parameters list the query and body parameters (path parameters are in the path).${base}`,
  ];
  for (const [group, rows] of groups) {
    lines.push('', `## ${group}`, '', ...table(rows));
  }
  return `${lines.join('\n')}\n`;
}

/** Starts each service in a temporary checkout and renders the reference from the document it serves. */
export async function generateEndpointDocs(): Promise<Map<string, string>> {
  const checkout = createCheckout();
  const rendered = new Map<string, string>();
  try {
    for (const page of endpointPages) {
      const service = await startService(checkout.root, page.service);
      try {
        const response = await fetch(`http://${service.address}${page.documentPath}`);
        if (!response.ok) throw new Error(`GET ${page.documentPath}: ${response.status}`);
        rendered.set(page.file, renderEndpoints(page, (await response.json()) as ApiDocument));
      } finally {
        await service.stop();
      }
    }
  } finally {
    checkout.remove();
  }
  return rendered;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  for (const [file, text] of await generateEndpointDocs()) {
    writeFileSync(join(repoRoot, file), text);
    process.stdout.write(`wrote ${file}\n`);
  }
}

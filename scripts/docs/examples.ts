/**
 * The runnable examples of the docs: every fenced block whose info string is exactly `sh`, in README.md and
 * docs/**.md. A page's blocks form one shell session, run in order (a later block may use a variable an
 * earlier one set). Blocks meant only to be read (they need a real printer, a browser, another machine)
 * are fenced as `text` instead.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { defaultAddresses, type ServiceName } from './services.js';

export interface ExamplePage {
  /** Path relative to the repository root. */
  path: string;
  /** The page's `sh` blocks, in order. */
  blocks: string[];
  /** The services the blocks address (by their default addresses). */
  services: ServiceName[];
}

const fence = /^```([^\n`]*)\n([\s\S]*?)^```[ \t]*$/gm;

/** The bodies of the fenced blocks of `markdown` whose info string is exactly `sh`. */
export function shBlocks(markdown: string): string[] {
  const blocks: string[] = [];
  for (const match of markdown.matchAll(fence)) {
    if (match[1]?.trim() === 'sh') blocks.push(match[2] ?? '');
  }
  return blocks;
}

/** Markdown files of the docs: README.md, then docs/ depth-first in name order. */
export function docPages(root: string): string[] {
  const pages = [join(root, 'README.md')];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) pages.push(path);
    }
  };
  walk(join(root, 'docs'));
  return pages;
}

/** Every page with at least one runnable block. */
export function examplePages(root: string): ExamplePage[] {
  return docPages(root).flatMap((file) => {
    const blocks = shBlocks(readFileSync(file, 'utf8'));
    if (blocks.length === 0) return [];
    const text = blocks.join('\n');
    const services = (Object.keys(defaultAddresses) as ServiceName[]).filter((name) =>
      text.includes(defaultAddresses[name]),
    );
    return [{ path: relative(root, file), blocks, services }];
  });
}

/**
 * The shell script that runs a page's blocks against services at `addresses`: the default addresses are
 * replaced, the shell stops at the first failing command, and curl fails on an HTTP error status (the
 * examples show successes; an error answer is a broken example).
 */
export function pageScript(page: ExamplePage, addresses: Partial<Record<ServiceName, string>>): string {
  let body = page.blocks.join('\n');
  for (const name of page.services) {
    const address = addresses[name];
    if (!address) throw new Error(`${page.path}: ${name} was not started`);
    body = body.replaceAll(defaultAddresses[name], address);
  }
  return ['set -euo pipefail', 'curl() { command curl --fail-with-body "$@"; }', body].join('\n');
}

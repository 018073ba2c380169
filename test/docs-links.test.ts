// The docs hold together: every relative link of README.md, ARCHITECTURE.md and docs/ points at a file
// that exists (and at a heading that exists, for `#anchor` links), and every page of docs/ is listed in
// the index, docs/README.md.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { docPages } from '../scripts/docs/examples.js';
import { repoRoot } from '../scripts/docs/services.js';

const pages = [...docPages(repoRoot), join(repoRoot, 'ARCHITECTURE.md')];

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((match) => anchor(match[1] ?? '')));
}

/** Relative links outside code: `[text](target)`. */
function linksOf(file: string): string[] {
  const text = readFileSync(file, 'utf8')
    .replace(/^```[\s\S]*?^```/gm, '')
    .replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1] ?? '')
    .filter((target) => !/^[a-z]+:/.test(target));
}

describe('docs links', () => {
  for (const page of pages) {
    it(`${relative(repoRoot, page)}: every relative link resolves`, () => {
      const broken = linksOf(page).filter((link) => {
        const [path = '', hash] = link.split('#');
        const target = path === '' ? page : resolve(dirname(page), path);
        if (!existsSync(target)) return true;
        return hash !== undefined && target.endsWith('.md') && !anchorsOf(target).has(hash);
      });
      expect(broken).toEqual([]);
    });
  }

  it('docs/README.md lists every page of docs/', () => {
    const index = join(repoRoot, 'docs/README.md');
    const listed = new Set(linksOf(index).map((link) => resolve(dirname(index), link.split('#')[0] ?? '')));
    const unlisted = docPages(repoRoot)
      .filter((page) => page.startsWith(join(repoRoot, 'docs')) && page !== index)
      .filter((page) => !listed.has(page))
      .map((page) => relative(repoRoot, page));
    expect(unlisted).toEqual([]);
  });
});

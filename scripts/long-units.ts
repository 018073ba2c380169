/**
 * Lists what the house rules call too long (issue 27, "Units a person can read"):
 * source files over ~400 lines in `packages/* /src`, and functions or components over 100 lines there
 * and in the machine-api dashboard (`packages/machine-api/ui/src`).
 *
 * A long function may stay long when its header says why: a JSDoc comment containing "Long by design"
 * (a function nested in such a function is covered by it). Those are listed apart so a reviewer can still
 * read the reasons.
 *
 * Usage: `npx tsx scripts/long-units.ts [--max-function 100] [--max-file 400]`. Exits 1 when an
 * unexplained long function or a long file is found, so it can gate a review (it is not part of
 * `npm run lint`, because "~400 lines" is a judgement, not a hard cut).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import ts from 'typescript';

const root = join(import.meta.dirname, '..');
const { values } = parseArgs({
  options: {
    'max-function': { type: 'string', default: '100' },
    'max-file': { type: 'string', default: '400' },
  },
});
const maxFunction = Number(values['max-function']);
const maxFile = Number(values['max-file']);

const REASON = /Long by design/;
const trees = ['packages/forge/src', 'packages/machine-api/src', 'packages/machine-api/ui/src'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

interface LongFunction {
  file: string;
  line: number;
  name: string;
  lines: number;
  reason: boolean;
}

/** The name a reader would search for: the declaration's own, or the variable/property it is assigned to. */
function nameOf(node: ts.Node): string {
  const named = node as ts.Node & { name?: ts.Node };
  if (named.name && ts.isIdentifier(named.name)) return named.name.text;
  let parent = node.parent;
  while (
    parent &&
    (ts.isCallExpression(parent) || ts.isParenthesizedExpression(parent) || ts.isAsExpression(parent))
  ) {
    parent = parent.parent;
  }
  if (
    parent &&
    (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) &&
    ts.isIdentifier(parent.name)
  ) {
    return parent.name.text;
  }
  return '(anonymous)';
}

/** The JSDoc of the statement that holds the function (a `const x = () => …` keeps it on the statement). */
function headerOf(node: ts.Node, text: string): string {
  let holder: ts.Node = node;
  while (
    holder.parent &&
    !ts.isSourceFile(holder.parent) &&
    !ts.isClassLike(holder.parent) &&
    !ts.isBlock(holder.parent)
  ) {
    holder = holder.parent;
  }
  const ranges = ts.getLeadingCommentRanges(text, holder.getFullStart()) ?? [];
  const own = ts.getLeadingCommentRanges(text, node.getFullStart()) ?? [];
  return [...ranges, ...own].map((range) => text.slice(range.pos, range.end)).join('\n');
}

function longFunctions(file: string): LongFunction[] {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: LongFunction[] = [];
  // A function inside an explained one is covered by that header (a migration's `up`, a handler's callback).
  const visit = (node: ts.Node, explained: boolean): void => {
    let inner = explained;
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = end - start + 1;
      if (lines > maxFunction) {
        const reason = explained || REASON.test(headerOf(node, text));
        found.push({ file: relative(root, file), line: start + 1, name: nameOf(node), lines, reason });
        inner = reason;
      }
    }
    ts.forEachChild(node, (child) => visit(child, inner));
  };
  visit(source, false);
  return found;
}

const files = trees.flatMap((tree) => sourceFiles(join(root, tree)));
const longFiles = files
  .map((file) => ({ file: relative(root, file), lines: readFileSync(file, 'utf8').split('\n').length }))
  .filter(({ file, lines }) => lines > maxFile && !file.includes('/ui/'))
  .sort((a, b) => b.lines - a.lines);
const functions = files.flatMap(longFunctions).sort((a, b) => b.lines - a.lines);
const unexplained = functions.filter((f) => !f.reason);
const explained = functions.filter((f) => f.reason);

const report = [
  `Files in src/ over ${maxFile} lines: ${longFiles.length}`,
  ...longFiles.map(({ file, lines }) => `  ${lines}\t${file}`),
  '',
  `Functions over ${maxFunction} lines without a reason in their header: ${unexplained.length}`,
  ...unexplained.map((f) => `  ${f.lines}\t${f.file}:${f.line}\t${f.name}`),
  '',
  `Functions over ${maxFunction} lines, long by design: ${explained.length}`,
  ...explained.map((f) => `  ${f.lines}\t${f.file}:${f.line}\t${f.name}`),
];
// One write, and a reader that stops early (`| head`) is not an error.
process.stdout.on('error', () => undefined);
process.stdout.write(`${report.join('\n')}\n`);
process.exitCode = longFiles.length + unexplained.length > 0 ? 1 : 0;

/**
 * The read-only pages' HTML: every interpolated value is escaped unless it is itself built with `html`,
 * and a page is one self-contained document (inline style, no scripts, no external assets).
 */

/** Markup built by `html` (already escaped), as opposed to text that still needs escaping. */
export class Markup {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

type Value = Markup | string | number | null | undefined | readonly Value[];

function render(value: Value): string {
  if (value === null || value === undefined) return '';
  if (value instanceof Markup) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

/** Tagged template: literal parts are trusted, values are escaped (arrays and nested `html` compose). */
export function html(strings: TemplateStringsArray, ...values: Value[]): Markup {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return new Markup(out);
}

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;max-width:860px;margin:2rem auto;padding:0 1rem;color:#222}
header{display:flex;gap:1rem;align-items:center}img.avatar{width:64px;height:64px;border-radius:6px}
h1{margin:.2rem 0;font-size:1.6rem}.muted{color:#666}pre{white-space:pre-wrap;background:#f6f6f6;padding:.8rem}
table{border-collapse:collapse}td,th{padding:.2rem .8rem .2rem 0;text-align:left}code{background:#f1f1f1;padding:0 .2rem}`;

/** A whole page. */
export function page(title: string, body: Markup): string {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title><style>${new Markup(STYLE)}</style></head>
<body>${body}</body></html>
`.text;
}

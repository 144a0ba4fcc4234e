/**
 * `richBody` of an email: markdown with `:::` component blocks, rendered into
 * the branded template. A block opens with a line `:::name` (letters, digits,
 * `-`) and closes with a line `:::`; its content is markdown too, wrapped in
 * `<div class="lua-component lua-component-name">`. Raw HTML in the markdown
 * is escaped, never passed through (html is what the `html` field is for).
 */
import { Marked } from 'marked';

const marked = new Marked({ async: false, gfm: true });
marked.use({ renderer: { html: ({ text }) => escapeHtml(text) } });

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

const OPEN = /^:::([A-Za-z0-9-]+)\s*$/;
const CLOSE = /^:::\s*$/;

/** The markdown rendered, blocks wrapped; an unclosed block runs to the end. */
export function renderRichBody(source: string): string {
  const out: string[] = [];
  let plain: string[] = [];
  let block: { name: string; lines: string[] } | undefined;
  const flush = () => {
    if (plain.length > 0) out.push(marked.parse(plain.join('\n')) as string);
    plain = [];
  };
  for (const line of source.split(/\r?\n/)) {
    const open = block === undefined ? OPEN.exec(line) : null;
    if (open) {
      flush();
      block = { name: open[1]!.toLowerCase(), lines: [] };
    } else if (block !== undefined && CLOSE.test(line)) {
      out.push(`<div class="lua-component lua-component-${block.name}">${marked.parse(block.lines.join('\n')) as string}</div>`);
      block = undefined;
    } else if (block !== undefined) block.lines.push(line);
    else plain.push(line);
  }
  if (block !== undefined) out.push(`<div class="lua-component lua-component-${block.name}">${marked.parse(block.lines.join('\n')) as string}</div>`);
  flush();
  return out.join('\n');
}

/** The branded template around a rendered body. */
export function brandedEmail(bodyHtml: string, brand: { agentName: string }): string {
  const name = escapeHtml(brand.agentName);
  return [
    '<!DOCTYPE html>',
    `<html><head><meta charset="utf-8"><title>${name}</title></head>`,
    '<body style="margin:0;padding:0;background:#f4f5f7;font-family:Helvetica,Arial,sans-serif">',
    '<table role="presentation" width="100%" cellpadding="0" cellspacing="0"><tr><td align="center" style="padding:24px">',
    '<table role="presentation" width="600" cellpadding="0" cellspacing="0" style="background:#ffffff;border-radius:8px">',
    `<tr><td class="lua-brand-header" style="padding:16px 24px;font-weight:bold;border-bottom:1px solid #e5e7eb">${name}</td></tr>`,
    `<tr><td class="lua-brand-body" style="padding:24px">${bodyHtml}</td></tr>`,
    `<tr><td class="lua-brand-footer" style="padding:16px 24px;color:#6b7280;font-size:12px">Sent by ${name}</td></tr>`,
    '</table></td></tr></table></body></html>',
  ].join('\n');
}

/** The plain part of a rich email: the markdown as written, the block markers left out. */
export function richBodyText(source: string): string {
  return source.split(/\r?\n/).filter((l) => !OPEN.test(l) && !CLOSE.test(l)).join('\n');
}

/** A message id in angle brackets, however it was sent. */
export function bracketed(id: string): string {
  const bare = id.trim().replace(/^<+/, '').replace(/>+$/, '');
  return `<${bare}>`;
}

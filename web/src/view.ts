// Rendering shared by the pages: escaping, cards, actions, the audit list.

import { CHECKS, type AuditOutcome } from './audit';

export const esc = (s: unknown) =>
  String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
export const short = (id: string) => (id ?? '').slice(0, 8);

export async function getJson(url: string): Promise<any> {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: ${r.status} ${await r.text()}`);
  return r.json();
}

/** A card's face as drawn: rank and suit symbol (the pack index dropped); red for hearts, diamonds and the red joker. */
export function cardFace(card: string): { text: string; red: boolean } {
  const red = /[dh]/.test(card[1] ?? '') || card.startsWith('RJ');
  const text = card.replace(/#\d+$/, '').replace(/^(.)([cdhs])$/, (_, r, s) => r + { c: '♣', d: '♦', h: '♥', s: '♠' }[s as 'c']);
  return { text, red };
}

/** A card as drawn on the table: rank and suit symbol, red for hearts, diamonds and the red joker. */
export function cardHtml(card: string | null, mine = false): string {
  if (!card) return '<span class="card back">??</span>';
  const { text, red } = cardFace(card);
  return `<span class="card${red ? ' red' : ''}${mine ? ' mine' : ''}" title="${esc(card)}">${esc(text)}</span>`;
}

/** A game action in words: `raise (to 20)`. */
export function describeAction(a: any): string {
  if (!a || typeof a !== 'object') return JSON.stringify(a);
  const extra = Object.entries(a)
    .filter(([k]) => k !== 'type')
    .map(([k, v]) => `${k} ${Array.isArray(v) ? v.join(' ') : v && typeof v === 'object' ? Object.values(v).join(' ') : v}`)
    .join(', ');
  return extra ? `${a.type} (${extra})` : String(a.type);
}

/** The audit's checks in SPEC order, each green, red or grey with its reason. */
export function auditHtml(o: AuditOutcome): string {
  const byName = new Map(o.results.map((r) => [r.check, r]));
  const items = CHECKS.map((c) => {
    const r = byName.get(c);
    const status = r?.status ?? 'not run';
    const cls = r ? r.status : 'skipped';
    return `<li class="${cls}" data-check="${c}" data-status="${esc(status)}"><span class="name">${c}</span><span class="status">${esc(status)}</span><span class="detail">${esc(r?.detail ?? 'not run: an earlier check failed')}</span></li>`;
  }).join('');
  const failed = o.results.find((r) => r.status === 'failed');
  const verdict = failed
    ? `<div class="verdict bad" data-testid="verdict" data-ok="false">FAILED: ${esc(failed.check)}</div>`
    : `<div class="verdict ok" data-testid="verdict" data-ok="true">All checks passed in this browser</div>`;
  return `${verdict}<p class="muted mono">Dealer key ${esc(o.dealer)}</p><ul class="checks">${items}</ul>`;
}

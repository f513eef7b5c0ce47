// DOM building for the table page: elements made with textContent only, so
// nothing a player or the dealer sends is ever parsed as HTML.

import { cardFace } from '../view';

type Child = Node | string | number | null | undefined | false;

/** `el('div.seat.you', {'data-seat': 2}, 'text', child…)`: tag and classes, attributes, children (strings as text). */
export function el<K extends keyof HTMLElementTagNameMap>(spec: K | `${K}.${string}`, attrs: Record<string, string | number | boolean | null | undefined> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const [tag, ...classes] = spec.split('.');
  const e = document.createElement(tag as K);
  if (classes.length) e.className = classes.join(' ');
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') e.className = [e.className, String(v)].filter(Boolean).join(' ');
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) e.append(typeof c === 'number' ? String(c) : c);
  return e;
}

/** A card drawn: rank and suit symbol, red for hearts, diamonds and the red joker; a back when unknown (null or `hidden`). */
export function cardEl(card: string | null, opts: { mine?: boolean; wild?: boolean } = {}): HTMLSpanElement {
  if (!card || card === 'hidden') return el('span.card.back', { title: 'face down' }, '??');
  const f = cardFace(card);
  const e = el('span.card', { title: card }, f.text);
  if (f.red) e.classList.add('red');
  if (opts.mine) e.classList.add('mine');
  if (opts.wild) e.classList.add('wild');
  return e;
}

/** Cards in a row, or a dash when none. */
export function cardsEl(cards: (string | null)[], opts: { mine?: boolean } = {}): HTMLElement {
  const box = el('span.cards');
  if (!cards.length) box.append(el('span.muted', {}, '—'));
  for (const c of cards) box.append(cardEl(c, opts));
  return box;
}

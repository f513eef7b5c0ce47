// The hand as selectable cards, for the games where a player plays cards:
// click cards to select them; "Play" is enabled only when the selection is
// one of the offered plays (`select.ts`), with one button per reading when
// the cards read several ways (Guandan's wild cards); cards that no offered
// play holds together with the selection are dimmed; "Hint" selects the
// offered plays in turn. Every other option (pass, bids, tribute, votes) is
// a button next to them.

import { cardEl, el } from '../dom';
import { optionButton } from './common';
import { extendable, matching, pick, playsOf, type Play, type Same } from './select';
import type { Act, ActionOption, Card, HandView, Turn } from './types';

export interface CardPlayOptions {
  same: Same;
  /** The hand in the game's order. */
  hand: Card[];
  /** The label of a play option (its reading, when the game names one). */
  playLabel: (p: Play) => string;
  /** When the list of plays may be cut short (Guandan lists at most this many), an unlisted selection may be sent for the dealer to judge. */
  maxListed?: number;
  /** Labels of the other options. */
  label: (o: ActionOption) => string;
  /** Cards to mark (Guandan's wild cards). */
  wild?: (card: string) => boolean;
  /** Options drawn as cards to click (tribute and return name a deck position). */
  positional?: (o: ActionOption) => number | null;
}

export function cardPlay(t: Turn, _h: HandView | null, act: Act, opts: CardPlayOptions): HTMLElement {
  const plays = playsOf(t, opts.same);
  const selected = new Set<number>();
  const byPos = new Map(opts.hand.map((c) => [c.position, c.card]));
  const root = el('div.cardplay', { 'data-testid': 'cardplay' });
  const handRow = el('div.hand', { 'data-testid': 'hand' });
  const info = el('div.play-info.muted', { 'data-testid': 'play-info' });
  const buttons = el('div.actions');
  const playBox = el('span.plays');
  const positional = t.actions.filter((o) => opts.positional?.(o) != null);
  const givable = new Map(positional.map((o) => [opts.positional!(o)!, o]));
  const cards = () => [...selected].map((p) => byPos.get(p)!).filter(Boolean) as string[];
  let hint = -1;

  const draw = () => {
    const sel = cards();
    const ok = matching(sel, plays, opts.same);
    const ext = extendable(sel, plays, opts.same);
    for (const b of handRow.querySelectorAll<HTMLButtonElement>('button.pick')) {
      const pos = Number(b.dataset.pos);
      const card = byPos.get(pos)!;
      const on = selected.has(pos);
      b.classList.toggle('selected', on);
      b.setAttribute('aria-pressed', String(on));
      b.classList.toggle('dim', !givable.size && !on && !!plays.length && !ext.has(opts.same(card)));
    }
    playBox.replaceChildren();
    if (givable.size) {
      const o = selected.size === 1 ? givable.get([...selected][0]) : undefined;
      const b = el('button.act.primary', { 'data-testid': 'give', disabled: !o }, o ? `${opts.label(o)} ${cardText(byPos.get(o.action.position))}` : `${opts.label(positional[0])}: pick a card`);
      if (o) b.addEventListener('click', () => act(o.action));
      playBox.append(b);
      info.textContent = `${givable.size} card(s) you may give are marked; pick one.`;
      return;
    }
    if (ok.length) {
      for (const p of ok) {
        const b = el('button.act.primary', { 'data-testid': 'play' }, ok.length > 1 ? `Play as ${opts.playLabel(p)}` : 'Play');
        b.addEventListener('click', () => act({ ...p.action, cards: sel }));
        playBox.append(b);
      }
      info.textContent = `${sel.length} card(s): ${ok.map(opts.playLabel).join(' or ')} — a legal play`;
    } else if (sel.length && opts.maxListed && plays.length >= opts.maxListed) {
      const b = el('button.act', { 'data-testid': 'play-unlisted' }, 'Play (not listed: the dealer judges it)');
      b.addEventListener('click', () => act({ type: 'play', cards: sel }));
      playBox.append(b);
      info.textContent = `${sel.length} card(s): not among the ${plays.length} plays listed (the list is cut short)`;
    } else {
      playBox.append(el('button.act.primary', { 'data-testid': 'play', disabled: true }, 'Play'));
      info.textContent = !plays.length
        ? 'No play beats the table: pass.'
        : sel.length
          ? `${sel.length} card(s): not a legal play${ext.size ? ' yet' : ''}`
          : `${plays.length} legal play(s): select cards, or Hint`;
    }
  };

  for (const c of opts.hand) {
    if (!c.card) continue;
    const b = el('button.pick', { 'data-pos': c.position, 'data-card': c.card, title: c.card, 'aria-pressed': 'false' }, cardEl(c.card, { wild: opts.wild?.(c.card) }));
    if (givable.size && !givable.has(c.position)) b.disabled = true;
    b.addEventListener('click', () => {
      if (givable.size) selected.clear();
      if (selected.has(c.position)) selected.delete(c.position);
      else selected.add(c.position);
      draw();
    });
    handRow.append(b);
  }
  const hintB = el('button', { 'data-testid': 'hint', disabled: !plays.length }, 'Hint');
  hintB.addEventListener('click', () => {
    hint = (hint + 1) % plays.length;
    const ps = pick(opts.hand, plays[hint].action.cards, opts.same);
    selected.clear();
    for (const p of ps ?? []) selected.add(p);
    draw();
  });
  const clear = el('button', { 'data-testid': 'clear' }, 'Clear');
  clear.addEventListener('click', () => {
    selected.clear();
    draw();
  });
  buttons.append(playBox);
  if (!givable.size) buttons.append(hintB, clear);
  for (const o of t.actions) if (o.action?.type !== 'play' && !givable.has(opts.positional?.(o) ?? NaN)) buttons.append(optionButton(o, act, opts.label(o)));
  root.append(handRow, info, buttons);
  draw();
  return root;
}

const cardText = (c: string | null | undefined) => (c ? c.replace(/#\d+$/, '') : '');

// Blackjack: the house's cards, each seat's hands (splits) with totals from
// the public state, bet with presets, then hit, stand, double, split and
// insurance exactly as the `your-turn` offers them.

import { cardsEl, el } from '../dom';
import { allOptions, dealt, multiples } from './common';
import type { ActionOption, GameUi, HandView } from './types';

const LABELS: Record<string, string> = {
  bet: 'Bet', skip: 'Sit out', hit: 'Hit', stand: 'Stand', double: 'Double', split: 'Split',
  insurance: 'Insurance', 'no-insurance': 'No insurance',
};

/** The public state's hands of a seat, when they show every card dealt to it (else null: a deal since). */
function hands(h: HandView, i: number): any[] | null {
  const hs = h.publicState?.seats?.[i]?.hands;
  if (!Array.isArray(hs)) return null;
  const n = hs.reduce((a: number, x: any) => a + (x.cards?.length ?? 0), 0);
  return n === h.seats[i].cards.length && n > 0 ? hs : null;
}

function handLine(x: any, current: boolean): HTMLElement {
  const tags = [x.blackjack && 'blackjack', x.bust && 'bust', x.doubled && 'doubled'].filter(Boolean).join(' ');
  return el('div.bj-hand', { class: current ? 'current' : null }, cardsEl(x.cards ?? []),
    el('span.total', {}, ` ${x.soft && !x.blackjack ? 'soft ' : ''}${x.total ?? ''}`), tags ? el('span.muted', {}, ` ${tags}`) : null,
    x.stake ? el('span.muted', {}, ` · stake ${x.stake}`) : null);
}

export const blackjack: GameUi = {
  seats(h) {
    const ps = h.publicState;
    return h.seats.map((_, i) => {
      const s = ps?.seats?.[i];
      const badges: string[] = [];
      if (s?.status && s.status !== 'playing') badges.push(s.status);
      if (s?.insurance) badges.push(`insured ${s.insurance}`);
      const hs = hands(h, i);
      const current = ps?.to_act === i ? ps?.current_hand : null;
      return {
        bet: s?.bet || undefined,
        badges,
        acting: ps?.to_act === i,
        out: s?.status === 'skipped',
        cards: hs ? el('div', {}, ...hs.map((x: any, k: number) => handLine(x, hs.length > 1 && k === current))) : undefined,
      };
    });
  },
  status(h) {
    const ps = h.publicState;
    if (!ps) return 'betting';
    return [ps.phase, ps.shoe_left != null ? `${ps.shoe_left} cards in the shoe` : ''].filter(Boolean).join(' · ');
  },
  center(h) {
    const ps = h.publicState;
    const house = h.house.map((c) => c.card);
    const total = ps?.house?.cards?.length === house.length && ps.house.cards.every((c: string) => c !== 'hidden') ? ps.house.total : null;
    return [el('div.house', { 'data-testid': 'house' }, el('span.muted', {}, 'House '), cardsEl(house), total != null ? el('b', {}, ` ${total}`) : null)];
  },
  hand: dealt,
  turn: (t, _h, act) =>
    allOptions(t, act, (o: ActionOption) => (o.action?.type === 'bet' ? multiples(o, [1, 2, 5, 10]) : o.range ? [['min', o.range[0]], ['half the bet', o.range[1]]] : []), (o) => LABELS[o.action?.type] ?? String(o.action?.type)),
};

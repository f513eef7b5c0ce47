// Texas Hold'em: button, blinds, bets and pots from the public state; the
// board; bet and raise with presets (min, ½ pot, pot, all in).

import { cardsEl } from '../dom';
import { allOptions, dealt } from './common';
import type { ActionOption, GameUi, HandView } from './types';

function presets(h: HandView | null, o: ActionOption): [string, number][] {
  if (!o.range) return [];
  const [min, max] = o.range;
  const ps = h?.publicState;
  const level = ps?.current_bet ?? 0;
  const clamp = (x: number) => Math.max(min, Math.min(max, Math.round(x)));
  const out: [string, number][] = [['min', min]];
  if (h && h.pot > 0) {
    out.push(['½ pot', clamp(level + h.pot / 2)]);
    out.push(['pot', clamp(level + h.pot + (ps?.to_call ?? 0))]);
  }
  out.push(['all in', max]);
  return out;
}

export const texasHoldem: GameUi = {
  seats(h) {
    const ps = h.publicState;
    return h.seats.map((_, i) => {
      const p = ps?.players?.[i];
      const badges: string[] = [];
      if (ps?.button === i) badges.push('D');
      if (ps?.small_blind_seat === i) badges.push('SB');
      if (ps?.big_blind_seat === i) badges.push('BB');
      if (p?.folded) badges.push('folded');
      if (p?.all_in) badges.push('all-in');
      return { bet: p?.bet, badges, acting: ps?.to_act === i && !ps?.over, out: !!p?.folded };
    });
  },
  status(h) {
    const ps = h.publicState;
    if (!ps) return 'pre-flop: blinds posted';
    const pots = (ps.pots ?? []).map((p: any, i: number) => `${i ? `side pot ${i}` : 'main pot'} ${p.amount}`).join(' · ');
    return [ps.street, pots, ps.current_bet ? `to match ${ps.current_bet}` : ''].filter(Boolean).join(' · ');
  },
  center: (h) => [cardsEl(h.board)],
  hand: dealt,
  turn: (t, h, act) => allOptions(t, act, (o) => presets(h, o)),
};

// Sam Gong (三公): the banker, its bet, who called or folded, the pot, and at
// the showdown each caller's result; the banker's bet with the tier's quick
// bets, then call or fold as offered.

import { el } from '../dom';
import { allOptions, dealt, multiples } from './common';
import type { ActionOption, GameUi, HandView } from './types';

const LABELS: Record<string, string> = { bet: 'Bet as banker', call: 'Call', fold: 'Fold' };

function presets(h: HandView | null, o: ActionOption): [string, number][] {
  const quick = h?.publicState?.quick_bets;
  if (o.range && Array.isArray(quick)) return quick.filter((v: number) => v >= o.range![0] && v <= o.range![1]).map((v: number) => [String(v), v]);
  return multiples(o, [1, 2, 3, 5]);
}

export const samGong: GameUi = {
  seats(h) {
    const ps = h.publicState;
    const entries = ps?.settlement?.entries ?? [];
    return h.seats.map((_, i) => {
      const p = ps?.players?.[i];
      const badges: string[] = [];
      if (ps?.banker === i) badges.push('banker');
      if (p?.status && p.status !== 'banker' && p.status !== 'waiting') badges.push(p.status);
      const e = entries.find((x: any) => x.seat === i);
      if (e && e.result !== 'fold') badges.push(`${e.result}${e.multiplier > 1 ? ` ×${e.multiplier}` : ''}`);
      return { bet: p?.bet || undefined, badges, acting: ps?.to_act === i, out: p?.status === 'folded' };
    });
  },
  status(h) {
    const ps = h.publicState;
    if (!ps) return 'the banker looks at its cards and bets';
    return [ps.phase, ps.banker_bet ? `banker bets ${ps.banker_bet}` : '', ps.tier ? `${ps.tier} table ${ps.min_bet}–${ps.max_bet}` : ''].filter(Boolean).join(' · ');
  },
  center: (h) => (h.publicState?.banker != null ? [el('div.muted', {}, `Banker: seat ${h.publicState.banker}${h.publicState.banker === h.seat ? ' (you)' : ''}`)] : []),
  hand: dealt,
  turn: (t, h, act) => allOptions(t, act, (o) => presets(h, o), (o) => LABELS[o.action?.type] ?? String(o.action?.type)),
};

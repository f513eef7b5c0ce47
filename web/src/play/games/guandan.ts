// Guandan (掼蛋): the hand as selectable cards (the level's wild hearts
// marked), "Play" enabled for an offered play — one button per reading when
// wild cards make the selection read several ways — with an unlisted play
// sendable when the dealer's list is cut short; tribute and return by
// clicking the card (the action names its deck position); surrender and the
// vote as offered. Levels, the play to beat and cards left from the public
// state.

import { cardsEl, el } from '../dom';
import { describeAction } from '../../view';
import { cardPlay } from './cardplay';
import { faceOf, heldCards } from './select';
import type { Card, GameUi, HandView } from './types';

/** Guandan lists at most this many plays in a `your-turn` (docs/games/guandan.md, MAX_LISTED_PLAYS). */
export const MAX_LISTED_PLAYS = 120;
const RANKS = '23456789TJQKA';
const rankName = (r: number) => (r >= 2 && r <= 14 ? (RANKS[r - 2] === 'T' ? '10' : RANKS[r - 2]) : r === 15 ? 'small joker' : r === 16 ? 'big joker' : String(r));

/** The deal's level: the public state's, else the table memory's (the level of `level_team`; 2 at a new table). */
export function levelOf(h: HandView): number {
  const ps = h.publicState;
  if (typeof ps?.level === 'number') return ps.level;
  const m = h.memory;
  return m?.levels?.[m.level_team ?? 0] ?? 2;
}

/** The level's heart cards are wild (`wild_count` 1: only pack 0's). */
export function isWild(h: HandView, card: string): boolean {
  const n = h.settings?.wild_count ?? 2;
  return n > 0 && faceOf(card) === `${RANKS[levelOf(h) - 2]}h` && (n === 2 || !/#\d+$/.test(card));
}

function order(h: HandView) {
  const level = levelOf(h);
  const v = (c: string) => (c.startsWith('RJ') ? 17 : c.startsWith('BJ') ? 16 : RANKS.indexOf(c[0]) + 2 === level ? 15 : RANKS.indexOf(c[0]) + 2);
  return (a: string, b: string) => v(a) - v(b) || 'cdhs'.indexOf(a[1]) - 'cdhs'.indexOf(b[1]) || a.localeCompare(b);
}

const held = (h: HandView): Card[] => {
  const o = order(h);
  return heldCards(h).sort((a, b) => o(a.card ?? '', b.card ?? ''));
};

const reading = (r: any) => (r ? `${String(r.kind).replace(/-/g, ' ')} of ${rankName(r.rank)}` : 'a play');

const label = (o: { action: any }) => {
  const a = o.action;
  switch (a?.type) {
    case 'pass': return 'Pass';
    case 'surrender': return 'Propose surrender';
    case 'vote': return a.accept ? 'Agree to surrender' : 'Refuse surrender';
    case 'tribute': return 'Give as tribute';
    case 'return': return 'Give back';
    default: return describeAction(a);
  }
};

export const guandan: GameUi = {
  seats(h) {
    const ps = h.publicState;
    const finished: number[] = ps?.finished ?? [];
    return h.seats.map((_, i) => {
      const badges = [`team ${i % 2}`];
      const k = finished.indexOf(i);
      if (k >= 0) badges.push(['1st out', '2nd out', '3rd out', '4th'][k] ?? 'out');
      const left = ps?.cards_left?.[i] ?? h.seats[i].cards.length;
      return {
        badges,
        acting: ps?.to_act === i,
        out: k >= 0,
        cards: i === h.seat ? undefined : el('span.count', {}, el('span.card.back', {}, '??'), ` × ${left}`),
      };
    });
  },
  status(h) {
    const ps = h.publicState;
    const levels = ps?.levels ?? h.memory?.levels ?? [2, 2];
    return [ps?.phase ?? 'dealt', `level ${rankName(levelOf(h))}`, `teams at ${rankName(levels[0])} / ${rankName(levels[1])}`, ps?.vote ? 'surrender vote' : ''].filter(Boolean).join(' · ');
  },
  center(h) {
    const ps = h.publicState;
    const out: Node[] = [];
    if (ps?.lead?.cards) {
      const who = ps.lead.seat === h.seat ? 'you' : `seat ${ps.lead.seat}`;
      out.push(el('div.lead', { 'data-testid': 'lead' }, el('span.muted', {}, `To beat (${who}, ${reading(ps.lead.reading)}) `), cardsEl(ps.lead.cards)));
    } else if (ps?.to_act != null && ps?.phase === 'playing') out.push(el('div.muted', {}, `Seat ${ps.to_act}${ps.to_act === h.seat ? ' (you)' : ''} leads`));
    if (ps?.tribute) out.push(el('div.muted', {}, ps.tribute.resisted ? 'Tribute resisted (two big jokers)' : 'Tribute this deal'));
    return out;
  },
  hand: held,
  turn(t, h, act) {
    return cardPlay(t, h, act, {
      same: faceOf,
      hand: h ? held(h) : [],
      playLabel: (p) => reading(p.action.reading),
      maxListed: MAX_LISTED_PLAYS,
      label,
      wild: h ? (c) => isWild(h, c) : undefined,
      positional: (o) => (o.action?.type === 'tribute' || o.action?.type === 'return' ? o.action.position : null),
    });
  },
};

// Dou Di Zhu (斗地主): bidding as buttons, then the hand as selectable cards
// with the offered plays (every legal play, one per choice of ranks) deciding
// what "Play" accepts; the landlord, the kitty, the play to beat, cards left
// and the multiplier from the public state.

import { cardsEl, el } from '../dom';
import { describeAction } from '../../view';
import { cardPlay } from './cardplay';
import { allOptions } from './common';
import { heldCards, rankOf } from './select';
import type { Card, GameUi, HandView } from './types';

const ORDER = '3456789TJQKA2';
const SUITS = 'cdhs';
const rankValue = (c: string) => (c.startsWith('BJ') ? 13 : c.startsWith('RJ') ? 14 : ORDER.indexOf(c[0]));
/** The hand's order (the game's: by rank, then clubs < diamonds < hearts < spades). */
export const ddzOrder = (a: string, b: string) => rankValue(a) - rankValue(b) || SUITS.indexOf(a[1]) - SUITS.indexOf(b[1]);

const PATTERNS: Record<string, string> = {
  single: 'single', pair: 'pair', triple: 'triple', 'triple-single': 'triple + single', 'triple-pair': 'triple + pair',
  straight: 'straight', 'pair-straight': 'consecutive pairs', airplane: 'airplane', 'airplane-singles': 'airplane + singles',
  'airplane-pairs': 'airplane + pairs', 'four-two-singles': 'four + two singles', 'four-two-pairs': 'four + two pairs', bomb: 'bomb', rocket: 'rocket',
};

/** The kitty is the landlord's once the public state names both (the game's `public_cards_held`). */
function kittyHeld(h: HandView): string[] {
  const ps = h.publicState;
  return ps && Array.isArray(ps.kitty) && ps.landlord === h.seat ? ps.kitty : [];
}

const held = (h: HandView): Card[] => heldCards(h, kittyHeld(h)).sort((a, b) => ddzOrder(a.card ?? '', b.card ?? ''));

const label = (o: { action: any }) => {
  const a = o.action;
  if (a?.type === 'bid') return `Bid ${a.points}`;
  if (a?.type === 'pass') return 'Pass';
  return describeAction(a);
};

export const douDiZhu: GameUi = {
  seats(h) {
    const ps = h.publicState;
    return h.seats.map((_, i) => {
      const badges: string[] = [];
      if (ps?.landlord === i) badges.push('landlord');
      else if (ps?.landlord != null) badges.push('farmer');
      const bid = ps?.phase === 'bidding' ? ps?.bids?.find((b: any) => b.seat === i) : null;
      if (bid) badges.push(bid.points ? `bid ${bid.points}` : 'no bid');
      const left = ps?.cards_left?.[i] ?? h.seats[i].cards.length;
      return {
        badges,
        acting: ps?.to_act === i,
        out: false,
        cards: i === h.seat ? undefined : el('span.count', {}, el('span.card.back', {}, '??'), ` × ${left}`),
      };
    });
  },
  status(h) {
    const ps = h.publicState;
    if (!ps) return 'bidding';
    return [ps.phase, ps.bid ? `bid ${ps.bid}` : '', ps.multiplier ? `multiplier ×${ps.multiplier}` : '', ps.bombs ? `${ps.bombs} bomb(s)` : ''].filter(Boolean).join(' · ');
  },
  center(h) {
    const ps = h.publicState;
    const out: Node[] = [];
    if (Array.isArray(ps?.kitty)) out.push(el('div.kitty', {}, el('span.muted', {}, 'Kitty '), cardsEl(ps.kitty)));
    if (ps?.lead?.cards) {
      const who = ps.lead.seat === h.seat ? 'you' : `seat ${ps.lead.seat}`;
      out.push(el('div.lead', { 'data-testid': 'lead' }, el('span.muted', {}, `To beat (${who}, ${PATTERNS[ps.lead.combo?.pattern] ?? ps.lead.combo?.pattern ?? ''}) `), cardsEl(ps.lead.cards)));
    } else if (ps?.phase === 'playing') out.push(el('div.muted', {}, `Seat ${ps.to_act}${ps.to_act === h.seat ? ' (you)' : ''} leads`));
    return out;
  },
  hand: held,
  turn(t, h, act) {
    const hand = h ? held(h) : [];
    if (t.actions.some((o) => o.action?.type === 'bid')) {
      return el('div.cardplay', {}, el('div.hand', { 'data-testid': 'hand' }, cardsEl(hand.map((c) => c.card), { mine: true })), allOptions(t, act, undefined, label));
    }
    return cardPlay(t, h, act, {
      same: rankOf,
      hand,
      playLabel: (p) => `${p.action.cards.length} card${p.action.cards.length > 1 ? 's' : ''}`,
      label,
    });
  },
};

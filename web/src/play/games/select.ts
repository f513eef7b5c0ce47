// Card selection for the games where a player plays cards (Dou Di Zhu,
// Guandan). No rules here: a selection is legal when it is one of the plays
// the dealer offered in `your-turn` (docs/games: Dou Di Zhu offers every
// legal play, one per choice of ranks — suits never matter; Guandan every
// play up to MAX_LISTED_PLAYS, named by face). Pure functions (no DOM), so
// the Node tests use them as the page does.

import type { HandView, Turn } from '../client';
import type { Card } from './types';

/** What makes two cards the same for a game's plays: the rank (Dou Di Zhu), the face (Guandan). */
export type Same = (card: string) => string;

/** `Qh` → `Q`, `BJ` → `BJ`, `7d#1` → `7`. */
export const rankOf: Same = (c) => (c.startsWith('BJ') || c.startsWith('RJ') ? c.slice(0, 2) : c[0]);
/** `7d#1` → `7d`: the two packs' copies of a face are the same card for the rules. */
export const faceOf: Same = (c) => c.replace(/#\d+$/, '');

export const keyOf = (cards: string[], same: Same) => cards.map(same).sort().join(' ');

export interface Play {
  /** Index in the turn's options. */
  index: number;
  action: any;
  key: string;
}

/** The turn's `play` options, each with its cards' key. */
export function playsOf(t: Turn | null, same: Same): Play[] {
  if (!t) return [];
  return t.actions
    .map((o, index) => ({ o, index }))
    .filter(({ o }) => o.action?.type === 'play' && Array.isArray(o.action.cards) && o.affordable)
    .map(({ o, index }) => ({ index, action: o.action, key: keyOf(o.action.cards, same) }));
}

/** The offered plays made of exactly these cards (several when the cards read several ways). */
export function matching(selected: string[], plays: Play[], same: Same): Play[] {
  if (!selected.length) return [];
  const k = keyOf(selected, same);
  return plays.filter((p) => p.key === k);
}

/** The classes (`same`) of cards that some offered play holds together with the whole selection. */
export function extendable(selected: string[], plays: Play[], same: Same): Set<string> {
  const need = count(selected.map(same));
  const out = new Set<string>();
  for (const p of plays) {
    const have = count(p.action.cards.map(same));
    if ([...need].every(([k, n]) => (have.get(k) ?? 0) >= n)) for (const k of have.keys()) out.add(k);
  }
  return out;
}

function count(xs: string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const x of xs) m.set(x, (m.get(x) ?? 0) + 1);
  return m;
}

/** The positions in `hand` that make up `cards` (same class; the very card id first). */
export function pick(hand: Card[], cards: string[], same: Same): number[] | null {
  const free = hand.filter((c) => c.card !== null);
  const out: number[] = [];
  for (const want of cards) {
    const k = free.findIndex((c) => c.card === want) >= 0 ? free.findIndex((c) => c.card === want) : free.findIndex((c) => same(c.card!) === same(want));
    if (k < 0) return null;
    out.push(free[k].position);
    free.splice(k, 1);
  }
  return out;
}

/**
 * This player's cards now: dealt (and transferred, as the client applies
 * `card-transfer`), plus the cards the game's public state gives it (a Dou
 * Di Zhu landlord's kitty; `publicHeld`), minus every card its own actions
 * played (`cards` of a play: the games' `cards_played`).
 */
export function heldCards(h: HandView, publicHeld: string[] = []): Card[] {
  if (h.seat === null) return [];
  const held: Card[] = [...(h.seats[h.seat]?.cards ?? []), ...publicHeld.map((card, i) => ({ position: -1 - i, card }))];
  for (const a of h.actions) {
    if (a.seat !== h.seat || a.action?.type !== 'play' || !Array.isArray(a.action.cards)) continue;
    for (const c of a.action.cards) {
      const k = held.findIndex((x) => x.card === c);
      if (k >= 0) held.splice(k, 1);
    }
  }
  return held;
}

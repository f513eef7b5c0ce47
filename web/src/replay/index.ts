// The rules replay of the browser's audit (SPEC.md §11.2 check 13, §13.1,
// §14): each game's rules written in TypeScript from SPEC.md and the game
// pages it makes normative, dispatched by the game's registry name. A
// replay takes a §13.1 vector (the hand's inputs) and gives the events,
// result, details and table memory the rules produce — JSON-equal to the
// Rust replay (`games::runner`), which the corpus test checks hand by hand.

import { Vector, Outcome, Trace, Refused } from './common';
import { replay as texasHoldem, normalizeSettings as holdemSettings } from './texas_holdem';
import { replay as blackjack, normalizeSettings as blackjackSettings } from './blackjack';
import { replay as samGong, normalizeSettings as samGongSettings } from './sam_gong';
import { replay as douDiZhu } from './dou_di_zhu';
import { replay as guandan } from './guandan';

export { Refused, unshuffled, vectorDeck, seatId } from './common';
export type { Vector, Outcome, Trace } from './common';

/** A game's replay; `trace`, when given and supported, records each action's place and auto action. */
type Replay = (v: Vector, trace?: Trace) => Outcome;

/** The replay of each game, by registry name. */
export const GAMES: Record<string, Replay | undefined> = {
  'texas-holdem': texasHoldem,
  blackjack,
  'sam-gong': samGong,
  'dou-di-zhu': douDiZhu,
  guandan,
};

/** The settings normalisation of the games whose replay records a trace. */
const SETTINGS: Record<string, ((s: unknown) => unknown) | undefined> = {
  'texas-holdem': holdemSettings,
  blackjack: blackjackSettings,
  'sam-gong': samGongSettings,
};

/** Whether the browser has the rules of `game`. */
export function hasRules(game: string): boolean {
  return typeof GAMES[game] === 'function';
}

/** The game's normalised form of `settings`, or undefined when this replay does not say. */
export function normalizeSettings(game: string, settings: unknown): unknown {
  return SETTINGS[game]?.(settings);
}

/** Replays a vector with its game's rules; throws `Refused` (or the game's error) when the rules refuse it. */
export function replay(v: Vector, trace?: Trace): Outcome {
  const r = GAMES[v.game];
  if (!r) throw new Refused(`no rules for game ${JSON.stringify(v.game)} in the browser`);
  return r(v, trace);
}

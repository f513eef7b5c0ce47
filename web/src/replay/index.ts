// The rules replay of the browser's audit (SPEC.md §11.2 check 13, §13.1,
// §14): each game's rules written in TypeScript from SPEC.md and the game
// pages it makes normative, dispatched by the game's registry name. A
// replay takes a §13.1 vector (the hand's inputs) and gives the events,
// result, details and table memory the rules produce — JSON-equal to the
// Rust replay (`games::runner`), which the corpus test checks hand by hand.

import { Vector, Outcome, Trace, Refused, unshuffled } from './common';
import { replay as texasHoldem, normalizeSettings as holdemSettings, normalizeMemory as holdemMemory } from './texas_holdem';
import { replay as blackjack, normalizeSettings as blackjackSettings, normalizeMemory as blackjackMemory } from './blackjack';
import { replay as samGong, normalizeSettings as samGongSettings, normalizeMemory as samGongMemory, scriptedDeck as samGongScript } from './sam_gong';
import { replay as douDiZhu, normalizeSettings as ddzSettings, normalizeMemory as ddzMemory } from './dou_di_zhu';
import { replay as guandan, normalizeSettings as guandanSettings, normalizeMemory as guandanMemory } from './guandan';

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

/** Each game's settings in the form its rules write them (defaults filled in), by registry name. */
const SETTINGS: Record<string, ((s: unknown) => unknown) | undefined> = {
  'texas-holdem': holdemSettings,
  blackjack: blackjackSettings,
  'sam-gong': samGongSettings,
  'dou-di-zhu': ddzSettings,
  guandan: (s) => guandanSettings(s).settings,
};

/** Each game's table memory in the form its rules write it (`memory_after`), by registry name. */
const MEMORY: Record<string, ((m: unknown) => unknown) | undefined> = {
  'texas-holdem': holdemMemory,
  blackjack: blackjackMemory,
  'sam-gong': samGongMemory,
  'dou-di-zhu': ddzMemory,
  guandan: guandanMemory,
};

/** Whether the browser has the rules of `game`. */
export function hasRules(game: string): boolean {
  return typeof GAMES[game] === 'function';
}

/** The game's normalised form of `settings` (throws `Refused` when the rules refuse them), or undefined for a game without rules here. */
export function normalizeSettings(game: string, settings: unknown): unknown {
  return SETTINGS[game]?.(settings);
}

/** The game's form of table `memory` (`null` stays `null`; throws `Refused` when the rules refuse it), or undefined for a game without rules here. */
export function normalizeMemory(game: string, memory: unknown): unknown {
  return MEMORY[game]?.(memory);
}

/** Each game's canonical (unshuffled) deck under its normalised settings (SPEC §2: packs, jokers). */
const DECKS: Record<string, ((s: any) => number[]) | undefined> = {
  'texas-holdem': () => unshuffled(1, false),
  blackjack: (s) => unshuffled(s.decks, false),
  'sam-gong': () => unshuffled(1, false),
  'dou-di-zhu': () => unshuffled(1, true),
  guandan: () => unshuffled(2, true),
};

/** The game's canonical deck for `settings` (throws `Refused` when the rules refuse them), or undefined for a game without rules here. */
export function canonicalDeck(game: string, settings: unknown): number[] | undefined {
  const deck = DECKS[game];
  return deck ? deck(normalizeSettings(game, settings)) : undefined;
}

/** Replays a vector with its game's rules; throws `Refused` (or the game's error) when the rules refuse it. */
export function replay(v: Vector, trace?: Trace): Outcome {
  const r = GAMES[v.game];
  if (!r) throw new Refused(`no rules for game ${JSON.stringify(v.game)} in the browser`);
  return r(v, trace);
}

/** Games that script some hands' decks (Sam Gong's tutorial), by registry name. */
const SCRIPTS: Record<string, ((settings: unknown, handNumber: number) => number[] | null) | undefined> = {
  'sam-gong': samGongScript,
};

/** The deck order the game scripts for hand `handNumber` under `settings`, or `null` when it shuffles (SPEC §11.2 check 7). */
export function scriptedDeck(game: string, settings: unknown, handNumber: number): number[] | null {
  return SCRIPTS[game]?.(settings, handNumber) ?? null;
}

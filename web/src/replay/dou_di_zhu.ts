// Dou Di Zhu (`dou-di-zhu`, rules version 2) replayed from SPEC.md §13.1,
// §14, §14.2 and docs/games/dou-di-zhu.md: the deal, the bidding, every
// play's pattern and whether it beats the table (both rule sets), bombs,
// spring and anti-spring, the settlement, the typed details and the table
// memory. It gives the same output as the Rust replay for the same input and
// refuses what the Rust replay refuses, with an error naming the step.

import { parseCard, cardText } from '../audit';

import { Refused, type Outcome, type Trace, type Vector } from './common';

export type { Outcome, Trace, Vector };

// Refusals are worded as the Rust `GameError`.
const illegal = (m: string) => new Refused(`illegal action: ${m}`);
const malformed = (m: string) => new Refused(`malformed action: ${m}`);
const badDeal = (m: string) => new Refused(`unexpected cards from the engine: ${m}`);
const badSettings = (m: string) => new Refused(`bad settings: ${m}`);

const BASE_LIMIT = 2 ** 40;
const ACE = 14;
const TWO = 15;
const BLACK_JOKER = 16;
const RED_JOKER = 17;

/** Rank on the Dou Di Zhu scale: 3..14 for 3..A, 15 the 2, 16/17 the jokers. */
function value(id: number): number {
  const face = id % 54;
  if (face === 52) return BLACK_JOKER;
  if (face === 53) return RED_JOKER;
  const rank = Math.floor(face / 4) + 2;
  return rank === 2 ? TWO : rank;
}

type Rules = 'standard' | 'permissive';
type Pattern =
  | 'single' | 'pair' | 'triple' | 'triple-single' | 'triple-pair' | 'straight' | 'pair-straight'
  | 'airplane' | 'airplane-singles' | 'airplane-pairs' | 'four-two-singles' | 'four-two-pairs'
  | 'bomb' | 'rocket';
type Combo = { pattern: Pattern; main: number; len: number };

/** A leader's reading preference, first wins (docs/games/dou-di-zhu.md "Patterns"). */
const PREFERENCE: Pattern[] = [
  'rocket', 'bomb', 'straight', 'pair-straight', 'airplane', 'airplane-pairs', 'airplane-singles',
  'four-two-pairs', 'four-two-singles', 'triple-pair', 'triple-single', 'triple', 'pair', 'single',
];

const isBomb = (c: Combo) => c.pattern === 'bomb' || c.pattern === 'rocket';

function counts(cards: number[]): number[] {
  const c = new Array(18).fill(0);
  for (const id of cards) c[value(id)]++;
  return c;
}

/** Every card of the cards' ranks exactly `each` times, consecutive, within 3..A, ≥ minLinks links. */
function exactChain(c: number[], each: number, minLinks: number): [number, number] | null {
  const present: number[] = [];
  for (let v = 3; v < 18; v++) if (c[v] > 0) present.push(v);
  if (present.length === 0) return null;
  const lo = present[0];
  const hi = present[present.length - 1];
  const links = present.length;
  const ok = present.every((v) => c[v] === each) && hi - lo + 1 === links && hi <= ACE && links >= minLinks;
  return ok ? [hi, links] : null;
}

/** Tops of every run of k consecutive ranks within 3..A each holding ≥ min cards. */
function runs(c: number[], min: number, k: number): number[] {
  const out: number[] = [];
  for (let start = 3; start <= ACE; start++) {
    const top = start + k - 1;
    if (top > ACE) break;
    let all = true;
    for (let v = start; v <= top; v++) if (c[v] < min) all = false;
    if (all) out.push(top);
  }
  return out;
}

/** Standard single attachments beside a main part lo..hi: no bomb, no trio next to it (the 2 excepted), no rocket. */
function standardSingles(rest: number[], lo: number, hi: number): boolean {
  const adjacent = (v: number) => (v + 1 === lo || v === hi + 1) && v !== TWO;
  if (rest[BLACK_JOKER] > 0 && rest[RED_JOKER] > 0) return false;
  for (let v = 3; v < 18; v++) if (rest[v] >= 4 || (rest[v] === 3 && adjacent(v))) return false;
  return true;
}

/** `rest` is exactly k pairs of different ranks (standard) or all even counts (permissive). */
function pairsOk(rest: number[], k: number, rules: Rules): boolean {
  if (rules === 'standard') {
    return rest.every((r) => r === 0 || r === 2) && rest.filter((r) => r === 2).length === k;
  }
  return rest.every((r) => r % 2 === 0);
}

/** Every reading of these (distinct) cards under `rules`. */
export function interpretations(cards: number[], rules: Rules): Combo[] {
  const standard = rules === 'standard';
  const n = cards.length;
  const out: Combo[] = [];
  if (n === 0) return out;
  const c = counts(cards);
  const distinct: number[] = [];
  for (let v = 3; v < 18; v++) if (c[v] > 0) distinct.push(v);
  if (n === 2 && c[BLACK_JOKER] === 1 && c[RED_JOKER] === 1) out.push({ pattern: 'rocket', main: RED_JOKER, len: 1 });
  if (distinct.length === 1) {
    const v = distinct[0];
    const p: Pattern | null = n === 1 ? 'single' : n === 2 ? 'pair' : n === 3 ? 'triple' : n === 4 ? 'bomb' : null;
    if (p) out.push({ pattern: p, main: v, len: 1 });
  }
  for (const v of distinct) {
    const cv = c[v];
    if (n === 4 && cv === 3) out.push({ pattern: 'triple-single', main: v, len: 1 });
    else if (n === 5 && cv === 3 && distinct.length === 2) out.push({ pattern: 'triple-pair', main: v, len: 1 });
    else if ((n === 6 || n === 8) && cv === 4) {
      const rest = c.slice();
      rest[v] = 0;
      const ok = n === 6 ? !standard || standardSingles(rest, v, v) : pairsOk(rest, 2, rules);
      if (ok) out.push({ pattern: n === 6 ? 'four-two-singles' : 'four-two-pairs', main: v, len: 1 });
    }
  }
  if (n >= 5) {
    const s = exactChain(c, 1, 5);
    if (s) out.push({ pattern: 'straight', main: s[0], len: s[1] });
  }
  if (n >= 6) {
    const p = exactChain(c, 2, 3);
    if (p) out.push({ pattern: 'pair-straight', main: p[0], len: p[1] });
    const a = exactChain(c, 3, 2);
    if (a) out.push({ pattern: 'airplane', main: a[0], len: a[1] });
  }
  for (const [perLink, pattern] of [[4, 'airplane-singles'], [5, 'airplane-pairs']] as [number, Pattern][]) {
    if (n % perLink !== 0 || n < 2 * perLink) continue;
    const k = n / perLink;
    for (const top of runs(c, 3, k)) {
      const lo = top + 1 - k;
      const hi = top;
      const rest = c.slice();
      for (let v = lo; v <= hi; v++) rest[v] -= 3;
      let ownRankWing = false;
      for (let v = lo; v <= hi; v++) if (rest[v] > 0) ownRankWing = true;
      const ok =
        pattern === 'airplane-singles'
          ? !standard || (!ownRankWing && standardSingles(rest, lo, hi))
          : pairsOk(rest, k, rules);
      if (ok) out.push({ pattern, main: top, len: k });
    }
  }
  return out;
}

/** The preferred of several readings: PREFERENCE order, then the highest main rank (first among equals). */
function preferred(all: Combo[]): Combo | null {
  let best: Combo | null = null;
  for (const c of all) {
    if (
      !best ||
      PREFERENCE.indexOf(c.pattern) < PREFERENCE.indexOf(best.pattern) ||
      (c.pattern === best.pattern && c.main > best.main)
    ) {
      best = c;
    }
  }
  return best;
}

/** Whether `a` beats `b` (docs/games/dou-di-zhu.md "Comparison"). */
export function beats(a: Combo, b: Combo): boolean {
  if (b.pattern === 'rocket') return false;
  if (a.pattern === 'rocket') return true;
  if (a.pattern === 'bomb' && b.pattern === 'bomb') return a.main > b.main;
  if (a.pattern === 'bomb') return true;
  if (b.pattern === 'bomb') return false;
  return a.pattern === b.pattern && a.len === b.len && a.main > b.main;
}

const RANK_NAMES: Record<number, string> = { 11: 'J', 12: 'Q', 13: 'K', 14: 'A', 15: '2', 16: 'black joker', 17: 'red joker' };
const rankName = (v: number) => RANK_NAMES[v] ?? String(v);

/** A combination by name, as in the refusal `does not beat the pair of 5 on the table`. */
function describe(c: Combo): string {
  const main = rankName(c.main);
  const low = rankName(c.main + 1 - c.len);
  switch (c.pattern) {
    case 'single': return `single ${main}`;
    case 'pair': return `pair of ${main}`;
    case 'triple': return `triple of ${main}`;
    case 'triple-single': return `triple of ${main} with a single`;
    case 'triple-pair': return `triple of ${main} with a pair`;
    case 'straight': return `straight ${low} to ${main}`;
    case 'pair-straight': return `consecutive pairs ${low} to ${main}`;
    case 'airplane': return `airplane ${low} to ${main}`;
    case 'airplane-singles': return `airplane with single wings ${low} to ${main}`;
    case 'airplane-pairs': return `airplane with pair wings ${low} to ${main}`;
    case 'four-two-singles': return `four of ${main} with two singles`;
    case 'four-two-pairs': return `four of ${main} with two pairs`;
    case 'bomb': return `bomb of ${main}`;
    case 'rocket': return 'rocket';
  }
}

// ---------- inputs

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isUint = (v: unknown, max: number) => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= max;

type Settings = { base: number; max_multiplier: number | null; rules: Rules };

/** Normalised settings (defaults filled in) or a refusal. */
export function normalizeSettings(s: unknown): Settings {
  const out: Settings = { base: 1, max_multiplier: null, rules: 'standard' };
  if (s === null || s === undefined) return out;
  if (!isObject(s)) throw badSettings('settings are not an object');
  for (const [k, v] of Object.entries(s)) {
    if (k === 'base') {
      if (!isUint(v, Number.MAX_SAFE_INTEGER)) throw badSettings(`base: ${JSON.stringify(v)}`);
      out.base = v as number;
    } else if (k === 'max_multiplier') {
      if (v !== null && !isUint(v, Number.MAX_VALUE)) throw badSettings(`max_multiplier: ${JSON.stringify(v)}`);
      out.max_multiplier = v as number | null;
    } else if (k === 'rules') {
      if (v !== 'standard' && v !== 'permissive') throw badSettings(`rules: ${JSON.stringify(v)}`);
      out.rules = v;
    } else {
      throw badSettings(`unknown field \`${k}\``);
    }
  }
  if (out.base === 0 || out.base > BASE_LIMIT) throw badSettings('base must be 1–2^40');
  if (out.max_multiplier === 0) throw badSettings('max_multiplier must be at least 1');
  return out;
}

/** The table memory's form (SPEC §14.2): `{"first_bidder": seat}`. */
export function normalizeMemory(m: unknown): unknown {
  if (m === null) return null;
  if (!isObject(m)) throw malformed('table memory: not an object');
  const f = m.first_bidder ?? 0;
  if (!isUint(f, 255)) throw malformed(`table memory: first_bidder ${JSON.stringify(f)}`);
  return { first_bidder: f };
}

function firstBidder(memory: unknown): number {
  if (memory === null || memory === undefined) return 0;
  if (!isObject(memory)) throw malformed('table memory: not an object');
  const f = memory.first_bidder;
  if (f === undefined) return 0;
  if (!isUint(f, 255)) throw malformed(`table memory: first_bidder ${JSON.stringify(f)}`);
  return (f as number) % 3;
}

type Action = { type: 'bid'; points: number } | { type: 'pass' } | { type: 'play'; cards: number[] };

function parseAction(a: unknown): Action {
  if (!isObject(a)) throw malformed('action: not an object');
  const keys = Object.keys(a);
  const only = (...ks: string[]) => {
    for (const k of keys) if (k !== 'type' && !ks.includes(k)) throw malformed(`action: unknown field \`${k}\``);
    for (const k of ks) if (!(k in a)) throw malformed(`action: missing field \`${k}\``);
  };
  switch (a.type) {
    case 'bid':
      only('points');
      if (!isUint(a.points, 255)) throw malformed(`action: points ${JSON.stringify(a.points)}`);
      return { type: 'bid', points: a.points as number };
    case 'pass':
      only();
      return { type: 'pass' };
    case 'play': {
      only('cards');
      if (!Array.isArray(a.cards)) throw malformed('action: cards is not a list');
      const cards = a.cards.map((c) => {
        try {
          return parseCard(c);
        } catch {
          throw malformed(`action: bad card ${JSON.stringify(c)}`);
        }
      });
      return { type: 'play', cards };
    }
    default:
      throw malformed(`action: unknown type ${JSON.stringify(a.type)}`);
  }
}

// ---------- the hand

type Phase = 'bidding' | 'playing' | 'done';

class Hand {
  phase: Phase = 'bidding';
  hands: number[][] = [[], [], []];
  kitty: number[] = [];
  kittyPositions: number[] = [];
  bids: { seat: number; points: number | null }[] = [];
  highBid = 0;
  landlord: number | null = null;
  turn: number;
  lead: { seat: number; combo: Combo } | null = null;
  passes = 0;
  bombs = 0;
  playCounts = [0, 0, 0];
  outcome: { landlord_won: boolean; spring: boolean; anti_spring: boolean; multiplier: number; net: number[] } | null = null;

  constructor(
    readonly settings: Settings,
    readonly balances: number[],
    readonly first: number,
  ) {
    this.turn = first;
  }

  toAct(): number | null {
    return this.phase === 'done' ? null : this.turn;
  }

  /** The auto (timeout) action of the seat to act (docs/games/dou-di-zhu.md "Auto actions"): pass, else the lowest single. */
  auto(seat: number): any {
    if (this.phase === 'bidding' || this.lead) return { type: 'pass' };
    const hand = this.hands[seat];
    if (this.phase !== 'playing' || hand.length === 0) return null;
    const low = hand.reduce((a, b) => (value(b) < value(a) || (value(b) === value(a) && b < a) ? b : a));
    return { type: 'play', cards: [cardText(low)] };
  }

  /** Applies `seat`'s action (its turn); returns the pending chip movements and reveals. */
  apply(seat: number, raw: unknown): any[] {
    const action = parseAction(raw);
    const s = seat;
    if (this.phase === 'bidding') {
      if (action.type === 'play') throw illegal('cards are played after the bidding');
      if (action.type === 'bid') {
        const p = action.points;
        if (p < 1 || p > 3) throw new Refused(`bad amount: a bid is 1–3 points, not ${p}`);
        if (p <= this.highBid) throw new Refused(`bad amount: a bid must be above the current bid of ${this.highBid}`);
        this.bids.push({ seat: s, points: p });
        this.highBid = p;
        if (p === 3 || this.bids.length === 3) return this.endBidding();
      } else {
        this.bids.push({ seat: s, points: null });
        if (this.bids.length === 3) return this.endBidding();
      }
      this.turn = (s + 1) % 3;
      return [];
    }
    // playing
    if (action.type === 'bid') throw illegal('the bidding is over');
    if (action.type === 'pass') {
      if (!this.lead) throw illegal('the leader must play');
      this.passes++;
      this.turn = (s + 1) % 3;
      if (this.passes >= 2) {
        this.lead = null;
        this.passes = 0;
      }
      return [];
    }
    const combo = this.checkPlay(s, action.cards);
    const hand = this.hands[s];
    this.hands[s] = hand.filter((c) => !action.cards.includes(c));
    if (isBomb(combo)) this.bombs++;
    this.playCounts[s]++;
    this.lead = { seat: s, combo };
    this.passes = 0;
    if (this.hands[s].length === 0) return this.finish(s);
    this.turn = (s + 1) % 3;
    return [];
  }

  checkPlay(seat: number, cards: number[]): Combo {
    if (cards.length === 0) throw illegal('a play needs at least one card');
    const hand = this.hands[seat];
    if (cards.length > hand.length) throw illegal(`${cards.length} cards named, ${hand.length} in hand`);
    const seen = new Set<number>();
    for (const c of cards) {
      if (seen.has(c)) throw illegal(`card ${cardText(c)} named twice`);
      seen.add(c);
      if (!hand.includes(c)) throw new Refused(`card not in hand: ${cardText(c)}`);
    }
    const all = interpretations(cards, this.settings.rules);
    if (!this.lead) {
      const c = preferred(all);
      if (!c) throw illegal('these cards form no pattern');
      return c;
    }
    const table = this.lead.combo;
    const c = preferred(all.filter((x) => beats(x, table)));
    if (!c) throw illegal(`does not beat the ${describe(table)} on the table`);
    return c;
  }

  endBidding(): any[] {
    let landlord: number | null = null;
    let top = 0;
    for (const b of this.bids) if (b.points !== null && b.points >= top) [landlord, top] = [b.seat, b.points];
    if (landlord === null) {
      this.phase = 'done';
      return [];
    }
    this.landlord = landlord;
    this.hands[landlord].push(...this.kitty);
    this.phase = 'playing';
    this.turn = landlord;
    return [['reveal', this.kittyPositions.slice()]];
  }

  finish(winner: number): any[] {
    this.phase = 'done';
    const landlord = this.landlord as number;
    const landlordWon = winner === landlord;
    const farmers = [0, 1, 2].filter((s) => s !== landlord);
    const farmerPlays = farmers.reduce((t, f) => t + this.playCounts[f], 0);
    const spring = landlordWon && farmerPlays === 0;
    const antiSpring = !landlordWon && this.playCounts[landlord] === 1;
    let mult = BigInt(Math.max(this.highBid, 1)) << BigInt(Math.min(this.bombs, 64));
    if (spring || antiSpring) mult *= 2n;
    if (this.settings.max_multiplier !== null) {
      const cap = BigInt(this.settings.max_multiplier);
      if (cap < mult) mult = cap;
    }
    const stake = BigInt(this.settings.base) * mult;
    const bal = (s: number) => BigInt(this.balances[s]);
    const min = (a: bigint, b: bigint) => (a < b ? a : b);
    const net = [0, 0, 0];
    const debits: any[] = [];
    const credits: any[] = [];
    const mv = (s: number, amount: bigint, reason: string, debit: boolean) => {
      const a = Number(amount);
      if (a === 0) return;
      net[s] += debit ? -a : a;
      (debit ? debits : credits).push([debit ? 'debit' : 'credit', s, a, reason]);
    };
    if (landlordWon) {
      let total = 0n;
      for (const f of farmers) {
        const pay = min(stake, bal(f));
        total += pay;
        mv(f, pay, 'farmer loses', true);
      }
      mv(landlord, total, 'landlord wins', false);
    } else {
      const each = min(stake, bal(landlord) / 2n);
      mv(landlord, each * 2n, 'landlord loses', true);
      for (const f of farmers) mv(f, each, 'farmer wins', false);
    }
    this.outcome = { landlord_won: landlordWon, spring, anti_spring: antiSpring, multiplier: Number(mult), net };
    return debits.concat(credits);
  }
}

// ---------- the replay (SPEC §14 steps 1–4)

function deckOf(top: string[]): number[] {
  const ids = top.map((c) => {
    try {
      return parseCard(c);
    } catch {
      throw new Error(`deck_top: ${JSON.stringify(c)} is not a card`);
    }
  });
  const rest: number[] = [];
  for (let id = 0; id < 54; id++) if (!ids.includes(id)) rest.push(id);
  return ids.concat(rest);
}

function dealEvent(phase: string, deck: number[], from: number, targets: string[]): any[] {
  if (deck.length < from + targets.length) throw badDeal(`deck exhausted at position ${deck.length}`);
  return ['deal', phase, targets.map((t, i) => `${from + i}:${cardText(deck[from + i])}>${t}/d`)];
}

export function replay(v: Vector, trace?: Trace): Outcome {
  if (v.game !== 'dou-di-zhu') throw new Error(`not a dou-di-zhu vector: ${v.game}`);
  const deck = deckOf(v.deck_top);
  let hand: Hand;
  const events: any[] = [];
  try {
    if (v.balances.length !== 3) throw new Refused(`bad players: dou-di-zhu needs 3–3 players, got ${v.balances.length}`);
    const settings = normalizeSettings(v.settings);
    hand = new Hand(settings, v.balances, firstBidder(v.memory));
    // Deals: `hole` 51 cards, position i to seat i mod 3; `kitty` 3 cards to
    // the table; each physical card of the one pack once.
    const seen = new Set<number>();
    const receive = (from: number, to: number) => {
      for (let p = from; p < to; p++) {
        if (Math.floor(deck[p] / 54) !== 0) throw badDeal(`${cardText(deck[p])} is not in a single pack`);
      }
      for (let p = from; p < to; p++) {
        if (seen.has(deck[p])) throw badDeal(`card ${cardText(deck[p])} dealt twice`);
        seen.add(deck[p]);
      }
    };
    events.push(dealEvent('hole', deck, 0, Array.from({ length: 51 }, (_, i) => `s${i % 3}`)));
    receive(0, 51);
    for (let p = 0; p < 51; p++) hand.hands[p % 3].push(deck[p]);
    events.push(dealEvent('kitty', deck, 51, ['c', 'c', 'c']));
    receive(51, 54);
    hand.kitty = deck.slice(51, 54);
    hand.kittyPositions = [51, 52, 53];
  } catch (e) {
    throw new Error(`hand start: ${(e as Error).message}`);
  }
  v.actions.forEach(([seat, action], index) => {
    const expected = hand.toAct();
    if (expected !== seat) throw new Error(`action ${index} by seat ${seat}: it was seat ${expected}'s turn`);
    if (trace) {
      trace.marks.push(events.length);
      trace.autos.push(hand.auto(seat));
    }
    try {
      events.push(...hand.apply(seat, action));
    } catch (e) {
      throw new Error(`action ${index} (${JSON.stringify(action)}): ${(e as Error).message}`);
    }
  });
  if (hand.phase !== 'done') throw new Error(`the hand is not over after ${v.actions.length} actions`);
  const o = hand.outcome;
  const landlord = hand.landlord;
  const winners = o && landlord !== null ? [0, 1, 2].filter((s) => (s === landlord) === o.landlord_won) : [];
  const net = o ? o.net.slice() : [0, 0, 0];
  return {
    events,
    result: { winners, net, house_net: 0, rake: 0 },
    details: {
      game: 'dou-di-zhu',
      landlord,
      bid: hand.highBid,
      bombs: hand.bombs,
      base: hand.settings.base,
      outcome: o,
    },
    memory_after: { first_bidder: (hand.first + 1) % 3 },
  };
}

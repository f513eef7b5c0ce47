// What every game's replay shares (SPEC.md §13.1, §14): the vector and
// outcome types, the deck a vector stands for, and the hand driver of §14
// step 2 — deals taking deck positions strictly in order, chip movements,
// reveals and card transfers, written down in the §13.1 notation.

import { parseCard, cardText } from '../audit';

/** A hand's inputs (SPEC §13.1). */
export type Vector = {
  game: string;
  settings: any;
  balances: number[];
  memory: any;
  deck_top: string[];
  actions: [number, any][];
  /**
   * The player ids in seat order (hex), for a real hand's table memory; a
   * §13.1 vector has none: seat i has the id of 32 bytes `i + 1`.
   */
  players?: string[];
};

/** What a replay records beside its outcome, for the audit (SPEC §11.2 check 13). */
export type Trace = {
  /** Per action: how many events the rules had given before it. */
  marks: number[];
  /** Per action: the acting seat's auto (timeout) action in that state. */
  autos: any[];
};

/** What the rules produce for it (SPEC §13.1), JSON-equal to the Rust replay. */
export type Outcome = {
  events: any[];
  result: { winners: number[]; net: number[]; house_net: number; rake: number };
  details: any;
  memory_after: any;
};

/** The rules refused the hand (a bad setting, an illegal action, …). */
export class Refused extends Error {}

/** The unshuffled deck of SPEC §2: `packs` packs of 52 faces, each followed by the two jokers when `jokers`. */
export function unshuffled(packs: number, jokers: boolean): number[] {
  const out: number[] = [];
  for (let p = 0; p < packs; p++) {
    for (let f = 0; f < (jokers ? 54 : 52); f++) out.push(p * 54 + f);
  }
  return out;
}

/** A vector's deck order (SPEC §13.1): `top`, then the rest of `full` in its order. */
export function vectorDeck(top: string[], full: number[]): number[] {
  const head = top.map((c) => parseCard(c));
  const seen = new Set(head);
  return head.concat(full.filter((c) => !seen.has(c)));
}

/** The player id of seat `i` in a vector: 32 bytes `i + 1`, as hex. */
export function seatId(i: number): string {
  return (i + 1).toString(16).padStart(2, '0').repeat(32);
}

/** The player ids of a vector's seats: its `players`, else the §13.1 ids. */
export function playerIds(v: Vector): string[] {
  return v.players ?? v.balances.map((_, i) => seatId(i));
}

export type Target = number | 'c' | 'b' | 'h';
export type Party = number | 'house';

/** The hand driver (SPEC §14 step 2): deals positions in order and records every event. */
export class Table {
  readonly events: any[] = [];
  /** The card at each dealt position. */
  readonly dealt: number[] = [];
  /** Who holds each dealt position now (a seat, or null). */
  readonly holders: (number | null)[] = [];
  /** Net chips per seat (credits − debits) and of the house. */
  readonly net: number[];
  houseNet = 0;
  debits = 0;
  credits = 0;

  constructor(
    private deck: number[],
    readonly players: number,
  ) {
    this.net = new Array(players).fill(0);
  }

  /** One deal of `specs` (in order), the cards it gave. */
  deal(phase: string, specs: { to: Target; up: boolean }[]): number[] {
    const cards: number[] = [];
    const text: string[] = [];
    for (const s of specs) {
      const position = this.dealt.length;
      if (position >= this.deck.length) throw new Refused(`deck exhausted at position ${position}`);
      if (typeof s.to === 'number' && !(s.to >= 0 && s.to < this.players)) throw new Refused(`deal to missing seat ${s.to}`);
      const card = this.deck[position];
      this.dealt.push(card);
      this.holders.push(typeof s.to === 'number' ? s.to : null);
      cards.push(card);
      const target = typeof s.to === 'number' ? `s${s.to}` : s.to;
      text.push(`${position}:${cardText(card)}>${target}/${s.up ? 'u' : 'd'}`);
    }
    this.events.push(['deal', phase, text]);
    return cards;
  }

  private chip(op: 'debit' | 'credit', party: Party, amount: number, reason: string) {
    if (typeof party === 'number' && !(party >= 0 && party < this.players)) throw new Refused(`chip movement for missing seat ${party}`);
    const delta = op === 'debit' ? -amount : amount;
    if (party === 'house') this.houseNet += delta;
    else this.net[party] += delta;
    if (op === 'debit') this.debits += amount;
    else this.credits += amount;
    this.events.push([op, party, amount, reason]);
  }

  debit(party: Party, amount: number, reason: string) {
    this.chip('debit', party, amount, reason);
  }

  credit(party: Party, amount: number, reason: string) {
    this.chip('credit', party, amount, reason);
  }

  reveal(positions: number[]) {
    for (const p of positions) if (!(p < this.dealt.length)) throw new Refused(`reveal of undealt position ${p}`);
    this.events.push(['reveal', positions]);
  }

  transfer(position: number, from: number, to: number, up: boolean) {
    if (this.holders[position] !== from) throw new Refused(`transfer of position ${position}: seat ${from} does not hold it`);
    if (to === from || !(to >= 0 && to < this.players)) throw new Refused(`transfer of position ${position} to seat ${to}`);
    this.holders[position] = to;
    this.events.push(['transfer', position, from, to, up ? 'u' : 'd']);
  }

  /** The result, after the conservation check of SPEC §14 step 4. */
  result(winners: number[], net: number[], houseNet: number, rake: number): Outcome['result'] {
    net.forEach((x, i) => {
      if (x !== this.net[i]) throw new Refused(`conservation: seat ${i}: movements net ${this.net[i]}, result says ${x}`);
    });
    if (houseNet !== this.houseNet) throw new Refused(`conservation: house: movements net ${this.houseNet}, result says ${houseNet}`);
    if (this.debits !== this.credits + rake) throw new Refused(`conservation: debits ${this.debits} != credits ${this.credits} + rake ${rake}`);
    return { winners, net, house_net: houseNet, rake };
  }
}

/** The steps of a hand for [`drive`]. */
export type Steps = {
  table: Table;
  /** The seat to act, null when nobody is. */
  actor: () => number | null;
  /** The auto (timeout) action of the seat to act. */
  auto: (seat: number) => any;
  apply: (seat: number, action: any) => void;
  over: () => boolean;
};

/** Each action in turn (it must be its seat's turn), recording `trace`; the hand must then be over. */
export function drive(v: Vector, h: Steps, trace?: Trace) {
  const { actor, apply, over } = h;
  v.actions.forEach(([seat, action], i) => {
    const expected = actor();
    if (expected !== seat) throw new Refused(`action ${i} by seat ${seat}: it was seat ${expected}'s turn`);
    if (trace) {
      trace.marks.push(h.table.events.length);
      trace.autos.push(h.auto(seat));
    }
    try {
      apply(seat, action);
    } catch (e) {
      throw new Refused(`action ${i} (${JSON.stringify(action)}): ${(e as Error).message}`);
    }
  });
  if (!over()) throw new Refused(`the hand is not over after ${v.actions.length} actions`);
}

/** A whole number of chips in 0..=max, else a refusal naming `what`. */
export function chips(x: unknown, what: string, max = 2 ** 50): number {
  if (!Number.isSafeInteger(x) || (x as number) < 0 || (x as number) > max) throw new Refused(`${what}: ${JSON.stringify(x)} is not an amount`);
  return x as number;
}

/** An object with exactly the keys allowed (unknown keys refused), else a refusal. */
export function object(x: unknown, what: string, allowed: string[] | null): Record<string, any> {
  if (x === null || x === undefined) return {};
  if (typeof x !== 'object' || Array.isArray(x)) throw new Refused(`${what}: not an object`);
  if (allowed) for (const k of Object.keys(x)) if (!allowed.includes(k)) throw new Refused(`${what}: unknown field ${k}`);
  return x as Record<string, any>;
}

/** A player id (SPEC §1.3: 64 lowercase hex characters), else a refusal naming `what`. */
export function playerId(x: unknown, what: string): string {
  if (typeof x !== 'string' || !/^[0-9a-f]{64}$/.test(x)) throw new Refused(`${what}: ${JSON.stringify(x)} is not a player id`);
  return x;
}

/**
 * The table memory in the form the rules write it, of a memory that is an
 * object (`null`, a fresh table, stays `null`): `form` parses its members
 * (unknown ones dropped, as the Rust rules read it), so a memory that differs
 * from its form carries something the rules ignore.
 */
export function memoryForm(m: unknown, form: (o: Record<string, any>) => unknown): unknown {
  if (m === null) return null;
  if (typeof m !== 'object' || Array.isArray(m)) throw new Refused('table memory: not an object');
  return form(m as Record<string, any>);
}

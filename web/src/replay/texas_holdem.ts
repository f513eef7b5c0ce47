// Texas Hold'em no-limit (`texas-holdem`, rules version 1) replayed from
// SPEC.md §14.2 and docs/games/texas-holdem.md: button and blinds from the
// table memory, the deal, no-limit betting (short all-ins, reopening),
// uncalled bets, side pots, the showdown and odd chips, the typed details
// and the table memory.

import { Table, Refused, Vector, Outcome, Trace, unshuffled, vectorDeck, playerIds, drive, chips, object, playerId, memoryForm } from './common';

const MAX = 2 ** 50;

type Settings = { small_blind: number; big_blind: number; ante: number; button?: number };

/** The normalised settings (docs/games/texas-holdem.md §1). */
export function normalizeSettings(s: unknown): Settings {
  const o = object(s, 'settings', ['small_blind', 'big_blind', 'ante', 'button']);
  const sb = o.small_blind === undefined ? 5 : chips(o.small_blind, 'small_blind', MAX);
  const bb = o.big_blind === undefined ? 10 : chips(o.big_blind, 'big_blind', MAX);
  const ante = o.ante === undefined ? 0 : chips(o.ante, 'ante', MAX);
  if (!(sb >= 1 && sb <= bb)) throw new Refused('bad settings: 1 ≤ small_blind ≤ big_blind');
  if (ante > bb) throw new Refused('bad settings: ante ≤ big_blind');
  const out: Settings = { small_blind: sb, big_blind: bb, ante };
  if (o.button !== undefined && o.button !== null) out.button = chips(o.button, 'button', 255);
  return out;
}

/** The table memory's form (SPEC §14.2): `{"button": id | null, "seating": [ids]}`. */
export function normalizeMemory(m: unknown): unknown {
  return memoryForm(m, (o) => {
    const seating = o.seating ?? [];
    if (!Array.isArray(seating)) throw new Refused('table memory: seating is not a list');
    return {
      button: o.button === undefined || o.button === null ? null : playerId(o.button, 'table memory: button'),
      seating: seating.map((x: unknown) => playerId(x, 'table memory: seating')),
    };
  });
}

// ---------- the evaluator: best five of the cards, as a comparable number

const STRAIGHTS: number[] = [];
for (let hi = 14; hi >= 6; hi--) STRAIGHTS.push(hi);

/** The high card of the best straight in a rank mask (bit r for rank r, ace also 1), or 0. */
function straightHigh(mask: number): number {
  const m = mask | (mask & (1 << 14) ? 1 << 1 : 0);
  for (let hi = 14; hi >= 5; hi--) {
    const need = 0b11111 << (hi - 4);
    if ((m & need) === need) return hi;
  }
  return 0;
}

/** A value ordering hands (greater wins, equal ties): category × 15^5 + tie-breaks. */
export function evaluate(cards: number[]): number {
  const score = (cat: number, ks: number[]) => {
    let v = cat;
    for (let i = 0; i < 5; i++) v = v * 15 + (ks[i] ?? 0);
    return v;
  };
  const counts = new Array(15).fill(0);
  const suitMask = [0, 0, 0, 0];
  const seen = new Set<number>();
  for (const c of cards) {
    const f = c % 54;
    if (f >= 52 || seen.has(f)) continue;
    seen.add(f);
    const r = Math.floor(f / 4) + 2;
    counts[r]++;
    suitMask[f % 4] |= 1 << r;
  }
  let best = -1;
  for (const m of suitMask) {
    const hi = straightHigh(m);
    if (hi) best = Math.max(best, score(8, [hi]));
  }
  if (best >= 0) return best;
  const ranks = (n: number) => {
    const out: number[] = [];
    for (let r = 14; r >= 2; r--) if (counts[r] >= n) out.push(r);
    return out;
  };
  const quads = ranks(4);
  if (quads.length) {
    const k = ranks(1).filter((r) => r !== quads[0]);
    return score(7, [quads[0], k[0]]);
  }
  const trips = ranks(3);
  if (trips.length) {
    const pair = ranks(2).filter((r) => r !== trips[0]);
    if (pair.length) return score(6, [trips[0], pair[0]]);
  }
  for (const m of suitMask) {
    let n = 0;
    for (let r = 2; r <= 14; r++) if (m & (1 << r)) n++;
    if (n >= 5) {
      const ks: number[] = [];
      for (let r = 14; r >= 2 && ks.length < 5; r--) if (m & (1 << r)) ks.push(r);
      best = Math.max(best, score(5, ks));
    }
  }
  if (best >= 0) return best;
  let all = 0;
  for (let r = 2; r <= 14; r++) if (counts[r]) all |= 1 << r;
  const hi = straightHigh(all);
  if (hi) return score(4, [hi]);
  const singles = ranks(1);
  if (trips.length) return score(3, [trips[0], ...singles.filter((r) => r !== trips[0]).slice(0, 2)]);
  const pairs = ranks(2);
  if (pairs.length >= 2) {
    const k = singles.filter((r) => r !== pairs[0] && r !== pairs[1]);
    return score(2, [pairs[0], pairs[1], k[0]]);
  }
  if (pairs.length) return score(1, [pairs[0], ...singles.filter((r) => r !== pairs[0]).slice(0, 3)]);
  return score(0, singles.slice(0, 5));
}

// ---------- the hand

type Player = {
  stack: number;
  /** This round's bet. */
  bet: number;
  /** Everything put in this hand (antes included), less what came back. */
  committed: number;
  folded: boolean;
  allIn: boolean;
  /** Acted since the bet last rose. */
  acted: boolean;
  /** The bet this player last acted facing (for the reopening rule). */
  faced: number;
  hole: number[];
};

const STREETS = ['preflop', 'flop', 'turn', 'river'] as const;

class Holdem {
  t: Table;
  n: number;
  p: Player[];
  button: number;
  street = 0;
  currentBet = 0;
  /** The last full increment (the minimum raise step). */
  increment: number;
  toAct: number | null = null;
  over = false;
  revealed = false;
  board: number[] = [];
  holePositions: number[][] = [];
  pots: any[] = [];
  winners = new Set<number>();
  showdown = false;

  constructor(
    v: Vector,
    readonly s: Settings,
  ) {
    const n = v.balances.length;
    if (n < 2 || n > 10) throw new Refused(`bad players: ${n} players (2–10)`);
    v.balances.forEach((b, i) => {
      if (!Number.isSafeInteger(b) || b < 1 || b > MAX) throw new Refused(`bad players: seat ${i} balance ${b}`);
    });
    this.n = n;
    this.t = new Table(vectorDeck(v.deck_top, unshuffled(1, false)), n);
    this.p = v.balances.map((b) => ({ stack: b, bet: 0, committed: 0, folded: false, allIn: false, acted: false, faced: 0, hole: [] }));
    this.increment = s.big_blind;
    this.ids = playerIds(v);
    this.button = this.findButton(v.memory, n);
  }

  ids: string[];

  /** The timeout action (docs/games/texas-holdem.md §4): check if free, else fold. */
  auto(seat: number): any {
    return this.toCall(seat) === 0 ? { type: 'check' } : { type: 'fold' };
  }

  findButton(memory: any, n: number): number {
    if (this.s.button !== undefined) {
      if (this.s.button >= n) throw new Refused(`bad players: button seat ${this.s.button} of ${n}`);
      return this.s.button;
    }
    if (memory === null || memory === undefined) return 0;
    const ids = this.ids;
    const prev: string[] = Array.isArray(memory.seating) ? memory.seating : [];
    const at = ids.indexOf(memory.button);
    if (at >= 0) return (at + 1) % n;
    const old = prev.indexOf(memory.button);
    if (old < 0) return 0;
    for (let k = 1; k <= prev.length; k++) {
      const seat = ids.indexOf(prev[(old + k) % prev.length]);
      if (seat >= 0) return seat;
    }
    return 0;
  }

  next(seat: number): number {
    return (seat + 1) % this.n;
  }

  /** Puts `amount` of `seat`'s chips in as a bet (a debit). */
  put(seat: number, amount: number, reason: string, asBet = true) {
    const p = this.p[seat];
    if (amount > p.stack) throw new Refused(`bad amount: ${amount} is more than the stack ${p.stack}`);
    p.stack -= amount;
    if (asBet) p.bet += amount;
    p.committed += amount;
    if (p.stack === 0) p.allIn = true;
    if (amount > 0) this.t.debit(seat, amount, reason);
  }

  start() {
    const { n, s } = this;
    const sb = n === 2 ? this.button : this.next(this.button);
    const bb = this.next(sb);
    if (s.ante > 0) {
      for (let k = 1; k <= n; k++) {
        const seat = (this.button + k) % n;
        this.put(seat, Math.min(s.ante, this.p[seat].stack), 'ante', false);
      }
    }
    this.put(sb, Math.min(s.small_blind, this.p[sb].stack), 'small blind');
    this.put(bb, Math.min(s.big_blind, this.p[bb].stack), 'big blind');
    this.currentBet = s.big_blind;
    this.increment = s.big_blind;
    const specs: { to: number; up: boolean }[] = [];
    for (let k = 0; k < 2 * n; k++) specs.push({ to: (this.button + 1 + k) % n, up: false });
    const positions0 = this.t.dealt.length;
    const cards = this.t.deal('hole', specs);
    this.holePositions = Array.from({ length: n }, () => []);
    cards.forEach((c, k) => {
      const seat = specs[k].to;
      this.p[seat].hole.push(c);
      this.holePositions[seat].push(positions0 + k);
    });
    this.toAct = this.firstToAct(this.next(bb));
    if (this.toAct === null) this.endRound();
  }

  live(): number[] {
    return this.p.map((_, i) => i).filter((i) => !this.p[i].folded);
  }

  /** Whether `seat` still has to act in this round. */
  needs(seat: number): boolean {
    const p = this.p[seat];
    if (p.folded || p.allIn) return false;
    const others = this.live().filter((i) => i !== seat);
    const othersCanAct = others.some((i) => !this.p[i].allIn);
    const maxOther = Math.max(0, ...others.map((i) => this.p[i].bet));
    if (!othersCanAct && p.bet >= maxOther) return false;
    return !p.acted || p.bet < this.currentBet;
  }

  firstToAct(from: number): number | null {
    for (let k = 0; k < this.n; k++) {
      const seat = (from + k) % this.n;
      if (this.needs(seat)) return seat;
    }
    return null;
  }

  /** The amount `seat` must add to call (at most what the others could match). */
  toCall(seat: number): number {
    const p = this.p[seat];
    const others = this.live().filter((i) => i !== seat);
    const othersCanAct = others.some((i) => !this.p[i].allIn);
    let target = this.currentBet;
    if (!othersCanAct) target = Math.min(target, Math.max(0, ...others.map((i) => this.p[i].bet)));
    return Math.max(0, Math.min(target - p.bet, p.stack));
  }

  mayRaise(seat: number): boolean {
    const p = this.p[seat];
    const othersCanAct = this.live().some((i) => i !== seat && !this.p[i].allIn);
    if (!othersCanAct) return false;
    if (p.stack <= this.currentBet - p.bet) return false;
    return !p.acted || this.currentBet - p.faced >= this.increment;
  }

  raiseTo(seat: number, to: number, reason: string) {
    const p = this.p[seat];
    const add = to - p.bet;
    if (add > p.stack) throw new Refused(`bad amount: ${to} is more than the stack`);
    const rise = to - this.currentBet;
    this.put(seat, add, reason);
    if (rise >= this.increment) {
      this.increment = rise;
    }
    if (to > this.currentBet) {
      this.currentBet = to;
      for (const q of this.p) if (q !== p) q.acted = false;
    }
  }

  apply(seat: number, a: any) {
    if (this.over) throw new Refused('hand over');
    if (seat !== this.toAct) throw new Refused('not your turn');
    const p = this.p[seat];
    const type = a?.type;
    const keys = Object.keys(a ?? {});
    const allow = (ks: string[]) => {
      for (const k of keys) if (!ks.includes(k)) throw new Refused(`malformed: unknown field ${k}`);
    };
    const toCall = this.toCall(seat);
    const facing = this.currentBet;
    switch (type) {
      case 'fold':
        allow(['type']);
        p.folded = true;
        break;
      case 'check':
        allow(['type']);
        if (toCall > 0) throw new Refused('illegal: check with something to call');
        break;
      case 'call':
        allow(['type']);
        if (toCall === 0) throw new Refused('illegal: call with nothing to call');
        this.put(seat, toCall, 'call');
        break;
      case 'bet':
      case 'raise': {
        allow(['type', 'to']);
        const to = a.to;
        if (!Number.isSafeInteger(to) || to < 0) throw new Refused('malformed: to');
        if (type === 'bet' && this.currentBet > 0) throw new Refused('illegal: bet when there is a bet');
        if (type === 'raise' && this.currentBet === 0) throw new Refused('illegal: raise when there is no bet');
        if (!this.mayRaise(seat)) throw new Refused('illegal: may not raise');
        const allInTo = p.bet + p.stack;
        if (to > allInTo) throw new Refused('bad amount: more than the stack');
        const min = this.currentBet === 0 ? this.s.big_blind : this.currentBet + this.increment;
        if (to < min && to !== allInTo) throw new Refused('bad amount: below the minimum');
        if (to <= this.currentBet) throw new Refused('bad amount: not above the current bet');
        this.raiseTo(seat, to, type);
        break;
      }
      case 'all-in': {
        allow(['type']);
        const allInTo = p.bet + p.stack;
        if (allInTo > this.currentBet && this.mayRaise(seat)) this.raiseTo(seat, allInTo, 'all-in');
        else if (toCall > 0 && p.stack <= this.currentBet - p.bet) this.put(seat, p.stack, 'all-in');
        else throw new Refused('illegal: all-in');
        break;
      }
      default:
        throw new Refused(`malformed: action type ${JSON.stringify(type)}`);
    }
    p.acted = true;
    p.faced = facing;
    this.advance(seat);
  }

  advance(from: number) {
    if (this.live().length === 1) {
      this.returnUncalled();
      this.finish();
      return;
    }
    const nx = this.firstToAct(this.next(from));
    if (nx !== null) {
      this.toAct = nx;
      return;
    }
    this.endRound();
  }

  /** The part of the biggest bet nobody matched comes back. */
  returnUncalled() {
    const bets = this.p.map((q) => q.bet);
    const top = Math.max(...bets);
    const owner = bets.indexOf(top);
    const second = Math.max(0, ...bets.filter((_, i) => i !== owner));
    if (top > second) {
      const back = top - second;
      const q = this.p[owner];
      q.stack += back;
      q.bet -= back;
      q.committed -= back;
      if (q.stack > 0) q.allIn = false;
      this.t.credit(owner, back, 'uncalled bet returned');
    }
  }

  dealStreet() {
    this.street++;
    const phase = STREETS[this.street];
    const k = this.street === 1 ? 3 : 1;
    const specs: { to: 'b' | 'c'; up: boolean }[] = [{ to: 'b', up: false }];
    for (let i = 0; i < k; i++) specs.push({ to: 'c', up: true });
    const cards = this.t.deal(phase, specs);
    this.board.push(...cards.slice(1));
  }

  revealHands() {
    if (this.revealed) return;
    this.revealed = true;
    const positions: number[] = [];
    for (const seat of this.live()) positions.push(...this.holePositions[seat]);
    this.t.reveal(positions);
  }

  endRound() {
    this.returnUncalled();
    for (const q of this.p) {
      q.bet = 0;
      q.acted = false;
      q.faced = 0;
    }
    this.currentBet = 0;
    this.increment = this.s.big_blind;
    const canAct = this.live().filter((i) => !this.p[i].allIn);
    if (canAct.length <= 1) {
      // No more betting: table the hands, deal the rest of the board.
      this.revealHands();
      while (this.street < 3) this.dealStreet();
      this.finish();
      return;
    }
    if (this.street === 3) {
      this.finish();
      return;
    }
    this.dealStreet();
    const nx = this.firstToAct(this.next(this.button));
    if (nx === null) this.endRound();
    else this.toAct = nx;
  }

  finish() {
    this.toAct = null;
    this.over = true;
    const live = this.live();
    this.showdown = live.length > 1;
    if (this.showdown) this.revealHands();
    const values = new Map<number, number>();
    if (this.showdown) for (const s of live) values.set(s, evaluate([...this.p[s].hole, ...this.board]));
    // Layers at every distinct contribution level (SPEC §14.2 "Pots").
    const levels = [...new Set(this.p.map((q) => q.committed).filter((c) => c > 0))].sort((a, b) => a - b);
    type Layer = { amount: number; eligible: number[]; uncalled: boolean };
    const layers: Layer[] = [];
    let lo = 0;
    let carry = 0;
    for (const hi of levels) {
      const amount = this.p.reduce((sum, q) => sum + Math.max(0, Math.min(q.committed, hi) - lo), 0);
      const contributors = this.p.filter((q) => q.committed > lo).length;
      const eligible = this.p.map((_, i) => i).filter((i) => this.p[i].committed >= hi && !this.p[i].folded);
      lo = hi;
      const last = layers[layers.length - 1];
      if (!eligible.length) {
        // Dead chips above every live contribution: the last pot the live players can win.
        if (last) {
          last.amount += amount;
          last.uncalled = false;
        } else carry += amount;
        continue;
      }
      const uncalled = eligible.length === 1 && contributors === 1;
      if (last && last.eligible.join() === eligible.join() && last.uncalled === uncalled) last.amount += amount + carry;
      else layers.push({ amount: amount + carry, eligible, uncalled });
      carry = 0;
    }
    if (carry > 0) layers.push({ amount: carry, eligible: this.live(), uncalled: false });
    let side = 0;
    for (const layer of layers) {
      if (layer.uncalled) {
        const owner = layer.eligible[0];
        this.t.credit(owner, layer.amount, 'uncalled chips returned');
        this.pots.push({ kind: 'uncalled', index: 0, amount: layer.amount, eligible: [owner], shares: [[owner, layer.amount]] });
        continue;
      }
      const index = side++;
      const kind = index === 0 ? 'main' : 'side';
      const reason = index === 0 ? 'main pot' : `side pot ${index}`;
      let winners = layer.eligible;
      if (winners.length > 1) {
        const best = Math.max(...winners.map((s) => values.get(s)!));
        winners = winners.filter((s) => values.get(s) === best);
      }
      const order: number[] = [];
      for (let k = 1; k <= this.n; k++) {
        const seat = (this.button + k) % this.n;
        if (winners.includes(seat)) order.push(seat);
      }
      const each = Math.floor(layer.amount / order.length);
      const odd = layer.amount % order.length;
      const shares: [number, number][] = [];
      order.forEach((seat, k) => {
        const share = each + (k < odd ? 1 : 0);
        if (share === 0) return;
        shares.push([seat, share]);
        this.t.credit(seat, share, reason);
        this.winners.add(seat);
      });
      this.pots.push({ kind, index, amount: layer.amount, eligible: layer.eligible, shares });
    }
  }
}

export function replay(v: Vector, trace?: Trace): Outcome {
  const s = normalizeSettings(v.settings);
  const h = new Holdem(v, s);
  h.start();
  drive(
    v,
    { table: h.t, actor: () => h.toAct, auto: (seat) => h.auto(seat), apply: (seat, a) => h.apply(seat, a), over: () => h.over },
    trace,
  );
  const winners = [...h.winners].sort((a, b) => a - b);
  const result = h.t.result(winners, h.t.net.slice(), 0, 0);
  return {
    events: h.t.events,
    result,
    details: { game: 'texas-holdem', button: h.button, showdown: h.showdown, pots: h.pots },
    memory_after: { button: h.ids[h.button], seating: h.ids },
  };
}

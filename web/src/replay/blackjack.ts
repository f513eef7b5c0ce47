// Blackjack (`blackjack`, rules version 1) replayed from SPEC.md §14.2 and
// docs/games/blackjack.md: bets, the initial deal, insurance and the peek,
// hits, doubles and splits (the shoe's reserve), the house's draws, the
// settlement in its chip order, the typed details.

import { Table, Refused, Vector, Outcome, Trace, unshuffled, vectorDeck, drive, chips, object, memoryForm } from './common';

const MAX = 2 ** 50;
/** Cards the shoe keeps for the house: a hit, double or split must leave this many. */
const HOUSE_RESERVE = 15;

type Settings = {
  min_bet: number;
  max_bet: number;
  decks: number;
  hit_soft_17: boolean;
  max_splits: number;
  double_after_split: boolean;
};

const bool = (x: unknown, d: boolean, what: string): boolean => {
  if (x === undefined) return d;
  if (typeof x !== 'boolean') throw new Refused(`bad settings: ${what}`);
  return x;
};

/** The table memory's form (SPEC §14.2): `{}`, Blackjack keeps nothing. */
export function normalizeMemory(m: unknown): unknown {
  return memoryForm(m, () => ({}));
}

/** The normalised settings (docs/games/blackjack.md "Settings"). */
export function normalizeSettings(s: unknown): Settings {
  const o = object(s, 'settings', ['min_bet', 'max_bet', 'decks', 'hit_soft_17', 'max_splits', 'double_after_split']);
  const out: Settings = {
    min_bet: o.min_bet === undefined ? 10 : chips(o.min_bet, 'min_bet', MAX),
    max_bet: o.max_bet === undefined ? 1000 : chips(o.max_bet, 'max_bet', MAX),
    decks: o.decks === undefined ? 6 : chips(o.decks, 'decks', 255),
    hit_soft_17: bool(o.hit_soft_17, false, 'hit_soft_17'),
    max_splits: o.max_splits === undefined ? 3 : chips(o.max_splits, 'max_splits', 255),
    double_after_split: bool(o.double_after_split, true, 'double_after_split'),
  };
  if (out.min_bet < 1 || out.max_bet < out.min_bet) throw new Refused('bad settings: 1 ≤ min_bet ≤ max_bet');
  if (out.decks < 1 || out.decks > 8) throw new Refused('bad settings: decks 1–8');
  if (out.max_splits > 3) throw new Refused('bad settings: max_splits 0–3');
  return out;
}

/** A card's point value: 2–10, faces 10, ace 11 (counted 1 when needed). */
function points(card: number): number {
  const rank = Math.floor((card % 54) / 4) + 2;
  return rank === 14 ? 11 : Math.min(rank, 10);
}

/** The best total and whether it is soft (an ace still counted 11). */
function total(cards: number[]): { total: number; soft: boolean } {
  let t = 0;
  let aces = 0;
  for (const c of cards) {
    const p = points(c);
    t += p;
    if (p === 11) aces++;
  }
  while (t > 21 && aces > 0) {
    t -= 10;
    aces--;
  }
  return { total: t, soft: aces > 0 };
}

type BjHand = {
  cards: number[];
  stake: number;
  done: boolean;
  fromSplit: boolean;
  splitAces: boolean;
  doubled: boolean;
};

type BjSeat = {
  stack: number;
  bet: number | null;
  skipped: boolean;
  insurance: number;
  insuranceAsked: boolean;
  hands: BjHand[];
  splits: number;
};

const isNatural = (h: BjHand) => !h.fromSplit && h.cards.length === 2 && total(h.cards).total === 21;

class Blackjack {
  t: Table;
  n: number;
  seats: BjSeat[];
  phase: 'betting' | 'insurance' | 'playing' | 'over' = 'betting';
  house: number[] = [];
  holePosition = -1;
  houseBlackjack = false;
  deckLength: number;
  /** The seat and hand to act in play. */
  cur: { seat: number; hand: number } | null = null;

  constructor(
    v: Vector,
    readonly s: Settings,
  ) {
    const n = v.balances.length;
    if (n < 1 || n > 7) throw new Refused(`bad players: ${n} players (1–7)`);
    this.n = n;
    const deck = vectorDeck(v.deck_top, unshuffled(s.decks, false));
    this.deckLength = deck.length;
    this.t = new Table(deck, n);
    this.seats = v.balances.map((b) => ({ stack: chips(b, 'balance'), bet: null, skipped: false, insurance: 0, insuranceAsked: false, hands: [], splits: 0 }));
  }

  left(): number {
    return this.deckLength - this.t.dealt.length;
  }

  betting(): number[] {
    return this.seats.map((_, i) => i).filter((i) => this.seats[i].bet !== null);
  }

  toAct(): number | null {
    if (this.phase === 'betting') {
      const i = this.seats.findIndex((s) => s.bet === null && !s.skipped);
      return i < 0 ? null : i;
    }
    if (this.phase === 'insurance') {
      const i = this.seats.findIndex((s, k) => this.insurable(k) && !s.insuranceAsked);
      return i < 0 ? null : i;
    }
    if (this.phase === 'playing') return this.cur?.seat ?? null;
    return null;
  }

  /** The timeout action (docs/games/blackjack.md "Auto actions"). */
  auto(seat: number): any {
    if (this.phase === 'betting') return this.seats[seat].stack >= this.s.min_bet ? { type: 'bet', amount: this.s.min_bet } : { type: 'skip' };
    if (this.phase === 'insurance') return { type: 'no-insurance' };
    return { type: 'stand' };
  }

  insurable(seat: number): boolean {
    const s = this.seats[seat];
    return s.bet !== null && s.bet >= 2 && s.stack > 0;
  }

  apply(seat: number, a: any) {
    const s = this.seats[seat];
    const type = a?.type;
    const allow = (ks: string[]) => {
      for (const k of Object.keys(a ?? {})) if (!ks.includes(k)) throw new Refused(`malformed: unknown field ${k}`);
    };
    if (this.phase === 'betting') {
      if (type === 'bet') {
        allow(['type', 'amount']);
        const amt = a.amount;
        if (!Number.isSafeInteger(amt) || amt < 0) throw new Refused('malformed: amount');
        if (amt < this.s.min_bet || amt > this.s.max_bet || amt > s.stack) throw new Refused(`bad amount: bet ${amt}`);
        s.bet = amt;
        s.stack -= amt;
        this.t.debit(seat, amt, 'bet');
      } else if (type === 'skip') {
        allow(['type']);
        s.skipped = true;
      } else throw new Refused(`illegal: ${JSON.stringify(type)} while betting`);
      if (this.toAct() === null) this.deal();
      return;
    }
    if (this.phase === 'insurance') {
      if (type === 'insurance') {
        allow(['type', 'amount']);
        const amt = a.amount;
        if (!Number.isSafeInteger(amt) || amt < 0) throw new Refused('malformed: amount');
        if (amt < 1 || amt > Math.floor(s.bet! / 2) || amt > s.stack) throw new Refused(`bad amount: insurance ${amt}`);
        s.insurance = amt;
        s.stack -= amt;
        this.t.debit(seat, amt, 'insurance');
      } else if (type === 'no-insurance') {
        allow(['type']);
      } else throw new Refused(`illegal: ${JSON.stringify(type)} during insurance`);
      s.insuranceAsked = true;
      if (this.toAct() === null) this.peek();
      return;
    }
    if (this.phase !== 'playing') throw new Refused('hand over');
    const h = s.hands[this.cur!.hand];
    const two = h.cards.length === 2;
    switch (type) {
      case 'hit': {
        allow(['type']);
        if (this.left() - 1 < HOUSE_RESERVE) throw new Refused('illegal: the shoe is at its reserve');
        const [c] = this.t.deal('hit', [{ to: seat, up: true }]);
        h.cards.push(c);
        if (total(h.cards).total >= 21) h.done = true;
        break;
      }
      case 'stand':
        allow(['type']);
        h.done = true;
        break;
      case 'double': {
        allow(['type']);
        if (!two || (h.fromSplit && !this.s.double_after_split)) throw new Refused('illegal: double');
        if (this.left() - 1 < HOUSE_RESERVE) throw new Refused('illegal: the shoe is at its reserve');
        if (h.stake > s.stack) throw new Refused('bad amount: double');
        s.stack -= h.stake;
        this.t.debit(seat, h.stake, 'double');
        h.stake *= 2;
        h.doubled = true;
        const [c] = this.t.deal('double', [{ to: seat, up: true }]);
        h.cards.push(c);
        h.done = true;
        break;
      }
      case 'split': {
        allow(['type']);
        if (!this.canSplit(seat, h)) throw new Refused('illegal: split');
        const stake = s.bet!;
        if (stake > s.stack) throw new Refused('bad amount: split');
        s.stack -= stake;
        this.t.debit(seat, stake, 'split');
        s.splits++;
        const aces = points(h.cards[0]) === 11;
        const moved = h.cards.pop()!;
        const nh: BjHand = { cards: [moved], stake, done: false, fromSplit: true, splitAces: aces, doubled: false };
        h.fromSplit = true;
        h.splitAces = aces;
        s.hands.splice(this.cur!.hand + 1, 0, nh);
        const [c1, c2] = this.t.deal('split', [
          { to: seat, up: true },
          { to: seat, up: true },
        ]);
        h.cards.push(c1);
        nh.cards.push(c2);
        for (const x of [h, nh]) if (aces || total(x.cards).total >= 21) x.done = true;
        break;
      }
      default:
        throw new Refused(`illegal: ${JSON.stringify(type)} in play`);
    }
    this.advance();
  }

  canSplit(seat: number, h: BjHand): boolean {
    const s = this.seats[seat];
    if (h.cards.length !== 2 || h.splitAces) return false;
    if (points(h.cards[0]) !== points(h.cards[1])) return false;
    if (s.splits >= this.s.max_splits) return false;
    return this.left() - 2 >= HOUSE_RESERVE;
  }

  deal() {
    const bettors = this.betting();
    if (!bettors.length) {
      this.phase = 'over';
      return;
    }
    const specs: { to: number | 'h'; up: boolean }[] = [];
    for (const s of bettors) specs.push({ to: s, up: true });
    specs.push({ to: 'h', up: true });
    for (const s of bettors) specs.push({ to: s, up: true });
    specs.push({ to: 'h', up: false });
    const cards = this.t.deal('initial', specs);
    this.holePosition = this.t.dealt.length - 1;
    bettors.forEach((s, k) => {
      this.seats[s].hands.push({ cards: [cards[k], cards[bettors.length + 1 + k]], stake: this.seats[s].bet!, done: false, fromSplit: false, splitAces: false, doubled: false });
    });
    this.house = [cards[bettors.length], cards[cards.length - 1]];
    for (const s of bettors) for (const h of this.seats[s].hands) if (total(h.cards).total === 21) h.done = true;
    if (points(this.house[0]) === 11 && bettors.some((s) => this.insurable(s))) {
      this.phase = 'insurance';
      return;
    }
    this.peek();
  }

  /** The peek: a house blackjack shows and settles at once. */
  peek() {
    const up = points(this.house[0]);
    if ((up === 11 || up === 10) && total(this.house).total === 21) {
      this.houseBlackjack = true;
      this.t.reveal([this.holePosition]);
      this.settle();
      return;
    }
    this.phase = 'playing';
    this.cur = { seat: 0, hand: -1 };
    this.advance();
  }

  /** Moves to the next hand with a decision left; the house plays when none is. */
  advance() {
    let { seat, hand } = this.cur!;
    for (;;) {
      const s = this.seats[seat];
      if (s && hand >= 0 && hand < s.hands.length && !s.hands[hand].done) {
        this.cur = { seat, hand };
        return;
      }
      hand++;
      if (!s || hand >= s.hands.length) {
        seat++;
        hand = 0;
        if (seat >= this.n) break;
      }
    }
    this.cur = null;
    this.housePlays();
  }

  housePlays() {
    this.t.reveal([this.holePosition]);
    const live = this.betting().some((s) => this.seats[s].hands.some((h) => total(h.cards).total <= 21 && !isNatural(h)));
    if (live) {
      for (;;) {
        const { total: t, soft } = total(this.house);
        if (t < 17 || (t === 17 && soft && this.s.hit_soft_17)) {
          const [c] = this.t.deal('house', [{ to: 'h', up: true }]);
          this.house.push(c);
        } else break;
      }
    }
    this.settle();
  }

  details: any = null;
  winners: number[] = [];
  netBySeat: number[] = [];

  settle() {
    this.phase = 'over';
    this.cur = null;
    const houseTotal = total(this.house).total;
    const hbj = this.houseBlackjack;
    const credits: [number, number, string][] = [];
    let staked = 0;
    let paid = 0;
    const seatsOut: any[] = [];
    for (const seat of this.betting()) {
      const s = this.seats[seat];
      const handsOut: any[] = [];
      let seatStaked = s.insurance;
      let seatPaid = 0;
      s.hands.forEach((h, k) => {
        const t = total(h.cards).total;
        const nat = isNatural(h);
        let outcome: string;
        let payout = 0;
        if (t > 21) outcome = 'bust';
        else if (hbj) {
          if (nat) {
            outcome = 'push';
            payout = h.stake;
          } else outcome = 'lose';
        } else if (nat) {
          outcome = 'blackjack';
          payout = h.stake + Math.floor((3 * h.stake) / 2);
        } else if (houseTotal > 21 || t > houseTotal) {
          outcome = 'win';
          payout = 2 * h.stake;
        } else if (t === houseTotal) {
          outcome = 'push';
          payout = h.stake;
        } else outcome = 'lose';
        seatStaked += h.stake;
        seatPaid += payout;
        if (payout > 0) credits.push([seat, payout, `hand ${k + 1}: ${outcome}`]);
        handsOut.push({ total: t, outcome, stake: h.stake, payout });
      });
      const insPay = hbj && s.insurance > 0 ? 3 * s.insurance : 0;
      if (insPay > 0) credits.push([seat, insPay, 'insurance pays 2:1']);
      seatPaid += insPay;
      staked += seatStaked;
      paid += seatPaid;
      seatsOut.push({ seat, hands: handsOut, insurance: s.insurance, insurance_payout: insPay, net: seatPaid - seatStaked });
    }
    if (paid > staked) this.t.debit('house', paid - staked, 'house pays out');
    for (const [seat, amt, reason] of credits) this.t.credit(seat, amt, reason);
    if (staked > paid) this.t.credit('house', staked - paid, 'house wins');
    const houseNet = staked - paid;
    this.details = { game: 'blackjack', house_total: houseTotal, house_blackjack: hbj, seats: seatsOut, house_net: houseNet };
  }
}

export function replay(v: Vector, trace?: Trace): Outcome {
  const s = normalizeSettings(v.settings);
  const b = new Blackjack(v, s);
  drive(
    v,
    { table: b.t, actor: () => b.toAct(), auto: (seat) => b.auto(seat), apply: (seat, a) => b.apply(seat, a), over: () => b.phase === 'over' },
    trace,
  );
  const net = b.t.net.slice();
  const winners = net.map((x, i) => (x > 0 ? i : -1)).filter((i) => i >= 0);
  const houseNet = 0 - net.reduce((x, y) => x + y, 0);
  const result = b.t.result(winners, net, houseNet, 0);
  const details = b.details ?? { game: 'blackjack', house_total: 0, house_blackjack: false, seats: [], house_net: 0 };
  return { events: b.t.events, result, details, memory_after: {} };
}

// Sam Gong 三公 (`sam-gong`, rules version 3) replayed from SPEC.md §14.2
// and docs/games/sam-gong.md: tiers and settings, the banker (setting,
// tutorial, rotation with the D9 skip), the block deal, the banker's bet and
// the calls, hand values and the D8 tiebreak, both settlement rules with the
// rake and D13 insolvency, the chip order, the typed details and the memory.

import { parseCard } from '../audit';
import { Table, Refused, Vector, Outcome, Trace, unshuffled, vectorDeck, playerIds, drive, chips, object, playerId, memoryForm } from './common';

const MAX = 2 ** 50;

/** The tiers (docs/games/sam-gong.md §2): name, its Chinese names, entry chips, min bet, max bet. */
const TIERS: [string, string[], number, number, number][] = [
  ['bronze', ['青銅廳', '青銅'], 1_000, 100, 500],
  ['silver', ['白銀廳', '白銀'], 10_000, 1_000, 5_000],
  ['gold', ['黃金廳', '黃金'], 100_000, 10_000, 50_000],
  ['platinum', ['鉑金廳', '鉑金'], 1_000_000, 100_000, 500_000],
  ['diamond', ['鑽石廳', '鑽石'], 10_000_000, 1_000_000, 5_000_000],
];

type Settings = {
  tier: string;
  entry_chips: number;
  min_bet: number;
  max_bet: number;
  sam_gong: 'ten-value' | 'face-cards';
  rake_percent: number;
  tutorial: boolean;
  settlement: 'banker-pays' | 'one-pass';
  banker_seat?: number;
};

/** The normalised settings (docs/games/sam-gong.md §2; unknown keys are ignored). */
export function normalizeSettings(s: unknown): Settings {
  const o = object(s, 'settings', null);
  const tierName = o.tier === undefined ? 'bronze' : o.tier;
  const tier = TIERS.find(([name, aliases]) => name === tierName || aliases.includes(tierName));
  if (!tier) throw new Refused(`bad settings: tier ${JSON.stringify(tierName)}`);
  const opt = (k: string, d: number, max = MAX) => (o[k] === undefined || o[k] === null ? d : chips(o[k], k, max));
  const out: Settings = {
    tier: tier[0],
    entry_chips: opt('entry_chips', tier[2]),
    min_bet: opt('min_bet', tier[3]),
    max_bet: opt('max_bet', tier[4]),
    sam_gong: o.sam_gong === undefined ? 'ten-value' : o.sam_gong,
    rake_percent: opt('rake_percent', 5, 100),
    tutorial: o.tutorial === undefined ? false : o.tutorial,
    settlement: o.settlement === undefined ? 'banker-pays' : o.settlement,
  };
  if (out.sam_gong !== 'ten-value' && out.sam_gong !== 'face-cards') throw new Refused('bad settings: sam_gong');
  if (typeof out.tutorial !== 'boolean') throw new Refused('bad settings: tutorial');
  if (out.settlement !== 'banker-pays' && out.settlement !== 'one-pass') throw new Refused('bad settings: settlement');
  if (out.min_bet < 1 || out.max_bet < out.min_bet) throw new Refused('bad settings: 1 ≤ min_bet ≤ max_bet');
  if (o.banker_seat !== undefined && o.banker_seat !== null) out.banker_seat = chips(o.banker_seat, 'banker_seat', 255);
  return out;
}

/** The table memory's form (SPEC §14.2): `last_banker` and `last_order` left out when unset or empty. */
export function normalizeMemory(m: unknown): unknown {
  return memoryForm(m, (o) => {
    const out: Record<string, unknown> = {};
    if (o.last_banker !== undefined && o.last_banker !== null) out.last_banker = playerId(o.last_banker, 'table memory: last_banker');
    const order = o.last_order ?? [];
    if (!Array.isArray(order)) throw new Refused('table memory: last_order is not a list');
    if (order.length > 0) out.last_order = order.map((x: unknown) => playerId(x, 'table memory: last_order'));
    out.hands_played = o.hands_played === undefined ? 0 : chips(o.hands_played, 'table memory: hands_played', Number.MAX_SAFE_INTEGER);
    return out;
  });
}

// ---------- hands (§5)

const rankOf = (c: number) => Math.floor((c % 54) / 4) + 2; // 2..14, A = 14
const suitOf = (c: number) => (c % 54) % 4; // c d h s = 0..3
/** Sam Gong's rank scale: K 13 … 2, A 1. */
const sgRank = (c: number) => (rankOf(c) === 14 ? 1 : rankOf(c));
const pointOf = (c: number) => {
  const r = sgRank(c);
  return r >= 10 ? 0 : r;
};

type Value = { samGong: boolean; points: number; suit: number; rank: number };

function value(cards: number[], rule: Settings['sam_gong']): Value {
  const low = rule === 'ten-value' ? 10 : 11;
  const samGong = cards.every((c) => sgRank(c) >= low && sgRank(c) <= 13);
  return {
    samGong,
    points: samGong ? 0 : cards.reduce((s, c) => s + pointOf(c), 0) % 10,
    suit: Math.max(...cards.map(suitOf)),
    rank: Math.max(...cards.map(sgRank)),
  };
}

/** > 0 when `a` beats `b`, < 0 when it loses, 0 for a tie (D8, D10). */
function compare(a: Value, b: Value): number {
  if (a.samGong !== b.samGong) return a.samGong ? 1 : -1;
  if (a.points !== b.points) return a.points - b.points;
  if (a.suit !== b.suit) return a.suit - b.suit;
  return a.rank - b.rank;
}

const multiplier = (v: Value) => (v.samGong ? 3 : v.points === 9 ? 2 : 1);

// ---------- the hand

class SamGong {
  t: Table;
  n: number;
  balances: number[];
  banker: number;
  bet: number | null = null;
  /** Per seat: 'call', 'fold' or undefined (not acted yet). */
  acts: (string | undefined)[];
  order: number[];
  next = 0;
  over = false;
  hands: number[][] = [];
  details: any = null;
  winners: number[] = [];

  constructor(
    v: Vector,
    readonly s: Settings,
  ) {
    const n = v.balances.length;
    if (n < 2) throw new Refused(`bad players: ${n} players`);
    this.n = n;
    this.balances = v.balances.map((b) => chips(b, 'balance'));
    this.t = new Table(vectorDeck(v.deck_top, unshuffled(1, false)), n);
    this.ids = playerIds(v);
    this.banker = this.chooseBanker(v.memory);
    this.acts = new Array(n).fill(undefined);
    this.order = [];
    for (let k = 1; k < n; k++) this.order.push((this.banker + k) % n);
  }

  ids: string[];

  /** The timeout action (docs/games/sam-gong.md §3): the banker bets the minimum, a player folds. */
  auto(seat: number): any {
    return this.bet === null ? { type: 'bet', amount: this.s.min_bet } : { type: 'fold' };
  }

  covers(seat: number): boolean {
    return this.s.tutorial || this.balances[seat] >= this.s.min_bet;
  }

  /** The banker (§6): the setting, the tutorial's NPC seat, else the rotation with the D9 skip. */
  chooseBanker(memory: any): number {
    const { n, s } = this;
    if (s.banker_seat !== undefined) {
      if (s.banker_seat >= n || !this.covers(s.banker_seat)) throw new Refused(`bad players: banker seat ${s.banker_seat}`);
      return s.banker_seat;
    }
    if (s.tutorial) {
      if (n < 2) throw new Refused('bad players: the tutorial banker seat 1');
      return 1;
    }
    const ids = this.ids;
    if (memory !== null && memory !== undefined) {
      const last: string[] = Array.isArray(memory.last_order) ? memory.last_order : [];
      const at = last.indexOf(memory.last_banker);
      if (at >= 0) {
        for (let k = 1; k <= last.length; k++) {
          const seat = ids.indexOf(last[(at + k) % last.length]);
          if (seat >= 0 && this.covers(seat)) return seat;
        }
      }
    }
    // The first-hand rule: the most chips, the lowest seat among equals.
    let best = -1;
    for (let i = 0; i < n; i++) if (this.covers(i) && (best < 0 || this.balances[i] > this.balances[best])) best = i;
    if (best < 0) throw new Refused('bad players: nobody covers the minimum bet');
    return best;
  }

  start() {
    const specs: { to: number; up: boolean }[] = [];
    for (let seat = 0; seat < this.n; seat++) for (let k = 0; k < 3; k++) specs.push({ to: seat, up: false });
    const cards = this.t.deal('hole', specs);
    for (let seat = 0; seat < this.n; seat++) this.hands.push(cards.slice(3 * seat, 3 * seat + 3));
  }

  toAct(): number | null {
    if (this.over) return null;
    if (this.bet === null) return this.banker;
    return this.order[this.next] ?? null;
  }

  apply(seat: number, a: any) {
    const type = a?.type;
    const practice = this.s.tutorial;
    if (this.bet === null) {
      if (type !== 'bet' && type !== 'banker-bet') throw new Refused(`illegal: ${JSON.stringify(type)} before the banker's bet`);
      for (const k of Object.keys(a)) if (k !== 'type' && k !== 'amount') throw new Refused(`malformed: unknown field ${k}`);
      const amt = a.amount;
      if (!Number.isSafeInteger(amt) || amt < 0) throw new Refused('malformed: amount');
      if (amt < this.s.min_bet || amt > this.s.max_bet) throw new Refused(`bad amount: bet ${amt} out of range`);
      if (!practice && amt > this.balances[seat]) throw new Refused(`bad amount: bet ${amt} above the balance`);
      this.bet = amt;
      if (!practice) this.t.debit(seat, amt, 'banker bet (escrow)');
      if (this.order.length === 0) this.settle();
      return;
    }
    for (const k of Object.keys(a ?? {})) if (k !== 'type') throw new Refused(`malformed: unknown field ${k}`);
    if (type === 'call') {
      if (!practice && this.bet > this.balances[seat]) throw new Refused('bad amount: call above the balance');
      if (!practice) this.t.debit(seat, this.bet, 'call (escrow)');
      this.acts[seat] = 'call';
    } else if (type === 'fold') {
      this.acts[seat] = 'fold';
    } else throw new Refused(`illegal: ${JSON.stringify(type)} in the call phase`);
    this.next++;
    if (this.next >= this.order.length) this.settle();
  }

  settle() {
    this.over = true;
    const { s, banker } = this;
    const bet = this.bet!;
    const practice = s.tutorial;
    const callers = this.order.filter((x) => this.acts[x] === 'call');
    const allFold = callers.length === 0;
    if (!allFold) {
      const positions: number[] = [];
      for (const seat of [...callers, banker].sort((a, b) => a - b)) positions.push(3 * seat, 3 * seat + 1, 3 * seat + 2);
      this.t.reveal(positions);
    }
    const rake = (base: number) => (base > 0 && s.rake_percent > 0 ? Math.max(1, Math.floor((base * s.rake_percent) / 100)) : 0);
    const bankerValue = value(this.hands[banker], s.sam_gong);
    // A practice hand settles against a banker that can always pay: its
    // balance (at least the bet) plus 4 × the bet per other seat.
    const start = practice ? Math.max(this.balances[banker], bet) + 4 * bet * this.order.length : this.balances[banker];
    let funds = start;
    let waited = 0;
    let insolvent = false;
    let pot = 0;
    let losersTotal = 0;
    let forfeited = 0;
    const entries: any[] = [];
    const payouts: [number, number, string][] = [];
    for (const seat of this.order) {
      if (this.acts[seat] !== 'call') {
        entries.push({ seat, result: 'fold', bet: 0, multiplier: 0, payout: 0, net: 0 });
        continue;
      }
      const v = value(this.hands[seat], s.sam_gong);
      const c = compare(v, bankerValue);
      const mult = multiplier(v);
      const e: any = { seat, result: '', bet, multiplier: mult, payout: 0, net: 0 };
      if (c === 0) {
        e.result = 'tie';
        e.payout = bet;
      } else if (c < 0) {
        e.result = 'lose';
        e.net = -bet;
        losersTotal += bet;
        if (!insolvent) {
          const inc = rake(pot + bet) - rake(pot);
          pot += bet;
          if (s.settlement === 'one-pass') funds += bet - inc;
          else waited += bet - inc;
        } else {
          waited += bet;
          forfeited += bet;
        }
      } else {
        const due = mult * bet;
        if (insolvent || (funds === 0 && s.settlement === 'banker-pays')) {
          e.result = 'insolvent-win';
          e.net = -bet;
          waited += bet;
          forfeited += bet;
          insolvent = true;
        } else if (due <= funds) {
          e.result = 'win';
          e.payout = bet + due;
          e.net = due;
          funds -= due;
        } else {
          e.result = 'win';
          e.payout = bet + funds;
          e.net = funds;
          e.shortfall = due - funds;
          funds = 0;
          insolvent = true;
        }
      }
      if (e.payout > 0) payouts.push([seat, e.payout, e.result === 'tie' ? 'tie: call returned' : 'call returned with winnings']);
      entries.push(e);
    }
    const rakeTotal = rake(pot);
    const final = allFold ? start : funds + waited;
    const afterEscrow = start - bet;
    if (!practice) {
      if (final < afterEscrow) this.t.debit(banker, afterEscrow - final, 'banker pays winners');
      for (const [seat, amt, reason] of payouts) this.t.credit(seat, amt, reason);
      if (final > afterEscrow) this.t.credit(banker, final - afterEscrow, allFold ? 'all folded: banker bet returned' : 'banker collects');
    }
    const bankerNet = final - start;
    this.details = {
      game: 'sam-gong',
      rule: s.settlement,
      practice,
      settlement: {
        banker,
        banker_bet: bet,
        entries,
        losers_total: losersTotal,
        pot,
        rake: rakeTotal,
        forfeited,
        banker_insolvent: insolvent,
        all_fold: allFold,
        banker_remaining: final,
        banker_net: bankerNet,
      },
    };
    const nets = new Array(this.n).fill(0);
    nets[banker] = bankerNet;
    for (const e of entries) nets[e.seat] = e.net;
    this.winners = nets.map((x, i) => (x > 0 ? i : -1)).filter((i) => i >= 0);
    this.rake = practice ? 0 : rakeTotal;
  }

  rake = 0;
}

export function replay(v: Vector, trace?: Trace): Outcome {
  const s = normalizeSettings(v.settings);
  const g = new SamGong(v, s);
  g.start();
  drive(
    v,
    { table: g.t, actor: () => g.toAct(), auto: (seat) => g.auto(seat), apply: (seat, a) => g.apply(seat, a), over: () => g.over },
    trace,
  );
  const net = g.t.net.slice();
  const result = g.t.result(g.winners, net, 0, g.rake);
  const hp = v.memory && Number.isSafeInteger(v.memory.hands_played) ? v.memory.hands_played : 0;
  const ids = g.ids;
  return {
    events: g.t.events,
    result,
    details: g.details,
    memory_after: { last_banker: ids[g.banker], last_order: ids, hands_played: hp + 1 },
  };
}

/** The tutorial's three rounds (docs/games/sam-gong.md §9): the NPC banker's cards and the learner's. */
const SCRIPT: { banker: string[]; learner: string[] }[] = [
  { banker: ['As', '2c', '4d'], learner: ['Ks', 'Qh', 'Jd'] },
  { banker: ['3d', 'Kc', 'Qs'], learner: ['5s', 'Ah', '9d'] },
  { banker: ['2s', '4h', 'Qd'], learner: ['6h', 'Js', 'Qc'] },
];

/**
 * The deck a tutorial table deals for hand `handNumber` (the script cycles):
 * seat s gets positions 3s–3s+2, the NPC banker's block (its fixed seat,
 * 1 unless `banker_seat` says otherwise) and the learner's (the lowest other
 * seat) hold their scripted cards, every other position the remaining cards
 * in canonical order; `null` at a table that shuffles.
 */
export function scriptedDeck(settings: unknown, handNumber: number): number[] | null {
  const s = normalizeSettings(settings);
  if (!s.tutorial) return null;
  const banker = s.banker_seat ?? 1;
  const learnerAt = banker === 0 ? 1 : 0;
  const r = SCRIPT[handNumber % SCRIPT.length];
  const npc = r.banker.map((c) => parseCard(c));
  const learner = r.learner.map((c) => parseCard(c));
  const rest = unshuffled(1, false).filter((c) => !npc.includes(c) && !learner.includes(c));
  const deck: number[] = [];
  for (let block = 0; block <= Math.max(banker, learnerAt); block++) {
    if (block === banker) deck.push(...npc);
    else if (block === learnerAt) deck.push(...learner);
    else deck.push(...rest.splice(0, 3));
  }
  return deck.concat(rest);
}

// Guandan (`guandan`, rules version 3) replayed from SPEC.md §13.1, §14,
// §14.2 and docs/games/guandan.md: one deal of a match — the deal, tribute,
// resisting, return and their card transfers, every play's readings (wild
// cards included) and whether it beats the table under the bomb profile,
// CLEARED and catch-up, surrender votes, the finishing order, level
// progression, the match's end, the settlement, the typed details and the
// table memory. It gives the same output as the Rust replay for the same input
// and refuses what the Rust replay refuses, with an error naming the step.
// With a trace it also gives each seat's auto (timeout) action under
// `timeout_action` `pass` (SPEC.md §14.2); under `ai` (the L2 AI, not
// specified) none.

import { parseCard, cardText } from '../audit';

import { Refused, type Outcome, type Trace, type Vector } from './common';

export type { Outcome, Trace, Vector };

// Refusals are worded as the Rust `GameError`.
const illegal = (m: string) => new Refused(`illegal action: ${m}`);
const malformed = (m: string) => new Refused(`malformed action: ${m}`);
const notInHand = (m: string) => new Refused(`card not in hand: ${m}`);
const badDeal = (m: string) => new Refused(`unexpected cards from the engine: ${m}`);
const badSettings = (m: string) => new Refused(`bad settings: ${m}`);

const PACKS = 2;
const DECK_SIZE = 108;
const SMALL_JOKER = 15;
const BIG_JOKER = 16;
const ACE = 14;
const HEARTS = 2;
const STAKE_LIMIT = 2 ** 40;

// ---------- cards

/** Natural rank: 2..14, small joker 15, big joker 16. */
const natural = (id: number) => {
  const face = id % 54;
  return face === 52 ? SMALL_JOKER : face === 53 ? BIG_JOKER : Math.floor(face / 4) + 2;
};
/** 0 clubs … 3 spades; null for a joker. */
const suitOf = (id: number) => (id % 54 >= 52 ? null : (id % 54) % 4);
const packOf = (id: number) => Math.floor(id / 54);

/** Level order for singles, pairs, triples, triples with a pair and bombs. */
const order = (rank: number, level: number) => (rank === level ? 15 : rank >= SMALL_JOKER ? rank + 1 : rank);

type Wilds = { level: number; count: number };
const isWild = (id: number, w: Wilds) => suitOf(id) === HEARTS && natural(id) === w.level && packOf(id) < w.count;

type Tally = { byRank: number[]; bySuit: number[][]; wilds: number; len: number };

function tally(cards: number[], w: Wilds): Tally {
  const t: Tally = { byRank: new Array(15).fill(0), bySuit: Array.from({ length: 13 }, () => [0, 0, 0, 0]), wilds: 0, len: 0 };
  for (const id of cards) {
    t.len++;
    if (isWild(id, w)) {
      t.wilds++;
      continue;
    }
    const s = natural(id) - 2;
    t.byRank[s]++;
    const suit = suitOf(id);
    if (suit !== null) t.bySuit[s][suit]++;
  }
  return t;
}
const count = (t: Tally, rank: number) => t.byRank[rank - 2];
const naturals = (t: Tally) => t.len - t.wilds;

// ---------- patterns

type Kind =
  | 'single' | 'pair' | 'triple' | 'triple-with-pair' | 'straight' | 'consecutive-pairs'
  | 'steel-plate' | 'straight-flush' | 'bomb' | 'four-jokers';
const KINDS: Kind[] = [
  'single', 'pair', 'triple', 'triple-with-pair', 'straight', 'consecutive-pairs',
  'steel-plate', 'straight-flush', 'bomb', 'four-jokers',
];
/** Which wilds make a play mixed (setting `purity`, docs/games/guandan.md "Purity"). */
type Purity = 'stand-in' | 'any-wild';
type Reading = { kind: Kind; rank: number; len: number; pure: boolean };

const isBombKind = (k: Kind) => k === 'bomb' || k === 'straight-flush' || k === 'four-jokers';
const isSequence = (k: Kind) => k === 'straight' || k === 'consecutive-pairs' || k === 'steel-plate' || k === 'straight-flush';
/** The source rules' reading priority, 1 first. */
const PRIORITY: Record<Kind, number> = {
  'four-jokers': 1, bomb: 2, 'straight-flush': 3, 'steel-plate': 4, 'consecutive-pairs': 5,
  straight: 6, 'triple-with-pair': 7, triple: 8, pair: 9, single: 10,
};

/** Rank windows of sequences of `len` ranks, lowest first: A low first, A high last when allowed. */
function windows(len: number, aceHigh: boolean): [number[], number][] {
  const out: [number[], number][] = [];
  const starts = [1];
  for (let s = 2; s <= ACE + 1 - len; s++) starts.push(s);
  for (const s of starts) {
    if (!(aceHigh || s + len - 1 < ACE)) continue;
    const ranks: number[] = [];
    for (let i = 0; i < len; i++) ranks.push(s + i === 1 ? ACE : s + i);
    out.push([ranks, s + len - 1]);
  }
  return out;
}

/** The naturals fit `each` of every rank in `ranks` with the wilds filling exactly the gaps;
 * gives the rank a single filled card stands for (null otherwise), or undefined when they do not fit. */
function fill(t: Tally, ranks: number[], each: number): number | null | undefined {
  let inside = 0;
  let need = 0;
  let missing: number | null = null;
  for (const r of ranks) {
    const c = count(t, r);
    if (c > each) return undefined;
    inside += c;
    need += each - c;
    if (c < each) missing = r;
  }
  if (inside !== naturals(t) || need !== t.wilds) return undefined;
  return need === 1 ? missing : null;
}

function oneSuit(t: Tally): number | null {
  for (let s = 0; s < 4; s++) {
    let n = 0;
    for (const x of t.bySuit) n += x[s];
    if (n === naturals(t)) return s;
  }
  return null;
}

/**
 * Every reading of a group (docs/games/guandan.md "Patterns"); under the
 * `purity` setting `any-wild` a group with a wild is mixed in every reading.
 */
export function readings(t: Tally, level: number, aceHigh: boolean, purity: Purity = 'stand-in'): Reading[] {
  const out: Reading[] = [];
  const n = t.len;
  const w = t.wilds;
  const jokers = t.byRank[13] + t.byRank[14];
  let distinct = 0;
  let only = 0;
  t.byRank.forEach((c, s) => {
    if (c > 0) {
      distinct++;
      only = s;
    }
  });
  const same = distinct === 0 ? level : distinct === 1 ? only + 2 : null;
  if (same !== null) {
    const joker = same >= SMALL_JOKER;
    const kind: Kind | null =
      n === 1 ? 'single'
        : n === 2 && (!joker || w === 0) ? 'pair'
          : n === 3 && !joker ? 'triple'
            : n >= 4 && n <= 10 && !joker ? 'bomb'
              : null;
    if (kind) out.push({ kind, rank: same, len: n, pure: w === 0 || same === level });
  }
  if (n === 4 && w === 0 && t.byRank[13] === 2 && t.byRank[14] === 2) {
    out.push({ kind: 'four-jokers', rank: BIG_JOKER, len: 4, pure: true });
  }
  if (n === 5) {
    // Triple with a pair: one reading per triple rank (the pair's rank does not compare).
    for (let ts = 0; ts < 13; ts++) {
      const ct = t.byRank[ts];
      if (ct > 3 || (ct === 0 && t.wilds < 3)) continue;
      for (let ps = 0; ps < 15; ps++) {
        const cp = t.byRank[ps];
        if (ps === ts || cp > 2 || (ps >= 13 && cp !== 2)) continue;
        if (ct + cp === naturals(t) && 3 - ct + (2 - cp) === t.wilds) {
          out.push({ kind: 'triple-with-pair', rank: ts + 2, len: 5, pure: t.wilds === 0 });
          break;
        }
      }
    }
    if (jokers === 0) {
      for (const [ranks, top] of windows(5, aceHigh)) {
        const missing = fill(t, ranks, 1);
        if (missing === undefined) continue;
        out.push({ kind: 'straight', rank: top, len: 5, pure: w === 0 });
        const suit = oneSuit(t);
        if (suit !== null) {
          const pure = w === 0 || (w === 1 && suit === HEARTS && missing === level);
          out.push({ kind: 'straight-flush', rank: top, len: 5, pure });
        }
      }
    }
  }
  if (n === 6 && jokers === 0) {
    for (const [ranks, top] of windows(3, aceHigh)) {
      if (fill(t, ranks, 2) !== undefined) out.push({ kind: 'consecutive-pairs', rank: top, len: 6, pure: w === 0 });
    }
    for (const [ranks, top] of windows(2, aceHigh)) {
      if (fill(t, ranks, 3) !== undefined) out.push({ kind: 'steel-plate', rank: top, len: 6, pure: w === 0 });
    }
  }
  if (purity === 'any-wild' && w > 0) for (const r of out) r.pure = false;
  return out;
}

/** Sorts readings by priority, then more cards, then strength, then pure first (stable). */
function byPriority(rs: Reading[], level: number): Reading[] {
  const strength = (r: Reading) => (isSequence(r.kind) ? r.rank : order(r.rank, level));
  return rs
    .map((r, i) => ({ r, i }))
    .sort(
      (a, b) =>
        PRIORITY[a.r.kind] - PRIORITY[b.r.kind] ||
        b.r.len - a.r.len ||
        strength(b.r) - strength(a.r) ||
        Number(b.r.pure) - Number(a.r.pure) ||
        a.i - b.i,
    )
    .map((x) => x.r);
}

const RANK_NAMES = ['2', '3', '4', '5', '6', '7', '8', '9', '10', 'J', 'Q', 'K', 'A', 'BJ', 'RJ'];
const rankName = (r: number) => RANK_NAMES[r - 2] ?? '?';

function describe(r: Reading): string {
  const name = rankName(r.rank);
  switch (r.kind) {
    case 'single': return `single ${name}`;
    case 'pair': return `pair of ${name}`;
    case 'triple': return `triple ${name}`;
    case 'triple-with-pair': return `triple ${name} with a pair`;
    case 'straight': return `straight to ${name}`;
    case 'consecutive-pairs': return `consecutive pairs to ${name}`;
    case 'steel-plate': return `steel plate to ${name}`;
    case 'straight-flush': return `straight flush to ${name}`;
    case 'bomb': return `${r.pure ? 'pure' : 'mixed'} bomb of ${r.len} × ${name}`;
    case 'four-jokers': return 'four jokers';
  }
}

// ---------- comparison (bomb profiles)

type Tier = { tier: 'bombs'; min: number; max: number } | { tier: 'straight-flush' } | { tier: 'four-jokers' };
type Criterion = 'purity' | 'rank' | 'count';
type Profile = { tiers: Tier[]; within: Criterion[] };

const COMPETITION: Profile = {
  tiers: [{ tier: 'bombs', min: 4, max: 5 }, { tier: 'straight-flush' }, { tier: 'bombs', min: 6, max: 10 }, { tier: 'four-jokers' }],
  within: ['count', 'rank'],
};

function seedProfile(sfBeatsBomb: boolean, priority: 'by-rank' | 'by-count'): Profile {
  const bombs: Tier = { tier: 'bombs', min: 4, max: 10 };
  return {
    tiers: sfBeatsBomb
      ? [bombs, { tier: 'straight-flush' }, { tier: 'four-jokers' }]
      : [{ tier: 'straight-flush' }, bombs, { tier: 'four-jokers' }],
    within: priority === 'by-rank' ? ['purity', 'rank', 'count'] : ['purity', 'count', 'rank'],
  };
}

function inTier(t: Tier, r: Reading): boolean {
  if (t.tier === 'bombs') return r.kind === 'bomb' && r.len >= t.min && r.len <= t.max;
  return r.kind === t.tier;
}

function checkProfile(p: Profile): string | null {
  const covers = (r: Reading) => p.tiers.filter((t) => inTier(t, r)).length;
  for (let len = 4; len <= 10; len++) {
    if (covers({ kind: 'bomb', rank: 2, len, pure: true }) !== 1) return `bombs of ${len} need exactly one tier`;
  }
  if (covers({ kind: 'straight-flush', rank: 2, len: 5, pure: true }) !== 1) return 'StraightFlush needs exactly one tier';
  if (covers({ kind: 'four-jokers', rank: 2, len: 4, pure: true }) !== 1) return 'FourJokers needs exactly one tier';
  if (new Set(p.within).size !== p.within.length) return 'a criterion repeats';
  return null;
}

function key(p: Profile, r: Reading, level: number): number[] {
  const tier = Math.max(0, p.tiers.findIndex((t) => inTier(t, r)));
  return [
    tier,
    ...p.within.map((c) =>
      c === 'purity' ? Number(r.pure) : c === 'count' ? r.len : r.kind === 'straight-flush' ? r.rank : order(r.rank, level),
    ),
  ];
}

/** Whether `play` beats `table` at this level under this profile. */
export function beats(play: Reading, table: Reading, level: number, p: Profile): boolean {
  const a = isBombKind(play.kind);
  const b = isBombKind(table.kind);
  if (a && !b) return true;
  if (!a && b) return false;
  if (a && b) {
    const ka = key(p, play, level);
    const kb = key(p, table, level);
    for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return ka[i] > kb[i];
    return false;
  }
  if (play.kind !== table.kind || play.len !== table.len) return false;
  return isSequence(play.kind) ? play.rank > table.rank : order(play.rank, level) > order(table.rank, level);
}

// ---------- settings and memory

const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isUint = (v: unknown, max: number) => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= max;

type Settings = {
  stake_per_level: number;
  bomb_profile: any;
  same_suit_straight_beats_bomb: boolean;
  bomb_compare_priority: 'by-rank' | 'by-count';
  double_down_levels: number;
  can_tribute_wild: boolean;
  tribute_level_rank: boolean;
  tribute_prefer_non_heart: boolean;
  tribute_return_max_rank: number;
  return_level_rank: boolean;
  resist: 'one-holder' | 'paying-side';
  double_tribute: 'by-seat' | 'by-card';
  straight_extends_to_ace: boolean;
  wild_count: number;
  team_formation: 'fixed13';
  ace_rule: 'any-win' | 'partner-not-last' | 'reach';
  /** Left out of the normal form when `stand-in` (the default). */
  purity?: Purity;
  show_tribute: boolean;
  max_game_duration_sec: number;
  timeout_action: 'pass' | 'ai';
};

const DEFAULTS: Settings = {
  stake_per_level: 1,
  bomb_profile: 'competition',
  same_suit_straight_beats_bomb: true,
  bomb_compare_priority: 'by-rank',
  double_down_levels: 3,
  can_tribute_wild: false,
  tribute_level_rank: false,
  tribute_prefer_non_heart: true,
  tribute_return_max_rank: 10,
  return_level_rank: false,
  resist: 'one-holder',
  double_tribute: 'by-seat',
  straight_extends_to_ace: true,
  wild_count: 2,
  team_formation: 'fixed13',
  ace_rule: 'any-win',
  show_tribute: false,
  max_game_duration_sec: 0,
  timeout_action: 'pass',
};

const ENUMS: Partial<Record<keyof Settings, string[]>> = {
  bomb_compare_priority: ['by-rank', 'by-count'],
  resist: ['one-holder', 'paying-side'],
  double_tribute: ['by-seat', 'by-card'],
  team_formation: ['fixed13'],
  ace_rule: ['any-win', 'partner-not-last', 'reach'],
  purity: ['stand-in', 'any-wild'],
  timeout_action: ['pass', 'ai'],
};
const U8 = ['double_down_levels', 'tribute_return_max_rank', 'wild_count'];

function parseCustom(v: unknown): Profile {
  const bad = () => badSettings(`bomb_profile: ${JSON.stringify(v)}`);
  if (!isObject(v) || !Array.isArray(v.tiers) || !Array.isArray(v.within)) throw bad();
  if (Object.keys(v).some((k) => k !== 'tiers' && k !== 'within')) throw bad();
  const tiers = v.tiers.map((t: unknown): Tier => {
    if (!isObject(t)) throw bad();
    if (t.tier === 'bombs') {
      if (!isUint(t.min, 255) || !isUint(t.max, 255)) throw bad();
      return { tier: 'bombs', min: t.min, max: t.max };
    }
    if (t.tier === 'straight-flush' || t.tier === 'four-jokers') return { tier: t.tier };
    throw bad();
  });
  const within = v.within.map((c: unknown) => {
    if (c !== 'purity' && c !== 'rank' && c !== 'count') throw bad();
    return c as Criterion;
  });
  return { tiers, within };
}

/** Normalised settings and the bomb profile they select, or a refusal. */
export function normalizeSettings(s: unknown): { settings: Settings; profile: Profile } {
  const out: Settings = { ...DEFAULTS };
  if (s !== null && s !== undefined) {
    if (!isObject(s)) throw badSettings('settings are not an object');
    for (const [k, v] of Object.entries(s)) {
      if (!(k in DEFAULTS) && k !== 'purity') throw badSettings(`unknown field \`${k}\``);
      const key = k as keyof Settings;
      const bad = () => badSettings(`${k}: ${JSON.stringify(v)}`);
      if (key === 'bomb_profile') {
        if (v === 'competition' || v === 'seed') out.bomb_profile = v;
        else if (isObject(v) && Object.keys(v).length === 1 && 'custom' in v) out.bomb_profile = { custom: parseCustom(v.custom) };
        else throw bad();
      } else if (ENUMS[key]) {
        if (!ENUMS[key]!.includes(v as string)) throw bad();
        (out as any)[key] = v;
      } else if (typeof DEFAULTS[key] === 'boolean') {
        if (typeof v !== 'boolean') throw bad();
        (out as any)[key] = v;
      } else {
        if (!isUint(v, U8.includes(k) ? 255 : Number.MAX_SAFE_INTEGER)) throw bad();
        (out as any)[key] = v;
      }
    }
  }
  if (out.purity === 'stand-in') delete out.purity;
  if (out.stake_per_level === 0 || out.stake_per_level > STAKE_LIMIT) throw badSettings('stake_per_level must be 1–2^40');
  if (out.double_down_levels < 1 || out.double_down_levels > 6) throw badSettings('double_down_levels must be 1–6');
  if (out.wild_count > PACKS) throw badSettings('wild_count must be 0–2');
  const r = out.tribute_return_max_rank;
  if (r !== 0 && (r < 2 || r > 16)) throw badSettings('tribute_return_max_rank must be 0 or 2–16');
  const profile =
    out.bomb_profile === 'competition'
      ? COMPETITION
      : out.bomb_profile === 'seed'
        ? seedProfile(out.same_suit_straight_beats_bomb, out.bomb_compare_priority)
        : out.bomb_profile.custom;
  const err = checkProfile(profile);
  if (err) throw badSettings(err);
  return { settings: out, profile };
}

type MatchEnd = { kind: 'normal' | 'surrender' | 'timeout' | 'disconnect'; winner: number } | { kind: 'draw' };
type EndRequest = { kind: 'timeout' } | { kind: 'disconnect'; seat: number };
type Memory = {
  match_no: number;
  deal: number;
  levels: [number, number];
  level_team: number;
  last_order: number[];
  matches_won: [number, number];
  draws: number;
  last_match_end?: MatchEnd;
  end_request?: EndRequest;
};

const defaultMemory = (): Memory => ({
  match_no: 0, deal: 0, levels: [2, 2], level_team: 0, last_order: [], matches_won: [0, 0], draws: 0,
});

const U32 = 0xffffffff;

function parseMemory(m: unknown): Memory {
  const out = defaultMemory();
  if (m === null || m === undefined) return out;
  const bad = (k: string, v: unknown) => malformed(`table memory: ${k}: ${JSON.stringify(v)}`);
  if (!isObject(m)) throw malformed('table memory: not an object');
  for (const [k, v] of Object.entries(m)) {
    switch (k) {
      case 'match_no':
      case 'deal':
      case 'draws':
        if (!isUint(v, U32)) throw bad(k, v);
        out[k] = v;
        break;
      case 'levels':
        if (!Array.isArray(v) || v.length !== 2 || !v.every((l) => isUint(l, 255) && l >= 2 && l <= ACE)) throw bad(k, v);
        out.levels = [v[0], v[1]];
        break;
      case 'level_team':
        if (!isUint(v, 255)) throw bad(k, v);
        out.level_team = v as number;
        break;
      case 'last_order':
        if (!Array.isArray(v) || !v.every((s) => isUint(s, 255))) throw bad(k, v);
        out.last_order = v.slice();
        break;
      case 'matches_won':
        if (!Array.isArray(v) || v.length !== 2 || !v.every((x) => isUint(x, U32))) throw bad(k, v);
        out.matches_won = [v[0], v[1]];
        break;
      case 'last_match_end':
        if (v === null) break;
        if (!isObject(v)) throw bad(k, v);
        if (v.kind === 'draw') out.last_match_end = { kind: 'draw' };
        else if (['normal', 'surrender', 'timeout', 'disconnect'].includes(v.kind) && isUint(v.winner, 255)) {
          out.last_match_end = { kind: v.kind, winner: v.winner };
        } else throw bad(k, v);
        break;
      case 'end_request':
        if (v === null) break;
        if (!isObject(v)) throw bad(k, v);
        if (v.kind === 'timeout') out.end_request = { kind: 'timeout' };
        else if (v.kind === 'disconnect' && isUint(v.seat, 255)) out.end_request = { kind: 'disconnect', seat: v.seat };
        else throw bad(k, v);
        break;
      default:
        throw malformed(`table memory: unknown field \`${k}\``);
    }
  }
  return out;
}

/** The table memory's form (`GdMemory`, docs/games/guandan.md): every member, the unset optional ones left out. */
export function normalizeMemory(m: unknown): unknown {
  return m === null ? null : memoryJson(parseMemory(m));
}

function checkMemory(m: Memory): void {
  if (m.level_team > 1) throw malformed('table memory: level_team must be 0 or 1');
  const o = m.last_order.slice().sort((a, b) => a - b);
  const seats = o.length === 0 || (o.length === 4 && o.every((s, i) => s === i));
  if (!seats || m.deal > 0 === (o.length === 0)) throw malformed('table memory: last_order must be the 4 seats after a deal');
  if (m.end_request?.kind === 'disconnect' && m.end_request.seat > 3) throw malformed('table memory: disconnect of a missing seat');
}

// ---------- actions

type Action =
  | { type: 'play'; cards: number[]; reading: { kind: Kind; rank: number } | null }
  | { type: 'pass' }
  | { type: 'tribute' | 'return'; position: number }
  | { type: 'surrender' }
  | { type: 'vote'; accept: boolean };

function parseAction(a: unknown): Action {
  if (!isObject(a)) throw malformed('action: not an object');
  const fields = (required: string[], optional: string[] = []) => {
    for (const k of Object.keys(a)) {
      if (k !== 'type' && !required.includes(k) && !optional.includes(k)) throw malformed(`action: unknown field \`${k}\``);
    }
    for (const k of required) if (!(k in a)) throw malformed(`action: missing field \`${k}\``);
  };
  switch (a.type) {
    case 'play': {
      fields(['cards'], ['reading']);
      if (!Array.isArray(a.cards)) throw malformed('action: cards is not a list');
      const cards = a.cards.map((c: unknown) => {
        try {
          return parseCard(c);
        } catch {
          throw malformed(`action: bad card ${JSON.stringify(c)}`);
        }
      });
      let reading: { kind: Kind; rank: number } | null = null;
      if (a.reading !== undefined && a.reading !== null) {
        const r = a.reading;
        if (!isObject(r) || Object.keys(r).some((k) => k !== 'kind' && k !== 'rank') || !KINDS.includes(r.kind) || !isUint(r.rank, 255)) {
          throw malformed(`action: reading ${JSON.stringify(r)}`);
        }
        reading = { kind: r.kind, rank: r.rank };
      }
      return { type: 'play', cards, reading };
    }
    case 'pass':
    case 'surrender':
      fields([]);
      return { type: a.type };
    case 'tribute':
    case 'return':
      fields(['position']);
      if (!isUint(a.position, 0xffff)) throw malformed(`action: position ${JSON.stringify(a.position)}`);
      return { type: a.type, position: a.position };
    case 'vote':
      fields(['accept']);
      if (typeof a.accept !== 'boolean') throw malformed(`action: accept ${JSON.stringify(a.accept)}`);
      return { type: 'vote', accept: a.accept };
    default:
      throw malformed(`action: unknown type ${JSON.stringify(a.type)}`);
  }
}

// ---------- tribute and return

const team = (s: number) => s % 2;
const partner = (s: number) => (s + 2) % 4;
const value = (id: number, level: number) => order(natural(id), level);

/** (payers clockwise from the first, receivers) after a deal with this finishing order. */
function parties(o: number[]): [number[], number[]] {
  const first = o[0];
  if (team(o[1]) === team(first)) {
    const payers = [o[2], o[3]].sort((a, b) => ((a + 4 - first) % 4) - ((b + 4 - first) % 4));
    return [payers, [o[0], o[1]]];
  }
  return [[o[3]], [first]];
}

/** Why `card` may not be given at all, or null. */
function mayGive(card: number, w: Wilds, s: Settings): string | null {
  if (isWild(card, w)) return s.can_tribute_wild ? null : `${cardText(card)} is wild and may not be given as tribute`;
  if (natural(card) === w.level && !s.tribute_level_rank) return `${cardText(card)} is a level card and may not be given as tribute`;
  return null;
}

function tributeChoices(hand: number[], w: Wilds, s: Settings): number[] {
  const allowed = hand.filter((c) => mayGive(c, w, s) === null);
  if (allowed.length === 0) return [];
  const top = Math.max(...allowed.map((c) => value(c, w.level)));
  const best = allowed.filter((c) => value(c, w.level) === top);
  const nonHeart = best.filter((c) => suitOf(c) !== HEARTS);
  return s.tribute_prefer_non_heart && nonHeart.length > 0 ? nonHeart : best;
}

function checkTribute(hand: number[], card: number, w: Wilds, s: Settings): void {
  const why = mayGive(card, w, s);
  if (why) throw illegal(why);
  const choices = tributeChoices(hand, w, s);
  if (choices.includes(card)) return;
  if (choices.length > 0 && value(choices[0], w.level) === value(card, w.level)) {
    throw illegal(`${cardText(card)}: a card of the same rank that is not a heart must be given first`);
  }
  const highest = choices.length > 0 ? cardText(choices[0] % 54) : 'none';
  throw illegal(`${cardText(card)} is not the highest card the tribute allows (${highest})`);
}

/** Why `card` is not a return under the strict rules, or null. */
function returnError(card: number, w: Wilds, s: Settings): string | null {
  if (isWild(card, w)) return `${cardText(card)} is wild and may not be returned`;
  const r = natural(card);
  if (r === w.level && !s.return_level_rank) return `${cardText(card)} is a level card and may not be returned`;
  if (s.tribute_return_max_rank !== 0 && r > s.tribute_return_max_rank) {
    return `${cardText(card)} is above the return limit ${s.tribute_return_max_rank}`;
  }
  return null;
}

/** The cards a hand may return; when none meets the rules, its lowest natural (non-wild) cards. */
function returnChoices(hand: number[], w: Wilds, s: Settings): number[] {
  const strict = hand.filter((c) => returnError(c, w, s) === null);
  if (strict.length > 0) return strict;
  const nat = hand.filter((c) => !isWild(c, w));
  if (nat.length === 0) return [];
  const low = Math.min(...nat.map((c) => value(c, w.level)));
  return nat.filter((c) => value(c, w.level) === low);
}

// ---------- the deal

type Phase = 'tribute' | 'return' | 'playing' | 'vote' | 'done';
type Gift = { from: number; to: number | null; card: number };
type DealOutcome = {
  order: number[];
  winner_team: number | null;
  levels_up: number;
  levels_after: [number, number];
  match_end: MatchEnd | null;
  net: number[];
  memory_after: Memory;
};

function nextMatch(m: Memory, end: MatchEnd): Memory {
  const n = defaultMemory();
  n.match_no = m.match_no + 1;
  n.matches_won = [m.matches_won[0], m.matches_won[1]];
  n.draws = m.draws;
  if (end.kind === 'draw') n.draws++;
  else n.matches_won[end.winner]++;
  n.last_match_end = end;
  return n;
}

class Deal {
  phase: Phase = 'playing';
  hands: number[][] = [[], [], [], []];
  positions = new Map<number, number>();
  tribute: { payers: number[]; receivers: number[]; resisted: boolean; given: Gift[]; returned: Gift[] } | null = null;
  turn = 0;
  lead: { seat: number; reading: Reading } | null = null;
  passes = 0;
  finished: number[] = [];
  surrendered = [false, false];
  vote: { proposer: number; ask: number[]; partnerAgreed: boolean } | null = null;
  outcome: DealOutcome | null = null;
  readonly level: number;
  readonly wilds: Wilds;

  constructor(
    readonly s: Settings,
    readonly profile: Profile,
    readonly memory: Memory,
    readonly balances: number[],
  ) {
    this.level = memory.levels[Math.min(memory.level_team, 1)];
    this.wilds = { level: this.level, count: s.wild_count };
    const req = memory.end_request;
    if (req) {
      const [a, b] = memory.levels;
      const end: MatchEnd =
        req.kind === 'timeout'
          ? a === b ? { kind: 'draw' } : { kind: 'timeout', winner: b > a ? 1 : 0 }
          : { kind: 'disconnect', winner: 1 - team(req.seat) };
      this.outcome = {
        order: [],
        winner_team: end.kind === 'draw' ? null : end.winner,
        levels_up: 0,
        levels_after: [a, b],
        match_end: end,
        net: [0, 0, 0, 0],
        memory_after: nextMatch(memory, end),
      };
      this.phase = 'done';
    }
  }

  active(s: number) {
    return this.hands[s].length > 0;
  }

  /**
   * The auto (timeout) action of the seat to act under `timeout_action`
   * `pass` (SPEC.md §14.2); undefined under `ai`, which is not specified.
   */
  auto(seat: number): any {
    if (this.s.timeout_action !== 'pass') return undefined;
    const hand = this.hands[seat];
    const pos = (c: number) => this.positions.get(c) ?? 0;
    /** The choice lowest by `by`, then by deck position, as a deck position. */
    const lowest = (choices: number[], by: (c: number) => number) => {
      let best: number | null = null;
      for (const c of choices) {
        if (best === null || by(c) < by(best) || (by(c) === by(best) && pos(c) < pos(best))) best = c;
      }
      return best === null ? null : pos(best);
    };
    switch (this.phase) {
      case 'playing': {
        if (this.lead || hand.length === 0) return { type: 'pass' };
        const low = hand.reduce((a, b) => {
          const [va, vb] = [value(a, this.level), value(b, this.level)];
          return vb < va || (vb === va && b < a) ? b : a;
        });
        return { type: 'play', cards: [cardText(low)], reading: { kind: 'single', rank: natural(low) } };
      }
      case 'tribute': {
        const p = lowest(tributeChoices(hand, this.wilds, this.s), () => 0);
        return p === null ? { type: 'pass' } : { type: 'tribute', position: p };
      }
      case 'return': {
        const p = lowest(returnChoices(hand, this.wilds, this.s), (c) => value(c, this.level));
        return p === null ? { type: 'pass' } : { type: 'return', position: p };
      }
      case 'vote':
        return { type: 'vote', accept: false };
      default:
        return { type: 'pass' };
    }
  }

  nextActive(seat: number) {
    let s = (seat + 1) % 4;
    while (!this.active(s) && s !== seat) s = (s + 1) % 4;
    return s;
  }

  /** The card at deck `position` if `seat` holds it now. */
  held(seat: number, position: number): number {
    if (position >= DECK_SIZE) throw malformed(`deck position ${position} is not in the two packs (0–107)`);
    const c = this.hands[seat].find((c) => this.positions.get(c) === position);
    if (c === undefined) throw notInHand(`deck position ${position}`);
    return c;
  }

  /** After the deal: the tribute (resisted or not) from the second deal of a match, else play. */
  afterDeal() {
    const lo = this.memory.last_order;
    if (lo.length !== 4) {
      this.phase = 'playing';
      this.turn = this.memory.match_no % 4;
      return;
    }
    const [payers, receivers] = parties(lo);
    const big = (s: number) => this.hands[s].filter((c) => natural(c) === BIG_JOKER).length;
    const resisted =
      this.s.resist === 'one-holder' ? payers.some((p) => big(p) >= 2) : payers.reduce((t, p) => t + big(p), 0) >= 2;
    this.turn = resisted ? receivers[0] : payers[0];
    this.phase = resisted ? 'playing' : 'tribute';
    this.tribute = { payers, receivers, resisted, given: [], returned: [] };
  }

  transfer(from: number, to: number, card: number): any[] {
    const i = this.hands[from].indexOf(card);
    this.hands[from].splice(i, 1);
    this.hands[to].push(card);
    return ['transfer', this.positions.get(card), from, to, this.s.show_tribute ? 'u' : 'd'];
  }

  apply(seat: number, raw: unknown): any[] {
    const a = parseAction(raw);
    const s = seat;
    const hand = this.hands[s];
    const wrong = (what: string) => illegal(`not allowed now: ${what} during ${this.phase[0].toUpperCase()}${this.phase.slice(1)}`);
    switch (a.type) {
      case 'tribute': {
        if (this.phase !== 'tribute') throw wrong('a tribute');
        const card = this.held(s, a.position);
        checkTribute(hand, card, this.wilds, this.s);
        return this.give(s, card);
      }
      case 'return': {
        if (this.phase !== 'return') throw wrong('a return');
        const card = this.held(s, a.position);
        if (!returnChoices(hand, this.wilds, this.s).includes(card)) {
          throw illegal(returnError(card, this.wilds, this.s) ?? 'not allowed now: return');
        }
        return this.giveBack(s, card);
      }
      case 'play': {
        if (this.phase !== 'playing') throw wrong('a play');
        const reading = this.checkPlay(s, a.cards, a.reading);
        return this.play(s, a.cards, reading);
      }
      case 'pass':
        if (this.phase !== 'playing') throw wrong('a pass');
        if (!this.lead) throw illegal('the leader must play');
        this.pass(s);
        return [];
      case 'surrender':
        if (this.phase !== 'playing') throw wrong('a surrender');
        if (this.surrendered[team(s)]) throw illegal('not allowed now: this team has already proposed a surrender this deal');
        this.surrendered[team(s)] = true;
        this.vote = { proposer: s, ask: [partner(s), (s + 1) % 4, (s + 3) % 4], partnerAgreed: false };
        this.phase = 'vote';
        this.turn = partner(s);
        return [];
      case 'vote':
        if (this.phase !== 'vote') throw wrong('a vote');
        return this.castVote(s, a.accept);
    }
  }

  checkPlay(seat: number, cards: number[], declared: { kind: Kind; rank: number } | null): Reading {
    if (cards.length === 0) throw malformed('a play needs at least one card');
    const seen = new Set<number>();
    for (const c of cards) {
      if (packOf(c) >= PACKS) throw malformed(`card ${cardText(c)} is not in the two packs`);
      if (seen.has(c)) throw malformed(`card ${cardText(c)} named twice`);
      seen.add(c);
    }
    const hand = this.hands[seat];
    const missing = cards.find((c) => !hand.includes(c));
    if (missing !== undefined) throw notInHand(cardText(missing));
    let all = readings(tally(cards, this.wilds), this.level, this.s.straight_extends_to_ace, this.s.purity);
    if (all.length === 0) throw illegal('these cards form no pattern');
    all = byPriority(all, this.level);
    if (declared) {
      all = all.filter((r) => r.kind === declared.kind && r.rank === declared.rank);
      if (all.length === 0) throw illegal(`the cards cannot be read as ${JSON.stringify(declared)}`);
    }
    if (!this.lead) return all[0];
    const table = this.lead.reading;
    const r = all.find((r) => beats(r, table, this.level, this.profile));
    if (!r) throw illegal(`${describe(all[0])} does not beat ${describe(table)}`);
    return r;
  }

  give(seat: number, card: number): any[] {
    const tr = this.tribute!;
    tr.given.push({ from: seat, to: null, card });
    if (tr.given.length < tr.payers.length) {
      this.turn = tr.payers[tr.given.length];
      return [];
    }
    // Every payer has given: the gifts in the order of their receivers.
    const gifts = tr.given.slice();
    const last = this.memory.last_order[this.memory.last_order.length - 1];
    if (gifts.length === 2) {
      const swap =
        this.s.double_tribute === 'by-seat'
          ? gifts[0].from !== last
          : value(gifts[1].card, this.level) > value(gifts[0].card, this.level);
      if (swap) gifts.reverse();
    }
    gifts.forEach((g, i) => (g.to = tr.receivers[i]));
    tr.given = gifts;
    this.phase = 'return';
    this.turn = tr.receivers[0];
    return gifts.map((g) => this.transfer(g.from, g.to!, g.card));
  }

  giveBack(seat: number, card: number): any[] {
    const tr = this.tribute!;
    const giver = tr.given.find((g) => g.to === seat)?.from ?? seat;
    tr.returned.push({ from: seat, to: giver, card });
    const done = tr.returned.length === tr.receivers.length;
    const next = tr.receivers[tr.returned.length];
    // The payer of the higher tribute card leads; equal cards, the first of the payers that gave one.
    const top = Math.max(...tr.given.map((g) => value(g.card, this.level)));
    const leader = tr.payers.find((p) => tr.given.some((g) => g.from === p && value(g.card, this.level) === top));
    const t = this.transfer(seat, giver, card);
    if (done) {
      this.phase = 'playing';
      this.turn = leader ?? seat;
    } else {
      this.turn = next ?? seat;
    }
    return [t];
  }

  play(seat: number, cards: number[], reading: Reading): any[] {
    this.hands[seat] = this.hands[seat].filter((c) => !cards.includes(c));
    this.lead = { seat, reading };
    this.passes = 0;
    if (this.hands[seat].length === 0) {
      this.finished.push(seat);
      const f = this.finished;
      if ((f.length >= 2 && team(f[0]) === team(f[1])) || f.length === 3) return this.finish();
    }
    this.turn = this.nextActive(seat);
    return [];
  }

  pass(seat: number) {
    this.passes++;
    const lead = this.lead!;
    const others = [0, 1, 2, 3].filter((s) => s !== lead.seat && this.active(s)).length;
    if (this.passes < others) {
      this.turn = this.nextActive(seat);
      return;
    }
    // CLEARED: the last player to play leads; if out, the partner (catch-up).
    this.lead = null;
    this.passes = 0;
    const catchUp = !this.active(lead.seat);
    const leader = catchUp ? partner(lead.seat) : lead.seat;
    this.turn = this.active(leader) ? leader : this.nextActive(leader);
  }

  castVote(seat: number, accept: boolean): any[] {
    const v = this.vote!;
    v.ask = v.ask.filter((s) => s !== seat);
    if (seat === partner(v.proposer)) {
      v.partnerAgreed = accept;
      if (!accept) v.ask = [];
    } else if (accept && v.partnerAgreed) {
      return this.settleSurrender(team(v.proposer));
    }
    if (v.partnerAgreed && v.ask.length > 0) {
      this.turn = v.ask[0];
    } else {
      this.vote = null;
      this.phase = 'playing';
      this.turn = v.proposer;
    }
    return [];
  }

  /** Each loser pays `stake` (at most its balance); the winners share the total, the odd chip to the first. */
  pay(stake: number, losers: number[], winners: number[], reason: string): [number[], any[]] {
    const net = [0, 0, 0, 0];
    const moves: any[] = [];
    let total = 0;
    for (const l of losers) {
      const amount = Math.min(stake, this.balances[l]);
      if (amount > 0) {
        total += amount;
        net[l] -= amount;
        moves.push(['debit', l, amount, `${reason}: loses`]);
      }
    }
    const share = Math.floor(total / winners.length);
    const odd = total - share * winners.length;
    winners.forEach((w, i) => {
      const amount = share + (i === 0 ? odd : 0);
      if (amount > 0) {
        net[w] += amount;
        moves.push(['credit', w, amount, `${reason}: wins`]);
      }
    });
    return [net, moves];
  }

  finish(): any[] {
    const o = this.finished.slice();
    for (let s = 0; s < 4; s++) if (!o.includes(s)) o.push(s);
    const m = this.memory;
    const w = team(o[0]);
    const partnerPlace = o.findIndex((s) => team(s) === w && s !== o[0]);
    const up = partnerPlace === 1 ? this.s.double_down_levels : partnerPlace === 2 ? 2 : 1;
    const partnerLast = o[3] !== o[0] && team(o[3]) === w;
    const atOwnAce = m.level_team === w && m.levels[w] === ACE;
    const levels: [number, number] = [m.levels[0], m.levels[1]];
    levels[w] = Math.min(levels[w] + up, ACE);
    const ends =
      this.s.ace_rule === 'any-win' ? atOwnAce : this.s.ace_rule === 'partner-not-last' ? atOwnAce && !partnerLast : levels[w] === ACE;
    const winners = o.filter((s) => team(s) === w);
    const losers = [0, 1, 2, 3].filter((s) => team(s) !== w);
    const [net, moves] = this.pay(this.s.stake_per_level * up, losers, winners, 'deal');
    let matchEnd: MatchEnd | null = null;
    let memoryAfter: Memory;
    if (ends) {
      matchEnd = { kind: 'normal', winner: w };
      memoryAfter = nextMatch(m, matchEnd);
    } else {
      memoryAfter = { ...m, deal: m.deal + 1, levels, level_team: w, last_order: o };
      delete memoryAfter.end_request;
    }
    this.outcome = { order: o, winner_team: w, levels_up: up, levels_after: levels, match_end: matchEnd, net, memory_after: memoryAfter };
    this.phase = 'done';
    this.vote = null;
    return moves;
  }

  settleSurrender(teamOut: number): any[] {
    const w = 1 - teamOut;
    const up = this.s.double_down_levels;
    const winners = [0, 1, 2, 3].filter((s) => team(s) === w);
    const losers = [0, 1, 2, 3].filter((s) => team(s) !== w);
    const [net, moves] = this.pay(this.s.stake_per_level * up, losers, winners, 'surrender');
    const end: MatchEnd = { kind: 'surrender', winner: w };
    const m = this.memory;
    this.outcome = {
      order: [], winner_team: w, levels_up: up, levels_after: [m.levels[0], m.levels[1]], match_end: end, net,
      memory_after: nextMatch(m, end),
    };
    this.phase = 'done';
    return moves;
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
  for (let id = 0; id < DECK_SIZE; id++) if (!ids.includes(id)) rest.push(id);
  return ids.concat(rest);
}

function memoryJson(m: Memory): any {
  const out: any = {
    match_no: m.match_no, deal: m.deal, levels: [m.levels[0], m.levels[1]], level_team: m.level_team,
    last_order: m.last_order.slice(), matches_won: [m.matches_won[0], m.matches_won[1]], draws: m.draws,
  };
  if (m.last_match_end) out.last_match_end = { ...m.last_match_end };
  if (m.end_request) out.end_request = { ...m.end_request };
  return out;
}

export function replay(v: Vector, trace?: Trace): Outcome {
  if (v.game !== 'guandan') throw new Error(`not a guandan vector: ${v.game}`);
  const deck = deckOf(v.deck_top);
  const events: any[] = [];
  let deal: Deal;
  try {
    if (v.balances.length !== 4) throw new Refused(`bad players: guandan needs 4–4 players, got ${v.balances.length}`);
    const { settings, profile } = normalizeSettings(v.settings);
    const memory = parseMemory(v.memory);
    checkMemory(memory);
    deal = new Deal(settings, profile, memory, v.balances);
    if (deal.phase !== 'done') {
      // Deal `hole`: 108 cards face down, position i to seat i mod 4, each physical card once.
      if (deck.length < DECK_SIZE) throw badDeal(`deck exhausted at position ${deck.length}`);
      const cards: string[] = [];
      for (let p = 0; p < DECK_SIZE; p++) {
        const id = deck[p];
        if (packOf(id) >= PACKS || deal.positions.has(id)) throw badDeal(`${cardText(id)} is not a card of the two packs dealt once`);
        deal.positions.set(id, p);
        deal.hands[p % 4].push(id);
        cards.push(`${p}:${cardText(id)}>s${p % 4}/d`);
      }
      deal.afterDeal();
      events.push(['deal', 'hole', cards]);
    }
  } catch (e) {
    throw new Error(`hand start: ${(e as Error).message}`);
  }
  v.actions.forEach(([seat, action], index) => {
    const expected = deal.phase === 'done' ? null : deal.turn;
    if (expected !== seat) throw new Error(`action ${index} by seat ${seat}: it was seat ${expected}'s turn`);
    if (trace) {
      trace.marks.push(events.length);
      trace.autos.push(deal.auto(seat));
    }
    try {
      events.push(...deal.apply(seat, action));
    } catch (e) {
      throw new Error(`action ${index} (${JSON.stringify(action)}): ${(e as Error).message}`);
    }
  });
  const o = deal.outcome;
  if (deal.phase !== 'done' || !o) throw new Error(`the hand is not over after ${v.actions.length} actions`);
  const tr = deal.tribute;
  return {
    events,
    result: {
      winners: o.winner_team === null ? [] : [0, 1, 2, 3].filter((s) => team(s) === o.winner_team),
      net: o.net.slice(),
      house_net: 0,
      rake: 0,
    },
    details: {
      game: 'guandan',
      level: deal.level,
      level_team: deal.memory.level_team,
      stake_per_level: deal.s.stake_per_level,
      tribute: tr ? { payers: tr.payers.slice(), receivers: tr.receivers.slice(), resisted: tr.resisted } : null,
      order: o.order.slice(),
      winner_team: o.winner_team,
      levels_up: o.levels_up,
      levels_after: [o.levels_after[0], o.levels_after[1]],
      match_end: o.match_end ? { ...o.match_end } : null,
      net: o.net.slice(),
    },
    memory_after: memoryJson(o.memory_after),
  };
}

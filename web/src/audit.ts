// The transcript audit of SPEC.md §11, in the browser. Every check carries
// its SPEC name; each failure says which event, which field and the first
// byte where the computed and the published values differ. The game-rule
// replay (check 13) runs the TypeScript rules of ./replay, written from
// SPEC.md §14 and the game pages and checked against the Rust replay on a
// corpus of random hands (test/replay.test.mjs). The checks run check by
// check over the whole hand, except that `commission`
// (14) runs right after `merkle-root`, where the Rust auditor runs it (at
// `game-start`); results are listed in SPEC order.

import { ed25519, x25519 } from '@noble/curves/ed25519.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { chacha20orig } from '@noble/ciphers/chacha.js';
import { hsalsa, xsalsa20poly1305 } from '@noble/ciphers/salsa.js';
import { rawMembers } from './rawjson';
import { replay as replayRules, hasRules, canonicalDeck, scriptedDeck, normalizeSettings as normalizeReplaySettings, normalizeMemory as normalizeReplayMemory } from './replay/index';
import { auditBlind, isBlindHand } from './audit_blind';

export type Bytes = Uint8Array;

/** SHA-256 (FIPS 180-4). */
export const sha = (b: Bytes): Bytes => sha256(b);

export const CHECKS = [
  'dealer-signatures',
  'hash-chain',
  'structure',
  'reveal-complete',
  'seed-commitment',
  'player-seeds',
  'shuffle',
  'leaves',
  'merkle-root',
  'deal-order',
  'opened-cards',
  'action-signatures',
  'replay',
  'commission',
] as const;
export type CheckName = (typeof CHECKS)[number];

export interface CheckResult {
  check: CheckName;
  status: 'passed' | 'failed' | 'skipped';
  detail: string;
}

const enc = new TextEncoder();
export const utf8 = (s: string): Bytes => enc.encode(s);

export function hex(b: Bytes): string {
  let s = '';
  for (const x of b) s += x.toString(16).padStart(2, '0');
  return s;
}

/** Lowercase hex of exactly `n` bytes (SPEC §1.3), else an error naming `what`. */
export function unhex(s: unknown, n: number | null, what: string): Bytes {
  if (typeof s !== 'string' || !/^([0-9a-f]{2})*$/.test(s) || (n !== null && s.length !== 2 * n)) {
    throw new AuditFailure('structure', `${what}: expected ${n === null ? 'even-length' : 2 * (n ?? 0)} lowercase hex characters, got ${JSON.stringify(s)}`);
  }
  const out = new Uint8Array(s.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(s.slice(2 * i, 2 * i + 2), 16);
  return out;
}

export function concat(...parts: Bytes[]): Bytes {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

const u16 = (n: number): Bytes => new Uint8Array([(n >> 8) & 0xff, n & 0xff]);
const u32 = (n: number): Bytes => new Uint8Array([n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]);
function u64(n: number): Bytes {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, BigInt(n));
  return b;
}
const isSeat = (s: unknown, n: number): boolean => Number.isInteger(s) && (s as number) >= 0 && (s as number) < n;
const equal = (a: Bytes, b: Bytes) => a.length === b.length && a.every((x, i) => x === b[i]);

/** "first differing byte" explanation of two digests. */
export function firstDiff(what: string, published: Bytes, computed: Bytes): string {
  const n = Math.min(published.length, computed.length);
  let i = 0;
  while (i < n && published[i] === computed[i]) i++;
  const p = i < published.length ? `0x${published[i].toString(16).padStart(2, '0')}` : 'end';
  const c = i < computed.length ? `0x${computed[i].toString(16).padStart(2, '0')}` : 'end';
  return `${what}: first difference at byte ${i}: published ${p}, computed ${c} (published ${hex(published)}, computed ${hex(computed)})`;
}

export class AuditFailure extends Error {
  constructor(
    public check: CheckName,
    public detail: string,
  ) {
    super(`${check}: ${detail}`);
  }
}

// ---------- cards (§2)

const RANKS = '23456789TJQKA';
const SUITS = 'cdhs';

export function parseCard(s: unknown): number {
  if (typeof s !== 'string') throw new AuditFailure('structure', `card: ${JSON.stringify(s)} is not a card`);
  const m = /^(?:([2-9TJQKA])([cdhs])|(BJ|RJ))(?:#([1-9][0-9]{0,2}))?$/.exec(s);
  const pack = m?.[4] ? Number(m[4]) : 0;
  if (!m || pack > 255) throw new AuditFailure('structure', `card: ${JSON.stringify(s)} is not a card`);
  const face = m[3] ? (m[3] === 'BJ' ? 52 : 53) : RANKS.indexOf(m[1]) * 4 + SUITS.indexOf(m[2]);
  return pack * 54 + face;
}

export function cardText(id: number): string {
  const pack = Math.floor(id / 54);
  const face = id % 54;
  const base = face === 52 ? 'BJ' : face === 53 ? 'RJ' : RANKS[Math.floor(face / 4)] + SUITS[face % 4];
  return pack ? `${base}#${pack}` : base;
}

// ---------- primitives (§4, §5, §7)

export function signed(tag: string, body: Bytes): Bytes {
  return concat(utf8(tag), new Uint8Array([0]), body);
}

/** Strict Ed25519 (§4.3): canonical S and points (noble, zip215 off), no small-order key or R. */
export function verifyStrict(sig: Bytes, msg: Bytes, key: Bytes): boolean {
  try {
    const P = ed25519.Point;
    if (P.fromBytes(key).isSmallOrder() || P.fromBytes(sig.subarray(0, 32)).isSmallOrder()) return false;
    return ed25519.verify(sig, msg, key, { zip215: false });
  } catch {
    return false;
  }
}

export function leafPreimage(hand: Bytes, position: number, card: number, salt: Bytes): Bytes {
  return concat(utf8('claw/v1/card'), hand, u16(position), u16(card), salt);
}

export function merkleRoot(leaves: Bytes[]): Bytes {
  if (leaves.length === 0) return sha256(new Uint8Array(0));
  let level: Bytes[] = leaves.map((l) => sha256(concat(new Uint8Array([0]), l)));
  while (level.length > 1) {
    const next: Bytes[] = [];
    for (let j = 0; j < level.length; j += 2) {
      next.push(j + 1 < level.length ? sha256(concat(new Uint8Array([1]), level[j], level[j + 1])) : level[j]);
    }
    level = next;
  }
  return level[0];
}

export function seedCommitment(hand: Bytes, dealerSeed: Bytes): Bytes {
  return sha256(concat(utf8('claw/v1/seed-commitment'), hand, dealerSeed));
}

/** ChaCha20 (original, 64-bit nonce 0) keystream as little-endian u32 words (§7.3). */
export class ChaChaWords {
  private words = new Uint32Array(0);
  private next = 0;
  constructor(private key: Bytes) {}
  nextU32(): number {
    if (this.next >= this.words.length) {
      const bytes = chacha20orig(this.key, new Uint8Array(8), new Uint8Array(Math.max(256, this.words.length * 8)));
      this.words = new Uint32Array(bytes.length / 4);
      const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      for (let i = 0; i < this.words.length; i++) this.words[i] = dv.getUint32(4 * i, true);
    }
    return this.words[this.next++];
  }
}

export function uniformBelow(rng: ChaChaWords, bound: number): number {
  if (bound === 1) return 0;
  const threshold = (2 ** 32 - bound) % bound;
  for (;;) {
    const x = rng.nextU32();
    if (x >= threshold) return x % bound;
  }
}

export function shuffle(deck: number[], seed: Bytes): number[] {
  const d = deck.slice();
  const rng = new ChaChaWords(seed);
  for (let i = d.length - 1; i >= 1; i--) {
    const j = uniformBelow(rng, i + 1);
    [d[i], d[j]] = [d[j], d[i]];
  }
  return d;
}

// ---------- sealing (§6)

const SIGMA = new Uint32Array([0x61707865, 0x3320646e, 0x79622d32, 0x6b206574]);

/** `crypto_box_beforenm`: HSalsa20(X25519(secret, peer), 0^16); null for a small-order peer. */
export function boxKey(secret: Bytes, peer: Bytes): Bytes | null {
  let shared: Bytes;
  try {
    shared = x25519.getSharedSecret(secret, peer);
  } catch {
    return null;
  }
  if (shared.every((b) => b === 0)) return null;
  const k = new Uint32Array(8);
  const dv = new DataView(shared.buffer, shared.byteOffset, 32);
  for (let i = 0; i < 8; i++) k[i] = dv.getUint32(4 * i, true);
  const out = new Uint32Array(8);
  hsalsa(SIGMA, k, new Uint32Array(4), out);
  const key = new Uint8Array(32);
  const ov = new DataView(key.buffer);
  for (let i = 0; i < 8; i++) ov.setUint32(4 * i, out[i], true);
  return key;
}

/** Opens a sealed card: the 64-byte plaintext, or a reason. */
export function openSealed(key: Bytes, nonce: Bytes, ct: Bytes, hand: Bytes): { plain: Bytes } | { error: string } {
  if (ct.length !== 80) return { error: `ciphertext is ${ct.length} bytes, expected 80` };
  let plain: Bytes;
  try {
    plain = xsalsa20poly1305(key, nonce).decrypt(ct);
  } catch {
    return { error: 'the box does not authenticate (wrong key, or nonce/ciphertext altered)' };
  }
  if (!equal(plain.subarray(0, 12), utf8('claw/v1/card'))) return { error: 'plaintext has the wrong domain tag' };
  if (!equal(plain.subarray(12, 28), hand)) return { error: 'sealed for another hand' };
  return { plain };
}

// ---------- the transcript

/** Most events in a row without a dealer signature (§12 `MAX_UNSIGNED_RUN`). */
export const MAX_UNSIGNED_RUN = 16;

export interface Event {
  line: number;
  seq: number;
  handId: string;
  prev: Bytes;
  /** Only the last event of each dealer burst is signed (§10.1). */
  sig: Bytes | null;
  bodyText: string;
  body: any;
}

export interface Transcript {
  header: { dealer?: string; room_id?: string; hand_id?: string } | null;
  events: Event[];
}

/** Parses a JSON-lines transcript (§10.4), keeping every body's exact text. */
export function parseTranscript(text: string): Transcript {
  const lines = text.split('\n');
  let header: Transcript['header'] = null;
  const events: Event[] = [];
  lines.forEach((raw, i) => {
    const line = raw.replace(/\r$/, '');
    if (!line.trim()) return;
    const where = `line ${i + 1}`;
    let obj: any;
    try {
      obj = JSON.parse(line);
    } catch (e) {
      throw new AuditFailure('structure', `${where}: not JSON (${(e as Error).message})`);
    }
    if (obj?.type === 'transcript-header') {
      if (events.length || header) throw new AuditFailure('structure', `${where}: a header anywhere but first`);
      header = obj;
      return;
    }
    if (obj?.type !== 'event') throw new AuditFailure('structure', `${where}: line type ${JSON.stringify(obj?.type)} is not a transcript line`);
    const raw_ = rawMembers(line);
    const bodyText = raw_.get('body');
    if (bodyText === undefined) throw new AuditFailure('structure', `${where}: event without a body`);
    if (!Number.isSafeInteger(obj.seq) || obj.seq < 0) throw new AuditFailure('structure', `${where}: bad seq`);
    events.push({
      line: i + 1,
      seq: obj.seq,
      handId: obj.hand_id,
      prev: unhex(obj.prev, 32, `${where} prev`),
      sig: obj.sig === undefined ? null : unhex(obj.sig, 64, `${where} sig`),
      bodyText,
      body: obj.body,
    });
  });
  if (!events.length) throw new AuditFailure('structure', 'no event in the file');
  return { header, events };
}

/** Splits a file holding several hands at header lines or hand-id changes (as `claw-player audit`). */
export function splitHands(text: string): string[] {
  const out: string[][] = [];
  let cur: string[] = [];
  let hand: string | null = null;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    let obj: any = null;
    try {
      obj = JSON.parse(line);
    } catch {
      /* reported by parseTranscript */
    }
    const isHeader = obj?.type === 'transcript-header';
    const h = obj?.hand_id ?? null;
    if (cur.length && (isHeader || (hand !== null && h !== hand && !cur.every((l) => l.includes('"transcript-header"'))))) {
      out.push(cur);
      cur = [];
    }
    if (cur.length === 0 || isHeader) hand = h;
    cur.push(line);
  }
  if (cur.length) out.push(cur);
  return out.map((l) => l.join('\n'));
}

export interface Viewer {
  encryptionSecret: Bytes;
  playerId: string;
}

export interface OpenedCard {
  position: number;
  card: string;
}

export interface AuditOutcome {
  handId: string;
  dealer: string;
  game: string;
  results: CheckResult[];
  ok: boolean;
  /** The viewer's own cards, opened from their sealed boxes. */
  myCards: OpenedCard[];
  /** Cards by position, once revealed. */
  deckOrder: (string | null)[];
  events: Event[];
}

export interface AuditOptions {
  /** The dealer key the auditor trusts (hex); else the header's. */
  dealer?: string;
  /** The auditing player: its sealed cards (dealt or transferred to it) are opened. */
  viewer?: Viewer;
  /** The room's commission per player per hand (§11.1); else seat 0's is the reference. */
  commission?: number;
}

/**
 * An event's signed message (§10.1): "claw/v1/event" 0x00 hand_id seq prev
 * SHA-256(body text); its SHA-256 is the next event's `prev`.
 */
export function eventMessage(hand: Bytes, seq: number, prev: Bytes, bodyText: string): Bytes {
  return signed('claw/v1/event', concat(hand, u64(seq), prev, sha256(utf8(bodyText))));
}

/** A player's signed action message (§9.6): hand_id, its seq, SHA-256 of the exact action text. */
export function actionMessage(hand: Bytes, seq: number, actionText: string): Bytes {
  return signed('claw/v1/action', concat(hand, u32(seq), sha256(utf8(actionText))));
}

/** A player's signed shuffle-seed message (§9.6). */
export function seedMessage(hand: Bytes, seed: Bytes): Bytes {
  return signed('claw/v1/player-seed', concat(hand, seed));
}

/** JSON values equal as values (object members in any order). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  }
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  return ka.length === kb.length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && jsonEqual((a as any)[k], (b as any)[k]));
}

/** A `RoomConfig` (§9.4), as the Rust auditor parses it; else `fail`. */
export function roomConfigShape(room: any, fail: (d: string) => AuditFailure): void {
  const bad = (d: string) => fail(`room configuration: ${d}`);
  if (room === null || typeof room !== 'object' || Array.isArray(room)) throw bad('not an object');
  const chips = (k: string) => Number.isSafeInteger(room[k]) && room[k] >= 0;
  for (const k of ['room_id', 'game']) if (typeof room[k] !== 'string') throw bad(`${k} is not a string`);
  if (!('settings' in room)) throw bad('no settings');
  for (const k of ['buy_in', 'min_bet', 'max_bet', 'commission', 'action_timeout_ms', 'between_hands_ms', 'seed_timeout_ms']) {
    if (!chips(k)) throw bad(`${k} is not an unsigned integer`);
  }
  for (const k of ['min_players', 'max_players']) if (!chips(k) || room[k] > 255) throw bad(`${k} is not a u8`);
  if (room.entropy !== 'joint' && room.entropy !== 'dealer') throw bad(`entropy ${JSON.stringify(room.entropy)}`);
  if (room.reveal !== 'full' && room.reveal !== 'deferred') throw bad(`reveal ${JSON.stringify(room.reveal)}`);
  if (room.reveal_delay_ms != null && !chips('reveal_delay_ms')) throw bad('reveal_delay_ms is not an unsigned integer');
}

/** A transcript's deal target in the §13.1 notation. */
function targetText(t: any): string {
  if (t?.to === 'player') return `s${t.seat}`;
  const short: Record<string, string> = { community: 'c', burn: 'b', house: 'h' };
  return short[t?.to] ?? JSON.stringify(t);
}

/**
 * Whether every number in the JSON text `raw` is an integer literal (no
 * fraction, no exponent): the rules' settings and memory hold only integers,
 * and the Rust rules refuse `1.0` or `1e2` where an integer is due, though
 * JavaScript parses them to the same numbers as `1` and `100`.
 */
function integerLiterals(raw: string): boolean {
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (c === '"') {
      for (i++; i < raw.length && raw[i] !== '"'; i++) if (raw[i] === '\\') i++;
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      const start = i;
      while (i + 1 < raw.length && /[-+.eE0-9]/.test(raw[i + 1])) i++;
      if (/[.eE]/.test(raw.slice(start, i + 1))) return false;
    }
  }
  return true;
}

/**
 * Every seat's commission is a chip amount, the viewer's key file names
 * the encryption key `game-start` lists for it, and the result fits the
 * players: shared by the dealt and the blind audit. Returns the viewer's seat (-1: none).
 */
export function commissionsViewerResult(gs: any, end: any, n: number, opts: AuditOptions, fail: (d: string) => AuditFailure): number {
  for (const p of gs.players) {
    const c = p.commission ?? 0;
    if (!Number.isSafeInteger(c) || c < 0) throw fail(`seat ${p.seat}: commission ${JSON.stringify(p.commission)} is not a chip amount`);
  }
  const viewerSeat = opts.viewer ? gs.players.findIndex((p: any) => p.id === opts.viewer!.playerId) : -1;
  if (viewerSeat >= 0 && gs.players[viewerSeat].encryption_key !== hex(x25519.getPublicKey(opts.viewer!.encryptionSecret))) {
    throw fail(`game-start lists another encryption key for the viewer (seat ${viewerSeat}) than its key file's`);
  }
  if (end.result?.net?.length !== n || end.result.winners.some((w: number) => w >= n)) throw fail('game-end result does not fit the players');
  return viewerSeat;
}

/**
 * The hand's previous hand came before it (§9.5), and the room
 * configuration the handshake signed names this hand's room, game,
 * settings, policies and seed timeout (§9.5, §11.2 check 3): shared by the
 * dealer-dealt and the blind audit (which also checks `deal`).
 */
export function previousAndRoom(t: Transcript, gs: any, prep: any, handHex: string, gsRaw: Map<string, string>, fail: (d: string) => AuditFailure): void {
  const settingsText = gsRaw.get('settings') ?? '';
  if (gs.previous != null) {
    const pv = gs.previous;
    unhex(pv.hand_id, 16, 'previous.hand_id');
    if (!Number.isSafeInteger(pv.hand_number) || pv.hand_number >= prep.hand_number || pv.hand_id === handHex) {
      throw fail(`hand number ${prep.hand_number} names hand ${pv.hand_id} number ${pv.hand_number} as its previous hand`);
    }
  }
  const room = gs.room_config ?? null;
  if (room === null) return;
  roomConfigShape(room, fail);
  const differs = (what: string) => fail(`${what} than its room configuration states`);
  if (t.header?.room_id !== undefined && room.room_id !== t.header.room_id) throw differs('another room');
  if (room.game !== gs.game) throw differs('another game');
  // Equal as the Rust auditor's JSON values: `1.0` is not `1` there, though JavaScript reads them alike.
  const roomSettingsText = rawMembers(gsRaw.get('room_config') ?? '{}').get('settings') ?? 'null';
  if (!jsonEqual(room.settings, gs.settings) || integerLiterals(roomSettingsText) !== integerLiterals(settingsText)) throw differs('other settings');
  if (room.entropy !== gs.entropy) throw differs('another entropy mode');
  if (room.reveal !== gs.reveal) throw differs('another reveal policy');
  if (room.seed_timeout_ms !== prep.seed_timeout_ms) throw differs('another seed timeout in hand-prepare');
  if (gs.previous == null && gs.memory !== null) throw fail('a hand that names no previous hand starts from table memory');
}

/**
 * Check 13 (§11.2): replays the hand with the TypeScript rules (./replay)
 * over the verified inputs — `game-start`'s game, settings, players,
 * balances and memory, the opened deck order, the actions of the
 * `action-result` and `timeout-action` events — and compares, in order,
 * every deal, chip movement, reveal and card transfer the dealer announced
 * (and after how many of them each action came), the timeout actions with
 * the game's auto action, the result (`summary` aside: informational) and
 * `memory_after`. First, as the Rust auditor, the settings and the table
 * memory must be the game's own form of them (parsed by the rules and
 * written back, unchanged: defaults filled in, no member the rules ignore,
 * integers written as integers). `gsRaw` holds game-start's member texts.
 * Returns the pass detail; throws `AuditFailure('replay')`.
 */
export function replayCheck(gs: any, gsRaw: Map<string, string>, mid: any[], end: any, order: string[]): string {
  const fail = (d: string) => new AuditFailure('replay', d);
  for (const [what, normalize] of [
    ['settings', normalizeReplaySettings],
    ['memory', normalizeReplayMemory],
  ] as const) {
    const raw = gsRaw.get(what) ?? 'null';
    if (!integerLiterals(raw)) throw fail(`game-start ${what} ${raw}: a number is not written as an integer`);
    let norm: unknown;
    try {
      norm = normalize(gs.game, gs[what] ?? null);
    } catch (e) {
      throw fail(`game-start ${what}: the rules refuse them: ${(e as Error).message}`);
    }
    if (norm !== undefined && !jsonEqual(norm, gs[what] ?? null)) {
      throw fail(`game-start ${what} ${JSON.stringify(gs[what] ?? null)} are not the game's own form of them, ${JSON.stringify(norm)}`);
    }
  }
  const announced: any[] = [];
  const marks: number[] = [];
  const acts: { seat: number; action: any; timeout: boolean; what: string }[] = [];
  mid.forEach((b, k) => {
    const what = `transcript event ${k + 2}`;
    if (b.type === 'phase-deal' || b.type === 'new-card') {
      announced.push(['deal', b.phase, b.cards.map((c: any) => `${c.position}:${order[c.position]}>${targetText(c.target)}/${c.face === 'up' ? 'u' : 'd'}`)]);
    } else if (b.type === 'chips') {
      for (const m of b.moves) announced.push([m.op, m.party?.kind === 'seat' ? m.party.seat : m.party?.kind, m.amount, m.reason]);
    } else if (b.type === 'reveal') {
      announced.push(['reveal', b.openings.map((o: any) => o.position)]);
    } else if (b.type === 'card-transfer') {
      announced.push(['transfer', b.position, b.from, b.to, b.face === 'up' ? 'u' : 'd']);
    } else if (b.type === 'action-result' || b.type === 'timeout-action') {
      marks.push(announced.length);
      acts.push({ seat: b.seat, action: b.action, timeout: b.type === 'timeout-action', what });
    }
  });
  const v = {
    game: gs.game,
    settings: gs.settings,
    balances: gs.players.map((p: any) => p.balance),
    memory: gs.memory ?? null,
    deck_top: order,
    actions: acts.map((a) => [a.seat, a.action] as [number, any]),
    players: gs.players.map((p: any) => p.id),
  };
  const trace = { marks: [] as number[], autos: [] as any[] };
  let got;
  try {
    got = replayRules(v, trace);
  } catch (e) {
    throw fail(`the rules refuse the hand: ${(e as Error).message}`);
  }
  const show = (x: any) => (x === undefined ? 'nothing' : JSON.stringify(x));
  const n = Math.max(announced.length, got.events.length);
  for (let i = 0; i < n; i++) {
    if (!jsonEqual(announced[i], got.events[i])) {
      throw fail(`announced event ${i} (deals, chip movements, reveals and transfers in order): the dealer announced ${show(announced[i])}, the rules give ${show(got.events[i])}`);
    }
  }
  const traced = trace.marks.length === acts.length;
  let unchecked = 0;
  if (traced) {
    acts.forEach((a, i) => {
      if (marks[i] !== trace.marks[i]) {
        throw fail(`action ${i} (${a.what}) comes after ${marks[i]} announced events, the rules take it after ${trace.marks[i]}`);
      }
      if (a.timeout && trace.autos[i] === undefined) {
        unchecked++;
      } else if (a.timeout && !jsonEqual(a.action, trace.autos[i])) {
        throw fail(`timeout action ${i} (${a.what}) of seat ${a.seat} is ${JSON.stringify(a.action)}, the game's auto action is ${JSON.stringify(trace.autos[i])}`);
      }
    });
  }
  const r = end.result;
  for (const k of ['winners', 'net', 'house_net', 'rake'] as const) {
    if (!jsonEqual(r[k], (got.result as any)[k])) throw fail(`game-end result.${k} is ${JSON.stringify(r[k])}, the rules give ${JSON.stringify((got.result as any)[k])}`);
  }
  if (!jsonEqual(end.memory_after, got.memory_after)) {
    throw fail(`game-end memory_after is ${JSON.stringify(end.memory_after)}, the rules give ${JSON.stringify(got.memory_after)}`);
  }
  const timeouts = acts.filter((a) => a.timeout).length;
  return (
    `${acts.length} actions (${timeouts} timeouts) replayed with the browser's ${gs.game} rules: ${announced.length} deals, chip movements, reveals and transfers, ` +
    `the result and the table memory as announced` +
    (traced ? '' : ' (where each action falls among them and the timeout actions are not compared: this game\'s replay does not trace them)') +
    (unchecked ? `; ${unchecked} timeout actions not compared: this table's auto action is the reference AI, not specified (SPEC.md §14.2)` : '') +
    '; the public states are not compared (informational, SPEC.md §14.1)'
  );
}

/** Runs the checks of §11.2 in order; stops at the first failure. */
export function audit(text: string, opts: AuditOptions = {}): AuditOutcome {
  const results: CheckResult[] = [];
  const out: AuditOutcome = { handId: '', dealer: '', game: '', results, ok: false, myCards: [], deckOrder: [], events: [] };
  const pass = (check: CheckName, detail: string) => results.push({ check, status: 'passed', detail });
  try {
    const t = parseTranscript(text);
    out.events = t.events;
    const dealerHex = opts.dealer ?? t.header?.dealer;
    if (!dealerHex) throw new AuditFailure('dealer-signatures', 'no dealer key: give it (from the invite URL) or use a file with a header');
    const dealer = unhex(dealerHex, 32, 'dealer key');
    out.dealer = dealerHex;
    const handHex = t.events[0].handId;
    out.handId = handHex;
    const hand = unhex(handHex, 16, 'hand_id');
    const evs = t.events;

    // 1. dealer-signatures
    const messages = evs.map((e) => eventMessage(unhex(e.handId, 16, `line ${e.line} hand_id`), e.seq, e.prev, e.bodyText));
    let run = 0;
    let signedCount = 0;
    evs.forEach((e, i) => {
      if (e.sig === null) {
        run += 1;
        if (run > MAX_UNSIGNED_RUN) {
          throw new AuditFailure('dealer-signatures', `event seq ${e.seq} (line ${e.line}): more than ${MAX_UNSIGNED_RUN} events in a row without a dealer signature`);
        }
        if (e.body?.type === 'game-end' || e.body?.type === 'audit-reveal') {
          throw new AuditFailure('dealer-signatures', `event seq ${e.seq} (line ${e.line}, ${e.body.type}): the hand's end is not signed by the dealer`);
        }
        return;
      }
      run = 0;
      signedCount += 1;
      if (!verifyStrict(e.sig, messages[i], dealer)) {
        throw new AuditFailure(
          'dealer-signatures',
          `event seq ${e.seq} (line ${e.line}, ${e.body?.type ?? '?'}): the signature does not verify under dealer ${dealerHex}; ` +
            `signed bytes = "claw/v1/event" 0x00 hand_id seq prev SHA-256(body) = ${hex(messages[i])} — ` +
            `the body, hand_id, seq or prev differs from what the dealer signed, or the signature was altered`,
        );
      }
    });
    if (evs[evs.length - 1].sig === null) {
      const e = evs[evs.length - 1];
      throw new AuditFailure('dealer-signatures', `event seq ${e.seq} (line ${e.line}): the last event is not signed by the dealer`);
    }
    pass('dealer-signatures', `${signedCount} burst signatures verify under ${dealerHex.slice(0, 16)}…, covering ${evs.length} chained events`);

    // 2. hash-chain
    let prev = new Uint8Array(32);
    evs.forEach((e, i) => {
      if (e.handId !== handHex) throw new AuditFailure('hash-chain', `event at line ${e.line} is of hand ${e.handId}, not ${handHex}`);
      if (e.seq !== i) throw new AuditFailure('hash-chain', `event at line ${e.line} has seq ${e.seq}, expected ${i} (dropped, repeated or reordered event)`);
      if (!equal(e.prev, prev)) {
        throw new AuditFailure('hash-chain', firstDiff(`event seq ${i} prev (${i === 0 ? 'must be zero' : `hash of event ${i - 1}`})`, e.prev, prev));
      }
      prev = sha256(messages[i]);
    });
    pass('hash-chain', `${evs.length} events chained from the zero hash`);

    // A dealer-blind hand (SPEC.md §9.7): its own checks (./audit_blind).
    if (isBlindHand(evs.map((e) => e.body))) {
      auditBlind(t, hand, handHex, opts, out, pass);
      out.ok = true;
      results.sort((a, b) => CHECKS.indexOf(a.check) - CHECKS.indexOf(b.check));
      return out;
    }

    // 3. structure
    const bodies = evs.map((e) => e.body);
    const types = bodies.map((b) => b?.type);
    const fail3 = (d: string) => new AuditFailure('structure', d);
    if (types[0] !== 'hand-prepare') throw fail3(`event 0 is ${types[0]}, expected hand-prepare`);
    if (types[1] !== 'game-start') throw fail3(`event 1 is ${types[1]}, expected game-start`);
    const endAt = types.indexOf('game-end');
    if (endAt < 0) throw fail3('no game-end');
    const mid = new Set(['phase-deal', 'new-card', 'reveal', 'card-transfer', 'chips', 'action-result', 'timeout-action']);
    types.slice(2, endAt).forEach((ty, k) => {
      if (!mid.has(ty)) throw fail3(`event ${k + 2} is ${ty}: not allowed between game-start and game-end`);
    });
    const after = types.slice(endAt + 1);
    if (after.length > 1 || (after.length === 1 && after[0] !== 'audit-reveal')) throw fail3(`after game-end: ${after.join(', ')} (at most one audit-reveal)`);
    const prep = bodies[0];
    const gs = bodies[1];
    const end = bodies[endAt];
    const reveal2 = after.length ? bodies[endAt + 1] : null;
    out.game = gs.game;
    const n = gs.players?.length ?? 0;
    if (n < 1 || n > 255) throw fail3(`${n} players`);
    gs.players.forEach((p: any, s: number) => {
      if (p.seat !== s) throw fail3(`game-start player ${s} has seat ${p.seat}`);
      if (p.id !== prep.players[s]) throw fail3(`game-start seat ${s} is ${p.id}, hand-prepare says ${prep.players[s]}`);
    });
    if (prep.players.length !== n) throw fail3('hand-prepare and game-start list different players');
    if (prep.entropy !== gs.entropy) throw fail3('entropy differs between hand-prepare and game-start');
    if (gs.deck.length !== gs.leaves.length || gs.deck.length < 1 || gs.deck.length > 65536) throw fail3(`${gs.deck.length} cards, ${gs.leaves.length} leaves`);
    const gsRaw = rawMembers(evs[1].bodyText);
    const settingsText = gsRaw.get('settings') ?? '';
    const cfg = sha256(concat(utf8('claw/v1/config'), new Uint8Array([0]), utf8(gs.game), new Uint8Array([0]), utf8(gs.game_version), new Uint8Array([0]), utf8(settingsText)));
    const cfgPub = unhex(gs.config_hash, 32, 'config_hash');
    if (!equal(cfg, cfgPub)) throw fail3(firstDiff('config_hash', cfgPub, cfg));
    if (gs.entropy === 'dealer' && gs.player_seeds.length) throw fail3('player seeds under entropy = dealer');
    previousAndRoom(t, gs, prep, handHex, gsRaw, fail3);
    const room = gs.room_config ?? null;
    let lastSeat = -1;
    for (const ss of gs.player_seeds) {
      if (ss.seat <= lastSeat || ss.seat >= n) throw fail3(`player seed of seat ${ss.seat} out of order or range`);
      lastSeat = ss.seat;
    }
    const deck = gs.deck.map(parseCard);
    const leaves = gs.leaves.map((l: string, i: number) => unhex(l, 32, `leaf ${i}`));
    for (const [i, b] of bodies.entries()) {
      if (b.type === 'phase-deal' || b.type === 'new-card') {
        for (const c of b.cards) {
          const toPlayer = c.target?.to === 'player';
          if (toPlayer && !(c.target.seat < n)) throw fail3(`event ${i}: deal to seat ${c.target.seat} of ${n}`);
          if (c.face === 'up' && (!c.opening || c.sealed)) throw fail3(`event ${i}: face-up card at ${c.position} without its opening`);
          if (c.face === 'down' && c.opening) throw fail3(`event ${i}: face-down card at ${c.position} with an opening`);
          if (c.face === 'down' && toPlayer !== !!c.sealed) throw fail3(`event ${i}: face-down card at ${c.position}: sealed box does not fit its target`);
        }
      }
      if (b.type === 'card-transfer') {
        const what = `event ${i}: card transfer of position ${b.position} from seat ${b.from} to seat ${b.to}`;
        if (!isSeat(b.from, n) || !isSeat(b.to, n) || b.from === b.to) throw fail3(what);
        if (!Number.isInteger(b.position) || b.position < 0 || b.position > 0xffff) throw fail3(`${what}: bad position`);
        const fits = b.face === 'up' ? !!b.opening && !b.sealed : b.face === 'down' && !b.opening && !!b.sealed;
        if (!fits) throw fail3(`${what}: opening/sealed box do not fit the face ${JSON.stringify(b.face)}`);
      }
      if (b.type === 'chips' && b.moves.some((m: any) => m.party?.kind === 'seat' && !isSeat(m.party.seat, n))) throw fail3(`event ${i}: chip movement for a missing seat`);
      if ((b.type === 'action-result' || b.type === 'timeout-action') && !(b.seat < n)) throw fail3(`event ${i}: seat ${b.seat} acts`);
    }
    const viewerSeat = commissionsViewerResult(gs, end, n, opts, fail3);
    pass('structure', `${gs.game} ${gs.game_version}, ${n} players, ${deck.length} cards, ${evs.length} events in order; config_hash recomputes`);

    // 4. reveal-complete
    const seedHex = end.dealer_seed ?? reveal2?.dealer_seed;
    if (end.dealer_seed && reveal2?.dealer_seed && end.dealer_seed !== reveal2.dealer_seed) throw new AuditFailure('reveal-complete', 'two different dealer seeds');
    const openings = new Map<number, { card: number; salt: Bytes }>();
    for (const o of [...end.openings, ...(reveal2?.openings ?? [])]) {
      const pos = o.position;
      if (!(pos < deck.length)) throw new AuditFailure('reveal-complete', `opening of position ${pos} beyond the ${deck.length}-card deck`);
      const v = { card: parseCard(o.card), salt: unhex(o.salt, 32, `salt ${pos}`) };
      const had = openings.get(pos);
      if (had && (had.card !== v.card || !equal(had.salt, v.salt))) throw new AuditFailure('reveal-complete', `two different openings of position ${pos}`);
      openings.set(pos, v);
    }
    const missing = deck.map((_: number, i: number) => i).filter((i: number) => !openings.has(i));
    if (!seedHex || missing.length) {
      const what = `${seedHex ? '' : 'dealer seed; '}${missing.length ? `openings of ${missing.length} positions (first ${missing[0]})` : ''}`;
      if (gs.reveal === 'full') throw new AuditFailure('reveal-complete', `reveal = full but missing: ${what}`);
      results.push({ check: 'reveal-complete', status: 'skipped', detail: `deferred reveal pending: ${what}` });
      for (const c of ['seed-commitment', 'shuffle', 'leaves'] as CheckName[]) results.push({ check: c, status: 'skipped', detail: 'secrets not published yet' });
    } else {
      pass('reveal-complete', `dealer seed and all ${deck.length} openings published`);
    }
    const revealed = !!seedHex && !missing.length;
    out.deckOrder = deck.map((_: number, i: number) => (openings.has(i) ? cardText(openings.get(i)!.card) : null));
    const dealerSeed = seedHex ? unhex(seedHex, 32, 'dealer_seed') : null;

    // 5. seed-commitment
    if (revealed && dealerSeed) {
      const c = seedCommitment(hand, dealerSeed);
      const cPub = unhex(prep.seed_commitment, 32, 'seed_commitment');
      if (!equal(c, cPub)) throw new AuditFailure('seed-commitment', firstDiff('SHA-256("claw/v1/seed-commitment" ‖ hand_id ‖ dealer_seed) vs hand-prepare.seed_commitment', cPub, c));
      pass('seed-commitment', 'the revealed dealer seed matches the commitment made before the players sent their seeds');
    }

    // 6. player-seeds
    const seeds: Bytes[] = [];
    for (const ss of gs.player_seeds) {
      const seed = unhex(ss.seed, 32, `seed of seat ${ss.seat}`);
      const msg = seedMessage(hand, seed);
      if (!verifyStrict(unhex(ss.sig, 64, 'seed sig'), msg, unhex(gs.players[ss.seat].id, 32, 'player id'))) {
        throw new AuditFailure('player-seeds', `seat ${ss.seat}'s seed signature does not verify under ${gs.players[ss.seat].id} (signed bytes ${hex(msg)})`);
      }
      seeds.push(seed);
    }
    pass('player-seeds', `${gs.player_seeds.length} player seed signatures verify`);

    // 7. shuffle: with the game's rules, first the declared deck is the game's canonical deck (as the Rust auditor, revealed or not).
    let deckNote = "declared deck not compared with the game's canonical deck: no rules for this game in the browser";
    if (hasRules(gs.game)) {
      let canon: number[] | undefined;
      try {
        canon = canonicalDeck(gs.game, gs.settings ?? null);
      } catch (e) {
        throw new AuditFailure('shuffle', `canonical deck: ${(e as Error).message}`);
      }
      if (canon && (canon.length !== deck.length || canon.some((c, i) => c !== deck[i]))) {
        throw new AuditFailure('shuffle', `declared deck is not the game's canonical deck (${canon.length} cards of SPEC §2 in order)`);
      }
      deckNote = "the declared deck is the game's canonical deck";
      // A hand is scripted exactly when its game scripts it, and then dealt in the script's order.
      let script: number[] | null;
      try {
        script = scriptedDeck(gs.game, gs.settings ?? null, prep.hand_number);
      } catch (e) {
        throw new AuditFailure('shuffle', `scripted deck: ${(e as Error).message}`);
      }
      if (gs.deck_mode === 'shuffled' && script) throw new AuditFailure('shuffle', "deck mode shuffled, but the game scripts this hand's deck");
      if (gs.deck_mode === 'scripted' && !script) throw new AuditFailure('shuffle', "deck mode scripted, but the game shuffles this hand's deck");
      if (script && revealed) {
        const order = deck.map((_: number, i: number) => openings.get(i)!.card);
        if (order.length !== script.length || order.some((c: number, i: number) => c !== script![i])) {
          throw new AuditFailure('shuffle', "the scripted deck is not dealt in the game's scripted order for this hand");
        }
        deckNote += "; dealt in the game's scripted order for this hand";
      }
    }
    if (revealed && dealerSeed) {
      const order = deck.map((_: number, i: number) => openings.get(i)!.card);
      if (gs.deck_mode === 'shuffled') {
        const seed = sha256(concat(dealerSeed, ...seeds));
        const expect = shuffle(deck, seed);
        const k = expect.findIndex((c, i) => c !== order[i]);
        if (k >= 0) {
          throw new AuditFailure('shuffle', `position ${k}: the opened card is ${cardText(order[k])}, the joint-entropy shuffle gives ${cardText(expect[k])} (shuffle seed ${hex(seed)})`);
        }
        pass('shuffle', `Fisher–Yates with ChaCha20 keyed by SHA-256(dealer seed ‖ ${seeds.length} player seeds) gives the opened order (${deckNote})`);
      } else {
        const a = [...order].sort((x, y) => x - y);
        const b = [...deck].sort((x: number, y: number) => x - y);
        if (a.some((x, i) => x !== b[i])) throw new AuditFailure('shuffle', 'scripted deck: the opened cards are not a permutation of the declared deck');
        pass('shuffle', `scripted deck (tutorial): the opened cards are a permutation of the declared deck (${deckNote})`);
      }

      // 8. leaves
      for (let i = 0; i < deck.length; i++) {
        const o = openings.get(i)!;
        const l = sha256(leafPreimage(hand, i, o.card, o.salt));
        if (!equal(l, leaves[i])) throw new AuditFailure('leaves', firstDiff(`position ${i} (${cardText(o.card)}): SHA-256("claw/v1/card" ‖ hand_id ‖ position ‖ card ‖ salt) vs leaves[${i}]`, leaves[i], l));
      }
      pass('leaves', `all ${deck.length} leaves recompute from their openings`);
    }

    // 9. merkle-root
    const root = merkleRoot(leaves);
    const rootPub = unhex(gs.root, 32, 'root');
    if (!equal(root, rootPub)) throw new AuditFailure('merkle-root', firstDiff('Merkle root of the leaves vs game-start.root', rootPub, root));
    pass('merkle-root', `root ${gs.root.slice(0, 16)}… recomputes`);

    // 14. commission (the Rust auditor checks it at game-start, after 6 and 9):
    // the room configuration's, else the one given, else seat 0's.
    const commissions: number[] = gs.players.map((p: any) => p.commission ?? 0);
    if (room !== null && opts.commission !== undefined && room.commission !== opts.commission) {
      throw new AuditFailure('commission', `the room configuration in the hand states commission ${room.commission}, the room's is ${opts.commission}`);
    }
    const roomCommission: number | undefined = room?.commission ?? opts.commission;
    const expected = roomCommission ?? commissions[0];
    const over = commissions.findIndex((c) => c !== expected);
    if (over >= 0) {
      throw new AuditFailure('commission', `seat ${over} paid commission ${commissions[over]}, the room's is ${expected}${roomCommission === undefined ? " (as seat 0's)" : ''}`);
    }
    const whose = room !== null ? ", the room configuration's" : opts.commission === undefined ? " (the room's not given)" : ", the room's";
    pass('commission', `every seat paid the same commission, ${expected}${whose}`);

    // 10. deal-order: who holds each dealt position (null: community, burn,
    // house), whether it is face up; boxes sealed to the viewer, in order.
    const holders: (number | null)[] = [];
    const faceUp: boolean[] = [];
    const sealedToMe: { position: number; sealed: any; what: string }[] = [];
    let nTransfers = 0;
    bodies.forEach((b, i) => {
      const order = (d: string) => new AuditFailure('deal-order', `event ${i}: ${d}`);
      if (b.type === 'phase-deal' || b.type === 'new-card') {
        for (const c of b.cards) {
          if (c.position !== holders.length) throw order(`dealt position ${c.position}, expected ${holders.length}`);
          if (c.position >= deck.length) throw order(`position ${c.position} beyond the ${deck.length}-card deck`);
          const seat = c.target?.to === 'player' ? c.target.seat : null;
          holders.push(seat);
          faceUp.push(c.face === 'up');
          if (c.sealed && seat === viewerSeat) sealedToMe.push({ position: c.position, sealed: c.sealed, what: 'your sealed card' });
        }
      }
      if (b.type === 'reveal') {
        for (const o of b.openings) {
          if (!(o.position < holders.length)) throw order(`reveal of undealt position ${o.position}`);
          if (faceUp[o.position]) throw order(`reveal of position ${o.position} already face up`);
          faceUp[o.position] = true;
        }
      }
      if (b.type === 'card-transfer') {
        const p = b.position;
        if (!(p < holders.length)) throw order(`transfer of undealt position ${p}`);
        if (holders[p] !== b.from) {
          const held = holders[p] === null ? 'not a player\'s card' : `seat ${holders[p]} does`;
          throw order(`transfer of position ${p} from seat ${b.from}, which does not hold it (${held})`);
        }
        holders[p] = b.to;
        if (b.face === 'up') faceUp[p] = true;
        if (b.sealed && b.to === viewerSeat) sealedToMe.push({ position: p, sealed: b.sealed, what: 'the card transferred to you' });
        nTransfers++;
      }
    });
    pass('deal-order', `positions 0…${holders.length - 1} dealt in order; every reveal opens a hidden card${nTransfers ? `; ${nTransfers} card transfers by their holders` : ''}`);

    // 11. opened-cards
    const matches = (pos: number, card: number, salt: Bytes) => equal(sha256(leafPreimage(hand, pos, card, salt)), leaves[pos]);
    let checkedOpenings = 0;
    bodies.forEach((b, i) => {
      const list: any[] = [];
      if (b.type === 'phase-deal' || b.type === 'new-card') {
        for (const c of b.cards) {
          if (c.opening) {
            if (c.opening.position !== c.position) throw new AuditFailure('opened-cards', `event ${i}: face-up card at ${c.position} opens position ${c.opening.position}`);
            list.push(c.opening);
          }
        }
      }
      if (b.type === 'card-transfer' && b.opening) {
        if (b.opening.position !== b.position) throw new AuditFailure('opened-cards', `event ${i}: face-up transfer of ${b.position} opens position ${b.opening.position}`);
        list.push(b.opening);
      }
      if (b.type === 'reveal' || b.type === 'game-end' || b.type === 'audit-reveal') list.push(...b.openings);
      for (const o of list) {
        if (!(o.position < deck.length) || !matches(o.position, parseCard(o.card), unhex(o.salt, 32, 'salt'))) {
          const got = o.position < deck.length ? sha256(leafPreimage(hand, o.position, parseCard(o.card), unhex(o.salt, 32, 'salt'))) : new Uint8Array(0);
          throw new AuditFailure('opened-cards', firstDiff(`event ${i} (${b.type}): opening of position ${o.position} as ${o.card} vs leaves[${o.position}]`, leaves[o.position] ?? new Uint8Array(0), got));
        }
        checkedOpenings++;
      }
    });
    if (viewerSeat >= 0) {
      const key = boxKey(opts.viewer!.encryptionSecret, unhex(gs.dealer_encryption_key, 32, 'dealer_encryption_key'));
      if (!key) throw new AuditFailure('opened-cards', 'the dealer encryption key is of small order');
      for (const { position: pos, sealed, what } of sealedToMe) {
        const r = openSealed(key, unhex(sealed.nonce, 24, 'nonce'), unhex(sealed.ciphertext, null, 'ciphertext'), hand);
        if ('error' in r) throw new AuditFailure('opened-cards', `${what} at position ${pos}: ${r.error}`);
        const p = r.plain;
        const position = (p[28] << 8) | p[29];
        const card = (p[30] << 8) | p[31];
        if (position !== pos) throw new AuditFailure('opened-cards', `${what} at position ${pos} opens to position ${position}`);
        if (card > 13823) throw new AuditFailure('opened-cards', `${what} at position ${pos} carries card code ${card}`);
        const l = sha256(p);
        if (!equal(l, leaves[pos])) throw new AuditFailure('opened-cards', firstDiff(`${what} at position ${pos}: SHA-256(plaintext) vs leaves[${pos}]`, leaves[pos], l));
        out.myCards.push({ position: pos, card: cardText(card) });
      }
    }
    const mine = out.myCards.length;
    pass('opened-cards', `${checkedOpenings} published openings match their leaves${opts.viewer ? `; ${mine} of your sealed cards opened and match` : ''}`);

    // 12. action-signatures
    const lastSeq = new Map<number, number>();
    let nActions = 0;
    evs.forEach((e, i) => {
      const b = bodies[i];
      if (b.type !== 'action-result') return;
      const actionText = rawMembers(e.bodyText).get('action') ?? '';
      const msg = actionMessage(hand, b.seq, actionText);
      if (!verifyStrict(unhex(b.sig, 64, 'action sig'), msg, unhex(gs.players[b.seat].id, 32, 'player id'))) {
        throw new AuditFailure('action-signatures', `event ${i}: seat ${b.seat}'s action ${actionText} (seq ${b.seq}) does not verify under ${gs.players[b.seat].id}; signed bytes ${hex(msg)}`);
      }
      if (lastSeq.has(b.seat) && b.seq <= lastSeq.get(b.seat)!) throw new AuditFailure('action-signatures', `event ${i}: seat ${b.seat}'s seq ${b.seq} does not increase`);
      lastSeq.set(b.seat, b.seq);
      nActions++;
    });
    pass('action-signatures', `${nActions} player actions signed by their players`);
    // 13. replay
    if (!revealed) {
      results.push({ check: 'replay', status: 'skipped', detail: 'deferred reveal pending: the rules replay needs every card' });
    } else if (!hasRules(gs.game)) {
      results.push({ check: 'replay', status: 'skipped', detail: `no rules for game ${JSON.stringify(gs.game)} in the browser: run claw-player audit on this file` });
    } else {
      pass('replay', replayCheck(gs, rawMembers(evs[1].bodyText), bodies.slice(2, endAt), end, out.deckOrder as string[]));
    }
    out.ok = true;
  } catch (e) {
    if (e instanceof AuditFailure) {
      results.push({ check: e.check, status: 'failed', detail: e.detail });
    } else {
      results.push({ check: 'structure', status: 'failed', detail: `malformed transcript: ${(e as Error).message}` });
    }
  }
  results.sort((a, b) => CHECKS.indexOf(a.check) - CHECKS.indexOf(b.check));
  return out;
}

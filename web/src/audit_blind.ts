// The browser audit of a dealer-blind hand (SPEC.md §9.7, docs/blind-deal.md
// §II.8), after the dealer signatures and the hash chain: the checks of
// `protocol/src/audit/blind.rs` in the same order, under the same check
// names (key shares, the dealer's piece key, every seat's pieces and each
// upheld complaint: `player-seeds`; shuffles, skips and the final deck's
// digest: `shuffle`; requests, shares, recoveries of a withheld share and
// opened cards: `opened-cards`; the order of events: `structure`), then the
// rules replay over the deck view and chip conservation. The primitives are
// ./mental (the second implementation of `claw_protocol::mental`).
//
// Event kinds handled: before `game-start` `blind-keys`, `blind-pieces`,
// `blind-complaint`, `blind-shuffle`, `blind-skip` (SETUP: accepted in
// order, then checked at `game-start` as the Rust auditor does); between
// `game-start` and `game-end` `blind-request`, `blind-shares`,
// `blind-reveal`, `blind-recover`, `blind-recovery` (PLAYING). Any other
// `blind-*` kind fails `structure` naming it; a new kind is one entry in
// SETUP or PLAYING.

import { sha256 } from '@noble/hashes/sha2.js';
import {
  AuditFailure,
  AuditOptions,
  AuditOutcome,
  Bytes,
  CheckName,
  Event,
  Transcript,
  actionMessage,
  cardText,
  concat,
  firstDiff,
  hex,
  jsonEqual,
  parseCard,
  commissionsViewerResult,
  previousAndRoom,
  replayCheck,
  seedCommitment,
  signed,
  unhex,
  utf8,
  verifyStrict,
} from './audit';
import { rawMembers } from './rawjson';
import { canonicalDeck, hasRules } from './replay/index';
import {
  CardTable,
  Complaint,
  DEALER_HOLDER,
  Deck,
  DecryptionShare,
  EncryptedPiece,
  JointKey,
  KeyShare,
  MAX_DECK,
  MentalError,
  PieceCommitments,
  RecoveredShare,
  RecoveryShare,
  ShuffleProof,
  holdersOf,
  verifyShuffle,
} from './mental';

/** Whether a transcript is of a blind hand: a `blind-*` event, or `game-start.deck_mode = "blind"`. */
export function isBlindHand(bodies: any[]): boolean {
  return bodies.some((b) => typeof b?.type === 'string' && b.type.startsWith('blind-')) || bodies.some((b) => b?.type === 'game-start' && b.deck_mode === 'blind');
}

const fail = (check: CheckName, d: string) => new AuditFailure(check, d);
const structure = (d: string) => fail('structure', d);
const u8 = (n: number) => new Uint8Array([n]);
const isSeat = (s: unknown, n: number): s is number => Number.isInteger(s) && (s as number) >= 0 && (s as number) < n;
const isPosition = (p: unknown): p is number => Number.isInteger(p) && (p as number) >= 0 && (p as number) <= 0xffff;
const isByte = (s: unknown): s is number => Number.isInteger(s) && (s as number) >= 0 && (s as number) <= 255;

/** `"claw/v1/blind-key" 0x00 hand_id seat key_share` (SPEC.md §4.2). */
export function blindKeyMessage(hand: Bytes, seat: number, keyShare: Bytes): Bytes {
  return signed('claw/v1/blind-key', concat(hand, u8(seat), keyShare));
}

/** `"claw/v1/blind-shuffle" 0x00 hand_id seat SHA-256(deck) SHA-256(proof)`. */
export function blindShuffleMessage(hand: Bytes, seat: number, deck: Bytes, proof: Bytes): Bytes {
  return signed('claw/v1/blind-shuffle', concat(hand, u8(seat), sha256(deck), sha256(proof)));
}

/** `"claw/v1/blind-pieces" 0x00 hand_id seat SHA-256(commitments) SHA-256(pieces)` (docs/blind-deal.md §II.7). */
export function blindPiecesMessage(hand: Bytes, seat: number, commitments: Bytes, pieces: Bytes): Bytes {
  return signed('claw/v1/blind-pieces', concat(hand, u8(seat), sha256(commitments), sha256(pieces)));
}

/** `SHA-256("claw/v1/blind-deck" 0x00 hand_id deck)`: `game-start.root` of a blind hand. */
export function blindDeckDigest(hand: Bytes, deck: Bytes): Bytes {
  return sha256(concat(utf8('claw/v1/blind-deck'), u8(0), hand, deck));
}

/** The message of a refused primitive, as `MentalError` names it (§7). */
function why(e: unknown): string {
  if (e instanceof MentalError) return e.message;
  if (e instanceof RangeError) return e.message;
  throw e;
}

/** The state of a hand being audited, shared by the event handlers. */
interface Hand {
  hand: Bytes;
  n: number;
  players: string[];
  declared: number[];
  table: CardTable;
  key: JointKey | null;
  /** The current deck: the initial one, then each accepted shuffle's output. */
  deck: Deck | null;
  shuffles: { seat: number; accepted: boolean }[];
  /** Dealt positions: holder (null: community or burn) and face. */
  holders: (number | null)[];
  faceUp: boolean[];
  /** Position → the private card's owner, or null for a public card. */
  requested: Map<number, number | null>;
  shares: Map<number, [number, DecryptionShare][]>;
  /** Position → the opened card. */
  view: (number | null)[];
  /** Seat → the commitments of its pieces, and its encrypted pieces, in holder order. */
  commitments: PieceCommitments[];
  pieces: EncryptedPiece[][];
  /** Seats with an upheld complaint (their secret is not recoverable). */
  complained: Set<number>;
  /** The hand's withholders (complained seats included). */
  withholders: Set<number>;
  /** The open recovery: the withholder, its positions, the verified recovery shares by position and holder. */
  recovery: { seat: number; positions: number[]; shares: Map<number, [number, RecoveryShare][]> } | null;
  /** Position → the withholder's share rebuilt from its pieces. */
  recovered: Map<number, RecoveredShare>;
  counts: { shares: number; opened: number; requests: number; reveals: number; recoveries: number; recoveryShares: number };
}

type Handler = (h: Hand, b: any, i: number) => void;

/** The setup events in the order accepted (SETUP), each with its index; checked at `game-start`. */
interface Setup {
  keys: [number, any] | null;
  pieces: [number, any][];
  complaints: [number, any][];
  shuffles: [number, any][];
}

const notHere = (b: any, i: number) => structure(`event ${i}: ${b.type} not allowed here`);

/** Every seat's `blind-pieces` in: the shuffles may start. */
function piecesDone(s: Setup): boolean {
  return s.keys !== null && s.pieces.length === (Array.isArray(s.keys[1].keys) ? s.keys[1].keys.length : 0);
}

/**
 * Setup events (between `hand-prepare` and `game-start`), accepted in order
 * as the Rust auditor does: `blind-keys` first and once, then every seat's
 * `blind-pieces` once, then one shuffle or skip per seat; a
 * `blind-complaint` after its accused's pieces, once per accused.
 */
const SETUP: Record<string, (s: Setup, b: any, i: number) => void> = {
  'blind-keys': (s, b, i) => {
    if (s.keys) throw notHere(b, i);
    s.keys = [i, b];
  },
  'blind-pieces': (s, b, i) => {
    if (!isByte(b.seat)) throw structure(`event ${i}: blind-pieces of seat ${JSON.stringify(b.seat)}`);
    if (!s.keys || piecesDone(s) || s.pieces.some(([, p]) => p.seat === b.seat)) throw notHere(b, i);
    s.pieces.push([i, b]);
  },
  'blind-complaint': (s, b, i) => {
    if (!isByte(b.seat) || !isByte(b.accused)) throw structure(`event ${i}: blind-complaint of seat ${JSON.stringify(b.seat)} against ${JSON.stringify(b.accused)}`);
    if (!s.pieces.some(([, p]) => p.seat === b.accused) || s.complaints.some(([, c]) => c.accused === b.accused)) throw notHere(b, i);
    s.complaints.push([i, b]);
  },
  'blind-shuffle': (s, b, i) => {
    if (!piecesDone(s)) throw notHere(b, i);
    s.shuffles.push([i, b]);
  },
  'blind-skip': (s, b, i) => {
    if (!piecesDone(s)) throw notHere(b, i);
    if (b.reason !== 'timeout' && b.reason !== 'bad-shuffle') throw structure(`event ${i}: skip reason ${JSON.stringify(b.reason)}`);
    s.shuffles.push([i, b]);
  },
};

/**
 * At `game-start`, in the Rust auditor's order: every key share signed by
 * its seat's player and proven, the joint key, the dealer's piece key
 * (proven for seat byte 0xFF), every seat's pieces, each upheld complaint
 * (`player-seeds`); then each seat's shuffle or skip in seat order against
 * the deck before it, at least one accepted (`shuffle`; the root is checked
 * by the caller).
 */
function start(h: Hand, s: Setup, pass: (check: CheckName, detail: string) => void): void {
  const [ki, keys] = s.keys!;
  if (!Array.isArray(keys.keys) || keys.keys.length !== h.n || keys.keys.some((k: any, seat: number) => k?.seat !== seat)) {
    throw structure('blind-keys must list every seat once, in seat order');
  }
  const list: [number, KeyShare][] = [];
  for (const k of keys.keys) {
    const bad = (d: string) => fail('player-seeds', `seat ${k.seat}: ${d}`);
    const bytes = unhex(k.key_share, null, `event ${ki}: key share of seat ${k.seat}`);
    if (bytes.length !== 96) throw bad(`key share of ${bytes.length} bytes`);
    const msg = blindKeyMessage(h.hand, k.seat, bytes);
    if (!verifyStrict(unhex(k.sig, 64, `event ${ki}: key share signature`), msg, unhex(h.players[k.seat], 32, 'player id'))) {
      throw bad(`key share signature does not verify under ${h.players[k.seat]} (signed bytes ${hex(msg)})`);
    }
    try {
      list.push([k.seat, KeyShare.fromBytes(bytes)]);
    } catch (e) {
      throw bad(why(e));
    }
  }
  try {
    h.key = JointKey.combine(h.hand, list);
  } catch (e) {
    throw fail('player-seeds', why(e));
  }
  const dealerKey = unhex(keys.dealer_key, null, `event ${ki}: blind-keys.dealer_key`);
  try {
    KeyShare.fromBytes(dealerKey).verify(h.hand, DEALER_HOLDER);
  } catch (e) {
    throw fail('player-seeds', `the dealer's piece key: ${why(e)}`);
  }

  if (s.pieces.length !== h.n) throw structure(`${s.pieces.length} blind-pieces for ${h.n} seats`);
  for (const [i, p] of s.pieces) {
    if (!isSeat(p.seat, h.n)) throw structure(`event ${i}: pieces of a missing seat`);
    const bad = (d: string) => fail('player-seeds', `event ${i}: pieces of seat ${p.seat}: ${d}`);
    const cb = unhex(p.commitments, null, `event ${i}: commitments`);
    const pb = unhex(p.pieces, null, `event ${i}: pieces`);
    const msg = blindPiecesMessage(h.hand, p.seat, cb, pb);
    if (!verifyStrict(unhex(p.sig, 64, `event ${i}: pieces signature`), msg, unhex(h.players[p.seat], 32, 'player id'))) {
      throw bad(`signature does not verify under ${h.players[p.seat]} (signed bytes ${hex(msg)})`);
    }
    const holders = holdersOf(p.seat, h.n).length;
    let c: PieceCommitments;
    try {
      c = PieceCommitments.fromBytes(holders, cb);
      c.checkSum(p.seat, list[p.seat][1]);
    } catch (e) {
      throw bad(why(e));
    }
    if (pb.length !== holders * EncryptedPiece.LEN) throw bad(`${pb.length} bytes of pieces for ${holders} holders`);
    try {
      h.pieces[p.seat] = Array.from({ length: holders }, (_, k) => EncryptedPiece.fromBytes(pb.subarray(64 * k, 64 * k + 64)));
    } catch (e) {
      throw bad(why(e));
    }
    h.commitments[p.seat] = c;
  }
  for (const [i, c] of s.complaints) {
    const bad = (d: string) => fail('player-seeds', `event ${i}: complaint of seat ${c.seat}: ${d}`);
    const k = c.seat === DEALER_HOLDER ? -1 : holdersOf(c.accused, h.n).indexOf(c.seat);
    if (k < 0) throw bad("not a holder of the accused's pieces");
    const a = h.commitments[c.accused]?.get(k);
    const piece = h.pieces[c.accused]?.[k];
    const holderKey = list[c.seat]?.[1];
    if (!a || !piece || !holderKey) throw bad('no such piece');
    try {
      Complaint.fromBytes(unhex(c.complaint, null, `event ${i}: complaint`)).verify(h.hand, c.accused, c.seat, holderKey, piece, a);
    } catch (e) {
      throw bad(why(e));
    }
    h.complained.add(c.accused);
  }
  h.withholders = new Set(h.complained);
  const accused = [...h.complained].sort((a, b) => a - b);
  pass(
    'player-seeds',
    `${h.n} key shares signed by their players, their proofs of knowledge verify; joint key ${hex(h.key.bytes).slice(0, 16)}…; the dealer's piece key proven; ${h.n} seats' pieces signed, their commitments summing to each key share; ${s.complaints.length} upheld complaints${accused.length ? ` (against seat ${accused.join(', ')})` : ''}`,
  );

  h.deck = Deck.initial(h.declared);
  if (s.shuffles.length !== h.n) throw structure(`${s.shuffles.length} shuffles or skips for ${h.n} seats`);
  s.shuffles.forEach(([i, b], seat) => {
    if (b.type === 'blind-skip') {
      if (b.seat !== seat) throw structure(`event ${i}: skip of seat ${b.seat}, expected ${seat}`);
      h.shuffles.push({ seat, accepted: false });
      return;
    }
    if (b.seat !== seat) throw structure(`event ${i}: shuffle of seat ${b.seat}, expected ${seat}`);
    const bad = (d: string) => fail('shuffle', `event ${i}: seat ${seat}: ${d}`);
    const deckBytes = unhex(b.deck, null, `event ${i}: deck`);
    const proofBytes = unhex(b.proof, null, `event ${i}: proof`);
    const msg = blindShuffleMessage(h.hand, seat, deckBytes, proofBytes);
    if (!verifyStrict(unhex(b.sig, 64, `event ${i}: shuffle signature`), msg, unhex(h.players[seat], 32, 'player id'))) {
      throw bad(`signature does not verify under ${h.players[seat]} (signed bytes ${hex(msg)})`);
    }
    try {
      const out = Deck.fromBytes(deckBytes);
      const proof = ShuffleProof.fromBytes(h.deck!.length, proofBytes);
      verifyShuffle(h.hand, seat, h.key!, h.deck!, out, proof);
      h.deck = out;
    } catch (e) {
      throw bad(why(e));
    }
    h.shuffles.push({ seat, accepted: true });
  });
}

/** A public position with every key holder's share (one maybe recovered) opens to a card of the deck. */
function openIfComplete(h: Hand, p: number): void {
  if (h.requested.get(p) !== null || h.view[p] !== null) return;
  const rebuilt = h.recovered.has(p) ? [h.recovered.get(p)!] : [];
  const list = h.shares.get(p) ?? [];
  if (list.length + rebuilt.length !== h.key!.seats.length) return;
  h.view[p] = h.key!.openRecovered(h.hand, p, h.deck!.cards[p], list, rebuilt, h.table);
  h.counts.opened++;
}

/** Events between `game-start` and `game-end` besides the game's own. */
const PLAYING: Record<string, Handler> = {
  'blind-request': (h, b, i) => {
    if (!Array.isArray(b.positions)) throw structure(`event ${i}: blind-request without positions`);
    for (const r of b.positions) {
      const p = r?.position;
      if (!isPosition(p) || p >= h.declared.length) throw fail('deal-order', `event ${i}: request of position ${p} beyond the deck`);
      const to = r.to ?? null;
      if (to !== null && (!isSeat(to, h.n) || h.holders[p] !== to)) {
        throw fail('opened-cards', `event ${i}: position ${p} requested for seat ${to}, which was not dealt it face down`);
      }
      if (h.requested.get(p) === null && to !== null) throw fail('opened-cards', `event ${i}: position ${p} requested privately after publicly`);
      h.requested.set(p, to);
    }
    h.counts.requests++;
  },
  'blind-shares': (h, b, i) => {
    const seat = b.seat;
    if (!isSeat(seat, h.n)) throw structure(`event ${i}: shares of a missing seat ${seat}`);
    if (!Array.isArray(b.shares)) throw structure(`event ${i}: blind-shares without shares`);
    const bad = (d: string) => fail('opened-cards', `event ${i}: seat ${seat}: ${d}`);
    for (const x of b.shares) {
      const p = x?.position;
      if (!isPosition(p)) throw structure(`event ${i}: share position ${p}`);
      if (!h.requested.has(p)) throw bad(`share for position ${p}, never requested`);
      if (h.requested.get(p) === seat) throw bad(`the owner's share of its private card at ${p}`);
      const list = h.shares.get(p) ?? [];
      const recovering = h.recovery !== null && h.recovery.seat === seat && h.recovery.positions.includes(p);
      if (list.some(([s]) => s === seat) || h.recovered.get(p)?.seat === seat || recovering) throw bad(`a second share for position ${p}`);
      const ct = h.deck!.cards[p];
      if (!ct) throw bad(`position ${p} beyond the deck`);
      let d: DecryptionShare;
      try {
        d = DecryptionShare.fromBytes(unhex(x.share, null, `event ${i}: share`));
        h.key!.verifyShare(h.hand, seat, p, ct, d);
      } catch (e) {
        if (e instanceof AuditFailure) throw e;
        throw bad(`position ${p}: ${why(e)}`);
      }
      list.push([seat, d]);
      h.shares.set(p, list);
      h.counts.shares++;
      try {
        openIfComplete(h, p);
      } catch (e) {
        throw bad(`position ${p}: ${why(e)}`);
      }
    }
  },
  'blind-recover': (h, b, i) => {
    const w = b.seat;
    if (!isByte(w)) throw structure(`event ${i}: blind-recover of seat ${JSON.stringify(w)}`);
    const bad = (d: string) => fail('opened-cards', `event ${i}: recovery of seat ${w}: ${d}`);
    if (h.recovery) throw bad('a recovery is open already');
    if (h.complained.has(w) || [...h.withholders].some((x) => x !== w)) throw bad('a second withholder: the hand must be cancelled');
    const c = h.commitments[w];
    if (!c) throw bad('no such seat');
    const holders = holdersOf(w, h.n);
    if (!Array.isArray(b.positions) || !Array.isArray(b.dealer_shares) || !b.positions.every(isPosition)) {
      throw structure(`event ${i}: blind-recover without positions or dealer shares`);
    }
    const positions: number[] = b.positions;
    if (!positions.length || positions.some((p, k) => k > 0 && positions[k - 1] >= p) || b.dealer_shares.length !== positions.length) {
      throw bad('positions must be increasing, one dealer share each');
    }
    const shares = new Map<number, [number, RecoveryShare][]>();
    positions.forEach((p, k) => {
      const x = b.dealer_shares[k];
      const req = h.requested.get(p);
      const owed = req === undefined ? false : req === null ? true : req !== w;
      const shared = (h.shares.get(p) ?? []).some(([s]) => s === w) || h.recovered.has(p);
      if (!owed || shared || x?.position !== p) throw bad(`position ${p} was not owed by the seat`);
      const ct = h.deck!.cards[p];
      if (!ct) throw bad(`position ${p} beyond the deck`);
      try {
        const s = RecoveryShare.fromBytes(unhex(x.share, null, `event ${i}: dealer share`));
        s.verify(h.hand, w, DEALER_HOLDER, holders.length - 1, c, p, ct);
        shares.set(p, [[DEALER_HOLDER, s]]);
      } catch (e) {
        throw bad(why(e));
      }
    });
    h.withholders.add(w);
    h.recovery = { seat: w, positions: [...positions], shares };
    h.counts.recoveries++;
  },
  'blind-recovery': (h, b, i) => {
    if (!isSeat(b.seat, h.n)) throw structure(`event ${i}: recovery shares of a missing seat`);
    const bad = (d: string) => fail('opened-cards', `event ${i}: recovery shares of seat ${b.seat}: ${d}`);
    const r = h.recovery;
    if (!r) throw bad('no recovery is open');
    const holders = holdersOf(r.seat, h.n);
    const k = b.withholder === r.seat ? holders.indexOf(b.seat) : -1;
    if (k < 0) throw bad("not a holder of the withholder's pieces");
    if ([...r.shares.values()].some((v) => v.some(([x]) => x === b.seat))) throw bad('a second set of recovery shares');
    if (!Array.isArray(b.shares)) throw structure(`event ${i}: blind-recovery without shares`);
    if (!jsonEqual(b.shares.map((x: any) => x?.position), r.positions)) throw bad('one share per recovered position, in order');
    const c = h.commitments[r.seat];
    for (const x of b.shares) {
      const ct = h.deck!.cards[x.position];
      if (!ct) throw bad('beyond the deck');
      let s: RecoveryShare;
      try {
        s = RecoveryShare.fromBytes(unhex(x.share, null, `event ${i}: recovery share`));
        s.verify(h.hand, r.seat, b.seat, k, c, x.position, ct);
      } catch (e) {
        throw bad(why(e));
      }
      r.shares.get(x.position)!.push([b.seat, s]);
      h.counts.recoveryShares++;
    }
    if ([...r.shares.values()].every((v) => v.length === holders.length)) {
      h.recovery = null;
      for (const p of r.positions) {
        try {
          h.recovered.set(p, RecoveredShare.combine(h.hand, r.seat, h.n, c, p, h.deck!.cards[p], r.shares.get(p) ?? []));
          openIfComplete(h, p);
        } catch (e) {
          throw bad(`position ${p}: ${why(e)}`);
        }
      }
    }
  },
  'blind-reveal': (h, b, i) => {
    if (!Array.isArray(b.positions)) throw structure(`event ${i}: blind-reveal without positions`);
    for (const p of b.positions) {
      if (!(isPosition(p) && p < h.holders.length)) throw fail('deal-order', `event ${i}: reveal of undealt position ${p}`);
      if (h.faceUp[p]) throw fail('deal-order', `event ${i}: reveal of position ${p} already face up`);
      h.faceUp[p] = true;
      if (h.view[p] === null) throw fail('opened-cards', `event ${i}: revealed card at ${p} is not opened by its shares`);
    }
    h.counts.reveals++;
  },
};

/** The game's own events allowed between `game-start` and `game-end` of a blind hand. */
const GAME_EVENTS = new Set(['phase-deal', 'new-card', 'chips', 'action-result', 'timeout-action']);

/** A deal in a blind hand: in position order, no opening or sealed box, a face-up card already opened. */
function deal(h: Hand, b: any, i: number): void {
  for (const c of b.cards ?? []) {
    const toPlayer = c?.target?.to === 'player';
    if (toPlayer && !isSeat(c.target.seat, h.n)) throw structure(`event ${i}: deal to seat ${c.target.seat} of ${h.n}`);
    if (c.opening || c.sealed) throw structure(`event ${i}: position ${c.position}: a blind deal has no opening or sealed box`);
    if (c.face !== 'up' && c.face !== 'down') throw structure(`event ${i}: position ${c.position}: face ${JSON.stringify(c.face)}`);
  }
  for (const c of b.cards ?? []) {
    if (c.position !== h.holders.length) throw fail('deal-order', `event ${i}: dealt position ${c.position}, expected ${h.holders.length}`);
    if (c.position >= h.declared.length) throw fail('deal-order', `event ${i}: position ${c.position} beyond the ${h.declared.length}-card deck`);
    h.holders.push(c.target?.to === 'player' ? c.target.seat : null);
    h.faceUp.push(c.face === 'up');
  }
  for (const c of b.cards ?? []) {
    if (c.face === 'up' && h.view[c.position] === null) throw fail('opened-cards', `event ${i}: face-up card at ${c.position} is not opened by its shares`);
  }
}

/** The kind of an event the blind audit does not know, for a `structure` failure. */
function unknownKind(ty: unknown, i: number, where: string): AuditFailure {
  if (typeof ty === 'string' && ty.startsWith('blind-')) {
    return structure(`event ${i}: blind event kind ${JSON.stringify(ty)} is not known to this auditor (it knows ${[...Object.keys(SETUP), ...Object.keys(PLAYING)].join(', ')})`);
  }
  if (ty === 'reveal' || ty === 'card-transfer') return structure(`event ${i}: ${ty} in a blind hand`);
  return structure(`event ${i}: ${JSON.stringify(ty)} not allowed ${where}`);
}

/**
 * The checks of a blind hand after `dealer-signatures` and `hash-chain`
 * (passed by the caller); each passed check is given to `pass`, the first
 * failure thrown as an `AuditFailure`.
 */
export function auditBlind(
  t: Transcript,
  hand: Bytes,
  handHex: string,
  opts: AuditOptions,
  out: AuditOutcome,
  pass: (check: CheckName, detail: string) => void,
): void {
  const evs: Event[] = t.events;
  const bodies = evs.map((e) => e.body);
  const types = bodies.map((b) => b?.type);

  // structure: the order of the events, and the shapes the later checks rely on.
  if (types[0] !== 'hand-prepare') throw structure(`event 0 is ${types[0]}, expected hand-prepare`);
  const startAt = types.indexOf('game-start');
  if (startAt < 0) throw structure('no game-start');
  const setup: Setup = { keys: null, pieces: [], complaints: [], shuffles: [] };
  for (let i = 1; i < startAt; i++) {
    if (!(types[i] in SETUP)) throw unknownKind(types[i], i, 'before game-start');
    SETUP[types[i]](setup, bodies[i], i);
  }
  if (!setup.keys) throw structure('a blind hand without blind-keys before game-start');
  const endAt = types.indexOf('game-end');
  if (endAt < 0) throw structure('no game-end');
  types.slice(startAt + 1, endAt).forEach((ty, k) => {
    if (!GAME_EVENTS.has(ty) && !(ty in PLAYING)) throw unknownKind(ty, startAt + 1 + k, 'between game-start and game-end');
  });
  const after = types.slice(endAt + 1);
  if (after.length > 1 || (after.length === 1 && after[0] !== 'audit-reveal')) throw structure(`after game-end: ${after.join(', ')} (at most one audit-reveal)`);
  const prep = bodies[0];
  const gs = bodies[startAt];
  const end = bodies[endAt];
  const reveal2 = after.length ? bodies[endAt + 1] : null;
  out.game = gs.game;
  const n = gs.players?.length ?? 0;
  if (n < 1 || n > 255) throw structure(`${n} players`);
  if (!Array.isArray(prep.players) || prep.players.length !== n) throw structure('hand-prepare and game-start list different players');
  gs.players.forEach((p: any, s: number) => {
    if (p.seat !== s) throw structure(`game-start player ${s} has seat ${p.seat}`);
    if (p.id !== prep.players[s]) throw structure(`game-start seat ${s} is ${p.id}, hand-prepare says ${prep.players[s]}`);
  });
  if (prep.entropy !== gs.entropy) throw structure('entropy differs between hand-prepare and game-start');
  if (gs.deck_mode !== 'blind') throw structure(`deck mode ${JSON.stringify(gs.deck_mode)} with blind events: deck mode blind exactly when the blind events come (SPEC.md §9.7)`);
  if (!Array.isArray(gs.deck) || gs.deck.length < 1 || gs.deck.length > MAX_DECK) throw structure(`blind deck of ${gs.deck?.length} cards`);
  if ((gs.leaves ?? []).length || (gs.player_seeds ?? []).length) throw structure('a blind game-start has no leaves and no player seeds');
  const gsRaw = rawMembers(evs[startAt].bodyText);
  const settingsText = gsRaw.get('settings') ?? '';
  const cfg = sha256(concat(utf8('claw/v1/config'), u8(0), utf8(gs.game), u8(0), utf8(gs.game_version), u8(0), utf8(settingsText)));
  const cfgPub = unhex(gs.config_hash, 32, 'config_hash');
  if (!cfg.every((x, k) => x === cfgPub[k])) throw structure(firstDiff('config_hash', cfgPub, cfg));
  previousAndRoom(t, gs, prep, handHex, gsRaw, structure);
  const room = gs.room_config ?? null;
  if (room !== null && room.deal !== 'blind') throw structure(`a blind hand in a room whose configuration deals ${JSON.stringify(room.deal ?? 'dealer')}`);
  for (const [i, b] of bodies.entries()) {
    if (b.type === 'chips' && b.moves.some((m: any) => m.party?.kind === 'seat' && !isSeat(m.party.seat, n))) throw structure(`event ${i}: chip movement for a missing seat`);
    if ((b.type === 'action-result' || b.type === 'timeout-action') && !isSeat(b.seat, n)) throw structure(`event ${i}: seat ${b.seat} acts`);
  }
  commissionsViewerResult(gs, end, n, opts, structure);
  if ((end.openings ?? []).length || (reveal2?.openings ?? []).length) throw structure("a blind hand's end opens no position");
  pass('structure', `${gs.game} ${gs.game_version}, ${n} players, blind deck of ${gs.deck.length} cards, ${evs.length} events in order; config_hash recomputes`);

  // player-seeds (key shares, the dealer's piece key, pieces, complaints) and shuffle, at game-start.
  const declared: number[] = gs.deck.map(parseCard);
  const h: Hand = {
    hand,
    n,
    players: prep.players,
    declared,
    table: new CardTable(declared),
    key: null,
    deck: null,
    shuffles: [],
    holders: [],
    faceUp: [],
    requested: new Map(),
    shares: new Map(),
    view: declared.map(() => null),
    commitments: [],
    pieces: [],
    complained: new Set(),
    withholders: new Set(),
    recovery: null,
    recovered: new Map(),
    counts: { shares: 0, opened: 0, requests: 0, reveals: 0, recoveries: 0, recoveryShares: 0 },
  };
  // The initial deck is the open encryption of the game's canonical deck (settings the rules refuse fail the replay).
  let canonical: number[] | undefined;
  try {
    canonical = canonicalDeck(gs.game, gs.settings);
  } catch {
    canonical = undefined;
  }
  if (canonical && !jsonEqual(canonical, declared)) throw fail('shuffle', "declared deck is not the game's canonical deck");
  if (new Set(declared).size !== declared.length) throw fail('shuffle', 'the declared deck holds a card twice');
  start(h, setup, pass);
  const accepted = h.shuffles.filter((s) => s.accepted).length;
  if (!accepted) throw fail('shuffle', 'no shuffle was accepted: the order is public');
  const digest = blindDeckDigest(hand, h.deck!.bytes);
  const root = unhex(gs.root, 32, 'root');
  if (!digest.every((x, k) => x === root[k])) throw fail('shuffle', firstDiff("root is not the final deck's digest: SHA-256(\"claw/v1/blind-deck\" 0x00 hand_id final deck) vs game-start.root", root, digest));
  pass('shuffle', `${accepted} shuffles of the open ${declared.length}-card deck, each signed and proven (Terelius–Wikström) against the deck before it, ${n - accepted} skipped; root is the final deck's digest`);
  passNotApplicable(pass);

  // commission (at game-start, as the Rust auditor).
  const commissions: number[] = gs.players.map((p: any) => p.commission ?? 0);
  if (room !== null && opts.commission !== undefined && room.commission !== opts.commission) {
    throw fail('commission', `the room configuration in the hand states commission ${room.commission}, the room's is ${opts.commission}`);
  }
  const expected = room?.commission ?? opts.commission ?? commissions[0];
  const over = commissions.findIndex((c) => c !== expected);
  if (over >= 0) throw fail('commission', `seat ${over} paid commission ${commissions[over]}, the room's is ${expected}`);
  pass('commission', `every seat paid the same commission, ${expected}`);

  // deal-order and opened-cards: the hand's events in order.
  for (let i = startAt + 1; i < endAt; i++) {
    const b = bodies[i];
    if (b.type === 'phase-deal' || b.type === 'new-card') deal(h, b, i);
    else if (b.type in PLAYING) PLAYING[b.type](h, b, i);
  }
  const publicRequested = [...h.requested.entries()].filter(([, to]) => to === null).map(([p]) => p).sort((a, b) => a - b);
  for (const p of publicRequested) {
    if (!h.faceUp[p]) throw fail('opened-cards', `position ${p} was opened but the game never showed it`);
  }
  // No recovery left open; every requested position has every owed share, sent or recovered.
  if (h.recovery) throw fail('opened-cards', `the recovery of seat ${h.recovery.seat}'s shares never completed`);
  for (const [p, to] of [...h.requested.entries()].sort((a, b) => a[0] - b[0])) {
    for (let seat = 0; seat < h.n; seat++) {
      if (seat === to) continue;
      const sent = (h.shares.get(p) ?? []).some(([s]) => s === seat);
      if (!sent && h.recovered.get(p)?.seat !== seat) throw fail('opened-cards', `position ${p}: seat ${seat}'s share was never sent nor recovered`);
    }
  }
  pass('deal-order', `positions 0…${h.holders.length - 1} dealt in order; ${h.counts.reveals} showdown reveals of face-down cards`);
  const recovered = h.counts.recoveries
    ? `; ${h.counts.recoveries} recoveries of seat ${[...h.withholders].join(', ')}'s withheld shares (${h.recovered.size} positions rebuilt from ${h.counts.recoveryShares} holders' recovery shares and the dealer's, each proven against its piece's commitment)`
    : '';
  pass('opened-cards', `${h.counts.requests} share requests as the deals made them; ${h.counts.shares} decryption shares owed and proven (Chaum–Pedersen)${recovered}; ${h.counts.opened} cards opened from every key holder's share, each shown by the game`);
  out.deckOrder = h.view.map((c) => (c === null ? null : cardText(c)));

  // action-signatures
  const lastSeq = new Map<number, number>();
  let nActions = 0;
  evs.forEach((e, i) => {
    const b = bodies[i];
    if (b.type !== 'action-result') return;
    const actionText = rawMembers(e.bodyText).get('action') ?? '';
    const msg = actionMessage(hand, b.seq, actionText);
    if (!verifyStrict(unhex(b.sig, 64, 'action sig'), msg, unhex(gs.players[b.seat].id, 32, 'player id'))) {
      throw fail('action-signatures', `event ${i}: seat ${b.seat}'s action ${actionText} (seq ${b.seq}) does not verify under ${gs.players[b.seat].id}; signed bytes ${hex(msg)}`);
    }
    if (lastSeq.has(b.seat) && b.seq <= lastSeq.get(b.seat)!) throw fail('action-signatures', `event ${i}: seat ${b.seat}'s seq ${b.seq} does not increase`);
    lastSeq.set(b.seat, b.seq);
    nActions++;
  });
  pass('action-signatures', `${nActions} player actions signed by their players`);

  // reveal-complete and seed-commitment: only the dealer seed (it decides nothing).
  const seedHex = end.dealer_seed ?? reveal2?.dealer_seed;
  if (end.dealer_seed && reveal2?.dealer_seed && end.dealer_seed !== reveal2.dealer_seed) throw fail('reveal-complete', 'two different dealer seeds');
  if (!seedHex) {
    if (gs.reveal === 'full') throw fail('reveal-complete', 'reveal = full but the dealer seed is missing');
    throw fail('reveal-complete', 'deferred reveal pending: the dealer seed is not published yet');
  }
  pass('reveal-complete', 'the dealer seed is published (a blind hand has no card for the dealer to open)');
  const c = seedCommitment(hand, unhex(seedHex, 32, 'dealer_seed'));
  const cPub = unhex(prep.seed_commitment, 32, 'seed_commitment');
  if (!c.every((x, k) => x === cPub[k])) throw fail('seed-commitment', firstDiff('SHA-256("claw/v1/seed-commitment" ‖ hand_id ‖ dealer_seed) vs hand-prepare.seed_commitment', cPub, c));
  pass('seed-commitment', 'the revealed dealer seed matches its commitment (it decides nothing in a blind hand)');

  // replay over the deck view, and chip conservation.
  const opened = new Set(h.view.filter((x): x is number => x !== null));
  const rest = declared.filter((x) => !opened.has(x));
  const order = h.view.map((x) => cardText(x ?? rest.shift()!));
  if (!hasRules(gs.game)) {
    out.results.push({ check: 'replay', status: 'skipped', detail: `no rules for game ${JSON.stringify(gs.game)} in the browser: run claw-player audit on this file` });
    return;
  }
  const mid = bodies.slice(startAt + 1, endAt).map((b) => (b.type === 'blind-reveal' ? { type: 'reveal', openings: b.positions.map((p: number) => ({ position: p })) } : b));
  const detail = replayCheck(gs, rawMembers(evs[startAt].bodyText), mid, end, order);
  const r = end.result;
  const total = r.net.reduce((a: number, x: number) => a + x, 0) + (r.house_net ?? 0) + (r.rake ?? 0);
  if (total !== 0) throw fail('replay', `chips not conserved: the nets, house net and rake sum to ${total}`);
  const moved: number[] = r.net.map(() => 0);
  for (const b of bodies) {
    if (b.type !== 'chips') continue;
    for (const m of b.moves) if (m.party?.kind === 'seat') moved[m.party.seat] += m.op === 'credit' ? m.amount : -m.amount;
  }
  const off = moved.findIndex((x, s) => x !== r.net[s]);
  if (off >= 0) throw fail('replay', `chips not conserved: seat ${off}'s chip movements sum to ${moved[off]}, its net is ${r.net[off]}`);
  pass('replay', `${detail}, over the deck view (opened cards in place, the others in canonical order); chips conserved`);
}

/** Checks of a dealer-dealt deck that a blind deck has nothing for (docs/blind-deal.md §II.8). */
function passNotApplicable(pass: (check: CheckName, detail: string) => void): void {
  pass('leaves', 'a blind hand has no leaves: nothing to open (its cards are checked by their decryption shares, opened-cards)');
  pass('merkle-root', "a blind hand's root is its final deck's digest (checked under shuffle)");
}

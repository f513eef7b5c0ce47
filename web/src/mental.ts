// The browser's verifier of the dealer-blind deal's cryptography
// (docs/blind-deal.md): ElGamal over Ristretto255, Schnorr key shares, the
// joint key, Chaum–Pedersen decryption shares and opening, the
// Terelius–Wikström shuffle proof, and the recovery of a withheld share
// (§II.7: piece commitments, encrypted pieces, complaints, recovery shares,
// the rebuilt share and opening with it), all with the SHA-512 Fiat–Shamir
// transcript of §3. Written from the document alone as a second
// implementation of `claw_protocol::mental`; web/test/mental.test.mjs checks
// that both reach the same verdict on a corpus of honest and tampered
// objects. Verification only: it holds no secret and draws no randomness.
// Every refusal is a `MentalError` whose `code` is the §7 (or §II.7) name.

import { ristretto255, ristretto255_hasher } from '@noble/curves/ed25519.js';
import { interleavedMSMUnsafe, pippenger } from '@noble/curves/abstract/curve.js';
import { sha512 } from '@noble/hashes/sha2.js';
import { concat, hex as hexOf, utf8 } from './audit';

type Bytes = Uint8Array;
const Point = ristretto255.Point;
/** A Ristretto255 group element. */
export type Point = InstanceType<typeof Point>;

/** The group order ℓ (§2.1). */
const L = Point.Fn.ORDER;
const G = Point.BASE;

/** The largest deck (§2.2). */
export const MAX_DECK = 512;
/** The largest card id (SPEC.md §2: 256 packs of 54). */
export const MAX_CARD_ID = 13823;

export const CARD_TAG = 'claw/v1/mental/card';
export const GENERATOR_TAG = 'claw/v1/mental/generator';
export const KEY_SHARE_DOMAIN = 'claw/v1/mental/key-share';
export const DECRYPTION_SHARE_DOMAIN = 'claw/v1/mental/decryption-share';
export const SHUFFLE_DOMAIN = 'claw/v1/mental/shuffle';
/** Key-derivation tag of an encrypted piece (§II.7). */
export const PIECE_TAG = 'claw/v1/blind-piece';
export const COMPLAINT_DOMAIN = 'claw/v1/mental/piece-complaint';
export const RECOVERY_SHARE_DOMAIN = 'claw/v1/mental/recovery-share';
/** The holder byte of the dealer, and the seat byte its piece key is proven for. */
export const DEALER_HOLDER = 0xff;

// ---------- errors (§7)

/** The check of `verifyShuffle` that refused a shuffle (§6.3, §6.4). */
export type ShuffleCheck =
  | 'deck-length'
  | 'proof-length'
  | 'unchanged'
  | 'permutation-sum'
  | 'chain-product'
  | 'permutation-commitment'
  | 'reencryption'
  | 'chain-step'
  | 'batch';

export type MentalErrorName =
  | 'bad-length'
  | 'bad-point'
  | 'bad-scalar'
  | 'deck-size'
  | 'no-parties'
  | 'identity-key'
  | 'key-proof'
  | 'duplicate-seat'
  | 'duplicate-key'
  | 'unknown-seat'
  | 'missing-share'
  | 'decryption-proof'
  | 'not-a-card'
  | `shuffle: ${ShuffleCheck}`
  | RecoveryErrorName;

/** The refusals of §II.7's recovery checks. */
export type RecoveryErrorName = 'piece-count' | 'piece-sum' | 'complaint-proof' | 'good-piece' | 'recovery-proof' | 'missing-recovery';

/** What an error names besides its code: the seat, the position, the chain step `i`, the deck size; for recovery the holder byte and the commitment counts. */
export interface MentalErrorInfo {
  seat?: number;
  position?: number;
  step?: number;
  cards?: number;
  holder?: number;
  got?: number;
  expected?: number;
}

/** A value or proof refused by docs/blind-deal.md; `code` is the §7 name. */
export class MentalError extends Error {
  constructor(
    public readonly code: MentalErrorName,
    public readonly info: MentalErrorInfo = {},
  ) {
    const parts = Object.entries(info).map(([k, v]) => `${k} ${v}`);
    super(parts.length ? `${code} (${parts.join(', ')})` : code);
    this.name = 'MentalError';
  }
}

// ---------- bytes

const u16 = (n: number): Bytes => new Uint8Array([(n >> 8) & 0xff, n & 0xff]);
const u32 = (n: number): Bytes => new Uint8Array([n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]);
const lp = (s: Bytes): Bytes => concat(u16(s.length), s);


function equalBytes(a: Bytes, b: Bytes): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}


/** A little-endian integer. */
function le(b: Bytes): bigint {
  let x = 0n;
  for (let i = b.length - 1; i >= 0; i--) x = (x << 8n) | BigInt(b[i]);
  return x;
}

const mod = (x: bigint): bigint => ((x % L) + L) % L;

/** `Σ k_i·P_i` in variable time (public inputs only), scalars taken mod ℓ:
 * interleaved wNAF for a few points, Pippenger's buckets for many
 * (the faster of noble's two below and above about 64 points). */
function msm(terms: Array<[bigint, Point]>): Point {
  const points = terms.map(([, p]) => p);
  const scalars = terms.map(([k]) => mod(k));
  return terms.length < 64 ? interleavedMSMUnsafe(Point, points, 5)(scalars) : pippenger(Point, points, scalars);
}

function checkSeat(seat: number): number {
  if (!Number.isInteger(seat) || seat < 0 || seat > 255) throw new RangeError(`seat ${seat} is not a byte`);
  return seat;
}

function checkPosition(position: number): number {
  if (!Number.isInteger(position) || position < 0 || position > 0xffff) {
    throw new RangeError(`position ${position} is not a u16`);
  }
  return position;
}

function checkHand(hand: Bytes): Bytes {
  if (hand.length !== 16) throw new MentalError('bad-length');
  return hand;
}

// ---------- the Fiat–Shamir transcript (§3)

/** SHA-512 over the growing record string `T` of §3. */
export class Transcript {
  private state = sha512.create();

  constructor(domain: string) {
    this.state.update(lp(utf8(domain)));
  }

  /** `0x01 || lp(label) || u32 BE len(data) || data`, `data` given in parts. */
  append(label: string, ...data: Bytes[]): void {
    this.state.update(new Uint8Array([0x01]));
    this.state.update(lp(utf8(label)));
    this.state.update(u32(data.reduce((n, d) => n + d.length, 0)));
    for (const d of data) this.state.update(d);
  }

  /** `0x02 || lp(label)`; the 64-byte SHA-512 of `T`, then appended to `T`. */
  challenge(label: string): Bytes {
    this.state.update(new Uint8Array([0x02]));
    this.state.update(lp(utf8(label)));
    const out = this.state.clone().digest();
    this.state.update(out);
    return out;
  }

  /** The wide reduction of `challenge(label)`. */
  challengeScalar(label: string): bigint {
    return le(this.challenge(label)) % L;
  }
}

// ---------- group, encodings, cards (§2)

/** Decodes a canonical Ristretto255 encoding (RFC 9496 §4.3.1); `bad-point` otherwise. */
export function decodePoint(b: Bytes): Point {
  if (b.length !== 32) throw new MentalError('bad-length');
  try {
    return Point.fromBytes(b);
  } catch {
    throw new MentalError('bad-point');
  }
}

/** Decodes a canonical scalar (little-endian, `< ℓ`). */
export function decodeScalar(b: Bytes): bigint {
  if (b.length !== 32) throw new MentalError('bad-length');
  const x = le(b);
  if (x >= L) throw new MentalError('bad-scalar');
  return x;
}

const deriveToCurve = ristretto255_hasher.deriveToCurve;

/** `H2G(tag, i) = FromUniformBytes(SHA-512(tag || u16 BE i))` (§2.3). */
export function hashToGroup(tag: string, i: number): Point {
  if (!deriveToCurve) throw new Error('@noble/curves has no ristretto255 deriveToCurve');
  return deriveToCurve(sha512(concat(utf8(tag), u16(i))));
}

const cardPoints = new Map<number, Point>();

/** `P_c`, the point of card id `c` (SPEC.md §2 ids, 0 ..= 13823). */
export function cardPoint(card: number): Point {
  if (!Number.isInteger(card) || card < 0 || card > MAX_CARD_ID) throw new RangeError(`${card} is not a card id`);
  let p = cardPoints.get(card);
  if (!p) {
    p = hashToGroup(CARD_TAG, card);
    cardPoints.set(card, p);
  }
  return p;
}

const gens: Point[] = [];

/** `H_0 ..= H_n`, computed once. */
function generators(n: number): Point[] {
  while (gens.length <= n) gens.push(hashToGroup(GENERATOR_TAG, gens.length));
  return gens;
}

/** An ElGamal ciphertext `(c1, c2)`, encoded `c1 || c2` (§2.4). */
export class Ciphertext {
  static readonly LEN = 64;

  private constructor(
    readonly c1: Point,
    readonly c2: Point,
    /** The 64 bytes as received. */
    readonly bytes: Bytes,
  ) {}

  static fromBytes(b: Bytes): Ciphertext {
    if (b.length !== Ciphertext.LEN) throw new MentalError('bad-length');
    return new Ciphertext(decodePoint(b.subarray(0, 32)), decodePoint(b.subarray(32)), new Uint8Array(b));
  }

  /** The open encryption `(0, P_c)` of a card. */
  static openCard(card: number): Ciphertext {
    const c2 = cardPoint(card);
    return new Ciphertext(Point.ZERO, c2, concat(Point.ZERO.toBytes(), c2.toBytes()));
  }
}

function checkDeckSize(n: number): void {
  if (n === 0 || n > MAX_DECK) throw new MentalError('deck-size', { cards: n });
}

/** 1 ..= MAX_DECK ciphertexts, position 0 first, encoded back to back (§2.2). */
export class Deck {
  private constructor(
    readonly cards: Ciphertext[],
    readonly bytes: Bytes,
  ) {}

  get length(): number {
    return this.cards.length;
  }

  static fromBytes(b: Bytes): Deck {
    if (b.length % Ciphertext.LEN !== 0) throw new MentalError('bad-length');
    const n = b.length / Ciphertext.LEN;
    checkDeckSize(n);
    const cards: Ciphertext[] = [];
    for (let i = 0; i < n; i++) cards.push(Ciphertext.fromBytes(b.subarray(64 * i, 64 * i + 64)));
    return new Deck(cards, new Uint8Array(b));
  }

  /** The public initial deck: each card's open encryption, in the given order. */
  static initial(cards: number[]): Deck {
    checkDeckSize(cards.length);
    const cts = cards.map((c) => Ciphertext.openCard(c));
    return new Deck(cts, concat(...cts.map((c) => c.bytes)));
  }
}

/** Lookup from an opened point back to its card id, for one game's deck. */
export class CardTable {
  private byPoint = new Map<string, number>();

  constructor(cards: number[]) {
    for (const c of cards) this.byPoint.set(hexOf(cardPoint(c).toBytes()), c);
  }

  /** The card whose point this is; `not-a-card` otherwise. */
  lookup(p: Point): number {
    const c = this.byPoint.get(hexOf(p.toBytes()));
    if (c === undefined) throw new MentalError('not-a-card');
    return c;
  }
}

// ---------- key shares and the joint key (§4)

/** A public key share `X` with its Schnorr proof `(R, s)`: 96 bytes `X || R || s`. */
export class KeyShare {
  static readonly LEN = 96;

  private constructor(
    readonly point: Point,
    readonly bytes: Bytes,
    private readonly response: bigint,
  ) {}

  /** `X` as received. */
  get publicBytes(): Bytes {
    return this.bytes.subarray(0, 32);
  }

  static fromBytes(b: Bytes): KeyShare {
    if (b.length !== KeyShare.LEN) throw new MentalError('bad-length');
    const point = decodePoint(b.subarray(0, 32));
    const response = decodeScalar(b.subarray(64));
    return new KeyShare(point, new Uint8Array(b), response);
  }

  /** §4 steps 2–3: `X ≠ 0` and the proof of knowledge for this hand and seat. */
  verify(hand: Bytes, seat: number): void {
    checkSeat(seat);
    if (this.point.is0()) throw new MentalError('identity-key', { seat });
    const commit = this.bytes.subarray(32, 64);
    const t = new Transcript(KEY_SHARE_DOMAIN);
    t.append('hand', checkHand(hand));
    t.append('seat', new Uint8Array([seat]));
    t.append('key', this.publicBytes);
    t.append('commit', commit);
    const e = t.challengeScalar('challenge');
    const r = msm([[this.response, G], [-e, this.point]]);
    if (!equalBytes(r.toBytes(), commit)) throw new MentalError('key-proof', { seat });
  }
}

interface Party {
  seat: number;
  point: Point;
  bytes: Bytes;
}

/** The joint key `K = Σ X_i` of one hand's proven key shares (§4). */
export class JointKey {
  private constructor(
    readonly point: Point,
    readonly bytes: Bytes,
    private readonly parties: Party[],
  ) {}

  /** Verifies every share for its seat and sums them, in the order of §4. */
  static combine(hand: Bytes, shares: Array<[number, KeyShare]>): JointKey {
    if (shares.length === 0) throw new MentalError('no-parties');
    const parties: Party[] = [];
    shares.forEach(([seat, share], i) => {
      share.verify(hand, seat);
      for (const [prevSeat, prev] of shares.slice(0, i)) {
        if (prevSeat === seat) throw new MentalError('duplicate-seat', { seat });
        if (equalBytes(prev.publicBytes, share.publicBytes)) throw new MentalError('duplicate-key', { seat });
      }
      parties.push({ seat, point: share.point, bytes: share.publicBytes });
    });
    const point = parties.reduce((sum, p) => sum.add(p.point), Point.ZERO);
    if (point.is0()) throw new MentalError('identity-key', { seat: shares[shares.length - 1][0] });
    return new JointKey(point, point.toBytes(), parties);
  }

  /** The seats holding a share, in the order given to `combine`. */
  get seats(): number[] {
    return this.parties.map((p) => p.seat);
  }

  private party(seat: number): Party {
    const p = this.parties.find((x) => x.seat === seat);
    if (!p) throw new MentalError('unknown-seat', { seat });
    return p;
  }

  /** §5 verification of one seat's decryption share of `ct` at `position`. */
  verifyShare(hand: Bytes, seat: number, position: number, ct: Ciphertext, share: DecryptionShare): void {
    checkSeat(seat);
    checkPosition(position);
    const party = this.party(seat);
    const { challenge: e, response: s } = share;
    const a = msm([[s, G], [-e, party.point]]);
    const b = msm([[s, ct.c1], [-e, share.point]]);
    const t = new Transcript(DECRYPTION_SHARE_DOMAIN);
    t.append('hand', checkHand(hand));
    t.append('seat', new Uint8Array([seat]));
    t.append('position', u16(position));
    t.append('ciphertext', ct.bytes);
    t.append('key', party.bytes);
    t.append('share', share.bytes.subarray(0, 32));
    t.append('commit-g', a.toBytes());
    t.append('commit-c1', b.toBytes());
    if (t.challengeScalar('challenge') !== e) throw new MentalError('decryption-proof', { seat, position });
  }

  /** §5 opening: every key holder's share verified, `c2 − Σ D_i` looked up in `table`. */
  open(
    hand: Bytes,
    position: number,
    ct: Ciphertext,
    shares: Array<[number, DecryptionShare]>,
    table: CardTable,
  ): number {
    shares.forEach(([seat], i) => {
      if (shares.slice(0, i).some(([s]) => s === seat)) throw new MentalError('duplicate-seat', { seat });
    });
    for (const [seat] of shares) this.party(seat);
    let sum = Point.ZERO;
    for (const party of this.parties) {
      const found = shares.find(([s]) => s === party.seat);
      if (!found) throw new MentalError('missing-share', { seat: party.seat });
      this.verifyShare(hand, party.seat, position, ct, found[1]);
      sum = sum.add(found[1].point);
    }
    return table.lookup(ct.c2.subtract(sum));
  }

  /** §II.7 opening: each key holder's share, a recovered seat's rebuilt share in place of its own. */
  openRecovered(
    hand: Bytes,
    position: number,
    ct: Ciphertext,
    shares: Array<[number, DecryptionShare]>,
    recovered: RecoveredShare[],
    table: CardTable,
  ): number {
    let sum = Point.ZERO;
    for (const party of this.parties) {
      const r = recovered.find((x) => x.seat === party.seat);
      if (r) {
        sum = sum.add(r.point);
        continue;
      }
      const found = shares.find(([s]) => s === party.seat);
      if (!found) throw new MentalError('missing-share', { seat: party.seat });
      this.verifyShare(hand, party.seat, position, ct, found[1]);
      sum = sum.add(found[1].point);
    }
    return table.lookup(ct.c2.subtract(sum));
  }
}

// ---------- decryption shares (§5)

/** A decryption share `D` with its proof `(e, s)`: 96 bytes `D || e || s`. */
export class DecryptionShare {
  static readonly LEN = 96;

  private constructor(
    readonly point: Point,
    readonly challenge: bigint,
    readonly response: bigint,
    readonly bytes: Bytes,
  ) {}

  static fromBytes(b: Bytes): DecryptionShare {
    if (b.length !== DecryptionShare.LEN) throw new MentalError('bad-length');
    const point = decodePoint(b.subarray(0, 32));
    const challenge = decodeScalar(b.subarray(32, 64));
    const response = decodeScalar(b.subarray(64));
    return new DecryptionShare(point, challenge, response, new Uint8Array(b));
  }
}

// ---------- the shuffle proof (§6)

/** Encoded length of a shuffle proof for `n` cards: `(5n + 9) × 32`. */
export const shuffleProofLen = (n: number): number => (5 * n + 9) * 32;

/** A Terelius–Wikström proof of a shuffle of `n` cards (§6.2). */
export class ShuffleProof {
  private constructor(
    readonly commitments: Point[],
    readonly chain: Point[],
    readonly t: Point[],
    readonly tHat: Point[],
    readonly s: bigint[],
    readonly sHat: bigint[],
    readonly sPrime: bigint[],
    readonly bytes: Bytes,
  ) {}

  get length(): number {
    return this.commitments.length;
  }

  /** Decodes the proof of a deck of `n` cards (`n` from the input deck). */
  static fromBytes(n: number, b: Bytes): ShuffleProof {
    checkDeckSize(n);
    if (b.length !== shuffleProofLen(n)) throw new MentalError('bad-length');
    let at = 0;
    const points = (k: number) =>
      Array.from({ length: k }, () => decodePoint(b.subarray(32 * at, 32 * ++at)));
    const scalars = (k: number) =>
      Array.from({ length: k }, () => decodeScalar(b.subarray(32 * at, 32 * ++at)));
    const commitments = points(n);
    const chain = points(n);
    const t = points(5);
    const tHat = points(n);
    const s = scalars(4);
    const sHat = scalars(n);
    const sPrime = scalars(n);
    return new ShuffleProof(commitments, chain, t, tHat, s, sHat, sPrime, new Uint8Array(b));
  }
}

/** Verifies a shuffle by `seat` in `hand` under `key` (§6.3), batched as in §6.4. */
export function verifyShuffle(
  hand: Bytes,
  seat: number,
  key: JointKey,
  input: Deck,
  output: Deck,
  proof: ShuffleProof,
): void {
  checkSeat(seat);
  const n = input.length;
  if (output.length !== n) throw new MentalError('shuffle: deck-length');
  if (proof.length !== n) throw new MentalError('shuffle: proof-length');
  if (equalBytes(input.bytes, output.bytes)) throw new MentalError('shuffle: unchanged');

  const pb = proof.bytes;
  const t = new Transcript(SHUFFLE_DOMAIN);
  t.append('hand', checkHand(hand));
  t.append('seat', new Uint8Array([seat]));
  t.append('key', key.bytes);
  t.append('n', u16(n));
  t.append('input', input.bytes);
  t.append('output', output.bytes);
  t.append('commitments', pb.subarray(0, 32 * n));
  const u = Array.from({ length: n }, () => t.challengeScalar('u'));
  t.append('chain', pb.subarray(32 * n, 64 * n));
  t.append('t', pb.subarray(64 * n, 96 * n + 160));
  const e = t.challengeScalar('challenge');
  t.append('responses', pb.subarray(96 * n + 160));
  const weights = Array.from({ length: n + 5 }, () => le(t.challenge('weight').subarray(0, 16)));

  const eq = new Equations(n, e, u, key.point, input, output, proof);
  if (eq.batch(weights).is0()) return;
  const failed = eq.firstFailure();
  throw new MentalError(`shuffle: ${failed.check}`, failed.step === undefined ? {} : { step: failed.step });
}

/** The equations of §6.3 for one proof, each `right side − left side = 0`. */
class Equations {
  private readonly h: Point[];
  private readonly uProd: bigint;

  constructor(
    private readonly n: number,
    private readonly e: bigint,
    private readonly u: bigint[],
    private readonly key: Point,
    private readonly input: Deck,
    private readonly output: Deck,
    private readonly p: ShuffleProof,
  ) {
    this.h = generators(n);
    this.uProd = u.reduce((a, b) => (a * b) % L, 1n);
  }

  /** `Σ weights · equations` as one multiscalar multiplication of `8n + 7` points (§6.4). */
  batch(w: bigint[]): Point {
    const { n, e, u, p, h } = this;
    const [b1, b2, b3, b4a, b4b] = w;
    const gamma = w.slice(5);
    const [s1, s2, s3, s4] = p.s;
    const terms: Array<[bigint, Point]> = [];
    const add = (k: bigint, q: Point) => terms.push([k, q]);
    let gCoeff = b1 * s1 + b2 * s2 + b3 * s3 - b4a * s4;
    for (let i = 0; i < n; i++) gCoeff += gamma[i] * p.sHat[i];
    add(gCoeff, G);
    add(-b4b * s4, this.key);
    add(b2 * e * this.uProd + gamma[0] * p.sPrime[0], h[0]);
    for (let j = 0; j < n; j++) {
      add(-e * (b1 + b3 * u[j]), p.commitments[j]);
      add(b1 * e + b3 * p.sPrime[j], h[j + 1]);
      const next = j + 1 === n ? -b2 * e : gamma[j + 1] * p.sPrime[j + 1];
      add(next - gamma[j] * e, p.chain[j]);
      add(-b4a * e * u[j], this.input.cards[j].c1);
      add(-b4b * e * u[j], this.input.cards[j].c2);
      add(b4a * p.sPrime[j], this.output.cards[j].c1);
      add(b4b * p.sPrime[j], this.output.cards[j].c2);
      add(-gamma[j], p.tHat[j]);
    }
    [b1, b2, b3, b4a, b4b].forEach((b, k) => add(-b, p.t[k]));
    return msm(terms);
  }

  /** Each equation alone, in the order of §6.3; the first that fails. */
  firstFailure(): { check: ShuffleCheck; step?: number } {
    const { n, e, u, p, h } = this;
    const [s1, s2, s3, s4] = p.s;
    const sum = (qs: Point[]) => qs.reduce((a, b) => a.add(b), Point.ZERO);

    const cBar = sum(p.commitments).subtract(sum(h.slice(1, n + 1)));
    if (!msm([[s1, G], [-e, cBar]]).equals(p.t[0])) return { check: 'permutation-sum' };
    if (!msm([[s2, G], [-e, p.chain[n - 1]], [e * this.uProd, h[0]]]).equals(p.t[1])) {
      return { check: 'chain-product' };
    }
    const t3: Array<[bigint, Point]> = [[s3, G]];
    for (let i = 0; i < n; i++) t3.push([p.sPrime[i], h[i + 1]], [-e * u[i], p.commitments[i]]);
    if (!msm(t3).equals(p.t[2])) return { check: 'permutation-commitment' };
    const halves: Array<[Point, (c: Ciphertext) => Point]> = [
      [G, (c) => c.c1],
      [this.key, (c) => c.c2],
    ];
    for (const [k, [base, half]] of halves.entries()) {
      const t4: Array<[bigint, Point]> = [[-s4, base]];
      for (let i = 0; i < n; i++) {
        t4.push([p.sPrime[i], half(this.output.cards[i])], [-e * u[i], half(this.input.cards[i])]);
      }
      if (!msm(t4).equals(p.t[3 + k])) return { check: 'reencryption' };
    }
    let prev = h[0];
    for (let i = 0; i < n; i++) {
      if (!msm([[p.sHat[i], G], [p.sPrime[i], prev], [-e, p.chain[i]]]).equals(p.tHat[i])) {
        return { check: 'chain-step', step: i };
      }
      prev = p.chain[i];
    }
    return { check: 'batch' };
  }
}

// ---------- recovery of a withheld share (§II.7)

/** The holders of `seat`'s pieces in a hand of `seats` seats: every other seat in increasing order, then the dealer (`0xFF`). */
export function holdersOf(seat: number, seats: number): number[] {
  const out: number[] = [];
  for (let j = 0; j < seats; j++) if (j !== seat) out.push(j);
  out.push(DEALER_HOLDER);
  return out;
}

/** `S || e || s` of a DLEQ-proven point (a complaint, a recovery share): 96 bytes. */
function decodeProven(b: Bytes): { point: Point; challenge: bigint; response: bigint; bytes: Bytes } {
  if (b.length !== 96) throw new MentalError('bad-length');
  const point = decodePoint(b.subarray(0, 32));
  const challenge = decodeScalar(b.subarray(32, 64));
  const response = decodeScalar(b.subarray(64));
  return { point, challenge, response, bytes: new Uint8Array(b) };
}

/** The public commitments `A_ik = a_ik·G` of one seat's pieces, in holder order. */
export class PieceCommitments {
  private constructor(
    readonly points: Point[],
    readonly bytes: Bytes,
  ) {}

  get length(): number {
    return this.points.length;
  }

  /** Decodes the commitments for `holders` holders: `32·holders` bytes of canonical points. */
  static fromBytes(holders: number, b: Bytes): PieceCommitments {
    if (b.length % 32 !== 0) throw new MentalError('bad-length');
    if (b.length / 32 !== holders) throw new MentalError('piece-count', { got: b.length / 32, expected: holders });
    const points: Point[] = [];
    for (let k = 0; k < holders; k++) points.push(decodePoint(b.subarray(32 * k, 32 * k + 32)));
    return new PieceCommitments(points, new Uint8Array(b));
  }

  /** The `k`-th commitment's encoding. */
  get(k: number): Bytes | undefined {
    return k >= 0 && k < this.points.length ? this.bytes.subarray(32 * k, 32 * k + 32) : undefined;
  }

  /** `Σ_k A_ik = X_i` (encodings equal) for seat `seat`'s key share. */
  checkSum(seat: number, key: KeyShare): void {
    const sum = this.points.reduce((a, p) => a.add(p), Point.ZERO);
    if (!equalBytes(sum.toBytes(), key.publicBytes)) throw new MentalError('piece-sum', { seat });
  }
}

/** A piece encrypted to its holder (hashed ElGamal): 64 bytes `R || masked`. */
export class EncryptedPiece {
  static readonly LEN = 64;

  private constructor(
    readonly r: Point,
    readonly bytes: Bytes,
  ) {}

  /** `R` as received. */
  get rBytes(): Bytes {
    return this.bytes.subarray(0, 32);
  }

  get masked(): Bytes {
    return this.bytes.subarray(32);
  }

  /** `R` a canonical point; `masked` any 32 bytes. */
  static fromBytes(b: Bytes): EncryptedPiece {
    if (b.length !== EncryptedPiece.LEN) throw new MentalError('bad-length');
    return new EncryptedPiece(decodePoint(b.subarray(0, 32)), new Uint8Array(b));
  }
}

/** `SHA-512("claw/v1/blind-piece" || 0x00 || hand || from || holder || R || S)[..32]`. */
function piecePad(hand: Bytes, from: number, holder: number, r: Bytes, shared: Bytes): Bytes {
  return sha512(concat(utf8(PIECE_TAG), new Uint8Array([0]), checkHand(hand), new Uint8Array([from, holder]), r, shared)).subarray(0, 32);
}

/** A complaint `S = x_j·R` with its DLEQ proof `(e, s)`: 96 bytes `S || e || s`. */
export class Complaint {
  static readonly LEN = 96;

  private constructor(
    readonly point: Point,
    readonly challenge: bigint,
    readonly response: bigint,
    readonly bytes: Bytes,
  ) {}

  static fromBytes(b: Bytes): Complaint {
    const d = decodeProven(b);
    return new Complaint(d.point, d.challenge, d.response, d.bytes);
  }

  /**
   * Holder `holder` (key `holderKey`) against seat `accused`'s piece with
   * commitment `commitment`: the proof verifies (`complaint-proof`), and the
   * piece it decrypts is no scalar or not `commitment`'s (else `good-piece`).
   */
  verify(hand: Bytes, accused: number, holder: number, holderKey: KeyShare, piece: EncryptedPiece, commitment: Bytes): void {
    checkSeat(accused);
    checkSeat(holder);
    const { challenge: e, response: s } = this;
    const shared = this.bytes.subarray(0, 32);
    const a = msm([[s, G], [-e, holderKey.point]]);
    const b = msm([[s, piece.r], [-e, this.point]]);
    const t = new Transcript(COMPLAINT_DOMAIN);
    t.append('hand', checkHand(hand));
    t.append('seat', new Uint8Array([accused]));
    t.append('holder', new Uint8Array([holder]));
    t.append('piece', piece.bytes);
    t.append('key', holderKey.publicBytes);
    t.append('shared', shared);
    t.append('commit-g', a.toBytes());
    t.append('commit-r', b.toBytes());
    if (t.challengeScalar('challenge') !== e) throw new MentalError('complaint-proof', { seat: accused, holder });
    const pad = piecePad(hand, accused, holder, piece.rBytes, shared);
    const plain = piece.masked.map((x, i) => x ^ pad[i]);
    const a0 = le(plain);
    if (a0 < L && equalBytes(G.multiplyUnsafe(a0).toBytes(), commitment)) throw new MentalError('good-piece', { seat: accused, holder });
  }
}

/** A recovery share `S = a_ik·c1` with its DLEQ proof: 96 bytes `S || e || s`. */
export class RecoveryShare {
  static readonly LEN = 96;

  private constructor(
    readonly point: Point,
    readonly challenge: bigint,
    readonly response: bigint,
    readonly bytes: Bytes,
  ) {}

  static fromBytes(b: Bytes): RecoveryShare {
    const d = decodeProven(b);
    return new RecoveryShare(d.point, d.challenge, d.response, d.bytes);
  }

  /** The share of holder `holder` (the `k`-th of `seat`'s holders) for `position` (ciphertext `ct`), against commitment `k` (`recovery-proof`). */
  verify(hand: Bytes, seat: number, holder: number, k: number, commitments: PieceCommitments, position: number, ct: Ciphertext): void {
    checkSeat(seat);
    checkSeat(holder);
    checkPosition(position);
    const bad = () => new MentalError('recovery-proof', { seat, holder, position });
    const commitment = commitments.get(k);
    if (!commitment) throw bad();
    const { challenge: e, response: s } = this;
    const a = msm([[s, G], [-e, commitments.points[k]]]);
    const b = msm([[s, ct.c1], [-e, this.point]]);
    const t = new Transcript(RECOVERY_SHARE_DOMAIN);
    t.append('hand', checkHand(hand));
    t.append('seat', new Uint8Array([seat]));
    t.append('holder', new Uint8Array([holder]));
    t.append('position', u16(position));
    t.append('ciphertext', ct.bytes);
    t.append('commitment', commitment);
    t.append('share', this.bytes.subarray(0, 32));
    t.append('commit-g', a.toBytes());
    t.append('commit-c1', b.toBytes());
    if (t.challengeScalar('challenge') !== e) throw bad();
  }
}

/** A withheld decryption share `x_i·c1`, rebuilt from every holder's verified recovery share. */
export class RecoveredShare {
  private constructor(
    readonly seat: number,
    readonly point: Point,
  ) {}

  /** One share per holder of `seat`'s pieces (holder order, `holdersOf`), each verified, summed. */
  static combine(
    hand: Bytes,
    seat: number,
    seats: number,
    commitments: PieceCommitments,
    position: number,
    ct: Ciphertext,
    shares: Array<[number, RecoveryShare]>,
  ): RecoveredShare {
    let sum = Point.ZERO;
    holdersOf(seat, seats).forEach((holder, k) => {
      const found = shares.find(([h]) => h === holder);
      if (!found) throw new MentalError('missing-recovery', { holder });
      found[1].verify(hand, seat, holder, k, commitments, position, ct);
      sum = sum.add(found[1].point);
    });
    return new RecoveredShare(seat, sum);
  }
}

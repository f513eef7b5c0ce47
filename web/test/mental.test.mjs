// The browser's mental-poker verifier (src/mental.ts) against
// docs/blind-deal.md and the Rust implementation:
// * the known-answer vectors of §9, read from the document: verified, and
//   every byte reproduced by a prover written here from §4–§6 and the
//   ChaCha20 stream of §9 (which also shows a prover that duplicates a card
//   fails `chain-product`);
// * the recovery vectors of §9.1, read from the document: every byte
//   reproduced from the same stream by the §II.7 prover written here, and
//   verified (the dealer's piece key, the commitments' sum, the recovery
//   shares, the rebuilt share opening the card, the complaint);
// * the agreement corpus (fixtures/mental-corpus.json): honest and tampered
//   key shares, joint keys, decryption shares, openings and shuffles of 4, 52,
//   54 and 108 cards, piece commitments, complaints, recovery shares and
//   openings with a recovered share, each with the Rust verifier's verdict,
//   which this verifier must reach too. Regenerate it with
//     cargo run -p claw-protocol --example mental_vectors --release -- web/test/fixtures/mental-corpus.json
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { createHash } from 'node:crypto';
import { ristretto255 } from '@noble/curves/ed25519.js';
import { chacha20orig } from '@noble/ciphers/chacha.js';
import * as M from '../dist-test/mental.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const H = (s) => Uint8Array.from(Buffer.from(s, 'hex'));
const hex = (b) => Buffer.from(b).toString('hex');
const P = ristretto255.Point;
const L = P.Fn.ORDER;
const G = P.BASE;
const mod = (x) => ((x % L) + L) % L;
const le = (b) => BigInt('0x' + (hex(Uint8Array.from(b).reverse()) || '0'));
const scalarBytes = (x) => Uint8Array.from(Buffer.from(x.toString(16).padStart(64, '0'), 'hex').reverse());
const cat = (...parts) => Uint8Array.from(Buffer.concat(parts));
const mul = (p, k) => p.multiplyUnsafe(mod(k));

// ---------- §9 known-answer vectors, read from the document

const doc = readFileSync(join(here, '../../docs/blind-deal.md'), 'utf8');
const section = doc.slice(doc.indexOf('## 9. Known-answer vectors'), doc.indexOf('## 10. '));
const V = {};
for (const m of section.matchAll(/^\| (.+?) \| `([0-9a-f]+)` \|$/gm)) V[m[1].replaceAll('`', '')] = m[2];
for (const m of section.matchAll(/^([^\n]+)\n\n```\n([0-9a-f\n]+)```/gm)) {
  V[m[1].replace(/:$/, '').replace(/ \(.*\)$/, '').replaceAll('`', '')] = m[2].replaceAll('\n', '');
}
const kat = {
  hand: new Uint8Array(16).fill(0x11),
  keyShares: [V['Key share seat 0'], V['Key share seat 1']],
  decryptionShares: [V['Decryption share, seat 0, position 5'], V['Decryption share, seat 1, position 5']],
};

test('the §9 vectors are all in the document', () => {
  for (const k of [
    'card point 2c (id 0)',
    'card point As (id 51)',
    'joint key',
    'shuffle proof SHA-256',
    'Key share seat 0',
    'Key share seat 1',
    'Masked As',
    'Decryption share, seat 0, position 5',
    'Decryption share, seat 1, position 5',
    'Shuffle output',
    'Shuffle proof',
  ]) {
    assert.ok(V[k], k);
  }
  assert.equal(H(V['Shuffle proof']).length, M.shuffleProofLen(4));
  assert.equal(createHash('sha256').update(H(V['Shuffle proof'])).digest('hex'), V['shuffle proof SHA-256']);
});

test('§9: card points, key shares, joint key, decryption shares, opening and the shuffle verify', () => {
  assert.equal(hex(M.cardPoint(0).toBytes()), V['card point 2c (id 0)']);
  assert.equal(hex(M.cardPoint(51).toBytes()), V['card point As (id 51)']);
  const shares = kat.keyShares.map((s, seat) => [seat, M.KeyShare.fromBytes(H(s))]);
  const key = M.JointKey.combine(kat.hand, shares);
  assert.equal(hex(key.bytes), V['joint key']);
  const ct = M.Ciphertext.fromBytes(H(V['Masked As']));
  const ds = kat.decryptionShares.map((s, seat) => [seat, M.DecryptionShare.fromBytes(H(s))]);
  const pack = Array.from({ length: 52 }, (_, i) => i);
  assert.equal(key.open(kat.hand, 5, ct, ds, new M.CardTable(pack)), 51);
  assert.throws(() => key.open(kat.hand, 4, ct, ds, new M.CardTable(pack)), { code: 'decryption-proof' });
  const input = M.Deck.initial([0, 1, 2, 3]);
  const output = M.Deck.fromBytes(H(V['Shuffle output']));
  const proof = M.ShuffleProof.fromBytes(4, H(V['Shuffle proof']));
  M.verifyShuffle(kat.hand, 0, key, input, output, proof);
  assert.throws(() => M.verifyShuffle(kat.hand, 1, key, input, output, proof), { code: 'shuffle: permutation-sum' });
});

test('§3: the transcript is SHA-512 of its records', () => {
  const t = new M.Transcript('d');
  t.append('ab', new Uint8Array([7, 8]));
  const c = t.challenge('c');
  const flat = [0, 1, 100, 1, 0, 2, 97, 98, 0, 0, 0, 2, 7, 8, 2, 0, 1, 99];
  assert.equal(hex(c), createHash('sha512').update(Uint8Array.from(flat)).digest('hex'));
  const c2 = t.challenge('c');
  const flat2 = cat(Uint8Array.from(flat), c, Uint8Array.from([2, 0, 1, 99]));
  assert.equal(hex(c2), createHash('sha512').update(flat2).digest('hex'));
});

/** rand_chacha's ChaCha20Rng read as a byte stream (SPEC.md §7.3). */
class Stream {
  constructor(seed) {
    this.bytes = chacha20orig(seed, new Uint8Array(8), new Uint8Array(1 << 16));
    this.at = 0;
  }
  take(n) {
    const out = this.bytes.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }
  scalar() {
    return le(this.take(64)) % L;
  }
  u32() {
    return Number(le(this.take(4)));
  }
  /** SPEC.md §7.4. */
  below(bound) {
    const threshold = (2 ** 32 - bound) % bound;
    for (;;) {
      const x = this.u32();
      if (x >= threshold) return x % bound;
    }
  }
}

/** The §6.1 prover for output `i` ← input `map[i]`, from the document alone. */
function proveShuffle(rng, hand, seat, K, Kbytes, input, map) {
  const n = input.length;
  const H_ = Array.from({ length: n + 1 }, (_, j) => P.fromBytes(M.hashToGroup(M.GENERATOR_TAG, j).toBytes()));
  const rho = map.map(() => rng.scalar());
  const out = map.map((j, i) => [input[j][0].add(mul(G, rho[i])), input[j][1].add(mul(K, rho[i]))]);
  const r = map.map(() => rng.scalar());
  const c = r.map((x) => mul(G, x));
  map.forEach((j, i) => (c[j] = c[j].add(H_[i + 1])));
  const enc = (ps) => cat(...ps.map((p) => p.toBytes()));
  const t = new M.Transcript(M.SHUFFLE_DOMAIN);
  t.append('hand', hand);
  t.append('seat', Uint8Array.of(seat));
  t.append('key', Kbytes);
  t.append('n', Uint8Array.of(n >> 8, n & 0xff));
  t.append('input', enc(input.flat()));
  t.append('output', enc(out.flat()));
  t.append('commitments', enc(c));
  const u = map.map(() => t.challengeScalar('u'));
  const uP = map.map((j) => u[j]);
  const rHat = map.map(() => rng.scalar());
  const chain = [];
  let prev = H_[0];
  for (let i = 0; i < n; i++) chain.push((prev = mul(G, rHat[i]).add(mul(prev, uP[i]))));
  const rBar = r.reduce((a, b) => a + b, 0n);
  let v = 1n;
  let rHatSum = 0n;
  for (let i = n - 1; i >= 0; i--) {
    rHatSum += rHat[i] * v;
    v = (v * uP[i]) % L;
  }
  const rTilde = r.reduce((a, x, j) => a + x * u[j], 0n);
  const rPrime = rho.reduce((a, x, i) => a + x * uP[i], 0n);
  const w = [rng.scalar(), rng.scalar(), rng.scalar(), rng.scalar()];
  const wHat = map.map(() => rng.scalar());
  const wP = map.map(() => rng.scalar());
  const sum = (terms) => terms.reduce((a, [k, p]) => a.add(mul(p, k)), P.ZERO);
  const ts = [
    mul(G, w[0]),
    mul(G, w[1]),
    sum([[w[2], G], ...wP.map((x, i) => [x, H_[i + 1]])]),
    sum([[-w[3], G], ...wP.map((x, i) => [x, out[i][0]])]),
    sum([[-w[3], K], ...wP.map((x, i) => [x, out[i][1]])]),
  ];
  const tHat = map.map((_, i) => sum([[wHat[i], G], [wP[i], i ? chain[i - 1] : H_[0]]]));
  t.append('chain', enc(chain));
  t.append('t', enc([...ts, ...tHat]));
  const e = t.challengeScalar('challenge');
  const s = [w[0] + e * rBar, w[1] + e * rHatSum, w[2] + e * rTilde, w[3] + e * rPrime];
  const sHat = wHat.map((x, i) => x + e * rHat[i]);
  const sP = wP.map((x, i) => x + e * uP[i]);
  const scalars = [...s, ...sHat, ...sP].map((x) => scalarBytes(mod(x)));
  return { output: enc(out.flat()), proof: cat(enc([...c, ...chain, ...ts, ...tHat]), ...scalars) };
}

test('§9: every vector reproduced from the ChaCha20 stream by a prover written from the document', () => {
  const rng = new Stream(new Uint8Array(32).fill(42));
  const hand = kat.hand;
  const keyShare = (x, seat) => {
    const X = mul(G, x).toBytes();
    const k = rng.scalar();
    const R = mul(G, k).toBytes();
    const t = new M.Transcript(M.KEY_SHARE_DOMAIN);
    t.append('hand', hand);
    t.append('seat', Uint8Array.of(seat));
    t.append('key', X);
    t.append('commit', R);
    const e = t.challengeScalar('challenge');
    return cat(X, R, scalarBytes(mod(k + e * x)));
  };
  const x0 = rng.scalar();
  assert.equal(hex(keyShare(x0, 0)), V['Key share seat 0']);
  const x1 = rng.scalar();
  assert.equal(hex(keyShare(x1, 1)), V['Key share seat 1']);
  const K = mul(G, x0 + x1);
  assert.equal(hex(K.toBytes()), V['joint key']);
  const r = rng.scalar();
  const ace = P.fromBytes(M.cardPoint(51).toBytes());
  const ct = [mul(G, r), ace.add(mul(K, r))];
  const ctBytes = cat(ct[0].toBytes(), ct[1].toBytes());
  assert.equal(hex(ctBytes), V['Masked As']);
  [x0, x1].forEach((x, seat) => {
    const k = rng.scalar();
    const D = mul(ct[0], x).toBytes();
    const t = new M.Transcript(M.DECRYPTION_SHARE_DOMAIN);
    t.append('hand', hand);
    t.append('seat', Uint8Array.of(seat));
    t.append('position', Uint8Array.of(0, 5));
    t.append('ciphertext', ctBytes);
    t.append('key', mul(G, x).toBytes());
    t.append('share', D);
    t.append('commit-g', mul(G, k).toBytes());
    t.append('commit-c1', mul(ct[0], k).toBytes());
    const e = t.challengeScalar('challenge');
    assert.equal(hex(cat(D, scalarBytes(e), scalarBytes(mod(k + e * x)))), kat.decryptionShares[seat]);
  });
  // §6.1 step 1: Durstenfeld from the top.
  const pi = [0, 1, 2, 3];
  for (let i = 3; i >= 1; i--) {
    const j = rng.below(i + 1);
    [pi[i], pi[j]] = [pi[j], pi[i]];
  }
  const input = [0, 1, 2, 3].map((c) => [P.ZERO, P.fromBytes(M.cardPoint(c).toBytes())]);
  const { output, proof } = proveShuffle(rng, hand, 0, K, K.toBytes(), input, pi);
  assert.equal(hex(output), V['Shuffle output']);
  assert.equal(hex(proof), V['Shuffle proof']);

  // The same prover on a map that duplicates a card (and drops another)
  // passes every equation but the chain's product (§6.3).
  const key = M.JointKey.combine(hand, kat.keyShares.map((s, seat) => [seat, M.KeyShare.fromBytes(H(s))]));
  for (const map of [
    [0, 0, 2, 3],
    [1, 2, 3, 3],
    [2, 2, 2, 2],
  ]) {
    const cheat = proveShuffle(rng, hand, 0, K, K.toBytes(), input, map);
    assert.throws(
      () =>
        M.verifyShuffle(hand, 0, key, M.Deck.initial([0, 1, 2, 3]), M.Deck.fromBytes(cheat.output), M.ShuffleProof.fromBytes(4, cheat.proof)),
      { code: 'shuffle: chain-product' },
    );
  }
});

// ---------- §9.1 recovery vectors (§II.7), read from the document

const recoverySection = doc.slice(doc.indexOf('### 9.1 Recovery vectors'), doc.indexOf('## 10. '));
const R = Object.fromEntries([...recoverySection.matchAll(/^([a-z][a-z0-9 ]+): ([0-9a-f]+)$/gm)].map((m) => [m[1], m[2]]));

test('§9.1: every recovery vector reproduced from the ChaCha20 stream and verified', () => {
  for (const k of [
    'dealer piece key',
    'piece commitments seat 0',
    'encrypted piece seat 0 to seat 1',
    'encrypted piece seat 0 to the dealer',
    'recovery share seat 0 holder seat 1 position 5',
    'recovery share seat 0 holder dealer position 5',
    'recovered share seat 0 position 5',
    'complaint seat 2 against seat 0',
  ]) {
    assert.ok(R[k], k);
  }
  const rng = new Stream(new Uint8Array(32).fill(42));
  const hand = kat.hand;
  const keyShare = (x, seat) => {
    const X = mul(G, x).toBytes();
    const k = rng.scalar();
    const t = new M.Transcript(M.KEY_SHARE_DOMAIN);
    t.append('hand', hand);
    t.append('seat', Uint8Array.of(seat));
    t.append('key', X);
    t.append('commit', mul(G, k).toBytes());
    const e = t.challengeScalar('challenge');
    return cat(X, mul(G, k).toBytes(), scalarBytes(mod(k + e * x)));
  };
  const x = [];
  const keys = [];
  for (let seat = 0; seat < 3; seat++) {
    x.push(rng.scalar());
    keys.push(keyShare(x[seat], seat));
  }
  const d = rng.scalar();
  const dealerKey = keyShare(d, M.DEALER_HOLDER);
  assert.equal(hex(dealerKey), R['dealer piece key']);
  // Seat 0's split for holders seat 1, seat 2, the dealer (the last is x_0 minus the others).
  const a = [rng.scalar(), rng.scalar()];
  a.push(mod(x[0] - a[0] - a[1]));
  const commitments = cat(...a.map((ak) => mul(G, ak).toBytes()));
  assert.equal(hex(commitments), R['piece commitments seat 0']);
  const holders = M.holdersOf(0, 3);
  assert.deepEqual(holders, [1, 2, 0xff]);
  const secretOf = (h) => (h === 0xff ? d : x[h]);
  const pad = (holder, Rb, S) =>
    createHash('sha512').update(cat(Buffer.from(M.PIECE_TAG), Uint8Array.of(0, ...hand, 0, holder), Rb, S)).digest().subarray(0, 32);
  const enc = holders.map((h, k) => {
    const r = rng.scalar();
    const Rb = mul(G, r).toBytes();
    const S = mul(G, secretOf(h) * r).toBytes();
    const p = pad(h, Rb, S);
    return cat(Rb, scalarBytes(a[k]).map((b, i) => b ^ p[i]));
  });
  assert.equal(hex(enc[0]), R['encrypted piece seat 0 to seat 1']);
  assert.equal(hex(enc[2]), R['encrypted piece seat 0 to the dealer']);
  const K = mul(G, x[0] + x[1] + x[2]);
  const r = rng.scalar();
  const ct = [mul(G, r), P.fromBytes(M.cardPoint(51).toBytes()).add(mul(K, r))];
  const ctBytes = cat(ct[0].toBytes(), ct[1].toBytes());
  const rec = holders.map((h, k) => {
    const kk = rng.scalar();
    const S = mul(ct[0], a[k]).toBytes();
    const t = new M.Transcript(M.RECOVERY_SHARE_DOMAIN);
    t.append('hand', hand);
    t.append('seat', Uint8Array.of(0));
    t.append('holder', Uint8Array.of(h));
    t.append('position', Uint8Array.of(0, 5));
    t.append('ciphertext', ctBytes);
    t.append('commitment', commitments.subarray(32 * k, 32 * k + 32));
    t.append('share', S);
    t.append('commit-g', mul(G, kk).toBytes());
    t.append('commit-c1', mul(ct[0], kk).toBytes());
    const e = t.challengeScalar('challenge');
    return cat(S, scalarBytes(e), scalarBytes(mod(kk + e * a[k])));
  });
  assert.equal(hex(rec[0]), R['recovery share seat 0 holder seat 1 position 5']);
  assert.equal(hex(rec[2]), R['recovery share seat 0 holder dealer position 5']);
  const bad = enc[1].slice();
  bad[63] ^= 1;
  const kc = rng.scalar();
  const Rp = P.fromBytes(bad.subarray(0, 32));
  const S2 = mul(Rp, x[2]).toBytes();
  const tc = new M.Transcript(M.COMPLAINT_DOMAIN);
  tc.append('hand', hand);
  tc.append('seat', Uint8Array.of(0));
  tc.append('holder', Uint8Array.of(2));
  tc.append('piece', bad);
  tc.append('key', keys[2].subarray(0, 32));
  tc.append('shared', S2);
  tc.append('commit-g', mul(G, kc).toBytes());
  tc.append('commit-r', mul(Rp, kc).toBytes());
  const ec = tc.challengeScalar('challenge');
  const complaint = cat(S2, scalarBytes(ec), scalarBytes(mod(kc + ec * x[2])));
  assert.equal(hex(complaint), R['complaint seat 2 against seat 0']);

  // Verified by the browser's verifier.
  M.KeyShare.fromBytes(dealerKey).verify(hand, M.DEALER_HOLDER);
  const ks = keys.map((k) => M.KeyShare.fromBytes(k));
  const c = M.PieceCommitments.fromBytes(3, H(R['piece commitments seat 0']));
  c.checkSum(0, ks[0]);
  assert.throws(() => c.checkSum(1, ks[1]), { code: 'piece-sum' });
  const ctM = M.Ciphertext.fromBytes(ctBytes);
  const shares = holders.map((h, k) => [h, M.RecoveryShare.fromBytes(rec[k])]);
  const rebuilt = M.RecoveredShare.combine(hand, 0, 3, c, 5, ctM, shares);
  assert.equal(hex(rebuilt.point.toBytes()), R['recovered share seat 0 position 5']);
  assert.equal(hex(rebuilt.point.toBytes()), hex(mul(ct[0], x[0]).toBytes()), "the rebuilt share is x_0·c1");
  assert.throws(() => M.RecoveredShare.combine(hand, 0, 3, c, 4, ctM, shares), { code: 'recovery-proof' });
  M.Complaint.fromBytes(H(R['complaint seat 2 against seat 0'])).verify(hand, 0, 2, ks[2], M.EncryptedPiece.fromBytes(bad), c.get(1));
  assert.throws(
    () => M.Complaint.fromBytes(complaint).verify(hand, 0, 2, ks[2], M.EncryptedPiece.fromBytes(enc[1]), c.get(1)),
    { code: 'complaint-proof' },
  );
  // Seats 1 and 2's decryption shares (drawn after the document's) open As with the rebuilt share.
  const dshare = (seat) => {
    const k = rng.scalar();
    const D = mul(ct[0], x[seat]).toBytes();
    const t = new M.Transcript(M.DECRYPTION_SHARE_DOMAIN);
    t.append('hand', hand);
    t.append('seat', Uint8Array.of(seat));
    t.append('position', Uint8Array.of(0, 5));
    t.append('ciphertext', ctBytes);
    t.append('key', keys[seat].subarray(0, 32));
    t.append('share', D);
    t.append('commit-g', mul(G, k).toBytes());
    t.append('commit-c1', mul(ct[0], k).toBytes());
    const e = t.challengeScalar('challenge');
    return [seat, M.DecryptionShare.fromBytes(cat(D, scalarBytes(e), scalarBytes(mod(k + e * x[seat]))))];
  };
  const key = M.JointKey.combine(hand, ks.map((k, seat) => [seat, k]));
  const pack = new M.CardTable(Array.from({ length: 52 }, (_, i) => i));
  assert.equal(key.openRecovered(hand, 5, ctM, [dshare(1), dshare(2)], [rebuilt], pack), 51);
  assert.throws(() => key.openRecovered(hand, 5, ctM, [dshare(1)], [rebuilt], pack), { code: 'missing-share' });
});

// ---------- the agreement corpus

const corpus = JSON.parse(readFileSync(join(here, 'fixtures/mental-corpus.json'), 'utf8'));
const blobs = Object.fromEntries(Object.entries(corpus.blobs).map(([k, v]) => [k, H(v)]));

/** A bytes field: hex, or a blob truncated / extended to `len` with `set` runs overwritten. */
function bytesOf(f) {
  if (typeof f === 'string') return H(f);
  const base = blobs[f.blob];
  assert.ok(base, `no blob ${f.blob}`);
  const out = new Uint8Array(f.len ?? base.length);
  out.set(base.subarray(0, out.length));
  for (const [offset, h] of f.set ?? []) out.set(H(h), offset);
  return out;
}

const tables = new Map(
  corpus.tables.map((t) => {
    const key = M.JointKey.combine(
      H(t.hand),
      t.shares.map(([seat, s]) => [seat, M.KeyShare.fromBytes(H(s))]),
    );
    assert.equal(hex(key.bytes), t.key, `joint key of ${t.name}`);
    return [t.name, key];
  }),
);

const BYTES_FIELDS = ['share', 'ciphertext', 'input', 'output', 'proof', 'key', 'commitments', 'piece', 'commitment', 'complaint'];

/** The case with every bytes field decoded (the fields a flip may change). */
function materialise(c) {
  const v = { ...c };
  for (const f of BYTES_FIELDS) if (f in c) v[f] = bytesOf(c[f]);
  if (c.shares) v.shares = c.shares.map(([seat, s]) => [seat, bytesOf(s)]);
  if (c.recovery) v.recovery = c.recovery.map(([holder, s]) => [holder, bytesOf(s)]);
  return v;
}

/** The same sequence of decoders and checks as the Rust generator's `Corpus::check`. */
function verdict(c) {
  try {
    return { ok: run(c) };
  } catch (e) {
    if (!(e instanceof M.MentalError)) throw e;
    return { error: e.code, ...e.info };
  }
}

function run(c) {
  const hand = c.hand && H(c.hand);
  switch (c.kind) {
    case 'key-share':
      M.KeyShare.fromBytes(c.share).verify(hand, c.seat);
      return null;
    case 'joint-key': {
      const list = c.shares.map(([seat, s]) => [seat, M.KeyShare.fromBytes(s)]);
      return hex(M.JointKey.combine(hand, list).bytes);
    }
    case 'decryption-share': {
      const ct = M.Ciphertext.fromBytes(c.ciphertext);
      const share = M.DecryptionShare.fromBytes(c.share);
      tables.get(c.table).verifyShare(hand, c.seat, c.position, ct, share);
      return null;
    }
    case 'open': {
      const ct = M.Ciphertext.fromBytes(c.ciphertext);
      const list = c.shares.map(([seat, s]) => [seat, M.DecryptionShare.fromBytes(s)]);
      return tables.get(c.table).open(hand, c.position, ct, list, cardTable(c.cards));
    }
    case 'shuffle': {
      const input = M.Deck.fromBytes(c.input);
      const output = M.Deck.fromBytes(c.output);
      const proof = M.ShuffleProof.fromBytes(input.length, c.proof);
      M.verifyShuffle(hand, c.seat, tables.get(c.table), input, output, proof);
      return null;
    }
    case 'piece-commitments': {
      const key = M.KeyShare.fromBytes(c.key);
      M.PieceCommitments.fromBytes(c.holders, c.commitments).checkSum(c.seat, key);
      return null;
    }
    case 'complaint': {
      const key = M.KeyShare.fromBytes(c.key);
      const piece = M.EncryptedPiece.fromBytes(c.piece);
      M.Complaint.fromBytes(c.complaint).verify(hand, c.accused, c.holder, key, piece, c.commitment);
      return null;
    }
    case 'recovery-share': {
      const commitments = M.PieceCommitments.fromBytes(c.holders, c.commitments);
      const ct = M.Ciphertext.fromBytes(c.ciphertext);
      M.RecoveryShare.fromBytes(c.share).verify(hand, c.seat, c.holder, c.k, commitments, c.position, ct);
      return null;
    }
    case 'recover-open': {
      const commitments = M.PieceCommitments.fromBytes(M.holdersOf(c.seat, c.seats).length, c.commitments);
      const ct = M.Ciphertext.fromBytes(c.ciphertext);
      const rec = c.recovery.map(([holder, s]) => [holder, M.RecoveryShare.fromBytes(s)]);
      const list = c.shares.map(([seat, s]) => [seat, M.DecryptionShare.fromBytes(s)]);
      const rebuilt = M.RecoveredShare.combine(hand, c.seat, c.seats, commitments, c.position, ct, rec);
      return tables.get(c.table).openRecovered(hand, c.position, ct, list, [rebuilt], cardTable(c.cards));
    }
    default:
      throw new Error(`unknown case kind ${c.kind}`);
  }
}

const cardTables = new Map();
function cardTable(cards) {
  const k = cards.join(',');
  if (!cardTables.has(k)) cardTables.set(k, new M.CardTable(cards));
  return cardTables.get(k);
}

test('the corpus covers 52, 54 and 108 cards, every attack of the brief and every error name', () => {
  const cases = corpus.cases;
  for (const n of ['52', '54', '108']) {
    assert.ok(cases.some((c) => c.kind === 'shuffle' && c.name.startsWith(`${n} cards: honest`) && c.expect.ok === null), n);
  }
  const names = new Set();
  for (const c of cases) for (const v of [c.expect].flat()) if (v && v.error) names.add(v.error);
  for (const n of [
    'bad-length',
    'bad-point',
    'bad-scalar',
    'deck-size',
    'no-parties',
    'identity-key',
    'key-proof',
    'duplicate-seat',
    'duplicate-key',
    'unknown-seat',
    'missing-share',
    'decryption-proof',
    'not-a-card',
    'shuffle: deck-length',
    'shuffle: unchanged',
    'shuffle: permutation-sum',
    'shuffle: chain-product',
    'shuffle: permutation-commitment',
    'shuffle: reencryption',
    'shuffle: chain-step',
    'piece-count',
    'piece-sum',
    'complaint-proof',
    'good-piece',
    'recovery-proof',
    'missing-recovery',
  ]) {
    assert.ok(names.has(n), `no case fails with ${n}`);
  }
  for (const words of ['drops', 'duplicates', 'replaces', 'previous deck', 'another hand', 'another seat', 'another position', 'another card', 'non-canonical']) {
    assert.ok(cases.some((c) => c.name.includes(words)), words);
  }
  assert.ok(cases.some((c) => c.flip?.field === 'proof' && c.flip.bit === 0), 'every proof byte flipped');
  for (const kind of ['piece-commitments', 'complaint', 'recovery-share', 'recover-open']) {
    assert.ok(cases.some((c) => c.kind === kind && c.expect.ok !== undefined), `an honest ${kind}`);
    assert.ok(cases.some((c) => c.kind === kind && c.expect.error), `a refused ${kind}`);
  }
  assert.ok(cases.some((c) => c.kind === 'key-share' && c.seat === 255 && c.expect.ok === null), "the dealer's piece key");
});

test('initial decks and card points agree with Rust', () => {
  for (const c of corpus.cases.filter((c) => c.kind === 'initial-deck')) {
    assert.equal(hex(M.Deck.initial(c.cards).bytes), hex(bytesOf(c.expect)), c.name);
  }
  const points = corpus.cases.find((c) => c.kind === 'card-points');
  assert.equal(points.cards.length, 216);
  assert.deepEqual(
    points.cards.map((id) => hex(M.cardPoint(id).toBytes())),
    points.expect,
  );
  assert.equal(new Set(points.expect).size, 216, 'distinct card points');
});

for (const c of corpus.cases.filter((c) => !['initial-deck', 'card-points'].includes(c.kind))) {
  const label = c.flip ? `${c.expect.length} variants` : c.expect.error ? c.expect.error : 'ok';
  test(`${c.kind}: ${c.name} → ${label} as in Rust`, () => {
    const base = materialise(c);
    if (!c.flip) {
      assert.deepEqual(verdict(base), c.expect);
      return;
    }
    const field = base[c.flip.field];
    assert.equal(field.length, c.expect.length);
    for (let i = 0; i < field.length; i++) {
      const b = field.slice();
      b[i] ^= 1 << c.flip.bit;
      assert.deepEqual(verdict({ ...base, [c.flip.field]: b }), c.expect[i], `byte ${i}`);
    }
  });
}

test('the opened 52-card deck is a permutation of the pack', () => {
  const opened = corpus.cases.filter((c) => c.kind === 'open' && /^52: open position \d+$/.test(c.name));
  assert.equal(opened.length, 52);
  const cards = opened.map((c) => run(materialise(c))).sort((a, b) => a - b);
  assert.deepEqual(cards, Array.from({ length: 52 }, (_, i) => i));
});

test('verify speed (recorded, not asserted)', (t) => {
  const time = (f, reps = 1) => {
    f();
    const t0 = performance.now();
    for (let i = 0; i < reps; i++) f();
    return (performance.now() - t0) / reps;
  };
  for (const n of ['52', '54', '108']) {
    const c = materialise(corpus.cases.find((x) => x.kind === 'shuffle' && x.name.startsWith(`${n} cards: honest shuffle 2`)));
    const key = tables.get(c.table);
    const input = M.Deck.fromBytes(c.input);
    const output = M.Deck.fromBytes(c.output);
    const proof = M.ShuffleProof.fromBytes(input.length, c.proof);
    const verify = time(() => M.verifyShuffle(H(c.hand), c.seat, key, input, output, proof), 3);
    const all = time(() => run(c), 3);
    t.diagnostic(`shuffle of ${n} cards: verify ${verify.toFixed(1)} ms; decode both decks and the proof, then verify ${all.toFixed(1)} ms`);
  }
  const ds = materialise(corpus.cases.find((x) => x.kind === 'decryption-share' && x.expect.ok === null));
  t.diagnostic(`one decryption share: decode and verify ${time(() => run(ds), 20).toFixed(2)} ms`);
  const ks = materialise(corpus.cases.find((x) => x.kind === 'key-share' && x.expect.ok === null));
  t.diagnostic(`one key share: decode and verify ${time(() => run(ks), 20).toFixed(2)} ms`);
  const open = materialise(corpus.cases.find((x) => x.kind === 'open' && x.name === '52: open position 1'));
  t.diagnostic(`open one card, three seats: ${time(() => run(open), 10).toFixed(2)} ms`);
});

// SPEC.md §13 test vectors against the browser audit's primitives, and the
// audit itself on transcripts a real dealer wrote (CLAW_WEB_TRANSCRIPTS).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import * as A from '../dist-test/audit.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const spec = readFileSync(join(here, '../../SPEC.md'), 'utf8');
const vec = Object.fromEntries(
  [...spec.matchAll(/^([a-z0-9_.]+) = (.+)$/gm)].map((m) => [m[1], m[2].trim()]),
);
const H = (s) => A.unhex(s, null, 'vector');
const fill = (b, n) => new Uint8Array(n).fill(b);
const hand = H('000102030405060708090a0b0c0d0e0f');

test('card leaves', () => {
  const pre = A.leafPreimage(hand, 0, A.parseCard('As'), fill(0x11, 32));
  assert.equal(A.hex(pre), vec['commit.leaf0.preimage']);
  assert.equal(A.cardText(A.parseCard('As#1')), 'As#1');
  assert.equal(A.parseCard('As#1'), 105);
});

test('merkle roots', () => {
  const leaves = [0, 1, 2, 3, 4].map((i) => A.sha(new Uint8Array([i])));
  assert.equal(A.hex(A.merkleRoot(leaves.slice(0, 1))), vec['merkle.root1']);
  assert.equal(A.hex(A.merkleRoot(leaves.slice(0, 2))), vec['merkle.root2']);
  assert.equal(A.hex(A.merkleRoot(leaves.slice(0, 3))), vec['merkle.root3']);
  assert.equal(A.hex(A.merkleRoot(leaves)), vec['merkle.root5']);
});

test('joint-entropy shuffle', () => {
  const dealerSeed = fill(0x0d, 32);
  assert.equal(A.hex(A.seedCommitment(hand, dealerSeed)), vec['shuffle.seed_commitment']);
  const seed = A.sha(A.concat(dealerSeed, fill(0xa0, 32), fill(0xa2, 32)));
  assert.equal(A.hex(seed), vec['shuffle.shuffle_seed']);
  const rng = new A.ChaChaWords(seed);
  assert.equal([0, 1, 2, 3].map(() => rng.nextU32()).join(','), vec['shuffle.chacha20.first_u32']);
  const deck52 = Array.from({ length: 52 }, (_, i) => i);
  assert.equal(A.shuffle(deck52, seed).map(A.cardText).join(','), vec['shuffle.order52']);
  const deck108 = [];
  for (let p = 0; p < 2; p++) for (let f = 0; f < 54; f++) deck108.push(p * 54 + f);
  assert.equal(A.shuffle(deck108, seed).slice(0, 12).map(A.cardText).join(','), vec['shuffle.order108.first12']);
});

test('signatures', () => {
  const dealer = H(vec['identity.dealer.player_id']);
  const msg = H(vec['sign.event.message']);
  assert.ok(A.verifyStrict(H(vec['sign.event.sig']), msg, dealer));
  const bad = H(vec['sign.event.sig']);
  bad[5] ^= 1;
  assert.ok(!A.verifyStrict(bad, msg, dealer));
  // An all-zero (small-order) key is refused.
  assert.ok(!A.verifyStrict(H(vec['sign.event.sig']), msg, new Uint8Array(32)));
});

test('sealed card opens with the player key', () => {
  const x = A.sha(A.concat(A.utf8('claw/v1/identity/x25519'), fill(0x02, 32)));
  const key = A.boxKey(x, H(vec['identity.dealer.encryption_key']));
  const r = A.openSealed(key, H(vec['seal.nonce']), H(vec['seal.ciphertext']), hand);
  assert.ok('plain' in r, r.error);
  assert.equal(A.cardText((r.plain[30] << 8) | r.plain[31]), 'Td');
  assert.equal((r.plain[28] << 8) | r.plain[29], 7);
  const ct = H(vec['seal.ciphertext']);
  ct[20] ^= 1;
  assert.ok('error' in A.openSealed(key, H(vec['seal.nonce']), ct, hand));
});

const dir = process.env.CLAW_WEB_TRANSCRIPTS;
test('audits real transcripts, and names the check a tampering breaks', { skip: !dir && 'SKIPPED: CLAW_WEB_TRANSCRIPTS not set' }, () => {
  const files = readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
  assert.ok(files.length > 0, 'no transcripts');
  for (const f of files) {
    const text = readFileSync(join(dir, f), 'utf8');
    const r = A.audit(text);
    assert.ok(r.ok, `${f}: ${JSON.stringify(r.results.filter((c) => c.status === 'failed'))}`);
    // Flip one hex digit of the last leaf: a signed game-start's signature
    // breaks first; an unsigned one (inside its burst, §10.1) breaks the
    // chain at the next event, whose signed successor covers the old hash.
    const tampered = text.replace(/("leaves":\[[^\]]*)([0-9a-f])"\]/, (_, a, d) => `${a}${d === '0' ? '1' : '0'}"]`);
    const start = text.split('\n').find((l) => l.includes('"type":"game-start"'));
    const t = A.audit(tampered);
    const bad = t.results.filter((c) => c.status !== 'passed');
    assert.equal(bad.length, 1);
    assert.equal(bad[0].check, /"sig":"[0-9a-f]+"}\s*$/.test(start) ? 'dealer-signatures' : 'hash-chain');
    assert.equal(bad[0].status, 'failed');
  }
});

// The browser audit of dealer-blind hands (docs/blind-deal.md
// §II.8): real transcripts of `claw-dealer --deal blind` pass every check;
// tampered copies — re-chained and re-signed with the dealer's key, and
// where a player's signature covers the change, that seat's player replaced
// by a key the test holds — fail under the check the Rust auditor names.
// Fixtures: two hands of
//   claw-dealer --game texas-holdem --deal blind --bots 6 --hands 5 --chips local --data-dir DIR
// (DIR/dealer.key is fixtures/blind-dealer.key.json), and two hands of the
// room core where a seat withholds its board shares (recovered from its
// pieces: blind-recover, blind-recovery) and where a seat's piece draws an
// upheld complaint (blind-complaint), written with their dealer's key
// (fixtures/blind-recovery-dealer.key.json) by
//   CLAW_WRITE_BLIND_FIXTURES=DIR cargo test -p claw-engine --test room write_the_browsers -- --ignored
// then gzipped as fixtures/blind-recovered.jsonl.gz and
// fixtures/blind-complained.jsonl.gz. With CLAW_DEALER_BIN the test also
// deals five fresh Hold'em hands (and three Sam Gong hands) with that binary
// and audits them, and with CLAW_PLAYER_BIN it checks that `claw-player
// audit` names the same failed check for every tampered copy (of the
// fixtures too); without them those tests are skipped and say so
// (scripts/test-web.sh sets both).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import { ed25519 } from '@noble/curves/ed25519.js';
import { sha256 } from '@noble/hashes/sha2.js';
import * as A from '../dist-test/audit.mjs';

const dir = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
const DEALER = process.env.CLAW_DEALER_BIN;
const PLAYER = process.env.CLAW_PLAYER_BIN;
const noDealer = DEALER ? false : 'CLAW_DEALER_BIN is not set (scripts/test-web.sh sets it to the built claw-dealer)';
const noPlayer = PLAYER ? false : 'CLAW_PLAYER_BIN is not set (scripts/test-web.sh sets it to the built claw-player)';

const fixture = (f) => gunzipSync(readFileSync(join(dir, f))).toString('utf8');
const keyOf = (text) => JSON.parse(text).signing_secret;
const FIXTURES = ['blind-texas-holdem-0.jsonl.gz', 'blind-texas-holdem-2.jsonl.gz'];
const FIXTURE_KEY = keyOf(readFileSync(join(dir, 'blind-dealer.key.json'), 'utf8'));
const RECOVERED = 'blind-recovered.jsonl.gz';
const COMPLAINED = 'blind-complained.jsonl.gz';
const RECOVERY_KEY = keyOf(readFileSync(join(dir, 'blind-recovery-dealer.key.json'), 'utf8'));

function assertPasses(text, what) {
  const r = A.audit(text);
  const failed = r.results.filter((x) => x.status !== 'passed');
  assert.deepEqual(failed, [], `${what}: every check passes`);
  assert.ok(r.ok);
  assert.deepEqual(r.results.map((x) => x.check), [...A.CHECKS], `${what}: all ${A.CHECKS.length} checks, in SPEC order`);
  return r;
}

// ---------- editing a transcript: bodies changed, then re-chained and re-signed by the dealer

const enc = new TextEncoder();
const u8 = (n) => new Uint8Array([n]);

/** The hand's header and events (body as an object, `signed`: whether the dealer signed it). */
function parse(text) {
  const t = A.parseTranscript(text);
  const header = text.split('\n')[0];
  return { header, events: t.events.map((e) => ({ handId: e.handId, body: JSON.parse(e.bodyText), bodyText: e.bodyText, signed: e.sig !== null })) };
}

/** Writes the hand back: every event re-chained and, where it was signed, re-signed with `dealerSecret`. */
function write(h, dealerSecret) {
  const secret = A.unhex(dealerSecret, 32, 'dealer secret');
  let prev = new Uint8Array(32);
  const lines = [h.header];
  h.events.forEach((e, seq) => {
    const text = e.edited ? JSON.stringify(e.body) : e.bodyText;
    const msg = A.eventMessage(A.unhex(e.handId, 16, 'hand'), seq, prev, text);
    const sig = e.signed ? `,"sig":"${A.hex(ed25519.sign(msg, secret))}"` : '';
    lines.push(`{"type":"event","hand_id":"${e.handId}","seq":${seq},"prev":"${A.hex(prev)}","body":${text}${sig}}`);
    prev = sha256(msg);
  });
  return lines.join('\n') + '\n';
}

const edit = (e, f) => {
  f(e.body);
  e.edited = true;
};
const find = (h, pred) => {
  const i = h.events.findIndex((e) => pred(e.body));
  assert.ok(i >= 0, 'the event to tamper with is in the hand');
  return h.events[i];
};

/** Gives seat `seat` a player key the test holds (hand-prepare and game-start); returns its signer. */
function takeSeat(h, seat) {
  const secret = ed25519.utils.randomSecretKey();
  const id = A.hex(ed25519.getPublicKey(secret));
  edit(find(h, (b) => b.type === 'hand-prepare'), (b) => (b.players[seat] = id));
  edit(find(h, (b) => b.type === 'game-start'), (b) => (b.players[seat].id = id));
  const hand = A.unhex(h.events[0].handId, 16, 'hand');
  const sign = (tag, body) => A.hex(ed25519.sign(A.concat(enc.encode(tag), u8(0), body), secret));
  // Its key share signed again by the new key (SPEC.md §4.2 `claw/v1/blind-key`).
  edit(find(h, (b) => b.type === 'blind-keys'), (b) => {
    const k = b.keys[seat];
    k.sig = sign('claw/v1/blind-key', A.concat(hand, u8(seat), A.unhex(k.key_share, 96, 'key share')));
  });
  const signer = {
    /** Signs seat's shuffle as it now stands (`claw/v1/blind-shuffle`). */
    signShuffle(s) {
      const deck = A.unhex(s.deck, null, 'deck');
      const proof = A.unhex(s.proof, null, 'proof');
      s.sig = sign('claw/v1/blind-shuffle', A.concat(hand, u8(seat), sha256(deck), sha256(proof)));
    },
    /** Signs seat's pieces as they now stand (`claw/v1/blind-pieces`, docs/blind-deal.md §II.7). */
    signPieces(p) {
      const commitments = A.unhex(p.commitments, null, 'commitments');
      const pieces = A.unhex(p.pieces, null, 'pieces');
      p.sig = sign('claw/v1/blind-pieces', A.concat(hand, u8(seat), sha256(commitments), sha256(pieces)));
    },
  };
  // Its pieces and shuffle (checked before any later change) signed again too.
  edit(find(h, (b) => b.type === 'blind-pieces' && b.seat === seat), signer.signPieces);
  const shuffled = h.events.find((e) => e.body.type === 'blind-shuffle' && e.body.seat === seat);
  if (shuffled) edit(shuffled, signer.signShuffle);
  return signer;
}

/** An event inserted at `at`, signed by the dealer when written. */
function insert(h, at, body) {
  h.events.splice(at, 0, { handId: h.events[0].handId, body, bodyText: JSON.stringify(body), signed: true });
}

const lastIndex = (h, pred) => h.events.findLastIndex((e) => pred(e.body));

const flip = (hexText, at) => {
  const b = A.unhex(hexText, null, 'bytes');
  b[at] ^= 1;
  return A.hex(b);
};

/**
 * The tamperings: each takes the parsed hand (and another hand for a share
 * from elsewhere) and gives the check it must fail and a pattern of its detail.
 */
const TAMPERINGS = [
  {
    name: 'a changed byte of a shuffle proof (its player signature then fails)',
    check: 'shuffle',
    detail: /seat 2: signature/,
    apply: (h) => edit(find(h, (b) => b.type === 'blind-shuffle' && b.seat === 2), (b) => (b.proof = flip(b.proof, 100))),
  },
  {
    name: 'a changed byte of a shuffle proof, signed by its player',
    check: 'shuffle',
    detail: /seat 2: shuffle: /,
    apply: (h) => {
      const p = takeSeat(h, 2);
      const n = 52;
      // The first byte of s1 (§6.2): a canonical scalar still, a wrong response.
      edit(find(h, (b) => b.type === 'blind-shuffle' && b.seat === 2), (b) => {
        b.proof = flip(b.proof, 32 * (3 * n + 5));
        p.signShuffle(b);
      });
    },
  },
  {
    name: 'a shuffle that drops a card, signed by its player',
    check: 'shuffle',
    detail: /seat 3: shuffle: deck-length/,
    apply: (h) => {
      const p = takeSeat(h, 3);
      edit(find(h, (b) => b.type === 'blind-shuffle' && b.seat === 3), (b) => {
        b.deck = b.deck.slice(0, -128);
        p.signShuffle(b);
      });
    },
  },
  {
    name: 'a key share with a changed byte',
    check: 'player-seeds',
    detail: /seat 1: key share signature/,
    apply: (h) => edit(find(h, (b) => b.type === 'blind-keys'), (b) => (b.keys[1].key_share = flip(b.keys[1].key_share, 70))),
  },
  {
    name: 'a root that is not the final deck',
    check: 'shuffle',
    detail: /root is not the final deck's digest/,
    apply: (h) => edit(find(h, (b) => b.type === 'game-start'), (b) => (b.root = flip(b.root, 0))),
  },
  {
    name: 'a share swapped with the same seat\'s share of another card',
    check: 'opened-cards',
    detail: /decryption-proof/,
    apply: (h) =>
      edit(find(h, (b) => b.type === 'blind-shares' && b.shares.length > 1), (b) => {
        const [x, y] = b.shares;
        [x.share, y.share] = [y.share, x.share];
      }),
  },
  {
    name: 'a share replayed: a hole-card share given again in a later request',
    check: 'opened-cards',
    needs: ['"position":13', 'a flop'],
    detail: /a second share for position/,
    apply: (h) => {
      const mine = h.events.filter((e) => e.body.type === 'blind-shares' && e.body.seat === 0);
      assert.ok(mine.length > 1, 'seat 0 answered a later request');
      const share = mine[0].body.shares[0];
      edit(mine.at(-1), (b) => b.shares.push({ ...share }));
    },
  },
  {
    name: 'a share from another hand for the same seat and position',
    check: 'opened-cards',
    detail: /decryption-proof/,
    apply: (h, other) => {
      const target = find(h, (b) => b.type === 'blind-shares' && b.shares.length > 1);
      const from = other.events.find((e) => e.body.type === 'blind-shares' && e.body.seat === target.body.seat && e.body.shares.length > 1);
      const theirs = from.body.shares.find((s) => target.body.shares.some((t) => t.position === s.position));
      assert.ok(theirs, 'a share of the same position in the other hand');
      edit(target, (b) => (b.shares.find((s) => s.position === theirs.position).share = theirs.share));
    },
  },
  {
    name: 'a hole card requested for another seat than its owner',
    check: 'opened-cards',
    detail: /requested for seat/,
    apply: (h) =>
      edit(find(h, (b) => b.type === 'blind-request' && b.positions[0].to !== undefined), (b) => {
        b.positions[0].to = (b.positions[0].to + 1) % 6;
      }),
  },
  {
    name: 'cards opened publicly that the game never shows (the showdown reveal dropped)',
    check: 'opened-cards',
    needs: ['"blind-reveal"', 'a showdown'],
    detail: /was opened but the game never showed it/,
    apply: (h) => {
      const at = h.events.findIndex((e) => e.body.type === 'blind-reveal');
      assert.ok(at >= 0, 'a showdown');
      h.events.splice(at, 1);
    },
  },
  {
    name: "a seat's shares of the hole cards left out (owners could not open their cards)",
    check: 'opened-cards',
    detail: /was never sent nor recovered|is not opened by its shares/,
    apply: (h) => {
      const req = h.events.findIndex((e) => e.body.type === 'blind-request' && e.body.positions.every((p) => p.to !== undefined));
      assert.ok(req >= 0, 'a private request');
      const at = req + h.events.slice(req).findIndex((e) => e.body.type === 'blind-shares');
      h.events.splice(at, 1);
    },
  },
  {
    name: "a seat's accepted shuffle replaced by a skip",
    check: 'shuffle',
    detail: /root is not the final deck's digest/,
    apply: (h) => {
      const e = find(h, (b) => b.type === 'blind-shuffle' && b.seat === 5);
      e.body = { type: 'blind-skip', seat: 5, reason: 'timeout' };
      e.edited = true;
    },
  },
  {
    name: 'two shuffles out of seat order',
    check: 'structure',
    detail: /shuffle of seat 2, expected 1/,
    apply: (h) => {
      const i = h.events.findIndex((e) => e.body.type === 'blind-shuffle' && e.body.seat === 1);
      [h.events[i], h.events[i + 1]] = [h.events[i + 1], h.events[i]];
    },
  },
  {
    name: 'a blind event of a kind the auditor does not know',
    check: 'structure',
    detail: /blind event kind "blind-recovery-share" is not known/,
    apply: (h) => {
      const at = h.events.findIndex((e) => e.body.type === 'blind-request');
      const body = { type: 'blind-recovery-share', seat: 0, shares: [] };
      h.events.splice(at + 1, 0, { handId: h.events[0].handId, body, bodyText: JSON.stringify(body), signed: true });
    },
  },
  {
    name: 'a blind event of an unknown kind before the keys',
    check: 'structure',
    detail: /event 1: blind event kind "blind-deal" is not known/,
    apply: (h) => insert(h, 1, { type: 'blind-deal', seat: 0 }),
  },
  {
    name: "a seat's pieces before the keys",
    check: 'structure',
    detail: /event 1: blind-pieces not allowed here/,
    apply: (h) => insert(h, 1, structuredClone(find(h, (b) => b.type === 'blind-pieces').body)),
  },
  {
    name: "a seat's pieces given twice",
    check: 'structure',
    detail: /blind-pieces not allowed here/,
    apply: (h) => {
      const at = h.events.findIndex((e) => e.body.type === 'blind-pieces');
      insert(h, at + 1, structuredClone(h.events[at].body));
    },
  },
  {
    name: "a seat's pieces dropped (the shuffles then come before every seat's pieces)",
    check: 'structure',
    detail: /blind-shuffle not allowed here/,
    apply: (h) => h.events.splice(h.events.findIndex((e) => e.body.type === 'blind-pieces' && e.body.seat === 4), 1),
  },
  {
    name: "a changed byte of a seat's pieces (its player signature then fails)",
    check: 'player-seeds',
    detail: /pieces of seat 3: signature/,
    apply: (h) => edit(find(h, (b) => b.type === 'blind-pieces' && b.seat === 3), (b) => (b.pieces = flip(b.pieces, 100))),
  },
  {
    name: 'piece commitments that do not sum to the key share, signed by its player',
    check: 'player-seeds',
    detail: /pieces of seat 3: piece-sum/,
    apply: (h) => {
      const p = takeSeat(h, 3);
      edit(find(h, (b) => b.type === 'blind-pieces' && b.seat === 3), (b) => {
        b.commitments = b.commitments.slice(64, 128) + b.commitments.slice(64);
        p.signPieces(b);
      });
    },
  },
  {
    name: 'an encrypted piece whose R is no point, signed by its player',
    check: 'player-seeds',
    detail: /pieces of seat 3: bad-point/,
    apply: (h) => {
      const p = takeSeat(h, 3);
      edit(find(h, (b) => b.type === 'blind-pieces' && b.seat === 3), (b) => {
        b.pieces = flip(b.pieces, 64);
        p.signPieces(b);
      });
    },
  },
  {
    name: "the dealer's piece key with a changed byte",
    check: 'player-seeds',
    detail: /the dealer's piece key: key-proof/,
    apply: (h) => edit(find(h, (b) => b.type === 'blind-keys'), (b) => (b.dealer_key = flip(b.dealer_key, 40))),
  },
  {
    name: 'a false complaint (no valid proof)',
    check: 'player-seeds',
    detail: /complaint of seat 2: /,
    apply: (h) => {
      const keys = find(h, (b) => b.type === 'blind-keys').body.keys;
      insert(h, lastIndex(h, (b) => b.type === 'blind-pieces') + 1, { type: 'blind-complaint', seat: 2, accused: 0, complaint: keys[2].key_share });
    },
  },
  {
    name: 'a complaint by a seat against itself',
    check: 'player-seeds',
    detail: /complaint of seat 0: not a holder/,
    apply: (h) => {
      const keys = find(h, (b) => b.type === 'blind-keys').body.keys;
      insert(h, lastIndex(h, (b) => b.type === 'blind-pieces') + 1, { type: 'blind-complaint', seat: 0, accused: 0, complaint: keys[0].key_share });
    },
  },
  {
    name: 'a recovery of shares the seat gave',
    check: 'opened-cards',
    detail: /recovery of seat 1: position \d+ was not owed by the seat/,
    apply: (h) => {
      const at = h.events.findIndex((e) => e.body.type === 'blind-shares' && e.body.seat === 1);
      const given = h.events[at].body.shares[0];
      insert(h, at + 1, { type: 'blind-recover', seat: 1, positions: [given.position], dealer_shares: [{ ...given }] });
    },
  },
  {
    name: 'recovery shares with no recovery open',
    check: 'opened-cards',
    detail: /recovery shares of seat 0: no recovery is open/,
    apply: (h) => {
      const at = h.events.findIndex((e) => e.body.type === 'blind-shares');
      insert(h, at, { type: 'blind-recovery', seat: 0, withholder: 1, shares: [] });
    },
  },
];

/** Tamperings of the recovered hand (seat 1 withheld its board shares; three seats). */
const RECOVERY_TAMPERINGS = [
  {
    name: 'a recovery share with a changed byte',
    check: 'opened-cards',
    detail: /recovery shares of seat \d: (recovery-proof|bad-scalar)/,
    apply: (h) => edit(find(h, (b) => b.type === 'blind-recovery'), (b) => (b.shares[0].share = flip(b.shares[0].share, 40))),
  },
  {
    name: "the dealer's recovery share with a changed byte",
    check: 'opened-cards',
    detail: /recovery of seat 1: (recovery-proof|bad-scalar)/,
    apply: (h) => edit(find(h, (b) => b.type === 'blind-recover'), (b) => (b.dealer_shares[0].share = flip(b.dealer_shares[0].share, 70))),
  },
  {
    name: "a holder's recovery shares swapped with the other holder's",
    check: 'opened-cards',
    detail: /recovery-proof/,
    apply: (h) => {
      const at = h.events.findIndex((e) => e.body.type === 'blind-recovery');
      const [a, b] = [h.events[at], h.events[at + 1]];
      assert.equal(b.body.type, 'blind-recovery');
      const s = a.body.shares;
      edit(a, (x) => (x.shares = b.body.shares));
      edit(b, (x) => (x.shares = s));
    },
  },
  {
    name: 'a blind-recovery dropped',
    check: 'opened-cards',
    detail: /is not opened by its shares|a recovery is open already/,
    apply: (h) => h.events.splice(h.events.findIndex((e) => e.body.type === 'blind-recovery'), 1),
  },
  {
    name: 'a blind-recovery given twice',
    check: 'opened-cards',
    detail: /a second set of recovery shares/,
    apply: (h) => {
      const at = h.events.findIndex((e) => e.body.type === 'blind-recovery');
      insert(h, at + 1, structuredClone(h.events[at].body));
    },
  },
  {
    name: "the withholder's share of a recovered position given after all",
    check: 'opened-cards',
    detail: /seat 1: a second share for position/,
    apply: (h) => {
      const at = h.events.findIndex((e) => e.body.type === 'blind-recovery');
      const r = h.events[at].body;
      insert(h, at + 2, { type: 'blind-shares', seat: 1, shares: [{ position: r.shares[0].position, share: r.shares[0].share }] });
    },
  },
  {
    name: 'a recovery of a seat that did not withhold, for the same positions',
    check: 'opened-cards',
    detail: /recovery of seat 2: /,
    apply: (h) => edit(find(h, (b) => b.type === 'blind-recover'), (b) => (b.seat = 2)),
  },
  {
    name: "a changed byte of the withholder's pieces (its player signature then fails)",
    check: 'player-seeds',
    detail: /pieces of seat 1: signature/,
    apply: (h) => edit(find(h, (b) => b.type === 'blind-pieces' && b.seat === 1), (b) => (b.pieces = flip(b.pieces, 33))),
  },
  {
    name: "the dealer's piece key with a changed byte",
    check: 'player-seeds',
    detail: /the dealer's piece key/,
    apply: (h) => edit(find(h, (b) => b.type === 'blind-keys'), (b) => (b.dealer_key = flip(b.dealer_key, 5))),
  },
];

/** Tamperings of the complained hand (seat 0 complained of seat 1's piece). */
const COMPLAINT_TAMPERINGS = [
  {
    name: 'a complaint with a changed byte',
    check: 'player-seeds',
    detail: /complaint of seat 0: (complaint-proof|bad-scalar)/,
    apply: (h) => edit(find(h, (b) => b.type === 'blind-complaint'), (b) => (b.complaint = flip(b.complaint, 40))),
  },
  {
    name: 'a complaint turned against another seat',
    check: 'player-seeds',
    detail: /complaint of seat 0: complaint-proof/,
    apply: (h) => edit(find(h, (b) => b.type === 'blind-complaint'), (b) => (b.accused = 2)),
  },
  {
    name: 'a complaint given twice',
    check: 'structure',
    detail: /blind-complaint not allowed here/,
    apply: (h) => {
      const at = h.events.findIndex((e) => e.body.type === 'blind-complaint');
      insert(h, at + 1, structuredClone(h.events[at].body));
    },
  },
];

function tampered(text, other, t, dealerSecret) {
  const h = parse(text);
  t.apply(h, parse(other));
  return write(h, dealerSecret);
}

function assertFails(text, t) {
  const r = A.audit(text);
  const failed = r.results.filter((x) => x.status === 'failed');
  assert.ok(!r.ok, `${t.name}: refused`);
  assert.equal(failed.length, 1);
  assert.equal(failed[0].check, t.check, `${t.name}: ${failed[0].detail}`);
  assert.match(failed[0].detail, t.detail);
  return failed[0];
}

/** `claw-player audit --json` on `text`: the Rust auditor's first verdict. */
function rustVerdict(text, work) {
  const file = join(work, 'tampered.jsonl');
  writeFileSync(file, text);
  const rust = spawnSync(PLAYER, ['audit', '--json', file], { encoding: 'utf8', timeout: 120_000 });
  return JSON.parse(rust.stdout.trim().split('\n')[0]);
}

/** The tampered copy fails `t.check` here and, with CLAW_PLAYER_BIN, in the Rust auditor too. */
function assertFailsAsRust(text, t, work) {
  const js = assertFails(text, t);
  if (noPlayer) return;
  const verdict = rustVerdict(text, work);
  assert.equal(verdict.ok, false, `${t.name}: the Rust auditor refuses it too`);
  assert.equal(verdict.check, js.check, `${t.name}: Rust ${verdict.detail}; JS ${js.detail}`);
}

// ---------- the committed fixtures

test('blind fixtures: every hand passes all the checks, a showdown among them', () => {
  let shown = 0;
  for (const f of FIXTURES) {
    const text = fixture(f);
    const r = assertPasses(text, f);
    assert.equal(r.game, 'texas-holdem');
    assert.ok(r.events.some((e) => e.body.type === 'blind-shuffle'), 'a blind hand');
    shown += r.events.filter((e) => e.body.type === 'blind-reveal').length;
    // Written back unchanged, the hand still passes (the editing is faithful).
    assertPasses(write(parse(text), FIXTURE_KEY), `${f} rewritten`);
  }
  assert.ok(shown > 0, 'a showdown reveal');
});

const scratch = mkdtempSync(join(tmpdir(), 'claw-blind-fixtures-'));
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }));

for (const t of TAMPERINGS) {
  test(`blind fixtures, tampered: ${t.name} fails ${t.check}`, () => {
    assertFailsAsRust(tampered(fixture(FIXTURES[1]), fixture(FIXTURES[0]), t, FIXTURE_KEY), t, scratch);
  });
}

test('the recovered hand passes: board shares withheld, rebuilt from the pieces, the board opened with them', () => {
  const text = fixture(RECOVERED);
  const r = assertPasses(text, RECOVERED);
  const kinds = r.events.map((e) => e.body.type);
  assert.ok(kinds.includes('blind-recover') && kinds.includes('blind-recovery'), 'a recovery');
  const recovers = r.events.filter((e) => e.body.type === 'blind-recover').map((e) => e.body);
  assert.ok(recovers.every((x) => x.seat === 1));
  assert.ok(recovers.some((x) => x.positions.every((p) => r.deckOrder[p] !== null)), 'recovered public positions are opened');
  const opened = r.results.find((x) => x.check === 'opened-cards').detail;
  assert.match(opened, /3 recoveries of seat 1's withheld shares/);
  assertPasses(write(parse(text), RECOVERY_KEY), `${RECOVERED} rewritten`);
});

test('the complained hand passes: an upheld complaint against a bad piece', () => {
  const text = fixture(COMPLAINED);
  const r = assertPasses(text, COMPLAINED);
  assert.ok(r.events.some((e) => e.body.type === 'blind-complaint' && e.body.seat === 0 && e.body.accused === 1));
  assert.match(r.results.find((x) => x.check === 'player-seeds').detail, /1 upheld complaints \(against seat 1\)/);
});

for (const [file, list] of [
  [RECOVERED, RECOVERY_TAMPERINGS],
  [COMPLAINED, COMPLAINT_TAMPERINGS],
]) {
  for (const t of list) {
    test(`${file}, tampered: ${t.name} fails ${t.check}`, () => {
      assertFailsAsRust(tampered(fixture(file), fixture(file), t, RECOVERY_KEY), t, scratch);
    });
  }
}

// ---------- hands dealt now by the real dealer binary

test('blind Sam Gong hands dealt by claw-dealer --deal blind pass every check', { skip: noDealer, timeout: 600_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'claw-blind-sg-'));
  try {
    const run = spawnSync(DEALER, ['--game', 'sam-gong', '--deal', 'blind', '--bots', '4', '--hands', '3', '--chips', 'local', '--data-dir', work], { encoding: 'utf8', timeout: 540_000 });
    assert.equal(run.status, 0, `claw-dealer: ${run.stderr}`);
    const tdir = join(work, 'rooms', 'sam-gong', 'transcripts');
    const files = readdirSync(tdir).sort();
    assert.equal(files.length, 3, 'three hands');
    for (const f of files) assert.equal(assertPasses(readFileSync(join(tdir, f), 'utf8'), f).game, 'sam-gong');
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});

test('blind hands dealt by claw-dealer --deal blind: every hand passes; tampered copies fail as in the Rust auditor', { skip: noDealer, timeout: 900_000 }, async (tt) => {
  const work = mkdtempSync(join(tmpdir(), 'claw-blind-'));
  try {
    const run = spawnSync(DEALER, ['--game', 'texas-holdem', '--deal', 'blind', '--bots', '6', '--hands', '5', '--chips', 'local', '--data-dir', work], { encoding: 'utf8', timeout: 540_000 });
    assert.equal(run.status, 0, `claw-dealer: ${run.stderr}`);
    const tdir = join(work, 'rooms', 'texas-holdem', 'transcripts');
    const files = readdirSync(tdir).sort();
    assert.equal(files.length, 5, 'five hands');
    const texts = files.map((f) => readFileSync(join(tdir, f), 'utf8'));
    texts.forEach((text, i) => assertPasses(text, files[i]));
    const secret = keyOf(readFileSync(join(work, 'dealer.key'), 'utf8'));
    if (noPlayer) tt.diagnostic(`the Rust auditor's verdicts are not compared: ${noPlayer}`);
    for (const t of TAMPERINGS) {
      const at = texts.findIndex((x) => !t.needs || x.includes(t.needs[0]));
      const skip = at < 0 ? `none of the five hands has ${t.needs[1]}` : false;
      await tt.test(`${t.name}: fails ${t.check}`, { skip }, () => {
        assertFailsAsRust(tampered(texts[at], texts[(at + 1) % texts.length], t, secret), t, work);
      });
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});

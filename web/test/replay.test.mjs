// The browser's rules replay (src/replay/, SPEC.md §11.2 check 13) against
// the Rust rules: (a) SPEC.md §13.1's game vectors, parsed out of SPEC.md so
// the text and the test cannot drift; (b) the corpus of random hands the
// Rust replay wrote (games/examples/replay_corpus.rs, one `<game>.jsonl` per
// game in the directory CLAW_REPLAY_CORPUS, set by scripts/test-web.sh):
// every hand must replay equal, 0 disagreements; (c) check 13 of the audit
// on real transcripts tampered and re-signed with a dealer key of the test's
// own: each fails `replay` and names what differs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import * as R from '../dist-test/replay/index.mjs';
import * as A from '../dist-test/audit.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const OUTPUTS = ['events', 'result', 'details', 'memory_after'];
const GAMES = ['texas-holdem', 'blackjack', 'dou-di-zhu', 'sam-gong', 'guandan'];

/** The JSON lines of the code block under "### 13.1 Game vectors". */
function specVectors() {
  const spec = readFileSync(join(here, '../../SPEC.md'), 'utf8');
  const start = spec.indexOf('\n### 13.1 Game vectors');
  assert.ok(start >= 0, 'SPEC.md has §13.1 Game vectors');
  const section = spec.slice(start);
  const open = section.indexOf('\n```json\n');
  assert.ok(open >= 0, 'a ```json block in §13.1');
  const body = section.slice(open + '\n```json\n'.length);
  return body
    .slice(0, body.indexOf('\n```'))
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
}

/** The first output that differs, or null. */
function differs(got, want) {
  for (const k of OUTPUTS) {
    try {
      assert.deepStrictEqual(got[k], want[k]);
    } catch {
      return k;
    }
  }
  return null;
}

test('SPEC.md §13.1 game vectors replay exactly', () => {
  const vectors = specVectors();
  const games = new Set(vectors.map((v) => v.game));
  for (const g of GAMES) assert.ok(games.has(g), `SPEC.md §13.1 has a vector for ${g}`);
  for (const v of vectors) {
    const got = R.replay(v);
    for (const k of OUTPUTS) assert.deepStrictEqual(got[k], v[k], `${v.name}: ${k}`);
  }
});

const corpus = process.env.CLAW_REPLAY_CORPUS;
test(
  'the replay agrees with the Rust replay on the corpus (CLAW_REPLAY_CORPUS)',
  { skip: corpus ? false : 'CLAW_REPLAY_CORPUS not set (scripts/test-web.sh generates the corpus)' },
  (t) => {
    const files = readdirSync(corpus).filter((f) => f.endsWith('.jsonl'));
    for (const g of GAMES) assert.ok(files.includes(`${g}.jsonl`), `${g}.jsonl in ${corpus}`);
    const failures = [];
    for (const f of files.sort()) {
      const lines = readFileSync(join(corpus, f), 'utf8').split('\n').filter((l) => l.trim());
      let equal = 0;
      const t0 = Date.now();
      lines.forEach((l, i) => {
        const v = JSON.parse(l);
        let what;
        try {
          what = differs(R.replay(v), v);
        } catch (e) {
          what = `refused: ${e.message}`;
        }
        if (what === null) equal++;
        else if (failures.length < 10) failures.push(`${f} line ${i + 1}: ${what}`);
      });
      t.diagnostic(`${f.replace('.jsonl', '')}: ${equal}/${lines.length} hands equal, ${lines.length - equal} disagreements, ${Date.now() - t0} ms`);
      assert.ok(lines.length > 0, `${f} has hands`);
      assert.equal(equal, lines.length, `${f}: ${lines.length - equal} disagreements:\n${failures.join('\n')}`);
    }
  },
);

// ---------- check 13 on tampered transcripts, re-signed

const fixtures = join(here, 'fixtures');
const secret = new Uint8Array(32).fill(7);
const dealer = A.hex(ed25519.getPublicKey(secret));

/** A fixture transcript with `edit(bodies)` applied, chained and signed again by the test's dealer key. */
function tampered(file, edit) {
  const t = A.parseTranscript(gunzipSync(readFileSync(join(fixtures, file))).toString('utf8'));
  const bodies = t.events.map((e) => JSON.parse(e.bodyText));
  const texts = t.events.map((e) => e.bodyText);
  for (const i of edit(bodies)) texts[i] = JSON.stringify(bodies[i]);
  const hand = A.unhex(t.events[0].handId, 16, 'hand');
  let prev = new Uint8Array(32);
  const lines = [JSON.stringify({ ...t.header, dealer })];
  t.events.forEach((e, i) => {
    const msg = A.eventMessage(hand, e.seq, prev, texts[i]);
    const line = { type: 'event', hand_id: e.handId, seq: e.seq, prev: A.hex(prev) };
    // Signed as before: the same events carry a signature.
    if (e.sig) line.sig = A.hex(ed25519.sign(msg, secret));
    lines.push(JSON.stringify(line).replace(/}$/, `,"body":${texts[i]}}`));
    prev = A.sha(msg);
  });
  return lines.join('\n');
}

const audited = (text) => A.audit(text, { dealer });
const failed = (r) => r.results.filter((x) => x.status === 'failed');

test('an untampered transcript re-signed by the test passes every check, replay included', () => {
  const r = audited(tampered('texas-holdem-1.jsonl.gz', () => []));
  assert.deepEqual(failed(r), []);
  assert.equal(r.results.find((x) => x.check === 'replay').status, 'passed');
});

const TAMPERS = [
  {
    what: 'a chip movement changed',
    file: 'texas-holdem-1.jsonl.gz',
    edit: (b) => {
      const i = b.findIndex((x) => x.type === 'chips');
      b[i].moves[0].amount += 1;
      return [i];
    },
    reason: /announced event \d+ .*the dealer announced \["debit",\d+,\d+,"[a-z ]+"\], the rules give/,
  },
  {
    what: 'a card dealt to another seat',
    file: 'blackjack-0.jsonl.gz',
    edit: (b) => {
      const i = b.findIndex((x) => x.type === 'new-card');
      b[i].cards[0].target.seat = (b[i].cards[0].target.seat + 1) % 3;
      return [i];
    },
    reason: /announced event \d+ .*>s\d\/u/,
  },
  {
    what: 'the result net changed (chips unchanged)',
    file: 'sam-gong-0.jsonl.gz',
    edit: (b) => {
      const i = b.findIndex((x) => x.type === 'game-end');
      b[i].result.net[0] += 1;
      b[i].result.net[1] -= 1;
      return [i];
    },
    reason: /game-end result\.net is/,
  },
  {
    what: 'the table memory changed',
    file: 'texas-holdem-0.jsonl.gz',
    edit: (b) => {
      const i = b.findIndex((x) => x.type === 'game-end');
      b[i].memory_after.button = b[i].memory_after.seating[2];
      return [i];
    },
    reason: /game-end memory_after is/,
  },
  {
    what: 'a player action passed off as a timeout with another action than the auto action',
    file: 'texas-holdem-1.jsonl.gz',
    edit: (b) => {
      const i = b.findIndex((x) => x.type === 'action-result' && x.action.type !== 'fold' && x.action.type !== 'check');
      const { seat, action, public_state } = b[i];
      b[i] = { type: 'timeout-action', seat, action, reason: 'timeout', public_state };
      return [i];
    },
    reason: /timeout action \d+ .* of seat \d is .*, the game's auto action is/,
  },
  {
    what: 'a Guandan tribute moved to the other receiver',
    file: 'guandan-double-up.jsonl.gz',
    edit: (b) => {
      const i = b.findIndex((x) => x.type === 'card-transfer');
      const j = b.findIndex((x, k) => k > i && x.type === 'card-transfer');
      [b[i].to, b[j].to] = [b[j].to, b[i].to];
      return [i, j];
    },
    reason: /announced event \d+ .*"transfer"/,
  },
];

for (const c of TAMPERS) {
  test(`check 13 catches ${c.what} (${c.file})`, () => {
    const r = audited(tampered(c.file, c.edit));
    const f = failed(r);
    assert.equal(f.length, 1, JSON.stringify(f));
    assert.equal(f[0].check, 'replay', f[0].detail);
    assert.match(f[0].detail, c.reason);
    for (const x of r.results.filter((y) => y.check !== 'replay')) assert.equal(x.status, 'passed', `${x.check}: ${x.detail}`);
  });
}

test('the corpus generator and the SPEC vectors use one deck rule (SPEC §2)', () => {
  const deck = R.unshuffled(2, true);
  assert.equal(deck.length, 108);
  assert.equal(A.cardText(deck[53]), 'RJ');
  assert.equal(A.cardText(deck[54]), '2c#1');
  assert.deepEqual(R.vectorDeck(['As'], R.unshuffled(1, false)).slice(0, 3).map(A.cardText), ['As', '2c', '2d']);
});

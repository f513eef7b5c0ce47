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
import { readFileSync, readdirSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
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

/**
 * What of a corpus line differs, or null: the §13.1 outputs, then (when the
 * line has them) the settings' normal form, the memory's (a memory the Rust
 * rules wrote is its own form) and each action's auto (timeout) action.
 */
function corpusDiffers(v) {
  const trace = { marks: [], autos: [] };
  const what = differs(R.replay(v, trace), v);
  if (what) return what;
  if ('settings_form' in v) {
    try {
      assert.deepStrictEqual(R.normalizeSettings(v.game, v.settings), v.settings_form);
    } catch {
      return `settings form: TypeScript ${JSON.stringify(R.normalizeSettings(v.game, v.settings))}, Rust ${JSON.stringify(v.settings_form)}`;
    }
  }
  try {
    assert.deepStrictEqual(R.normalizeMemory(v.game, v.memory), v.memory);
  } catch {
    return `memory form: TypeScript ${JSON.stringify(R.normalizeMemory(v.game, v.memory))}, Rust ${JSON.stringify(v.memory)}`;
  }
  if ('autos' in v) {
    if (trace.autos.length !== v.autos.length) return `autos: TypeScript traced ${trace.autos.length}, Rust ${v.autos.length}`;
    for (let i = 0; i < v.autos.length; i++) {
      try {
        assert.deepStrictEqual(trace.autos[i], v.autos[i]);
      } catch {
        return `auto action before action ${i}: TypeScript ${JSON.stringify(trace.autos[i])}, Rust ${JSON.stringify(v.autos[i])}`;
      }
    }
  }
  return null;
}

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
          what = corpusDiffers(v);
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

/**
 * A fixture transcript with `edit(bodies)` applied (then `rewrite(text, i)`
 * on each edited body's text, for what JSON.stringify cannot write),
 * chained and signed again by the test's dealer key.
 */
function tampered(file, edit, rewrite = (x) => x) {
  const t = A.parseTranscript(gunzipSync(readFileSync(join(fixtures, file))).toString('utf8'));
  const bodies = t.events.map((e) => JSON.parse(e.bodyText));
  const texts = t.events.map((e) => e.bodyText);
  for (const i of edit(bodies)) texts[i] = rewrite(JSON.stringify(bodies[i]), i);
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

const PLAYER = process.env.CLAW_PLAYER_BIN;

/** `claw-player audit --json` on `text`: the Rust auditor's verdict (`ok`, `check`, `detail`). */
function rustVerdict(text) {
  const work = mkdtempSync(join(tmpdir(), 'claw-forms-'));
  try {
    const file = join(work, 'hand.jsonl');
    writeFileSync(file, text);
    const run = spawnSync(PLAYER, ['audit', '--json', file], { encoding: 'utf8', timeout: 120_000 });
    return JSON.parse(run.stdout.trim().split('\n')[0]);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
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
    what: 'a Dou Di Zhu play passed off as a timeout though the auto action differs',
    file: 'dou-di-zhu-1.jsonl.gz',
    edit: (b) => {
      const i = b.findIndex((x) => x.type === 'action-result' && x.action.type === 'play' && x.action.cards.length > 1);
      const { seat, action, public_state } = b[i];
      b[i] = { type: 'timeout-action', seat, action, reason: 'timeout', public_state };
      return [i];
    },
    reason: /timeout action \d+ .* of seat \d is .*, the game's auto action is \{"type":"(pass|play)"/,
  },
  {
    what: 'a Guandan play passed off as a timeout though the auto action differs',
    file: 'guandan-double-up.jsonl.gz',
    edit: (b) => {
      const i = b.findIndex((x) => x.type === 'action-result' && x.action.type === 'play' && x.action.cards.length > 1);
      const { seat, action, public_state } = b[i];
      b[i] = { type: 'timeout-action', seat, action, reason: 'disconnected', public_state };
      return [i];
    },
    reason: /timeout action \d+ .* of seat \d is .*, the game's auto action is \{"type":"(pass|play)"/,
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
    const text = tampered(c.file, c.edit);
    const r = audited(text);
    const f = failed(r);
    assert.equal(f.length, 1, JSON.stringify(f));
    assert.equal(f[0].check, 'replay', f[0].detail);
    assert.match(f[0].detail, c.reason);
    for (const x of r.results.filter((y) => y.check !== 'replay')) assert.equal(x.status, 'passed', `${x.check}: ${x.detail}`);
    if (PLAYER) assert.equal(rustVerdict(text).check, 'replay', 'the Rust auditor fails it under replay too');
  });
}

test('Dou Di Zhu and Guandan passes taken as timeouts pass: the auto action while a play is on the table', () => {
  for (const file of ['dou-di-zhu-1.jsonl.gz', 'guandan-double-up.jsonl.gz']) {
    let n = 0;
    const text = tampered(file, (b) => {
        const at = [];
        b.forEach((x, i) => {
          if (x.type === 'action-result' && x.action.type === 'pass' && n < 3) {
            b[i] = { type: 'timeout-action', seat: x.seat, action: x.action, reason: 'timeout', public_state: x.public_state };
            at.push(i);
            n++;
          }
        });
        return at;
      });
    const r = audited(text);
    assert.ok(n > 0, `${file} has passes`);
    assert.deepEqual(failed(r), [], file);
    if (PLAYER) assert.equal(rustVerdict(text).ok, true, `${file}: the Rust auditor passes it too`);
    const base = audited(tampered(file, () => [])).results.find((x) => x.check === 'replay').detail;
    const count = (d) => Number(/\((\d+) timeouts\)/.exec(d)[1]);
    assert.equal(count(r.results.find((x) => x.check === 'replay').detail), count(base) + n);
  }
});

// ---------- the settings and table memory of game-start in the game's own form

const enc = new TextEncoder();

/** game-start (event 1) with `edit(settings, memory)` → [settings, memory]: the room configuration's settings and the config hash follow, so only the form can fail. */
function startEdited(file, edit, rewrite) {
  return tampered(
    file,
    (b) => {
      const gs = b[1];
      [gs.settings, gs.memory] = edit(structuredClone(gs.settings), structuredClone(gs.memory));
      if (gs.room_config) gs.room_config.settings = gs.settings;
      const text = JSON.stringify(gs.settings);
      const z = new Uint8Array([0]);
      gs.config_hash = A.hex(A.sha(A.concat(enc.encode('claw/v1/config'), z, enc.encode(gs.game), z, enc.encode(gs.game_version), z, enc.encode(text))));
      return [1];
    },
    rewrite,
  );
}

const FORMS = [
  ['Dou Di Zhu settings without a default (max_multiplier)', 'dou-di-zhu-1.jsonl.gz', (s, m) => [(delete s.max_multiplier, s), m], /settings .* are not the game's own form/],
  // Settings the rules refuse fail first where the canonical deck needs them (check 7), as in Rust.
  ['Dou Di Zhu settings with an unknown key', 'dou-di-zhu-1.jsonl.gz', (s, m) => [{ ...s, bonus: 1 }, m], /canonical deck: bad settings: unknown field `bonus`/, 'shuffle'],
  ['Guandan settings with an unknown purity', 'guandan-double-up.jsonl.gz', (s, m) => [{ ...s, purity: 'none' }, m], /canonical deck: bad settings: purity/, 'shuffle'],
  ['Guandan settings without a default (wild_count)', 'guandan-double-up.jsonl.gz', (s, m) => [(delete s.wild_count, s), m], /settings .* are not the game's own form/],
  ['Guandan settings naming the default purity (left out of the form)', 'guandan-double-up.jsonl.gz', (s, m) => [{ ...s, purity: 'stand-in' }, m], /settings .* are not the game's own form/],
  ["Hold'em memory with a member the rules ignore", 'texas-holdem-1.jsonl.gz', (s, m) => [s, { ...m, note: 'x' }], /memory .* are not the game's own form/],
  ['Dou Di Zhu memory with a member the rules ignore', 'dou-di-zhu-1.jsonl.gz', (s, m) => [s, { ...m, landlord: 0 }], /memory .* are not the game's own form/],
  ['Dou Di Zhu memory of the wrong type', 'dou-di-zhu-1.jsonl.gz', (s, m) => [s, { first_bidder: '1' }], /memory: the rules refuse them/],
  ['Sam Gong memory without hands_played', 'sam-gong-1.jsonl.gz', (s, m) => [s, (delete m.hands_played, m)], /memory .* are not the game's own form/],
  ['Blackjack memory with a member', 'blackjack-1.jsonl.gz', (s, m) => [s, { shoe: 3 }], /memory .* are not the game's own form/],
  ['Guandan memory with an unknown member', 'guandan-double-up.jsonl.gz', (s, m) => [s, { ...m, bonus: 0 }], /memory: the rules refuse them: .*unknown field `bonus`/],
  ['Guandan memory with an unset end written as null', 'guandan-double-up.jsonl.gz', (s, m) => [s, { ...m, end_request: null }], /memory .* are not the game's own form/],
];

for (const [what, file, edit, reason, check = 'replay'] of FORMS) {
  test(`check ${check === 'replay' ? 13 : 7} refuses game-start ${what} (${file}), as the Rust auditor`, (t) => {
    const text = startEdited(file, edit);
    const f = failed(audited(text));
    assert.equal(f.length, 1, JSON.stringify(f));
    assert.equal(f[0].check, check, f[0].detail);
    assert.match(f[0].detail, reason);
    if (!PLAYER) {
      t.diagnostic('the Rust verdict is not compared: CLAW_PLAYER_BIN is not set (scripts/test-web.sh sets it)');
      return;
    }
    const rust = rustVerdict(text);
    assert.equal(rust.ok, false, `the Rust auditor refuses it too: ${JSON.stringify(rust)}`);
    assert.equal(rust.check, check, `Rust ${rust.detail}; JS ${f[0].detail}`);
  });
}

test('a Guandan timeout under timeout_action ai (the reference AI, not specified) is not compared, and the replay says so', () => {
  const text = tampered('guandan-double-up.jsonl.gz', (b) => {
    const gs = b[1];
    gs.settings.timeout_action = 'ai';
    gs.room_config.settings = gs.settings;
    const z = new Uint8Array([0]);
    gs.config_hash = A.hex(A.sha(A.concat(enc.encode('claw/v1/config'), z, enc.encode(gs.game), z, enc.encode(gs.game_version), z, enc.encode(JSON.stringify(gs.settings)))));
    const i = b.findIndex((x) => x.type === 'action-result' && x.action.type === 'pass');
    b[i] = { type: 'timeout-action', seat: b[i].seat, action: b[i].action, reason: 'timeout', public_state: b[i].public_state };
    return [1, i];
  });
  const r = audited(text);
  assert.deepEqual(failed(r), []);
  assert.match(r.results.find((x) => x.check === 'replay').detail, /\d+ timeout actions not compared: this table's auto action is the reference AI/);
});

test("check 7 refuses a declared deck that is not the game's canonical deck, as the Rust auditor", () => {
  const text = tampered('dou-di-zhu-1.jsonl.gz', (b) => {
    const d = b[1].deck;
    [d[0], d[1]] = [d[1], d[0]];
    return [1];
  });
  const f = failed(audited(text));
  assert.equal(f.length, 1, JSON.stringify(f));
  assert.equal(f[0].check, 'shuffle');
  assert.match(f[0].detail, /declared deck is not the game's canonical deck/);
  if (PLAYER) assert.equal(rustVerdict(text).check, 'shuffle');
});

test('check 13 refuses an integer written as 1.0 in game-start memory, as the Rust rules (JavaScript reads it as 1)', () => {
  const text = startEdited('dou-di-zhu-1.jsonl.gz', (s, m) => [s, m], (t) => t.replace('"first_bidder":1', '"first_bidder":1.0'));
  assert.ok(text.includes('"first_bidder":1.0'));
  const f = failed(audited(text));
  assert.equal(f.length, 1, JSON.stringify(f));
  assert.match(f[0].detail, /memory \{"first_bidder":1\.0\}: a number is not written as an integer/);
  if (PLAYER) assert.equal(rustVerdict(text).check, 'replay');
});

test("check 3 refuses room settings writing 1.0 where game-start's settings write 1, as the Rust auditor (JavaScript reads them alike)", () => {
  const text = startEdited('dou-di-zhu-1.jsonl.gz', (s, m) => [s, m], (t) => t.replace(/("room_config":\{.*?"settings":\{[^}]*"base":)1/, '$11.0'));
  assert.match(text, /"base":1\.0/);
  const f = failed(audited(text));
  assert.equal(f.length, 1, JSON.stringify(f));
  assert.equal(f[0].check, 'structure');
  assert.match(f[0].detail, /other settings than its room configuration states/);
  if (PLAYER) assert.equal(rustVerdict(text).check, 'structure');
});

test('the settings and memory of game-start in their form pass, re-hashed (the edit itself breaks nothing)', () => {
  for (const file of ['dou-di-zhu-1.jsonl.gz', 'guandan-double-up.jsonl.gz', 'texas-holdem-1.jsonl.gz', 'sam-gong-1.jsonl.gz', 'blackjack-1.jsonl.gz']) {
    const text = startEdited(file, (s, m) => [s, m]);
    const r = audited(text);
    assert.deepEqual(failed(r), [], file);
    if (PLAYER) assert.equal(rustVerdict(text).ok, true, `${file}: the Rust auditor passes it too`);
    assert.match(r.results.find((x) => x.check === 'replay').detail, /public states are not compared/);
  }
});

test('the corpus generator and the SPEC vectors use one deck rule (SPEC §2)', () => {
  const deck = R.unshuffled(2, true);
  assert.equal(deck.length, 108);
  assert.equal(A.cardText(deck[53]), 'RJ');
  assert.equal(A.cardText(deck[54]), '2c#1');
  assert.deepEqual(R.vectorDeck(['As'], R.unshuffled(1, false)).slice(0, 3).map(A.cardText), ['As', '2c', '2d']);
});

test("Sam Gong's tutorial script: the deck each hand deals (docs/games/sam-gong.md §9), null at a shuffling table", () => {
  const text = (d) => d.slice(0, 6).map((c) => A.cardText(c)).join(' ');
  // The NPC banks at seat 1 by default: the learner's block (seat 0) first.
  assert.equal(text(R.scriptedDeck('sam-gong', { tutorial: true }, 0)), 'Ks Qh Jd As 2c 4d');
  assert.equal(text(R.scriptedDeck('sam-gong', { tutorial: true }, 4)), '5s Ah 9d 3d Kc Qs', 'the script cycles');
  assert.equal(text(R.scriptedDeck('sam-gong', { tutorial: true, banker_seat: 0 }, 2)), '2s 4h Qd 6h Js Qc');
  const three = R.scriptedDeck('sam-gong', { tutorial: true, banker_seat: 2 }, 0);
  assert.equal(three.slice(6, 9).map((c) => A.cardText(c)).join(' '), 'As 2c 4d', 'the NPC at seat 2, seat 1 dealt from the rest');
  assert.equal(new Set(three).size, 52);
  assert.equal(R.scriptedDeck('sam-gong', {}, 0), null);
  assert.equal(R.scriptedDeck('texas-holdem', {}, 0), null);
});

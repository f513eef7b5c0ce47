// The browser's Dou Di Zhu and Guandan replays (web/src/replay/dou_di_zhu.ts,
// guandan.ts, written from SPEC.md §13.1/§14 and the game pages) against the
// Rust replay: the SPEC.md §13.1 game vectors, and, when CLAW_REPLAY_CORPUS
// names a directory of `<game>.jsonl` corpora (games/examples/replay_corpus.rs,
// one §13.1 vector per line), every hand of these two games there.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import * as DDZ from '../dist-test/replay/dou_di_zhu.mjs';
import * as GD from '../dist-test/replay/guandan.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const REPLAY = { 'dou-di-zhu': DDZ.replay, guandan: GD.replay };
const OUTPUTS = ['events', 'result', 'details', 'memory_after'];

/** The JSON lines of the code block under "### 13.1 Game vectors". */
function specVectors() {
  const spec = readFileSync(join(here, '../../SPEC.md'), 'utf8');
  const section = spec.slice(spec.indexOf('\n### 13.1 Game vectors'));
  const body = section.slice(section.indexOf('\n```') + 4);
  const block = body.slice(body.indexOf('\n') + 1, body.indexOf('\n```', body.indexOf('\n') + 1));
  return block.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
}

/** The first output that differs, in detail (the first differing event by index), or null. */
function disagreement(v) {
  let got;
  const trace = { marks: [], autos: [] };
  try {
    got = REPLAY[v.game](v, trace);
  } catch (e) {
    return `the TypeScript replay refused it: ${e.message}`;
  }
  if (trace.autos.length !== v.actions.length) return `traced ${trace.autos.length} auto actions for ${v.actions.length} actions`;
  // The corpus carries the Rust auto (timeout) action before each action.
  for (let i = 0; i < (v.autos ?? []).length; i++) {
    const [a, b] = [JSON.stringify(trace.autos[i]), JSON.stringify(v.autos[i])];
    try {
      assert.deepStrictEqual(trace.autos[i], v.autos[i]);
    } catch {
      return `auto action before action ${i}: TypeScript ${a}, Rust ${b}`;
    }
  }
  for (const k of OUTPUTS) {
    try {
      assert.deepStrictEqual(got[k], v[k]);
    } catch {
      if (k === 'events') {
        const n = Math.max(got.events.length, v.events.length);
        for (let i = 0; i < n; i++) {
          const [a, b] = [JSON.stringify(got.events[i]), JSON.stringify(v.events[i])];
          if (a !== b) return `events[${i}]: TypeScript ${a}, Rust ${b}`;
        }
      }
      return `${k}: TypeScript ${JSON.stringify(got[k])}, Rust ${JSON.stringify(v[k])}`;
    }
  }
  return null;
}

test('SPEC §13.1 vectors of Dou Di Zhu and Guandan replay equal', () => {
  const vectors = specVectors().filter((v) => v.game in REPLAY);
  const per = { 'dou-di-zhu': 0, guandan: 0 };
  for (const v of vectors) {
    assert.equal(disagreement(v), null, `SPEC §13.1 vector ${v.name}`);
    per[v.game]++;
  }
  assert.ok(per['dou-di-zhu'] >= 1 && per.guandan >= 3, `vectors found: ${JSON.stringify(per)}`);
});

test('an illegal action is refused with the step named', () => {
  const [ddz] = specVectors().filter((v) => v.game === 'dou-di-zhu');
  // Seat 1 answers the landlord's straight with a pair: it does not beat it.
  const bad = { ...ddz, actions: [ddz.actions[0], ddz.actions[1], [1, { type: 'play', cards: ['3s', '4d'] }]] };
  assert.throws(() => DDZ.replay(bad), /^Error: action 2 .*does not beat the straight 3 to A/);
  const [gd] = specVectors().filter((v) => v.game === 'guandan');
  // Seat 1 gives position 5 (2d) as tribute though it holds RJ (position 1).
  const tribute = { ...gd, actions: [[1, { type: 'tribute', position: 5 }]] };
  assert.throws(() => GD.replay(tribute), /^Error: action 0 .*not the highest card/);
  // A position another seat holds is a card not in the hand.
  const other = { ...gd, actions: [[1, { type: 'tribute', position: 0 }]] };
  assert.throws(() => GD.replay(other), /^Error: action 0 .*card not in hand: deck position 0/);
  // Unfinished hands are refused.
  assert.throws(() => GD.replay({ ...gd, actions: gd.actions.slice(0, 4) }), /not over after 4 actions/);
});

for (const game of Object.keys(REPLAY)) {
  test(`${game}: the Rust replay corpus replays equal`, (t) => {
    const dir = process.env.CLAW_REPLAY_CORPUS;
    if (!dir) {
      t.skip('skipped: CLAW_REPLAY_CORPUS is not set');
      return;
    }
    const file = join(dir, `${game}.jsonl`);
    assert.ok(existsSync(file), `${file} exists`);
    const lines = readFileSync(file, 'utf8').split('\n').filter((l) => l.trim());
    assert.ok(lines.length > 0, `${file} holds hands`);
    let agreed = 0;
    for (const [i, line] of lines.entries()) {
      const v = JSON.parse(line);
      if (v.game !== game) continue;
      const d = disagreement(v);
      assert.equal(d, null, `${file} line ${i + 1}${v.name ? ` (${v.name})` : ''}: ${d}\ninput: ${JSON.stringify({ ...v, events: undefined })}`);
      agreed++;
    }
    assert.ok(agreed > 0, `${file} holds ${game} hands`);
    t.diagnostic(`${game}: ${agreed}/${agreed} hands agree`);
  });
}

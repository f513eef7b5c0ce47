// Real transcripts of the five games dealt by the Rust engine (Guandan with
// single and double tribute, face down and face up; hands with a
// commission), honest and tampered, each with the Rust auditor's verdict
// (fixtures/cases.json). The browser audit must reach the same verdict: the
// same passed and skipped checks, the same viewer's cards, or the same
// failed check. Regenerate the fixtures with
//   cargo run -p claw-engine --features test-game --example web_fixtures
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import * as A from '../dist-test/audit.mjs';

const dir = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
const cases = JSON.parse(readFileSync(join(dir, 'cases.json'), 'utf8'));

function viewerOf(file) {
  if (!file) return undefined;
  const key = JSON.parse(readFileSync(join(dir, file), 'utf8'));
  assert.equal(key.format, 'claw-identity-v1');
  return { encryptionSecret: A.unhex(key.encryption_secret, 32, 'encryption_secret'), playerId: key.player_id };
}

test('the fixtures cover the five games, tributes, commissions and tamperings', () => {
  const games = new Set(cases.map((c) => c.file.split('-').slice(0, -1).join('-')));
  for (const g of ['texas-holdem', 'blackjack', 'dou-di-zhu', 'sam-gong']) assert.ok(games.has(g), g);
  const transfers = cases.filter((c) => c.rust.ok).map((c) => c.rust.transfers);
  assert.ok(transfers.includes(2) && transfers.includes(4), 'single and double tribute');
  assert.ok(cases.some((c) => c.rust.ok && c.commission), 'a hand with a commission');
  for (const check of ['structure', 'deal-order', 'opened-cards', 'commission']) {
    assert.ok(cases.some((c) => c.rust.check === check), `a tampering failing ${check}`);
  }
});

for (const c of cases) {
  const opts = { viewer: viewerOf(c.key), commission: c.commission ?? undefined };
  test(`${c.file}${c.key ? ' (with key)' : ''}${c.commission != null ? ` (room commission ${c.commission})` : ''}: ${c.rust.ok ? 'passes' : `fails ${c.rust.check}`} as in Rust`, () => {
    const text = gunzipSync(readFileSync(join(dir, c.file))).toString('utf8');
    const r = A.audit(text, opts);
    const failed = r.results.filter((x) => x.status === 'failed');
    const names = (status) => r.results.filter((x) => x.status === status).map((x) => x.check);
    if (c.rust.ok) {
      assert.deepEqual(failed, [], 'no failure');
      assert.ok(r.ok);
      assert.deepEqual(names('passed'), c.rust.passed, 'passed checks');
      assert.deepEqual(names('skipped'), c.rust.skipped, 'skipped checks');
      assert.deepEqual(r.myCards.map((m) => m.position), c.rust.my_cards, "the viewer's cards, dealt and transferred");
      assert.equal(r.events.filter((e) => e.body.type === 'card-transfer').length, c.rust.transfers);
    } else {
      assert.ok(!r.ok);
      assert.equal(failed.length, 1);
      assert.equal(failed[0].check, c.rust.check, `JS: ${failed[0].detail}\nRust: ${c.rust.detail}`);
      // Every check run before the failure passed (commission runs after
      // merkle-root, where the Rust auditor runs it: at game-start).
      const order = A.CHECKS.filter((x) => x !== 'replay' && x !== 'commission');
      order.splice(order.indexOf('merkle-root') + 1, 0, 'commission');
      const before = order.slice(0, order.indexOf(c.rust.check));
      assert.deepEqual(names('passed').filter((x) => before.includes(x)).sort(), before.sort());
    }
  });
}

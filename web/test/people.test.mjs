// People at a table (SPEC §9.8) with the browser's play client against the
// real `claw-dealer` (CLAW_DEALER_BIN): a person answers the ready check and
// votes for a rematch as the page's buttons do; a watcher follows a running
// table through the live feed, every event checked and each hand audited,
// and sees no hidden card before the hand's end; the dealer's own AIs are
// marked at their seats and Sam Gong's banker queue reaches the page.
//
// Without the binaries the tests are skipped and say so: scripts/test-web.sh
// sets CLAW_DEALER_BIN and CLAW_PLAYER_BIN.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as K from '../dist-test/play/key.mjs';
import * as C from '../dist-test/play/client.mjs';

const DEALER = process.env.CLAW_DEALER_BIN;
const PLAYER = process.env.CLAW_PLAYER_BIN;
const skip = !DEALER || !PLAYER
  ? 'CLAW_DEALER_BIN and CLAW_PLAYER_BIN are not set (scripts/test-web.sh sets them to the built binaries)'
  : typeof WebSocket === 'undefined'
    ? 'this Node has no global WebSocket (Node >= 22, or run with --experimental-websocket)'
    : false;

/** Starts `claw-dealer ARGS` (a fresh data directory); resolves with its first invite URL. */
async function dealer(t, args) {
  const dir = mkdtempSync(join(tmpdir(), 'claw-people-'));
  const proc = spawn(DEALER, ['--listen', '127.0.0.1:0', '--http-listen', 'off', '--data-dir', join(dir, 'data'), '--chips', 'local', ...args(dir)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  proc.stderr.on('data', (d) => (err += d));
  const procs = [proc];
  t.after(() => {
    for (const p of procs) p.kill();
    rmSync(dir, { recursive: true, force: true });
  });
  const invite = await new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
      const line = out.split('\n').find((l) => l.startsWith('ws://'));
      if (line) resolve(line.trim());
    });
    proc.on('exit', (c) => reject(new Error(`claw-dealer exited (${c}): ${err}`)));
  });
  const bots = (n, strategy = 'simple') => {
    for (let i = 0; i < n; i++) procs.push(spawn(PLAYER, ['join', invite, '--bot', strategy, '--quiet'], { stdio: 'ignore' }));
  };
  return { invite, bots };
}

/** Resolves once `until(state)` holds; `onState` runs on every change first. */
function waitFor(client, until, timeoutMs, onState = () => {}) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out; log: ${JSON.stringify(client.state.log.slice(-12))}`)), timeoutMs);
    const step = (s) => {
      try {
        onState(s);
      } catch (e) {
        clearTimeout(timer);
        reject(e);
        return;
      }
      if (until(s)) {
        clearTimeout(timer);
        resolve(s);
      }
    };
    client.onChange = step;
    step(client.state);
  });
}

const type = (t, ty) => t.actions.find((o) => o.action.type === ty && o.affordable);

test('a person answers the ready check and votes for a rematch; the hands verify', { skip, timeout: 120_000 }, async (t) => {
  const { invite } = await dealer(t, (dir) => {
    const rooms = join(dir, 'rooms.toml');
    writeFileSync(rooms, `[[room]]
id = "bj"
game = "blackjack"
min_players = 1
between_hands = "300ms"
action_timeout = "30s"
house_bankroll = 1000000
ready_check = "30s"
rematch_vote = "30s"
`);
    return ['--rooms', rooms];
  });
  const client = new C.PlayClient({ ...C.parseInvite(invite), identity: K.generateIdentity() });
  await client.connect();
  const votes = [];
  const audited = new Set();
  let lastVote = null;
  let acting = '';
  await waitFor(client, () => audited.size >= 2, 110_000, (s) => {
    assert.equal(s.failure, null, JSON.stringify(s.failure));
    if (s.vote && s.vote !== lastVote) {
      lastVote = s.vote;
      votes.push(`${s.vote.kind}:${s.vote.state}`);
    }
    // The page's buttons: shown while the vote asks this player.
    if (client.asked()) {
      if (s.vote.kind === 'ready') client.ready();
      else client.rematchVote(true);
    }
    if (s.hand?.audit && s.hand.result) {
      assert.equal(s.hand.audit.ok, true, JSON.stringify(s.hand.audit.results.filter((r) => r.status === 'failed')));
      audited.add(s.hand.handId);
    }
    const turn = s.turn;
    if (turn && `${turn.handId}/${turn.seq}` !== acting) {
      acting = `${turn.handId}/${turn.seq}`;
      const bet = type(turn, 'bet');
      const action = bet ? { ...bet.action, amount: bet.range[0] } : (type(turn, 'no-insurance') ?? type(turn, 'stand') ?? turn.actions[0]).action;
      setTimeout(() => client.act(action), 0);
    }
  });
  client.close();
  assert.ok(votes.includes('ready:open') && votes.includes('ready:passed'), votes.join());
  assert.ok(votes.includes('rematch:open') && votes.includes('rematch:passed'), votes.join());
  assert.ok(votes.indexOf('ready:passed') < votes.indexOf('rematch:passed'), votes.join());
});

test('a watcher follows the running table through the live feed: checked, audited, no hidden card early', { skip, timeout: 120_000 }, async (t) => {
  const { invite, bots } = await dealer(t, () => ['--game', 'texas-holdem', '--between-hands', '300ms', '--timeout', '20s']);
  bots(2);
  const watcher = new C.PlayClient({ ...C.parseInvite(invite), identity: K.generateIdentity(), watch: true, reconnect: false });
  await watcher.connect();
  assert.equal(watcher.state.status, 'watching');
  assert.equal(watcher.state.seat, null);
  assert.equal(watcher.state.watchDelay, 5, 'the room\'s default delay');
  const s = await waitFor(watcher, (x) => !!x.hand?.audit && !!x.hand.result, 110_000, (x) => {
    assert.equal(x.failure, null, JSON.stringify(x.failure));
    assert.equal(x.turn, null, 'a watcher is never offered a turn');
    // Before the hand's end a watcher sees a player's card only once a `reveal` opened it to all.
    if (x.hand && !x.hand.result) {
      for (const c of x.hand.seats.flatMap((seat) => seat.cards)) {
        assert.ok(c.card === null || x.log.some((l) => l.startsWith('revealed ') && l.includes(c.card)), `${c.card} seen before its reveal`);
      }
    }
  });
  watcher.close();
  assert.equal(s.hand.audit.ok, true, JSON.stringify(s.hand.audit.results.filter((r) => r.status === 'failed')));
  assert.equal(s.hand.seat, null, 'the watcher holds no seat');
  assert.ok(s.hand.signatures >= 1, 'dealer signatures verified live');
});

test('the dealer\'s AI seat is marked, and Sam Gong\'s banker queue reaches the page', { skip, timeout: 120_000 }, async (t) => {
  const { invite } = await dealer(t, () => [
    '--game', 'sam-gong', '--ai-seats', '1s', '--max-players', '2', '--settings', '{"tutorial":true}',
    '--between-hands', '300ms', '--timeout', '20s', '--reveal', 'full',
  ]);
  const person = K.generateIdentity();
  const client = new C.PlayClient({ ...C.parseInvite(invite), identity: person });
  await client.connect();
  let acting = '';
  const s = await waitFor(client, (x) => !!x.hand?.result && x.bankerQueue !== null, 110_000, (x) => {
    assert.equal(x.failure, null, JSON.stringify(x.failure));
    const turn = x.turn;
    if (turn && `${turn.handId}/${turn.seq}` !== acting) {
      acting = `${turn.handId}/${turn.seq}`;
      const bet = type(turn, 'bet');
      setTimeout(() => client.act(bet ? { ...bet.action, amount: bet.range[0] } : (type(turn, 'call') ?? type(turn, 'fold')).action), 0);
    }
  });
  client.close();
  assert.deepEqual(s.hand.seats.map((x) => x.houseAi), [false, true], 'the learner at seat 0, the house AI at seat 1');
  assert.equal(s.hand.seats[0].id, person.playerId);
  assert.ok(Array.isArray(s.bankerQueue) && s.bankerQueue.length >= 1, JSON.stringify(s.bankerQueue));
  assert.ok(s.bankerQueue.every((id) => s.hand.seats.some((x) => x.id === id)), 'the queue names the table\'s players');
  // The tutorial's deck is the game's script for the hand, checked card by card (SPEC §11.2 check 7).
  assert.equal(s.hand.audit.ok, true, JSON.stringify(s.hand.audit.results.filter((r) => r.status === 'failed')));
  const shuffle = s.hand.audit.results.find((r) => r.check === 'shuffle');
  assert.match(shuffle.detail, /dealt in the game's scripted order for this hand/);
});

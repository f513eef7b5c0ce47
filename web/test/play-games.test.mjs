// A scripted person plays a whole hand of each of the five games with the
// browser's play client (web/src/play, bundled for Node) against the real
// `claw-dealer` (CLAW_DEALER_BIN), the other seats taken by SDK bots
// (`claw-player --bot`, CLAW_PLAYER_BIN). Its choices go through the table
// page's own game code (web/src/play/games): the hand it holds, and for Dou
// Di Zhu and Guandan the cards selected from that hand, matched against the
// offered plays, as the page's "Play" button does. Every event verifies live
// and the end-of-hand audit passes.
//
// Without the binaries the tests are skipped and say so: scripts/test-web.sh
// sets both variables.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as K from '../dist-test/play/key.mjs';
import * as C from '../dist-test/play/client.mjs';
import * as G from '../dist-test/play/games/index.mjs';
import * as S from '../dist-test/play/games/select.mjs';

const DEALER = process.env.CLAW_DEALER_BIN;
const PLAYER = process.env.CLAW_PLAYER_BIN;
const skip = !DEALER || !PLAYER
  ? 'CLAW_DEALER_BIN and CLAW_PLAYER_BIN are not set (scripts/test-web.sh sets them to the built binaries)'
  : typeof WebSocket === 'undefined'
    ? 'this Node has no global WebSocket (Node >= 22, or run with --experimental-websocket)'
    : false;

// ---------- the selection rules of the page, without a dealer

test('a selection is legal exactly when it is an offered play (Dou Di Zhu by ranks, Guandan by faces)', () => {
  const turn = (plays) => ({ actions: [{ action: { type: 'pass' }, cost: 0, affordable: true }, ...plays.map((cards) => ({ action: { type: 'play', cards }, cost: 0, affordable: true }))] });
  const ddz = S.playsOf(turn([['3c', '3d'], ['9c', 'Tc', 'Jc', 'Qh', 'Kc']]), S.rankOf);
  assert.equal(ddz.length, 2);
  // Suits never matter in Dou Di Zhu: 3h 3s is the offered pair of 3.
  assert.equal(S.matching(['3h', '3s'], ddz, S.rankOf).length, 1);
  assert.equal(S.matching(['3h'], ddz, S.rankOf).length, 0);
  assert.equal(S.matching(['Kd', 'Qc', 'Jh', 'Ts', '9d'], ddz, S.rankOf).length, 1);
  // What can still join a single 3: only the other 3.
  assert.deepEqual([...S.extendable(['3h'], ddz, S.rankOf)].sort(), ['3']);
  // Guandan: faces (the two packs' copies are one face), suits count.
  const gd = S.playsOf(turn([['3d#1', '4d', '5d', '6d', '2h#1']]), S.faceOf);
  assert.equal(S.matching(['3d', '4d', '5d', '6d', '2h'], gd, S.faceOf).length, 1);
  assert.equal(S.matching(['3c', '4d', '5d', '6d', '2h'], gd, S.faceOf).length, 0);
  // Picking an offered play's cards from a hand: the very ids first, else the same class.
  const hand = [{ position: 0, card: '3d' }, { position: 4, card: '3d#1' }, { position: 8, card: '2h' }];
  assert.deepEqual(S.pick(hand, ['3d#1', '2h#1'], S.faceOf), [4, 8]);
  assert.equal(S.pick(hand, ['4d'], S.faceOf), null);
});

test('the hand held: dealt and transferred cards, the landlord\'s kitty, minus its own plays', () => {
  const h = {
    seat: 1,
    seats: [{ cards: [] }, { cards: [{ position: 1, card: '3c' }, { position: 4, card: '3d' }, { position: 7, card: 'Ks' }] }],
    actions: [{ seat: 0, action: { type: 'play', cards: ['Ks'] } }, { seat: 1, action: { type: 'play', cards: ['3c', 'RJ'] } }],
    publicState: { landlord: 1, kitty: ['RJ', '5h', '6h'], cards_left: [0, 4] },
    game: 'dou-di-zhu',
  };
  assert.deepEqual(G.gameUi('dou-di-zhu').hand(h).map((c) => c.card), ['3d', '5h', '6h', 'Ks']);
  assert.deepEqual(S.heldCards({ ...h, publicState: null }).map((c) => c.card), ['3d', 'Ks']);
});

// ---------- against a real dealer

/** A dealer with one room of `game`, this client seated first, then `bots` SDK bots. */
async function table(t, game, { bots, strategy = 'simple', args = [] }) {
  const dir = mkdtempSync(join(tmpdir(), `claw-play-${game}-`));
  const dealer = spawn(DEALER, [
    '--game', game, '--listen', '127.0.0.1:0', '--http-listen', 'off', '--data-dir', dir,
    '--chips', 'local', '--timeout', '30s', '--between-hands', '300ms', ...args,
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  dealer.stderr.on('data', (d) => (err += d));
  const invite = await new Promise((resolve, reject) => {
    let out = '';
    dealer.stdout.on('data', (d) => {
      out += d;
      const line = out.split('\n').find((l) => l.startsWith('ws://'));
      if (line) resolve(line.trim());
    });
    dealer.on('exit', (c) => reject(new Error(`claw-dealer exited (${c}): ${err}`)));
  });
  const client = new C.PlayClient({ ...C.parseInvite(invite), identity: K.generateIdentity(), name: 'person' });
  await client.connect();
  assert.equal(client.state.seat, 0, 'the person sits first');
  const procs = [];
  for (let i = 0; i < bots; i++) procs.push(spawn(PLAYER, ['join', invite, '--bot', strategy, '--quiet'], { stdio: 'ignore' }));
  t.after(() => {
    client.close();
    for (const p of procs) p.kill();
    dealer.kill();
    rmSync(dir, { recursive: true, force: true });
  });
  return client;
}

/**
 * The person: on each turn `choose(turn, hand)` returns the action to send
 * (or null to let it be); runs until a hand this player acted in has its
 * complete audit (every secret published), or a check fails.
 */
function playHand(client, choose, timeoutMs) {
  const acted = [];
  const ended = new Map();
  let rejected = 0;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out; log: ${JSON.stringify(client.state.log.slice(-12))}`)), timeoutMs);
    let busy = false;
    const step = (s) => {
      if (s.notice?.startsWith('action refused')) {
        rejected += 1;
        s.notice = null;
      }
      const h = s.hand;
      // A hand this person acted in, ended: kept, its audit completed later when the reveal is deferred.
      if (h?.result && acted.some((a) => a.handId === h.handId) && !ended.has(h.handId)) ended.set(h.handId, structuredClone(h));
      for (const l of s.lateAudits) if (ended.has(l.handId)) ended.get(l.handId).audit = l.audit;
      const done = [...ended.values()].find((x) => x.audit && !x.audit.results.some((r) => r.status === 'skipped' && r.check === 'reveal-complete'));
      if (s.failure || done) {
        clearTimeout(timer);
        resolve({ state: s, acted, rejected, hand: done ?? structuredClone(h) });
        return;
      }
      // A ready check or a rematch vote (Guandan's table asks both): answered yes, as the buttons do.
      if (client.asked()) {
        if (s.vote.kind === 'ready') client.ready();
        else client.rematchVote(true);
      }
      if (!s.turn || s.failure || busy) return;
      busy = true;
      setTimeout(() => {
        busy = false;
        const turn = client.state.turn;
        if (!turn) return;
        try {
          const action = choose(turn, client.state.hand);
          if (action) {
            client.act(action);
            acted.push({ handId: turn.handId, action });
          }
        } catch (e) {
          clearTimeout(timer);
          reject(e);
        }
      }, 0);
    };
    client.onChange = step;
    step(client.state);
  });
}

const type = (t, ty) => t.actions.find((o) => o.action.type === ty && o.affordable);

/** Every check of the hand's audit passed (the rules' replay is `claw-player audit`'s). */
function auditPassed(hand) {
  assert.ok(hand.audit, 'the hand was audited');
  assert.equal(hand.audit.ok, true, JSON.stringify(hand.audit.results.filter((r) => r.status === 'failed')));
  for (const c of ['dealer-signatures', 'hash-chain', 'structure', 'reveal-complete', 'seed-commitment', 'player-seeds', 'shuffle', 'leaves', 'merkle-root', 'deal-order', 'opened-cards', 'action-signatures']) {
    assert.equal(hand.audit.results.find((r) => r.check === c)?.status, 'passed', c);
  }
  assert.ok(hand.signatures >= 1);
  assert.ok(hand.result, 'the hand has its result');
}

/**
 * A card game's turn as the page plays it: a play is chosen among the offered
 * ones, its cards selected from the hand the page shows, and the selection
 * must be what the page's "Play" accepts.
 */
function cardTurn(game, same, prefer) {
  return (turn, h) => {
    const ui = G.gameUi(game);
    const hand = ui.hand(h);
    const plays = S.playsOf(turn, same);
    if (plays.length) {
      const p = prefer(plays);
      const positions = S.pick(hand, p.action.cards, same);
      assert.ok(positions, `the page's hand ${JSON.stringify(hand.map((c) => c.card))} holds the offered play ${p.action.cards}`);
      const cards = positions.map((pos) => hand.find((c) => c.position === pos).card);
      const ok = S.matching(cards, plays, same);
      assert.ok(ok.some((m) => m.index === p.index), 'the selection is the offered play');
      return { ...p.action, cards };
    }
    return null;
  };
}

const most = (plays) => plays.reduce((a, b) => (b.action.cards.length > a.action.cards.length ? b : a));

test('Texas Hold\'em: a whole hand, checking or calling', { skip, timeout: 90_000 }, async (t) => {
  const client = await table(t, 'texas-holdem', { bots: 2 });
  const r = await playHand(client, (turn) => (type(turn, 'check') ?? type(turn, 'call') ?? turn.actions[0]).action, 80_000);
  assert.equal(r.state.failure, null, JSON.stringify(r.state.failure));
  auditPassed(r.hand);
  assert.equal(r.hand.result.net.reduce((a, b) => a + b, 0), 0);
});

test('Blackjack: bet, hit once, stand; the house\'s cards drawn', { skip, timeout: 90_000 }, async (t) => {
  const client = await table(t, 'blackjack', { bots: 1 });
  let hits = 0;
  const r = await playHand(client, (turn) => {
    const bet = type(turn, 'bet');
    if (bet) return { ...bet.action, amount: bet.range[0] };
    if (type(turn, 'no-insurance')) return { type: 'no-insurance' };
    if (type(turn, 'hit') && hits === 0) {
      hits += 1;
      return { type: 'hit' };
    }
    return (type(turn, 'stand') ?? turn.actions[0]).action;
  }, 80_000);
  assert.equal(r.state.failure, null, JSON.stringify(r.state.failure));
  auditPassed(r.hand);
  assert.ok(r.acted.some((a) => a.action.type === 'bet'));
  const ps = r.hand.publicState;
  // The house's cards as the table draws them: every one known at the end, as the game's state says.
  assert.ok(r.hand.house.length >= 2);
  assert.deepEqual(r.hand.house.map((c) => c.card), ps.house.cards);
  // The person's cards are the public state's, hand by hand.
  const mine = ps.seats[0].hands.flatMap((x) => x.cards);
  assert.deepEqual(G.gameUi('blackjack').hand(r.hand).map((c) => c.card).sort(), mine.slice().sort());
});

test('Sam Gong: the banker bets or a player calls; the deferred reveal completes the audit', { skip, timeout: 90_000 }, async (t) => {
  const client = await table(t, 'sam-gong', { bots: 2, args: ['--reveal', 'deferred', '--reveal-delay', '1s'] });
  const r = await playHand(client, (turn) => {
    const bet = type(turn, 'bet');
    if (bet) return { ...bet.action, amount: bet.range[0] };
    return (type(turn, 'call') ?? type(turn, 'fold')).action;
  }, 80_000);
  assert.equal(r.state.failure, null, JSON.stringify(r.state.failure));
  auditPassed(r.hand);
  assert.ok(r.acted.some((a) => ['bet', 'call'].includes(a.action.type)));
  assert.equal(G.gameUi('sam-gong').hand(r.hand).filter((c) => c.card).length, 3, 'the person sees its three cards');
});

test('Dou Di Zhu: bid 3, play selected cards (a refused pass gives the turn back), until the hand ends', { skip, timeout: 120_000 }, async (t) => {
  const client = await table(t, 'dou-di-zhu', { bots: 2 });
  const play = cardTurn('dou-di-zhu', S.rankOf, most);
  let triedPass = false;
  let plays = 0;
  const r = await playHand(client, (turn, h) => {
    if (turn.actions.some((o) => o.action.type === 'bid')) return (type(turn, 'bid') && turn.actions.filter((o) => o.action.type === 'bid').at(-1)).action;
    if (!type(turn, 'pass') && !triedPass) {
      // Leading: a pass is not offered; the dealer refuses it and the turn comes back.
      triedPass = true;
      return { type: 'pass' };
    }
    const a = play(turn, h);
    if (a) plays += 1;
    return a ?? { type: 'pass' };
  }, 110_000);
  assert.equal(r.state.failure, null, JSON.stringify(r.state.failure));
  auditPassed(r.hand);
  const ps = r.hand.publicState;
  // Seat 0 bids first at a new table: its bid of 3 makes it the landlord, the kitty joins its hand.
  assert.equal(ps.landlord, 0);
  assert.ok(plays >= 1, 'the person played cards');
  assert.ok(triedPass && r.rejected >= 1, 'the refused pass was answered with action-rejected');
  // The hand the page shows is the game's count of cards left.
  assert.equal(G.gameUi('dou-di-zhu').hand(r.hand).length, ps.cards_left[0]);
});

test('Guandan: a whole deal against the AI, tribute and plays chosen from the selected cards', { skip, timeout: 180_000 }, async (t) => {
  const client = await table(t, 'guandan', { bots: 3, strategy: 'guandan-l1' });
  const play = cardTurn('guandan', S.faceOf, most);
  let plays = 0;
  const r = await playHand(client, (turn, h) => {
    for (const ty of ['tribute', 'return']) if (type(turn, ty)) return type(turn, ty).action;
    if (type(turn, 'vote')) return { type: 'vote', accept: false };
    const a = play(turn, h);
    if (a) plays += 1;
    return a ?? { type: 'pass' };
  }, 170_000);
  assert.equal(r.state.failure, null, JSON.stringify(r.state.failure));
  auditPassed(r.hand);
  assert.ok(plays >= 1, 'the person played cards');
  const ps = r.hand.publicState;
  assert.equal(G.gameUi('guandan').hand(r.hand).length, ps.cards_left[0], 'the page\'s hand is the game\'s count');
});

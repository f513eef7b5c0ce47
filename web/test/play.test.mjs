// The browser's play client (web/src/play) against a real dealer: the
// `claw-dealer` binary (its path in CLAW_DEALER_BIN) with a Hold'em room,
// one SDK bot (`claw-player --bot simple`, CLAW_PLAYER_BIN) and this client,
// which plays hands with a simple policy; every hand must verify live and
// pass the end-of-hand audit. Then the attacks: a man in the middle (a
// WebSocket proxy in this test) changes bytes of signed events, and the
// client must stop with a failed check and sign nothing more.
//
// Without the binaries (they are never built here) the dealer tests are
// skipped with a message: scripts/test-web.sh sets both variables.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as K from '../dist-test/play/key.mjs';
import * as C from '../dist-test/play/client.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const DEALER = process.env.CLAW_DEALER_BIN;
const PLAYER = process.env.CLAW_PLAYER_BIN;
const skip = !DEALER || !PLAYER
  ? 'CLAW_DEALER_BIN and CLAW_PLAYER_BIN are not set (scripts/test-web.sh sets them to the built binaries)'
  : typeof WebSocket === 'undefined'
    ? 'this Node has no global WebSocket (Node >= 22, or run with --experimental-websocket)'
    : false;

// ---------- the key file, without a dealer

test('a claw-player key file imports and exports byte for byte', () => {
  const files = readdirSync(join(here, 'fixtures')).filter((f) => f.endsWith('.key.json'));
  assert.ok(files.length >= 2);
  for (const f of files) {
    const text = readFileSync(join(here, 'fixtures', f), 'utf8');
    const id = K.parseKeyFile(text);
    assert.equal(id.playerId, JSON.parse(text).player_id);
    assert.equal(K.keyFileText(id), text, f);
  }
});

test('a fresh key round-trips through storage; damaged key files are refused with a reason', () => {
  const store = new Map();
  const storage = { getItem: (k) => store.get(k) ?? null, setItem: (k, v) => store.set(k, v) };
  const a = K.loadOrCreate(storage);
  assert.equal(a.created, true);
  const b = K.loadOrCreate(storage);
  assert.equal(b.created, false);
  assert.equal(b.id.playerId, a.id.playerId);
  assert.equal(K.parseKeyFile(K.keyFileText(a.id)).encryptionKey, a.id.encryptionKey);
  const file = JSON.parse(K.keyFileText(a.id));
  const refused = (obj, why) => assert.throws(() => K.parseKeyFile(JSON.stringify(obj, null, 2)), (e) => e instanceof K.KeyFileError && why.test(e.message), why);
  refused({ ...file, format: 'claw-identity-v2' }, /unknown format/);
  refused({ ...file, extra: 1 }, /unknown field "extra"/);
  const { encryption_secret: _drop, ...noSecret } = file;
  refused(noSecret, /missing field "encryption_secret"/);
  refused({ ...file, player_id: K.generateIdentity().playerId }, /does not match the secret key/);
  refused({ ...file, signing_secret: file.signing_secret.toUpperCase() }, /lowercase hex/);
  // A refused import leaves the stored key as it was.
  assert.throws(() => K.importKeyFile(storage, '{}'));
  assert.equal(K.loadOrCreate(storage).id.playerId, a.id.playerId);
});

test('an invite URL gives the WebSocket URL, the room and the dealer key', () => {
  const key = 'ab'.repeat(32);
  assert.deepEqual(C.parseInvite(`ws://127.0.0.1:7777/holdem#${key}`), { url: 'ws://127.0.0.1:7777/holdem', room: 'holdem', dealer: key });
  assert.equal(C.parseInvite(`wss://cards.example/claw/r%201#${key}`).room, 'r 1');
  assert.throws(() => C.parseInvite('ws://127.0.0.1:7777/holdem'));
  assert.throws(() => C.parseInvite(`ws://127.0.0.1:7777/#${key}`));
});

// ---------- against a real dealer

/** A dealer with one Hold'em room and one SDK bot seated; stops both at the end. */
async function table(t) {
  const dir = mkdtempSync(join(tmpdir(), 'claw-play-'));
  const dealer = spawn(DEALER, [
    '--game', 'texas-holdem', '--listen', '127.0.0.1:0', '--http-listen', 'off', '--data-dir', dir,
    '--chips', 'local', '--timeout', '20s', '--between-hands', '100ms',
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
  const bot = spawn(PLAYER, ['join', invite, '--bot', 'simple', '--quiet'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let botOut = '';
  bot.stdout.on('data', (d) => (botOut += d));
  t.after(() => {
    bot.kill();
    dealer.kill();
    rmSync(dir, { recursive: true, force: true });
  });
  return { invite, botOut: () => botOut };
}

/** Plays with a simple policy (check, else call, else the first option) until `until` holds. */
function play(client, until, timeoutMs) {
  client.acted = 0;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out: ${JSON.stringify(client.state.log.slice(-10))}`)), timeoutMs);
    const step = (s) => {
      if (until(s)) {
        clearTimeout(timer);
        resolve(s);
        return;
      }
      if (s.turn && !s.failure) {
        const pick = (t) => s.turn.actions.find((o) => o.action.type === t);
        const o = pick('check') ?? pick('call') ?? s.turn.actions[0];
        setTimeout(() => {
          try {
            if (client.state.turn) {
              client.act(o.action);
              client.acted += 1;
            }
          } catch (e) {
            if (!client.state.failure) reject(e);
          }
        }, 0);
      }
    };
    client.onChange = step;
    step(client.state);
  });
}

test('the browser client plays Hold\'em hands against a real dealer and every hand verifies', { skip, timeout: 120_000 }, async (t) => {
  const { invite, botOut } = await table(t);
  const inv = C.parseInvite(invite);
  const id = K.generateIdentity();
  const client = new C.PlayClient({ ...inv, identity: id, name: 'browser' });
  const audits = [];
  await client.connect();
  assert.equal(client.state.status, 'seated');
  const done = await play(
    client,
    (s) => {
      const h = s.hand;
      if (h?.audit && !audits.some((a) => a.handId === h.handId)) audits.push({ handId: h.handId, audit: h.audit, hand: structuredClone(h) });
      return s.failure !== null || audits.length >= 3;
    },
    90_000,
  );
  assert.equal(done.failure, null, JSON.stringify(done.failure));
  assert.ok(client.acted >= 3, `the client signed ${client.acted} actions`);
  for (const { audit, hand } of audits) {
    assert.equal(audit.ok, true, JSON.stringify(audit.results.filter((r) => r.status === 'failed')));
    for (const c of ['dealer-signatures', 'hash-chain', 'structure', 'shuffle', 'leaves', 'merkle-root', 'opened-cards', 'action-signatures']) {
      assert.equal(audit.results.find((r) => r.check === c)?.status, 'passed', c);
    }
    // This player's two hole cards were opened from their boxes, and the audit opened the same.
    const mine = hand.seats[hand.seat].cards;
    assert.equal(mine.length, 2);
    assert.ok(mine.every((c) => typeof c.card === 'string'), JSON.stringify(mine));
    assert.deepEqual(audit.myCards.map((c) => c.card).sort(), mine.map((c) => c.card).sort());
    assert.ok(hand.signatures >= 1, 'dealer signatures verified live');
    // Chips are conserved within the hand (no rake in this room).
    assert.equal(hand.result.net.reduce((a, b) => a + b, 0), 0);
  }
  client.leave();
  // The bot saw the same hands pass its own audit.
  await new Promise((r) => setTimeout(r, 200));
  const ended = botOut().split('\n').filter((l) => l.includes('"hand-ended"')).map((l) => JSON.parse(l));
  for (const { handId } of audits) {
    const e = ended.find((x) => x.hand_id === handId);
    if (e) assert.equal(e.audit.verdict, 'ok');
  }
});

test('a dealer whose key is not the invite\'s fails the handshake: a failed check, never seated', { skip, timeout: 30_000 }, async (t) => {
  const { invite } = await table(t);
  const inv = C.parseInvite(invite);
  const client = new C.PlayClient({ ...inv, dealer: K.generateIdentity().playerId, identity: K.generateIdentity() });
  await assert.rejects(client.connect(), /handshake|dealer's key/);
  assert.equal(client.state.failure?.check, 'handshake');
  assert.match(client.state.failure.detail, /not the invite's/);
  assert.notEqual(client.state.status, 'seated');
});

test('a reloaded page resumes its seat with the session\'s reconnect token and every hand still verifies', { skip, timeout: 90_000 }, async (t) => {
  const { invite } = await table(t);
  const inv = C.parseInvite(invite);
  const id = K.generateIdentity();
  let token = null;
  const first = new C.PlayClient({ ...inv, identity: id, onSession: (x) => (token = x) });
  await first.connect();
  const seat = first.state.seat;
  await play(first, (s) => s.handsAudited >= 1 || s.failure !== null, 30_000);
  first.close(); // the page goes away mid-session
  await new Promise((r) => setTimeout(r, 300));
  // Without the token the held seat is not this page's.
  const other = new C.PlayClient({ ...inv, identity: id });
  await assert.rejects(other.connect(), /reconnect token/);
  assert.equal(other.state.failure, null, 'a refusal is no verification failure');
  const again = new C.PlayClient({ ...inv, identity: id, reconnectToken: token });
  await again.connect();
  assert.equal(again.state.seat, seat);
  const s = await play(again, (st) => st.handsAudited >= 2 || st.failure !== null, 60_000);
  assert.equal(s.failure, null, JSON.stringify(s.failure));
  assert.equal(s.hand.audit.ok, true);
  again.leave();
});

test('a dropped connection is redialled with backoff and resumes the session (SPEC §8.6); every hand still verifies', { skip, timeout: 90_000 }, async (t) => {
  const { invite } = await table(t);
  const inv = C.parseInvite(invite);
  const sockets = [];
  const client = new C.PlayClient({
    ...inv,
    identity: K.generateIdentity(),
    socket: (url) => {
      const ws = new WebSocket(url);
      sockets.push(ws);
      return ws;
    },
  });
  await client.connect();
  const seat = client.state.seat;
  await play(client, (s) => s.handsAudited >= 1 || s.failure !== null, 30_000);
  const statuses = [];
  const watch = client.onChange;
  // The network drops the socket (not the page: no leave, no close()).
  sockets[0].close(4000, 'network gone');
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not resumed: ${JSON.stringify(client.state.log.slice(-6))}`)), 20_000);
    client.onChange = (s) => {
      statuses.push(s.status);
      if (s.status === 'seated' && statuses.includes('reconnecting')) {
        clearTimeout(timer);
        resolve();
      }
    };
  });
  client.onChange = watch;
  assert.equal(sockets.length, 2, 'one redial');
  assert.equal(client.state.seat, seat, 'the same seat');
  assert.ok(client.state.log.some((l) => l.includes('session resumed')));
  const before = client.state.handsAudited;
  const s = await play(client, (st) => st.handsAudited >= before + 2 || st.failure !== null, 60_000);
  assert.equal(s.failure, null, JSON.stringify(s.failure));
  assert.equal(s.hand.audit.ok, true);
  assert.ok(client.acted >= 1, 'the resumed client acted');
  // A close by the page itself is no drop: no redial.
  client.leave();
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(client.state.status, 'closed');
  assert.equal(sockets.length, 2);
});

/**
 * A TCP proxy that relays a WebSocket and rewrites the dealer's text frames
 * with `mutate` (same byte length: the frame header stays valid), counting
 * the client's frames by type.
 */
async function mitm(t, target, mutate) {
  const sent = [];
  const server = createServer((down) => {
    const up = connect(target.port, target.host);
    let buf = Buffer.alloc(0);
    let handshakeDone = false;
    up.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      if (!handshakeDone) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        down.write(buf.subarray(0, end + 4));
        buf = buf.subarray(end + 4);
        handshakeDone = true;
      }
      for (;;) {
        if (buf.length < 2) return;
        let len = buf[1] & 0x7f;
        let off = 2;
        if (len === 126) {
          if (buf.length < 4) return;
          len = buf.readUInt16BE(2);
          off = 4;
        } else if (len === 127) {
          if (buf.length < 10) return;
          len = Number(buf.readBigUInt64BE(2));
          off = 10;
        }
        if (buf.length < off + len) return;
        const frame = Buffer.from(buf.subarray(0, off + len));
        buf = buf.subarray(off + len);
        if ((frame[0] & 0x0f) === 1) {
          const text = frame.subarray(off).toString('utf8');
          const changed = Buffer.from(mutate(text), 'utf8');
          assert.equal(changed.length, len, 'a mutation keeps the frame length');
          changed.copy(frame, off);
        }
        down.write(frame);
      }
    });
    let upBuf = Buffer.alloc(0);
    let upgraded = false;
    down.on('data', (chunk) => {
      up.write(chunk);
      // The client's frames are masked: unmask to see their type.
      upBuf = Buffer.concat([upBuf, chunk]);
      if (!upgraded) {
        const end = upBuf.indexOf('\r\n\r\n');
        if (end < 0) return;
        upBuf = upBuf.subarray(end + 4);
        upgraded = true;
      }
      for (;;) {
        if (upBuf.length < 6) return;
        let len = upBuf[1] & 0x7f;
        let off = 2;
        if (len === 126) {
          len = upBuf.readUInt16BE(2);
          off = 4;
        } else if (len === 127) {
          len = Number(upBuf.readBigUInt64BE(2));
          off = 10;
        }
        if (upBuf.length < off + 4 + len) return;
        const mask = upBuf.subarray(off, off + 4);
        const payload = Buffer.from(upBuf.subarray(off + 4, off + 4 + len)).map((b, i) => b ^ mask[i % 4]);
        if ((upBuf[0] & 0x0f) === 1) {
          try {
            sent.push(JSON.parse(Buffer.from(payload).toString('utf8')).type);
          } catch {
            sent.push('?');
          }
        }
        upBuf = upBuf.subarray(off + 4 + len);
      }
    });
    const end = () => {
      up.destroy();
      down.destroy();
    };
    up.on('close', end);
    down.on('close', end);
    up.on('error', end);
    down.on('error', end);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => server.close());
  return { port: server.address().port, sent };
}

/** One hex digit changed at `at` in `text` (same length). */
const flipHex = (text, at) => text.slice(0, at) + (text[at] === '0' ? '1' : '0') + text.slice(at + 1);

for (const attack of [
  {
    name: 'a changed byte in a signed hand-prepare',
    // The seed commitment of the first hand: the next event's prev no longer is its hash.
    mutate: (() => {
      let done = false;
      return (text) => {
        const at = text.indexOf('"seed_commitment":"');
        if (done || !text.startsWith('{"type":"event"') || at < 0) return text;
        done = true;
        return flipHex(text, at + 19 + 10);
      };
    })(),
    checks: ['hash-chain', 'dealer-signatures'],
  },
  {
    name: 'a changed dealer signature on every event of the first hand',
    // The chain stays intact (a hash never covers `sig`): the reliance point
    // before acting, or the hand's end, verifies a signature and it fails.
    mutate: (() => {
      let hand = null;
      return (text) => {
        if (!text.startsWith('{"type":"event"')) return text;
        const h = JSON.parse(text).hand_id;
        hand ??= h;
        const m = /,"sig":"[0-9a-f]{128}"\}$/.exec(text); // the envelope's, not a seed's or an action's in the body
        return h === hand && m ? flipHex(text, m.index + 8 + 20) : text;
      };
    })(),
    checks: ['dealer-signatures'],
  },
]) {
  test(`a man in the middle: ${attack.name} stops the client (red banner, no action signed)`, { skip, timeout: 60_000 }, async (t) => {
    const { invite } = await table(t);
    const inv = C.parseInvite(invite);
    const target = new URL(inv.url);
    const proxy = await mitm(t, { host: target.hostname, port: Number(target.port) }, attack.mutate);
    const url = `ws://127.0.0.1:${proxy.port}${target.pathname}`;
    const client = new C.PlayClient({ ...inv, url, identity: K.generateIdentity() });
    await client.connect();
    const s = await play(client, (st) => st.failure !== null, 45_000);
    assert.ok(attack.checks.includes(s.failure.check), JSON.stringify(s.failure));
    assert.equal(s.turn, null);
    assert.throws(() => client.act({ type: 'fold' }), /verification failed/);
    // Nothing was signed for the tampered hand: no action left the client.
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(!proxy.sent.includes('action'), `the client sent ${proxy.sent.join(', ')}`);
    client.close();
  });
}

test('a key file the browser exports plays with claw-player join and opens its cards in claw-player audit --key', { skip, timeout: 120_000 }, async (t) => {
  const { invite } = await table(t);
  const dir = mkdtempSync(join(tmpdir(), 'claw-play-key-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const id = K.generateIdentity();
  const keyFile = join(dir, 'browser.key.json');
  // Saved as a download would be, then made private as claw-player asks (it refuses a key file others can read).
  writeFileSync(keyFile, K.keyFileText(id), { mode: 0o600 });
  const run = (args) =>
    new Promise((resolve) => {
      const p = spawn(PLAYER, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      p.stdout.on('data', (d) => (out += d));
      p.stderr.on('data', (d) => (err += d));
      p.on('exit', (code) => resolve({ code, out, err }));
    });
  const hands = join(dir, 'hands');
  const joined = await run(['join', invite, '--key', keyFile, '--bot', 'simple', '--quiet', '--hands', '1', '--save-transcripts', hands]);
  assert.equal(joined.code, 0, joined.err);
  const files = readdirSync(hands).map((f) => join(hands, f));
  assert.ok(files.length >= 1, 'a hand was saved');
  const audited = await run(['audit', '--key', keyFile, ...files]);
  assert.equal(audited.code, 0, audited.out + audited.err);
  assert.match(audited.out + audited.err, /--key: [1-9]\d* sealed card\(s\) of yours opened and checked/, 'the key opened this player\'s sealed cards');
  // The file claw-player read is the browser's, byte for byte, and names the browser's identity.
  assert.equal(K.parseKeyFile(readFileSync(keyFile, 'utf8')).playerId, id.playerId);
});

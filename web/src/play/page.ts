// The table page, `/play/ROOM`: the player's key (local storage, export and
// import as a `claw-player` key file), the connection to the dealer's game
// port, the table drawn from verified events only, this player's legal
// actions as the game offers them (buttons with their costs; the hand as
// selectable cards where cards are played), the turn's timer, a red banner
// and no further action when a check fails, and the hand's audit at its end.
// What is game-specific is in `games/` (one `GameUi` per game); this file
// composes. The DOM is built with textContent (`dom.ts`): nothing received
// is parsed as HTML.

import { auditHtml, esc, getJson, short } from '../view';
import { el, cardsEl } from './dom';
import { gameUi } from './games';
import { PlayClient, type HandView, type TableState } from './client';
import { importKeyFile, keyFileText, loadOrCreate, type Identity } from './key';

const $ = <T extends HTMLElement>(root: ParentNode, sel: string) => root.querySelector(sel) as T;

function download(name: string, text: string, type: string) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

function seatsEl(h: HandView, me: string): HTMLElement {
  const ui = gameUi(h.game);
  const extras = ui.seats(h);
  const box = el('div.seats');
  h.seats.forEach((s, i) => {
    const x = extras[i] ?? { badges: [], acting: false, out: false };
    const mine = s.id === me;
    const shown = mine ? ui.hand(h) : s.cards;
    const cards = x.cards ?? cardsEl(shown.map((c) => c.card), { mine });
    const seat = el(`div.seat${x.acting ? '.acting' : ''}${mine ? '.you' : ''}${x.out ? '.out' : ''}`, { 'data-seat': i },
      el('div.name', {}, mine ? 'You' : short(s.id), el('span.muted', {}, ` · seat ${i} `),
        s.houseAi ? el('span.pill.ai', { 'data-testid': 'house-ai', title: "the dealer's own AI" }, 'AI') : null,
        ...x.badges.map((b) => el('span.pill', {}, b))),
      el(`div.hole${!x.cards && shown.length > 6 ? '.many' : ''}`, {}, cards),
      el('div.stack', { 'data-testid': 'stack' }, s.stack),
      x.bet ? el('div.bet', { 'data-testid': 'bet' }, `bet ${x.bet}`) : null,
      s.last ? el('div.last.muted', {}, s.last) : null);
    box.append(seat);
  });
  return box;
}

/** Who banks next (Sam Gong's `banker-queue`), in order. */
function bankerQueueEl(queue: string[] | null, me: string): HTMLElement | null {
  if (!queue?.length) return null;
  return el('div.muted.banker-queue', { 'data-testid': 'banker-queue' }, 'Banks next: ',
    ...queue.map((id, i) => el(`span.pill${id === me ? '.you' : ''}`, {}, `${i + 1}. ${id === me ? 'You' : short(id)}`)));
}

/** The table drawn from a client's verified state: the play page's, and the watch page's (live feed). */
export function tableEl(s: TableState, me: string): Node[] {
  const h = s.hand;
  const waiting = s.status === 'seated' ? 'Seated: waiting for the next hand…' : s.status === 'watching' ? 'Following the table: waiting for its next released events…' : 'Connecting…';
  if (!h) return [el('p.muted', {}, waiting), bankerQueueEl(s.bankerQueue, me)].filter((x): x is HTMLElement => x !== null);
  const ui = gameUi(h.game);
  const center = ui.center(h);
  return [
    el('div.center', {},
      el('div.board', { 'data-testid': 'board' }, ...(center.length ? center : [el('span.muted', {}, '—')])),
      el('div.pot', { 'data-testid': 'pot' }, 'Pot ', el('b', {}, h.pot)),
      el('div.muted.street', { 'data-testid': 'game-status' }, ui.status(h))),
    seatsEl(h, me),
    bankerQueueEl(s.bankerQueue, me),
    h.result ? el('div.result', { 'data-testid': 'result' }, h.result.summary ?? '') : null,
  ].filter((x): x is HTMLElement => x !== null);
}

export async function playPage(app: HTMLElement, room: string) {
  let id: Identity;
  try {
    id = loadOrCreate(localStorage).id;
  } catch (e) {
    app.innerHTML = `<div class="banner" data-testid="banner">The key stored in this browser is damaged: ${esc((e as Error).message)}. Import your key file below.</div>`;
    app.append(keyPanel(null));
    return;
  }
  const rooms = await getJson('/api/rooms');
  if (!rooms.game_url) throw new Error('this dealer does not tell the page its game port');
  const url = `${rooms.game_url}/${encodeURIComponent(room)}`;
  const listed = rooms.rooms.find((r: any) => r.room === room);
  app.innerHTML = `
    <div class="banner" data-testid="banner" hidden></div>
    <div class="play-head">
      <h1>Table ${esc(room)}${listed && listed.game !== room ? ` <span class="muted">${esc(listed.game)}</span>` : ''}</h1>
      <span class="pill" data-testid="status">connecting</span>
    </div>
    <p class="notice muted" data-testid="notice"></p>
    <section class="felt play-felt" data-testid="table"></section>
    <section class="me" data-testid="me">
      <div class="turn-head"><span data-testid="turn-label" class="muted">Waiting</span><span class="timer" data-testid="timer"></span></div>
      <div class="timebar"><div></div></div>
      <div class="turn-controls" data-testid="actions"></div>
      <div class="vote" data-testid="vote" hidden></div>
    </section>
    <div class="grid">
      <section><h2>Hand audit</h2><div data-testid="hand-audit"><p class="muted">Every event is checked as it arrives; the full audit runs when the hand ends.</p></div></section>
      <section><h2>Log</h2><div class="log" data-testid="log"></div></section>
    </div>`;
  app.append(keyPanel(id));
  // The session's reconnect token, per tab: a reload resumes the seat and the running hand.
  const tokenKey = `claw-reconnect:${room}:${id.playerId}`;
  const client = new PlayClient({
    url,
    dealer: rooms.dealer,
    room,
    identity: id,
    reconnectToken: sessionStorage.getItem(tokenKey),
    onSession: (token) => sessionStorage.setItem(tokenKey, token),
  });
  let turnKey = '';
  let auditKey = '';
  const draw = (s: TableState) => {
    const banner = $(app, '[data-testid=banner]');
    if (s.failure) {
      if (banner.hidden) {
        banner.hidden = false;
        const leave = el('button', { 'data-testid': 'leave' }, 'Leave the table');
        leave.addEventListener('click', () => client.leave());
        banner.replaceChildren(
          el('b', {}, 'VERIFICATION FAILED — check ', el('code', {}, s.failure.check)),
          `${s.failure.seq !== null ? ` at event ${s.failure.seq}` : ''}: ${s.failure.detail}`,
          el('br'),
          "This page signs nothing more at this table: the dealer's events do not check out. ",
          leave,
        );
      }
    }
    $(app, '[data-testid=status]').textContent = s.failure ? 'stopped' : s.status === 'closed' ? `disconnected: ${s.closed}` : s.status;
    $(app, '[data-testid=notice]').textContent = s.notice ?? '';
    $(app, '[data-testid=table]').replaceChildren(...tableEl(s, id.playerId));
    const key = s.turn && !s.failure ? `${s.turn.handId}/${s.turn.seq}` : '';
    if (key !== turnKey) {
      turnKey = key;
      const box = $(app, '[data-testid=actions]');
      box.replaceChildren();
      if (s.turn && !s.failure) box.append(gameUi(s.hand?.game ?? '').turn(s.turn, s.hand, act));
      app.classList.toggle('my-turn', !!key);
    }
    const turn = key ? s.turn : null;
    $(app, '[data-testid=turn-label]').textContent = turn
      ? `Your turn — balance ${turn.balance}${turn.warning ? ` — ${turn.warning}` : ''}`
      : s.failure
        ? 'No further action'
        : 'Waiting';
    drawVote(s);
    const h = s.hand;
    const ak = h?.audit ? `${h.handId}/${h.audit.results.map((r) => r.status).join()}` : '';
    if (h?.audit && ak !== auditKey) {
      auditKey = ak;
      const box = $(app, '[data-testid=hand-audit]');
      box.innerHTML = `<p class="muted">Hand #${h.handNumber} · ${h.signatures} dealer signature(s) verified live · <a href="#" data-testid="transcript">download transcript</a></p>${auditHtml(h.audit)}`;
      const transcript = client.transcript();
      $(box, '[data-testid=transcript]').addEventListener('click', (e) => {
        e.preventDefault();
        download(`${h.handId}.jsonl`, transcript, 'application/x-ndjson');
      });
    }
    const log = $(app, '[data-testid=log]');
    log.replaceChildren(...s.log.slice(-60).map((l) => el('div', {}, l)));
    log.scrollTop = log.scrollHeight;
  };
  // The ready check and the rematch vote (SPEC §9.8): buttons while they ask this player, else where they stand.
  let voteKey = '';
  function drawVote(s: TableState) {
    const v = s.vote;
    const asked = client.asked();
    const key = v ? `${v.kind}/${v.state}/${asked}/${v.yes.length}/${v.waiting.length}` : '';
    if (key === voteKey) return;
    voteKey = key;
    const box = $(app, '[data-testid=vote]');
    box.hidden = !v;
    if (!v) return box.replaceChildren();
    const secs = Math.max(0, Math.ceil((v.deadlineMs - Date.now()) / 1000));
    const button = (label: string, testid: string, f: () => void) => {
      const b = el('button', { 'data-testid': testid }, label);
      b.addEventListener('click', () => {
        f();
        box.replaceChildren(el('span.muted', {}, 'Sent: waiting for the others…'));
      });
      return b;
    };
    if (asked && v.kind === 'ready') {
      box.replaceChildren(el('b', {}, 'The match is about to start: ready? '), button('Ready', 'ready', () => client.ready()),
        el('span.muted', {}, ` (within ${secs} s, or the seat is freed)`));
    } else if (asked) {
      box.replaceChildren(el('b', {}, 'Match over: play again at this table? '), button('Rematch', 'rematch-yes', () => client.rematchVote(true)), ' ',
        button('No, leave', 'rematch-no', () => client.rematchVote(false)), el('span.muted', {}, ` (within ${secs} s)`));
    } else {
      const what = v.kind === 'ready' ? 'Ready check' : 'Rematch vote';
      const where = v.state === 'open' ? `waiting for ${v.waiting.length} player(s)` : v.state;
      box.replaceChildren(el('span.muted', { 'data-testid': 'vote-state', 'data-state': v.state }, `${what}: ${where}`));
    }
  }
  // An action from a game's controls: signed and sent by the client (which refuses after a failed check).
  function act(action: any) {
    try {
      client.act(action);
    } catch (err) {
      client.state.notice = (err as Error).message;
      draw(client.state);
    }
  }
  // The turn's clock.
  const tick = () => {
    const t = client.state.turn;
    const el = $(app, '[data-testid=timer]');
    const bar = $(app, '.timebar div');
    if (!el) return window.clearInterval(timer);
    if (!t || client.state.failure) {
      el.textContent = '';
      bar.style.width = '0';
      return;
    }
    const left = Math.max(0, t.deadlineMs - Date.now());
    const total = Math.max(1, client.state.room?.action_timeout_ms ?? 30_000);
    el.textContent = `${Math.ceil(left / 1000)} s`;
    el.classList.toggle('low', left < 5000);
    bar.style.width = `${Math.min(100, (100 * left) / total)}%`;
  };
  const timer = window.setInterval(tick, 250);
  client.onChange = (s) => {
    draw(s);
    tick();
  };
  draw(client.state);
  try {
    await client.connect();
  } catch (e) {
    if (!client.state.failure) client.state.notice = (e as Error).message;
    draw(client.state);
  }
}

/** The key: who you are here, export (the `claw-player` key file), import. */
function keyPanel(id: Identity | null): HTMLElement {
  const box = document.createElement('details');
  box.className = 'key-panel';
  box.setAttribute('data-testid', 'key');
  box.innerHTML = `<summary>Your key${id ? `: <code>${esc(id.playerId.slice(0, 16))}…</code>` : ''}</summary>
    <p class="muted">Made in this browser and kept in its storage: it is your identity and your chips at this dealer. Export it to keep it (the same file <code>claw-player join --key FILE</code> uses); anyone with the file can play as you.</p>
    ${id ? '<button data-testid="export">Export key file</button>' : ''}
    <label>Import a key file (replaces the key in this browser): <input type="file" data-testid="import" accept=".key,.json,application/json"></label>`;
  box.querySelector('[data-testid=export]')?.addEventListener('click', () => id && download('claw-player.key', keyFileText(id), 'application/json'));
  box.querySelector('[data-testid=import]')!.addEventListener('change', async (ev) => {
    const f = (ev.target as HTMLInputElement).files?.[0];
    if (!f) return;
    try {
      importKeyFile(localStorage, await f.text());
      location.reload();
    } catch (e) {
      alert(`key file: ${(e as Error).message}`);
    }
  });
  return box;
}

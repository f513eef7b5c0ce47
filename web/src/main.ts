// The game-claw browser app: lobby, the table to play at (play/), spectator
// table, hand pages with the replay and the in-browser audit, and a drop
// zone for transcript files.
// Pages are chosen by the URL path; the dealer serves the same HTML for all.

import { audit, Event, splitHands, unhex, Viewer } from './audit';
import { auditHtml, cardHtml, describeAction, esc, getJson, short } from './view';
import { playPage, tableEl } from './play/page';
import { PlayClient } from './play/client';
import { generateIdentity } from './play/key';

const app = document.getElementById('app')!;

// ---------- replay

interface SeatView {
  id: string;
  cards: { pos: number; card: string | null }[];
  balance: number;
  net: number;
}
interface TableView {
  seats: SeatView[];
  board: string[];
  acting: number | null;
}
interface Step {
  text: string;
  view: TableView;
}

/** Table states after each event: only what that event made public (plus the viewer's own cards). */
export function replay(events: Event[], myCards: Map<number, string>): Step[] {
  const gs = events[1]?.body;
  if (!gs?.players) return [];
  const seats: SeatView[] = gs.players.map((p: any) => ({ id: p.id, cards: [], balance: p.balance, net: 0 }));
  const board: string[] = [];
  const boardPos: number[] = [];
  const known = new Map<number, string>(myCards);
  const steps: Step[] = [];
  const snap = (acting: number | null = null): TableView => ({
    seats: seats.map((s) => ({ ...s, cards: s.cards.map((c) => ({ pos: c.pos, card: known.get(c.pos) ?? c.card })) })),
    board: boardPos.map((p, i) => known.get(p) ?? board[i]),
    acting,
  });
  const who = (s: number) => `seat ${s} (${short(gs.players[s]?.id)})`;
  for (const e of events) {
    const b = e.body;
    let text = '';
    let acting: number | null = null;
    switch (b.type) {
      case 'hand-prepare':
        text = `hand #${b.hand_number} prepared: ${b.players.length} players; dealer seed committed (${short(b.seed_commitment)}…)`;
        break;
      case 'game-start':
        text = `${b.game} ${b.game_version}: ${b.deck.length} cards committed under root ${short(b.root)}…; ${b.player_seeds.length} player seeds`;
        break;
      case 'phase-deal':
      case 'new-card': {
        const parts: string[] = [];
        for (const c of b.cards) {
          const card = c.opening?.card ?? null;
          if (card) known.set(c.position, card);
          if (c.target.to === 'player') seats[c.target.seat].cards.push({ pos: c.position, card });
          if (c.target.to === 'community') {
            board.push(card);
            boardPos.push(c.position);
          }
          parts.push(`${c.target.to === 'player' ? `seat ${c.target.seat}` : c.target.to} ${card ?? (known.get(c.position) ? `${known.get(c.position)} (yours)` : 'face down')}`);
        }
        text = `deal ${b.phase}: ${parts.join(', ')}`;
        break;
      }
      case 'reveal':
        for (const o of b.openings) known.set(o.position, o.card);
        text = `revealed: ${b.openings.map((o: any) => o.card).join(' ')}`;
        break;
      case 'chips':
        text = b.moves
          .map((m: any) => {
            const party = m.party.kind === 'seat' ? who(m.party.seat) : 'house';
            if (m.party.kind === 'seat') {
              const d = m.op === 'debit' ? -m.amount : m.amount;
              seats[m.party.seat].balance += d;
              seats[m.party.seat].net += d;
            }
            return `${party} ${m.op === 'debit' ? 'pays' : 'receives'} ${m.amount} (${m.reason})`;
          })
          .join('; ');
        break;
      case 'action-result':
        acting = b.seat;
        try {
          text = `${who(b.seat)}: ${describeAction(JSON.parse(JSON.stringify(b.action)))} — signed by the player`;
        } catch {
          text = `${who(b.seat)}: action`;
        }
        break;
      case 'timeout-action':
        acting = b.seat;
        text = `${who(b.seat)}: ${describeAction(b.action)} — by the dealer (${b.reason})`;
        break;
      case 'game-end':
        for (const o of b.openings) known.set(o.position, o.card);
        text = `hand over: ${b.result.summary}`;
        break;
      case 'audit-reveal':
        for (const o of b.openings) known.set(o.position, o.card);
        text = 'deferred secrets published (dealer seed and openings)';
        break;
      case 'card-transfer': {
        if (b.opening) known.set(b.position, b.opening.card);
        const from = seats[b.from]?.cards;
        const k = from ? from.findIndex((c) => c.pos === b.position) : -1;
        if (from && k >= 0 && seats[b.to]) seats[b.to].cards.push(...from.splice(k, 1));
        const card = known.get(b.position);
        text = `${who(b.from)} gives ${card ? `${card}${b.opening ? '' : ' (yours)'}` : 'a face-down card'} (position ${b.position}) to ${who(b.to)}`;
        break;
      }
      default:
        text = String(b.type);
    }
    steps.push({ text: `${e.seq}. ${text}`, view: snap(acting) });
  }
  return steps;
}

function tableHtml(v: TableView, mine: Set<number>): string {
  const seats = v.seats
    .map(
      (s, i) => `<div class="seat${v.acting === i ? ' acting' : ''}" data-seat="${i}">
        <div class="name">seat ${i} · ${esc(short(s.id))}</div>
        <div>${s.cards.map((c) => cardHtml(c.card, mine.has(c.pos))).join('') || '<span class="muted">no cards</span>'}</div>
        <div class="chips">${s.balance} chips (${s.net >= 0 ? '+' : ''}${s.net})</div></div>`,
    )
    .join('');
  return `<div class="felt"><div class="board" data-testid="board">${v.board.map((c) => cardHtml(c)).join('')}</div><div class="seats">${seats}</div></div>`;
}

/** A hand: replay with controls, and the audit (re-run when a key file is loaded). */
function renderHand(root: HTMLElement, text: string, opts: { title: string; dealer?: string; exports?: string; autoplay?: boolean }) {
  let viewer: Viewer | undefined;
  let timer: number | undefined;
  const draw = () => {
    const o = audit(text, { dealer: opts.dealer, viewer });
    const mine = new Map(o.myCards.map((c) => [c.position, c.card]));
    const steps = replay(o.events, mine);
    let k = opts.autoplay ? 0 : Math.max(0, steps.length - 1);
    root.innerHTML = `
      <h1>${esc(opts.title)}</h1>
      <p class="muted mono">hand ${esc(o.handId)} · ${esc(o.game)}</p>
      <div class="grid">
        <section>
          <div data-testid="table"></div>
          <div class="controls">
            <button data-act="first">|◀</button><button data-act="prev">◀</button>
            <button data-act="play">▶ play</button><button data-act="next">▶</button><button data-act="last">▶|</button>
            <input type="range" min="0" max="${Math.max(0, steps.length - 1)}" value="${k}">
          </div>
          <div class="log" data-testid="log">${steps.map((s, i) => `<div data-step="${i}">${esc(s.text)}</div>`).join('')}</div>
          ${opts.exports ?? ''}
        </section>
        <section>
          <h2>Audit (SPEC §11, run here)</h2>
          <div data-testid="audit">${auditHtml(o)}</div>
          <h2>Your cards</h2>
          <label>Load your key file (read in this page only, never uploaded): <input type="file" data-testid="keyfile" accept=".key,.json,application/json"></label>
          <div data-testid="mycards">${o.myCards.length ? o.myCards.map((c) => cardHtml(c.card, true)).join('') : '<span class="muted">none opened</span>'}</div>
        </section>
      </div>`;
    const table = root.querySelector('[data-testid=table]') as HTMLElement;
    const range = root.querySelector('input[type=range]') as HTMLInputElement;
    const mineSet = new Set(mine.keys());
    const show = (i: number) => {
      k = Math.max(0, Math.min(steps.length - 1, i));
      range.value = String(k);
      if (steps[k]) table.innerHTML = tableHtml(steps[k].view, mineSet);
      root.querySelectorAll('.log div').forEach((d) => d.classList.toggle('current', d.getAttribute('data-step') === String(k)));
      root.querySelector(`.log div[data-step="${k}"]`)?.scrollIntoView({ block: 'nearest' });
    };
    const play = () => {
      window.clearInterval(timer);
      timer = window.setInterval(() => {
        if (k >= steps.length - 1) window.clearInterval(timer);
        else show(k + 1);
      }, 700);
    };
    root.querySelectorAll('button[data-act]').forEach((b) =>
      b.addEventListener('click', () => {
        const act = b.getAttribute('data-act');
        if (act !== 'play') window.clearInterval(timer);
        if (act === 'first') show(0);
        if (act === 'prev') show(k - 1);
        if (act === 'next') show(k + 1);
        if (act === 'last') show(steps.length - 1);
        if (act === 'play') play();
      }),
    );
    range.addEventListener('input', () => show(Number(range.value)));
    root.querySelector('[data-testid=keyfile]')!.addEventListener('change', async (ev) => {
      const f = (ev.target as HTMLInputElement).files?.[0];
      if (!f) return;
      try {
        const key = JSON.parse(await f.text());
        if (key.format !== 'claw-identity-v1') throw new Error('not a claw-identity-v1 key file');
        viewer = { encryptionSecret: unhex(key.encryption_secret, 32, 'encryption_secret'), playerId: key.player_id };
        draw();
      } catch (e) {
        alert(`key file: ${(e as Error).message}`);
      }
    });
    show(k);
    if (opts.autoplay) play();
  };
  draw();
  return () => window.clearInterval(timer);
}

// ---------- pages

async function lobby() {
  const data = await getJson('/api/rooms');
  app.innerHTML = `<h1>Lobby</h1>
    <p class="muted">Dealer <code>${esc(data.dealer)}</code>. Spectators see each hand ${Math.round(data.spectator_delay_ms / 1000)} s after it ends.</p>
    <table data-testid="rooms"><tr><th>Room</th><th>Game</th><th>Seats</th><th>Players</th><th>Hands played</th><th>Phase</th><th></th></tr>
    ${data.rooms
      .map(
        (r: any) => `<tr data-room="${esc(r.room)}"><td>${esc(r.room)}</td><td>${esc(r.game)}</td>
        <td>${r.players.filter((p: any) => p.seat != null).length} / ${esc(r.max_players ?? '?')}</td>
        <td>${r.players.map((p: any) => `<span class="pill${p.house_ai ? ' ai' : ''}"${p.house_ai ? ' data-testid="house-ai" title="the dealer\'s own AI"' : ''}>${p.house_ai ? 'AI ' : ''}${esc(p.name ?? short(p.id))} ${esc(p.status)}</span>`).join(' ')}</td>
        <td data-testid="hands-played">${esc(r.hands_played ?? '?')}</td><td>${esc(r.phase ?? '?')}</td>
        <td><a class="button" data-testid="sit-down" href="/play/${encodeURIComponent(r.room)}">sit down</a> <a href="/room/${encodeURIComponent(r.room)}">watch</a></td></tr>`,
      )
      .join('')}</table>
    <h2>Quick match</h2><p class="muted">A seat at a table of this game and tier with a free seat (the dealer may open one).</p>
    <p data-testid="quick-match">${quickMatches(data.rooms)
      .map((q) => `<button class="button" data-game="${esc(q.game)}" data-tier="${esc(q.tier ?? '')}">${esc(q.game)}${q.tier ? ` · ${esc(q.tier)}` : ''}</button>`)
      .join(' ')}</p>`;
  app.querySelectorAll<HTMLButtonElement>('[data-testid=quick-match] button').forEach((b) =>
    b.addEventListener('click', () => quickMatch(b.dataset.game ?? '', b.dataset.tier || undefined).catch(showError)),
  );
  setTimeout(() => location.pathname === '/' && lobby().catch(showError), 5000);
}

/** The distinct (game, tier) pairs of the listed rooms; a room's tier is its settings' `tier`. */
function quickMatches(rooms: any[]): { game: string; tier?: string }[] {
  const seen = new Map<string, { game: string; tier?: string }>();
  for (const r of rooms) {
    const tier = typeof r.config?.settings?.tier === 'string' ? (r.config.settings.tier as string) : undefined;
    seen.set(`${r.game}/${tier ?? ''}`, { game: r.game, tier });
  }
  return [...seen.values()];
}

/** Asks the dealer for a table (`POST /quick-match`) and goes to it. */
async function quickMatch(game: string, tier?: string) {
  const r = await fetch('/quick-match', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(tier ? { game, tier } : { game }),
  });
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(`quick match: ${body.error ?? r.status}`);
  location.href = `/play/${encodeURIComponent(body.room)}`;
}

/**
 * The running table through the dealer's live feed (`watch`, SPEC §9.8):
 * a handshake with a key made for this page only, then the hand's events as
 * the players got them, the room's delay behind, each checked as the play
 * page checks them (signatures, chain) and the hand audited at its end.
 */
async function follow(id: string, box: HTMLElement) {
  const status = box.querySelector('[data-testid=feed-status]') as HTMLElement;
  const note = box.querySelector('[data-testid=feed-note]') as HTMLElement;
  const table = box.querySelector('[data-testid=feed-table]') as HTMLElement;
  const rooms = await getJson('/api/rooms');
  if (!rooms.game_url) {
    status.textContent = 'unavailable';
    note.textContent = 'This dealer does not tell the page its game port: finished hands only (below).';
    return;
  }
  const client = new PlayClient({
    url: `${rooms.game_url}/${encodeURIComponent(id)}`,
    dealer: rooms.dealer,
    room: id,
    identity: generateIdentity(),
    watch: true,
    reconnect: false,
  });
  client.onChange = (s) => {
    status.textContent = s.failure ? 'stopped' : s.status === 'closed' ? 'closed' : s.status;
    note.className = s.failure ? 'verdict bad' : 'muted';
    note.textContent = s.failure
      ? `VERIFICATION FAILED — check ${s.failure.check}: ${s.failure.detail}`
      : s.status === 'watching'
        ? `Live, ${s.watchDelay} player action(s) behind the table: every event checked in this page (dealer signatures, hash chain), each hand audited at its end${s.hand?.audit ? ` — hand #${s.hand.handNumber}: ${s.hand.audit.ok ? 'all checks passed' : 'audit not complete'}` : ''}.`
        : (s.notice ?? s.closed ?? '');
    table.replaceChildren(...tableEl(s, ''));
  };
  try {
    await client.connect();
  } catch (e) {
    status.textContent = 'unavailable';
    note.textContent = `No live feed: ${(e as Error).message}. Finished hands below.`;
  }
}

async function room(id: string) {
  app.innerHTML = `<h1>Table ${esc(id)}</h1><p class="muted" data-testid="delay-note"></p>
    <section data-testid="live-feed"><h2>Live table <span class="pill" data-testid="feed-status">connecting</span></h2>
      <p class="muted" data-testid="feed-note"></p><div class="felt play-felt" data-testid="feed-table"></div></section>
    <h2>Last finished hand</h2>
    <div class="grid"><section data-testid="live"><p class="muted">Waiting for the first public hand…</p></section>
    <section><h2>Archived hands</h2><div data-testid="hands"></div></section></div>`;
  const live = app.querySelector('[data-testid=live]') as HTMLElement;
  follow(id, app.querySelector('[data-testid=live-feed]') as HTMLElement).catch(showError);
  let showing = '';
  let stop = () => {};
  const poll = async () => {
    if (location.pathname !== `/room/${encodeURIComponent(id)}` && location.pathname !== `/room/${id}`) return;
    const [rooms, list] = await Promise.all([getJson('/api/rooms'), getJson(`/api/rooms/${encodeURIComponent(id)}/hands`)]);
    const r = rooms.rooms.find((x: any) => x.room === id);
    app.querySelector('[data-testid=delay-note]')!.textContent =
      `${r?.game ?? ''} · ${r?.hands_played ?? 0} hands played · spectators watch finished hands ${Math.round(rooms.spectator_delay_ms / 1000)} s after they end (${list.not_yet_public} not public yet)`;
    app.querySelector('[data-testid=hands]')!.innerHTML = list.hands.length
      ? `<table>${list.hands
          .map((h: any) => `<tr><td>#${h.hand_number}</td><td><a class="mono" href="/hand/${encodeURIComponent(id)}/${h.file}">${h.hand_id.slice(0, 12)}…</a></td></tr>`)
          .join('')}</table>`
      : '<p class="muted">none yet</p>';
    const latest = list.hands[0];
    if (latest && latest.file !== showing) {
      showing = latest.file;
      const text = await (await fetch(`/api/rooms/${encodeURIComponent(id)}/hands/${latest.file}`)).text();
      stop();
      const box = document.createElement('div');
      live.replaceChildren(box);
      stop = renderHand(box, text, { title: `Hand #${latest.hand_number} (live replay)`, dealer: rooms.dealer, autoplay: true });
    }
    setTimeout(() => poll().catch(showError), 2000);
  };
  await poll();
}

async function hand(roomId: string, file: string) {
  const [rooms, text] = await Promise.all([
    getJson('/api/rooms'),
    fetch(`/api/rooms/${encodeURIComponent(roomId)}/hands/${encodeURIComponent(file)}`).then(async (r) => {
      if (!r.ok) throw new Error(`hand ${file}: ${r.status} ${await r.text()}`);
      return r.text();
    }),
  ]);
  const base = `/api/rooms/${encodeURIComponent(roomId)}/hands/${encodeURIComponent(file)}`;
  const game = rooms.rooms.find((r: any) => r.room === roomId)?.game;
  const exports = `<h2>Download</h2><p><a href="${base}" download="${esc(file)}">transcript (JSON lines)</a> ·
    ${game === 'texas-holdem' ? `<a href="${base}/history?format=pokerstars">PokerStars history</a> · <a href="${base}/history?format=ohh">Open Hand History</a> · ` : ''}
    <a href="${base}/history?format=text">text history</a></p>`;
  renderHand(app, text, { title: `Room ${roomId}, hand #${Number(file.slice(0, 8))}`, dealer: rooms.dealer, exports });
}

function auditPage() {
  app.innerHTML = `<h1>Audit a transcript</h1>
    <label>Dealer key (64 hex, from the invite URL after <code>#</code>; empty: the key in the file's header, which only proves the file is self-consistent)
      <input type="text" data-testid="dealer-key" placeholder="dealer key"></label>
    <div class="drop" data-testid="drop">Drop a transcript file (.jsonl) here, or <input type="file" data-testid="file" accept=".jsonl,.json,.txt"></div>
    <div data-testid="hands"></div>`;
  const drop = app.querySelector('[data-testid=drop]') as HTMLElement;
  const out = app.querySelector('[data-testid=hands]') as HTMLElement;
  const load = async (f: File) => {
    const text = await f.text();
    const dealer = (app.querySelector('[data-testid=dealer-key]') as HTMLInputElement).value.trim() || undefined;
    out.replaceChildren();
    splitHands(text).forEach((h, i) => {
      const box = document.createElement('div');
      box.setAttribute('data-hand', String(i));
      out.append(box);
      renderHand(box, h, { title: `${f.name}, hand ${i + 1}`, dealer });
    });
  };
  drop.addEventListener('dragover', (e) => {
    e.preventDefault();
    drop.classList.add('over');
  });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    const f = e.dataTransfer?.files?.[0];
    if (f) load(f);
  });
  app.querySelector('[data-testid=file]')!.addEventListener('change', (e) => {
    const f = (e.target as HTMLInputElement).files?.[0];
    if (f) load(f);
  });
}

function showError(e: unknown) {
  const p = document.createElement('p');
  p.className = 'verdict bad';
  p.textContent = String((e as Error).message ?? e);
  app.prepend(p);
}

const path = location.pathname.split('/').filter(Boolean).map(decodeURIComponent);
(async () => {
  if (path.length === 0) await lobby();
  else if (path[0] === 'room' && path[1]) await room(path[1]);
  else if (path[0] === 'hand' && path[2]) await hand(path[1], path[2]);
  else if (path[0] === 'audit') auditPage();
  else if (path[0] === 'play' && path[1]) await playPage(app, path[1]);
  else app.textContent = 'Not found';
})().catch(showError);

// The table page, `/play/ROOM`: the player's key (local storage, export and
// import as a `claw-player` key file), the connection to the dealer's game
// port, the table drawn from verified events only, this player's legal
// actions as buttons with their costs, the turn's timer, a red banner and
// no further action when a check fails, and the hand's audit at its end.
// Game-specific drawing is per game (`tableFor`); Hold'em reads its public
// state (button, blinds, bets, pots); the other games use the generic view.

import { auditHtml, cardHtml, describeAction, esc, getJson, short } from '../view';
import { PlayClient, type ActionOption, type HandView, type TableState, type Turn } from './client';
import { importKeyFile, keyFileText, loadOrCreate, type Identity } from './key';

const $ = <T extends HTMLElement>(root: ParentNode, sel: string) => root.querySelector(sel) as T;

/** A seat's chips put in this betting round and its markers, as a game sees them. */
interface SeatExtras {
  bet?: number;
  badges: string[];
  acting: boolean;
  out: boolean;
}

interface GameTable {
  /** Per seat: bet, markers (button, blinds, folded…), whose turn. */
  seats(h: HandView): SeatExtras[];
  /** A line under the board (street, pots, current bet). */
  status(h: HandView): string;
  /** Amount presets for a ranged action: [label, amount]. */
  presets(h: HandView, o: ActionOption): [string, number][];
}

const generic: GameTable = {
  seats: (h) => h.seats.map(() => ({ badges: [], acting: false, out: false })),
  status: (h) => (h.publicState?.phase ? `phase ${h.publicState.phase}` : ''),
  presets: (_h, o) => (o.range ? [['min', o.range[0]], ['max', o.range[1]]] : []),
};

const holdem: GameTable = {
  seats(h) {
    const ps = h.publicState;
    return h.seats.map((_, i) => {
      const p = ps?.players?.[i];
      const badges: string[] = [];
      if (ps?.button === i) badges.push('D');
      if (ps?.small_blind_seat === i) badges.push('SB');
      if (ps?.big_blind_seat === i) badges.push('BB');
      if (p?.folded) badges.push('folded');
      if (p?.all_in) badges.push('all-in');
      return { bet: p?.bet, badges, acting: ps?.to_act === i && !ps?.over, out: !!p?.folded };
    });
  },
  status(h) {
    const ps = h.publicState;
    if (!ps) return 'pre-flop: blinds posted';
    const pots = (ps.pots ?? []).map((p: any, i: number) => `${i ? `side pot ${i}` : 'main pot'} ${p.amount}`).join(' · ');
    return [ps.street, pots, ps.current_bet ? `to match ${ps.current_bet}` : ''].filter(Boolean).join(' · ');
  },
  presets(h, o) {
    if (!o.range) return [];
    const [min, max] = o.range;
    const ps = h.publicState;
    const level = ps?.current_bet ?? 0;
    const clamp = (x: number) => Math.max(min, Math.min(max, Math.round(x)));
    const out: [string, number][] = [['min', min]];
    if (h.pot > 0) {
      out.push(['½ pot', clamp(level + h.pot / 2)]);
      out.push(['pot', clamp(level + h.pot + (ps?.to_call ?? 0))]);
    }
    out.push(['all in', max]);
    return out.filter(([, v], i, a) => a.findIndex(([, w]) => w === v) === i);
  },
};

const tableFor = (game: string): GameTable => (game === 'texas-holdem' ? holdem : generic);

/** The numeric member a ranged action sets (`to` in Hold'em, `amount` elsewhere). */
function amountKey(action: any): string | null {
  for (const k of ['to', 'amount']) if (typeof action?.[k] === 'number') return k;
  return Object.keys(action ?? {}).find((k) => typeof action[k] === 'number') ?? null;
}

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

function seatsHtml(h: HandView, t: GameTable, me: string): string {
  const extras = t.seats(h);
  return h.seats
    .map((s, i) => {
      const x = extras[i];
      const mine = s.id === me;
      const cards = s.cards.map((c) => cardHtml(c.card, mine)).join('') || '<span class="muted">—</span>';
      return `<div class="seat${x.acting ? ' acting' : ''}${mine ? ' you' : ''}${x.out ? ' out' : ''}" data-seat="${i}">
        <div class="name">${mine ? 'You' : esc(short(s.id))} <span class="muted">· seat ${i}</span> ${x.badges.map((b) => `<span class="pill">${esc(b)}</span>`).join(' ')}</div>
        <div class="hole">${cards}</div>
        <div class="stack" data-testid="stack">${s.stack}</div>
        ${x.bet ? `<div class="bet" data-testid="bet">bet ${x.bet}</div>` : ''}
        ${s.last ? `<div class="last muted">${esc(s.last)}</div>` : ''}
      </div>`;
    })
    .join('');
}

function tableHtml(s: TableState, me: string): string {
  const h = s.hand;
  if (!h) return `<p class="muted">${s.status === 'seated' ? 'Seated: waiting for the next hand…' : 'Connecting…'}</p>`;
  const t = tableFor(h.game);
  const board = h.board.map((c) => cardHtml(c)).join('');
  return `<div class="center">
      <div class="board" data-testid="board">${board || '<span class="muted">no board</span>'}</div>
      <div class="pot" data-testid="pot">Pot <b>${h.pot}</b></div>
      <div class="muted street">${esc(t.status(h))}</div>
    </div>
    <div class="seats">${seatsHtml(h, t, me)}</div>
    ${h.result ? `<div class="result" data-testid="result">${esc(h.result.summary ?? '')}</div>` : ''}`;
}

/** The buttons of a turn: each legal action with what it costs; ranged ones with an amount. */
function actionsHtml(turn: Turn, h: HandView | null): string {
  const t = tableFor(h?.game ?? '');
  return turn.actions
    .map((o, i) => {
      const label = esc(describeAction(o.action));
      const off = o.affordable ? '' : ' disabled title="not affordable"';
      const key = amountKey(o.action);
      if (!o.range || !key) {
        return `<button class="act" data-i="${i}"${off}>${label}${o.cost ? ` <span class="cost">${o.cost}</span>` : ''}</button>`;
      }
      const [min, max] = o.range;
      const presets = h ? t.presets(h, o) : [];
      return `<div class="ranged" data-i="${i}">
        <button class="act" data-i="${i}"${off}>${esc(o.action.type)} ${esc(key)} <b data-amount>${min}</b> <span class="cost" data-cost>${o.cost}</span></button>
        <input type="range" min="${min}" max="${max}" value="${min}" step="1" aria-label="amount">
        <input type="number" min="${min}" max="${max}" value="${min}" aria-label="amount">
        <span class="presets">${presets.map(([l, v]) => `<button class="preset" data-v="${v}">${esc(l)}</button>`).join('')}</span>
      </div>`;
    })
    .join('');
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
      <div class="actions" data-testid="actions"></div>
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
        banner.innerHTML = `<b>VERIFICATION FAILED — check <code>${esc(s.failure.check)}</code></b>${s.failure.seq !== null ? ` at event ${s.failure.seq}` : ''}: ${esc(s.failure.detail)}<br>This page signs nothing more at this table: the dealer's events do not check out. <button data-testid="leave">Leave the table</button>`;
        $(banner, '[data-testid=leave]').addEventListener('click', () => client.leave());
      }
    }
    $(app, '[data-testid=status]').textContent = s.failure ? 'stopped' : s.status === 'closed' ? `disconnected: ${s.closed}` : s.status;
    $(app, '[data-testid=notice]').textContent = s.notice ?? '';
    $(app, '[data-testid=table]').innerHTML = tableHtml(s, id.playerId);
    const key = s.turn && !s.failure ? `${s.turn.handId}/${s.turn.seq}` : '';
    if (key !== turnKey) {
      turnKey = key;
      $(app, '[data-testid=actions]').innerHTML = s.turn && !s.failure ? actionsHtml(s.turn, s.hand) : '';
      app.classList.toggle('my-turn', !!key);
    }
    const turn = key ? s.turn : null;
    $(app, '[data-testid=turn-label]').textContent = turn
      ? `Your turn — balance ${turn.balance}${turn.warning ? ` — ${turn.warning}` : ''}`
      : s.failure
        ? 'No further action'
        : 'Waiting';
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
    log.innerHTML = s.log.slice(-60).map((l) => `<div>${esc(l)}</div>`).join('');
    log.scrollTop = log.scrollHeight;
  };
  // Actions: one delegated listener; ranged inputs keep button, slider and box in step.
  const actions = $(app, '[data-testid=actions]');
  const setAmount = (box: HTMLElement, v: number) => {
    const turn = client.state.turn;
    const i = Number(box.getAttribute('data-i'));
    const o = turn?.actions[i];
    if (!o?.range) return;
    const x = Math.max(o.range[0], Math.min(o.range[1], Math.round(v)));
    ($(box, 'input[type=range]') as HTMLInputElement).value = String(x);
    ($(box, 'input[type=number]') as HTMLInputElement).value = String(x);
    $(box, '[data-amount]').textContent = String(x);
    $(box, '[data-cost]').textContent = String(o.cost + (x - o.range[0]));
  };
  actions.addEventListener('input', (e) => {
    const input = e.target as HTMLInputElement;
    const box = input.closest('.ranged') as HTMLElement | null;
    if (box) setAmount(box, Number(input.value));
  });
  actions.addEventListener('click', (e) => {
    const b = (e.target as HTMLElement).closest('button') as HTMLButtonElement | null;
    if (!b) return;
    const box = b.closest('.ranged') as HTMLElement | null;
    if (b.classList.contains('preset') && box) {
      setAmount(box, Number(b.getAttribute('data-v')));
      return;
    }
    const o = client.state.turn?.actions[Number(b.getAttribute('data-i'))];
    if (!o) return;
    const action = { ...o.action };
    const k = amountKey(action);
    if (box && k) action[k] = Number(($(box, 'input[type=number]') as HTMLInputElement).value);
    try {
      client.act(action);
    } catch (err) {
      client.state.notice = (err as Error).message;
      draw(client.state);
    }
  });
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

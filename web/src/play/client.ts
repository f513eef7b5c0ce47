// A seated player's connection to the dealer from the browser (or Node):
// the handshake, the join, a fresh seed for every hand, every event checked
// by [`LiveHand`] before the view changes, signed actions only after the
// reliance-point check, and the whole audit at each hand's end. A failed
// check stops the client for good: `failure` is set and `act` refuses.

import { actionMessage, hex, seedMessage, unhex } from '../audit';
import { describeAction as describe } from '../view';
import { rawMembers } from '../rawjson';
import { ClientHandshake, HandshakeError, SDK_VERSION, type Session } from './handshake';
import { randomBytes, sign, type Identity } from './key';
import { LiveFailure, LiveHand, type HandLink, type LiveCheck, type MyLast } from './live';
import type { AuditOutcome } from '../audit';

/** SPEC §9.1: the dealer never sends a longer frame; a longer one is refused unparsed. */
export const MAX_FRAME_BYTES = 65536;

/** One legal move of a `your-turn` (§9.4 `ActionOption`). */
export interface ActionOption {
  action: any;
  cost: number;
  affordable: boolean;
  range?: [number, number];
}

export interface Turn {
  handId: string;
  seat: number;
  seq: number;
  actions: ActionOption[];
  balance: number;
  deadlineMs: number;
  phase?: string;
  warning?: string;
}

/** A seat in the current hand, as this player sees it. */
export interface SeatView {
  id: string;
  /** Chips at the hand's start plus every chip movement since. */
  stack: number;
  /** Cards by deck position: the card when visible to this player, else null. */
  cards: { position: number; card: string | null }[];
  /** The last thing this seat did. */
  last: string;
  /** The seat is one of the dealer's own AIs (`house_ai`, SPEC §9.4). */
  houseAi: boolean;
}

export interface HandView {
  handId: string;
  handNumber: number;
  game: string;
  seat: number | null;
  seats: SeatView[];
  /** Community cards, face up. */
  board: string[];
  /** The house's cards (Blackjack), by deck position: null while face down. */
  house: { position: number; card: string | null }[];
  /** Every action of the hand so far, in order (the games read plays from them). */
  actions: { seat: number; action: any }[];
  /** Chips the seats put in and did not get back yet. */
  pot: number;
  publicState: any;
  /** The game's settings and the table memory the hand started from (`game-start`). */
  settings: any;
  memory: any;
  result: any;
  audit: AuditOutcome | null;
  /** Dealer signatures verified live (one per reliance point). */
  signatures: number;
}

export type Status = 'connecting' | 'handshake' | 'joining' | 'seated' | 'watching' | 'reconnecting' | 'closed';

/** An open or settled ready check (`ready`) or rematch vote (`rematch`), SPEC §9.8. */
export interface Vote {
  kind: 'ready' | 'rematch';
  state: 'open' | 'passed' | 'failed';
  deadlineMs: number;
  /** Who said yes. */
  yes: string[];
  /** Who is still to answer (at `failed`: the seats freed). */
  waiting: string[];
}

/** How the client redials after a dropped connection (SPEC §8.6), as the SDK's `ReconnectPolicy`. */
export interface ReconnectPolicy {
  /** The first wait; it doubles up to `maxMs`. */
  initialMs: number;
  maxMs: number;
  /** Give up after this long without a connection (the dealer holds the seat 60 s by default). */
  giveUpAfterMs: number;
}

export const DEFAULT_RECONNECT: ReconnectPolicy = { initialMs: 100, maxMs: 5000, giveUpAfterMs: 60_000 };

/** The wait before attempt `n` (0-based): `initial · 2^n`, capped at `max`. */
export const reconnectDelay = (p: ReconnectPolicy, n: number) => Math.min(p.maxMs, p.initialMs * 2 ** Math.min(n, 20));

export interface Failure {
  check: LiveCheck | 'handshake' | 'connection';
  handId: string | null;
  seq: number | null;
  detail: string;
}

export interface TableState {
  status: Status;
  room: any;
  seat: number | null;
  players: any[];
  hand: HandView | null;
  turn: Turn | null;
  /** A failed check: nothing more is signed on this connection. */
  failure: Failure | null;
  /** Why the connection ended, once closed. */
  closed: string | null;
  /** Latest dealer message for people (rejections, errors, warnings). */
  notice: string | null;
  log: string[];
  /** The last ready check or rematch vote that asked this player. */
  vote: Vote | null;
  /** Who banks next, in order, at a table whose banker rotates (Sam Gong's `banker-queue`). */
  bankerQueue: string[] | null;
  /** Following the table's live feed: the actions it trails by. */
  watchDelay: number | null;
  handsAudited: number;
  /** Audits completed by a deferred reveal after the table moved on to a newer hand (the last few). */
  lateAudits: { handId: string; audit: AuditOutcome }[];
}

/** The WebSocket API subset used (the browser's, or Node's global one). */
export interface SocketLike {
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: any) => void) | null;
  onmessage: ((ev: { data: any }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: any) => void) | null;
}

export interface ClientOptions {
  /** `ws[s]://HOST:PORT[/prefix]/ROOM`: the invite URL without its `#KEY`. */
  url: string;
  /** The dealer key (64 hex) of the invite URL: no other dealer is accepted. */
  dealer: string;
  room: string;
  identity: Identity;
  name?: string;
  /** Resume an earlier session of this key (its seat and running hand), e.g. after a page reload. */
  reconnectToken?: string | null;
  /** Follow the running table's live feed (`watch`, SPEC §9.8) instead of taking a seat. */
  watch?: boolean;
  /** The session's reconnect token, once the handshake is accepted (keep it to resume). */
  onSession?: (reconnectToken: string) => void;
  socket?: (url: string) => SocketLike;
  now?: () => number;
  /** Called after every change of `state`. */
  onChange?: (s: TableState) => void;
  /** Redial a dropped connection and resume the session (default [`DEFAULT_RECONNECT`]); false: never. */
  reconnect?: ReconnectPolicy | false;
  /** Timers (tests may pass their own). */
  setTimeout?: (f: () => void, ms: number) => unknown;
}

const LOG_LINES = 200;
const KEEP_HANDS = 8;

/** `ws://h:p/prefix/ROOM#KEY` → its parts (SPEC §8: the room is the last path segment). */
export function parseInvite(invite: string): { url: string; room: string; dealer: string } {
  const m = /^(wss?:\/\/[^#]+)#([0-9a-f]{64})$/.exec(invite.trim());
  if (!m) throw new Error('an invite is ws[s]://HOST:PORT/ROOM#DEALER_KEY (64 lowercase hex)');
  const path = new URL(m[1]).pathname.split('/').filter(Boolean);
  if (!path.length) throw new Error('the invite names no room');
  return { url: m[1], room: decodeURIComponent(path[path.length - 1]), dealer: m[2] };
}

export class PlayClient {
  readonly state: TableState = {
    status: 'connecting',
    room: null,
    seat: null,
    players: [],
    hand: null,
    turn: null,
    failure: null,
    closed: null,
    notice: null,
    log: [],
    vote: null,
    bankerQueue: null,
    watchDelay: null,
    handsAudited: 0,
    lateAudits: [],
  };
  private ws: SocketLike | null = null;
  private hs: ClientHandshake | null = null;
  private session: Session | null = null;
  /** The hand being played, and the last few (their deferred reveals may still come). */
  private live: LiveHand | null = null;
  private readonly hands = new Map<string, LiveHand>();
  /** The last hand of the room seen end on this connection, and this player's last one. */
  private link: HandLink | null = null;
  private myLast: MyLast | null = null;
  private nextSeq = 0;
  /** Resumed, and the join not answered yet: the events now are the dealer's resend of the running hand. */
  private resuming = false;
  private lastTurnKey = '';
  /** The last turn offered and not yet answered by an `action-result`: a refused action gives it back. */
  private offered: Turn | null = null;
  private joined: { resolve: () => void; reject: (e: Error) => void } | null = null;
  private readonly now: () => number;
  private readonly open: (url: string) => SocketLike;

  constructor(private readonly opts: ClientOptions) {
    this.now = opts.now ?? (() => Date.now());
    this.onChange = opts.onChange ?? null;
    this.open = opts.socket ?? ((url) => new (globalThis as any).WebSocket(url) as SocketLike);
  }

  /** Called after every change of `state` (replaceable, e.g. by the page). */
  onChange: ((s: TableState) => void) | null;

  private changed() {
    this.onChange?.(this.state);
  }

  private note(line: string) {
    this.state.log.push(line);
    if (this.state.log.length > LOG_LINES) this.state.log.splice(0, this.state.log.length - LOG_LINES);
  }

  private send(msg: string) {
    this.ws?.send(msg);
  }

  /** Dials, runs the handshake and asks for a seat; resolves once seated. */
  connect(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.joined = { resolve, reject };
      this.dial(this.opts.reconnectToken ?? null);
    });
  }

  /** Opens the socket and runs the handshake (with a reconnect token: resumes that session). */
  private dial(token: string | null) {
    const ws = this.open(this.opts.url);
    this.ws = ws;
    ws.onopen = () => {
      if (this.ws !== ws) return;
      this.state.status = 'handshake';
      this.hs = new ClientHandshake(this.opts.identity, this.opts.dealer, this.opts.room, this.now(), token);
      this.resuming = !!token;
      this.send(this.hs.hello);
      this.changed();
    };
    ws.onmessage = (ev) => {
      if (this.ws === ws) this.onFrame(typeof ev.data === 'string' ? ev.data : String(ev.data));
    };
    ws.onerror = () => {};
    ws.onclose = (ev) => {
      if (this.ws === ws) this.onClosed(ev.reason || `connection closed (code ${ev.code})`);
    };
  }

  /** Set when this side closes on purpose (leave, close, a refusal, a failed check): no redial. */
  private closing = false;
  /** The first drop of the current outage (ms) and the attempts since. */
  private outage: { since: number; attempts: number } | null = null;

  private onClosed(reason: string) {
    if (this.state.status === 'closed') return;
    // A dropped session that was seated resumes with its token, after a growing wait (§8.6).
    const policy = this.opts.reconnect === undefined ? DEFAULT_RECONNECT : this.opts.reconnect;
    const token = this.session?.reconnectToken ?? null;
    if (policy && token && !this.closing && !this.state.failure && (this.state.status === 'seated' || this.outage)) {
      this.outage ??= { since: this.now(), attempts: 0 };
      if (this.now() - this.outage.since < policy.giveUpAfterMs) {
        const wait = reconnectDelay(policy, this.outage.attempts++);
        this.state.status = 'reconnecting';
        this.state.turn = null;
        this.lastTurnKey = ''; // the resumed session's your-turn is this turn again
        this.state.notice = `connection lost (${reason}): reconnecting in ${wait} ms (attempt ${this.outage.attempts})`;
        this.note(this.state.notice);
        this.changed();
        (this.opts.setTimeout ?? setTimeout)(() => {
          if (!this.closing && this.state.status === 'reconnecting') this.dial(token);
        }, wait);
        return;
      }
    }
    this.state.status = 'closed';
    this.state.closed = reason;
    this.state.turn = null;
    this.joined?.reject(new Error(reason));
    this.joined = null;
    this.changed();
  }

  /** Stops for good on a failed check (the red banner): no further action is signed. */
  private failWith(f: Failure) {
    if (!this.state.failure) this.state.failure = f;
    this.state.turn = null;
    this.note(`VERIFICATION FAILED: ${f.check}: ${f.detail}`);
    this.joined?.reject(new Error(`${f.check}: ${f.detail}`));
    this.joined = null;
  }

  private onFrame(text: string) {
    try {
      this.handle(text);
    } catch (e) {
      if (e instanceof LiveFailure) {
        const h = this.state.hand;
        if (h && this.live && h.handId === this.live.handId && this.live.outcome) h.audit = this.live.outcome;
        this.failWith({ check: e.check, handId: e.handId, seq: e.seq, detail: e.detail });
      } else if (e instanceof HandshakeError && e.refusal) {
        this.state.notice = e.message;
        this.joined?.reject(e);
        this.joined = null;
        this.closing = true;
        this.ws?.close(1000, 'refused');
      } else if (e instanceof HandshakeError) {
        this.failWith({ check: 'handshake', handId: null, seq: null, detail: e.message });
        this.closing = true;
        this.ws?.close(1000, 'handshake failed');
      } else this.state.notice = `a frame from the dealer could not be handled: ${(e as Error).message}`;
    }
    this.changed();
  }

  private handle(text: string) {
    if (new TextEncoder().encode(text).length > MAX_FRAME_BYTES) throw new Error(`a frame over ${MAX_FRAME_BYTES} bytes`);
    const msg = JSON.parse(text);
    if (!msg || typeof msg !== 'object' || typeof msg.type !== 'string') throw new Error('a frame without a type');
    switch (msg.type) {
      case 'challenge':
        this.send(this.hs!.onChallenge(text, this.now()));
        return;
      case 'accepted':
        this.session = this.hs!.onAccepted(text, this.now());
        this.opts.onSession?.(this.session.reconnectToken);
        this.state.status = 'joining';
        if (this.opts.watch) this.send('{"type":"watch"}');
        else this.send(JSON.stringify({ type: 'join-request', sdk_version: SDK_VERSION, ...(this.opts.name ? { name: this.opts.name } : {}) }));
        return;
      case 'watching':
        this.state.status = msg.on ? 'watching' : 'closed';
        this.state.watchDelay = msg.on ? msg.delay : null;
        this.note(msg.on ? `following the table ${msg.delay} action(s) behind` : 'stopped following');
        this.joined?.resolve();
        this.joined = null;
        return;
      case 'ready-check':
      case 'rematch':
        this.state.vote = {
          kind: msg.type === 'rematch' ? 'rematch' : 'ready',
          state: msg.state,
          deadlineMs: msg.deadline_ms,
          yes: (msg.type === 'rematch' ? msg.accepted : msg.ready) ?? [],
          waiting: msg.waiting ?? [],
        };
        if (msg.state !== 'open') this.note(`${msg.type === 'rematch' ? 'rematch vote' : 'ready check'} ${msg.state}`);
        return;
      case 'banker-queue':
        this.state.bankerQueue = msg.players ?? [];
        return;
      case 'rejected':
        throw this.hs ? this.hs.onRejected(text) : new HandshakeError('unexpected-message', 'a rejection before the hello');
      case 'join-response':
        this.resuming = false;
        if (msg.accepted) {
          if (this.outage) this.note(`reconnected after ${this.outage.attempts} attempt(s): session resumed`);
          this.outage = null;
          this.state.status = 'seated';
          this.state.seat = msg.seat ?? null;
          this.state.room = msg.room ?? this.session?.roomConfig ?? null;
          this.state.players = msg.players ?? [];
          this.state.notice = msg.message ?? null;
          this.note(`seated${msg.seat != null ? ` at seat ${msg.seat}` : ''}${msg.message ? `: ${msg.message}` : ''}`);
          this.joined?.resolve();
          this.joined = null;
        } else {
          const why = msg.message || msg.reason || 'no reason given';
          this.state.notice = `the dealer refused the seat: ${why}`;
          this.joined?.reject(new Error(this.state.notice));
          this.joined = null;
          this.closing = true;
        this.ws?.close(1000, 'refused');
        }
        return;
      case 'event':
        this.onEvent(text);
        return;
      case 'your-turn':
        this.onTurn(msg);
        return;
      case 'action-rejected':
        this.state.notice = `action refused (${msg.code}): ${msg.reason}`;
        this.note(this.state.notice);
        // A refused action changes nothing (§9.4): the turn is still this player's, as offered.
        if (!this.state.turn && this.offered && this.offered.handId === msg.hand_id && !this.state.failure) {
          this.state.turn = { ...this.offered, seq: Math.max(this.offered.seq, this.nextSeq) };
        }
        return;
      case 'kicked':
        this.state.notice = `removed by the dealer (${msg.code}): ${msg.reason}`;
        this.note(this.state.notice);
        this.closing = true; // the seat is gone: nothing to resume
        return;
      case 'error':
        this.state.notice = `dealer error ${msg.code}${msg.message ? `: ${msg.message}` : ''}`;
        this.note(this.state.notice);
        return;
      default:
        return;
    }
  }

  private onEvent(text: string) {
    if (!this.session) throw new HandshakeError('unexpected-message', 'an event before the handshake');
    const frame = JSON.parse(text);
    const handId = frame.hand_id;
    if (this.state.failure) return; // the table stays as it was when the check failed
    let live = this.hands.get(handId);
    if (!live) {
      if (frame.seq !== 0) {
        if (frame.body?.type === 'audit-reveal') return; // a hand played before this session: nothing to hold it to
        throw new LiveFailure('hash-chain', handId, frame.seq, 'first event seen of this hand is not seq 0');
      }
      live = new LiveHand(handId, this.opts.identity, this.session, this.link, this.myLast);
      this.hands.set(handId, live);
      // Keep the last few hands: a deferred reveal comes after its hand.
      for (const old of this.hands.keys()) if (this.hands.size > KEEP_HANDS && old !== handId) this.hands.delete(old);
      this.live = live;
      this.nextSeq = 0;
    }
    const a = live.accept(text);
    if (a.repeat) return;
    if (live === this.live) this.apply(live, a.body, a.opened);
    else if (a.body.type === 'audit-reveal') {
      this.note(`hand ${handId.slice(0, 8)}…: deferred secrets published, audit ${live.outcome?.ok ? 'passed' : 'done'}`);
      if (live.outcome) this.state.lateAudits = [...this.state.lateAudits.slice(1 - KEEP_HANDS), { handId, audit: live.outcome }];
    }
  }

  /** The view after a verified event. */
  private apply(live: LiveHand, b: any, opened: { position: number; card: string }[]) {
    const seatName = (s: number) => `seat ${s}${s === live.seat ? ' (you)' : ''}`;
    const h = this.state.hand;
    switch (b.type) {
      case 'hand-prepare': {
        this.state.turn = null;
        this.offered = null;
        this.state.hand = {
          handId: live.handId,
          handNumber: b.hand_number,
          game: '',
          seat: live.seat,
          seats: (b.players as string[]).map((id) => ({ id, stack: 0, cards: [], last: '', houseAi: this.isHouseAi(id) })),
          board: [],
          house: [],
          actions: [],
          pot: 0,
          publicState: null,
          settings: null,
          memory: null,
          result: null,
          audit: null,
          signatures: 0,
        };
        this.note(`hand #${b.hand_number} prepared${live.seat === null ? ' (you are not dealt in)' : ''}`);
        if (live.seat !== null) this.myLast = null; // this hand takes it (§11.4)
        // A hand-prepare resent on resuming was answered by the earlier session (or its window closed).
        if (live.seat !== null && b.entropy !== 'dealer' && !this.resuming) {
          const seed = randomBytes();
          const sig = sign(this.opts.identity, seedMessage(unhex(live.handId, 16, 'hand_id'), seed));
          this.send(JSON.stringify({ type: 'player-seed', hand_id: live.handId, seed: hex(seed), sig: hex(sig) }));
          live.setMySeed(seed, false);
        }
        break;
      }
      case 'game-start':
        if (h) {
          h.game = b.game;
          h.settings = b.settings;
          h.memory = b.memory ?? null;
          h.seats = b.players.map((p: any) => ({ id: p.id, stack: p.balance, cards: [], last: '', houseAi: p.house_ai === true }));
        }
        this.note(`${b.game}: deck committed (root ${String(b.root).slice(0, 12)}…)`);
        break;
      case 'phase-deal':
      case 'new-card':
        for (const c of b.cards) {
          const mine = opened.find((o) => o.position === c.position)?.card ?? null;
          const card = c.opening?.card ?? mine;
          if (c.target.to === 'player') h?.seats[c.target.seat]?.cards.push({ position: c.position, card });
          if (c.target.to === 'community' && c.face === 'up' && card) h?.board.push(card);
          if (c.target.to === 'house') h?.house.push({ position: c.position, card });
        }
        this.note(`deal ${b.phase}${opened.length ? `: your ${opened.map((o) => o.card).join(' ')}` : ''}`);
        break;
      case 'reveal':
        for (const o of b.openings) {
          for (const s of h?.seats ?? []) for (const c of s.cards) if (c.position === o.position) c.card = o.card;
          for (const c of h?.house ?? []) if (c.position === o.position) c.card = o.card;
        }
        this.note(`revealed ${b.openings.map((o: any) => o.card).join(' ')}`);
        break;
      case 'card-transfer': {
        const from = h?.seats[b.from];
        const k = from ? from.cards.findIndex((c) => c.position === b.position) : -1;
        const moved = from && k >= 0 ? from.cards.splice(k, 1)[0] : { position: b.position, card: null };
        const card = b.opening?.card ?? opened[0]?.card ?? moved.card;
        h?.seats[b.to]?.cards.push({ position: b.position, card });
        this.note(`${seatName(b.from)} gives ${card ?? 'a card'} to ${seatName(b.to)}`);
        break;
      }
      case 'chips':
        for (const m of b.moves) {
          if (m.party?.kind !== 'seat' || !h?.seats[m.party.seat]) continue;
          const d = m.op === 'debit' ? -m.amount : m.amount;
          h.seats[m.party.seat].stack += d;
          h.pot -= d;
        }
        this.note(b.moves.map((m: any) => `${m.party.kind === 'seat' ? seatName(m.party.seat) : 'house'} ${m.op === 'debit' ? 'puts in' : 'gets'} ${m.amount} (${m.reason})`).join('; '));
        break;
      case 'action-result':
      case 'timeout-action': {
        if (h) {
          h.publicState = b.public_state;
          h.actions.push({ seat: b.seat, action: b.action });
          const s = h.seats[b.seat];
          if (s) s.last = describe(b.action) + (b.type === 'timeout-action' ? ` (${b.reason})` : '');
        }
        if (this.state.turn && this.state.turn.seat === b.seat) this.state.turn = null;
        if (this.offered?.seat === b.seat) this.offered = null;
        this.note(`${seatName(b.seat)}: ${describe(b.action)}${b.type === 'timeout-action' ? ` — by the dealer (${b.reason})` : ''}`);
        break;
      }
      case 'game-end':
        if (h) {
          h.result = b.result;
          h.pot = 0; // the seats' cards stay as the game showed them: game-end's openings are for the audit
          h.audit = live.outcome;
          h.signatures = live.signaturesVerified;
        }
        this.state.turn = null;
        this.link = live.link();
        this.myLast = live.mine() ?? this.myLast;
        this.state.handsAudited += 1;
        this.note(`hand over: ${b.result?.summary ?? ''} — audit ${live.outcome?.results.some((r) => r.status === 'skipped' && r.check === 'reveal-complete') ? 'pending (deferred reveal)' : 'passed'}`);
        break;
      case 'audit-reveal':
        if (h && h.handId === live.handId) h.audit = live.outcome;
        this.note('deferred secrets published: audit complete');
        break;
    }
    if (h) h.signatures = live.signaturesVerified;
  }

  private onTurn(msg: any) {
    const key = `${msg.hand_id}/${msg.seq}/${msg.deadline_ms}`;
    if (key === this.lastTurnKey) {
      if (this.state.turn) this.state.turn.warning = msg.warning;
      return;
    }
    this.lastTurnKey = key;
    if (this.state.failure) return;
    const live = this.live;
    if (!live || live.handId !== msg.hand_id) throw new LiveFailure('structure', msg.hand_id, null, 'a turn in a hand whose events did not arrive');
    live.confirm();
    this.state.turn = {
      handId: msg.hand_id,
      seat: msg.seat,
      seq: msg.seq,
      actions: msg.actions ?? [],
      balance: msg.balance,
      deadlineMs: msg.deadline_ms,
      phase: msg.phase,
      warning: msg.warning,
    };
    this.offered = this.state.turn;
    if (this.state.hand) this.state.hand.signatures = live.signaturesVerified;
  }

  /**
   * Signs `action` (a game action: `{"type":"call"}`, or its JSON text) with
   * this hand's next seq and sends it, after checking that a verified
   * dealer signature covers every event of the hand.
   */
  act(action: unknown): { seq: number; text: string } {
    if (this.state.failure) throw new Error(`verification failed (${this.state.failure.check}): no action is signed`);
    const turn = this.state.turn;
    const live = this.live;
    if (!turn || !live || live.handId !== turn.handId) throw new Error('it is not your turn');
    try {
      live.confirm();
    } catch (e) {
      if (e instanceof LiveFailure) {
        this.failWith({ check: e.check, handId: e.handId, seq: e.seq, detail: e.detail });
        this.changed();
      }
      throw e;
    }
    const text = typeof action === 'string' ? action : JSON.stringify(action);
    rawMembers(text); // an action is a JSON object, sent and signed as these exact bytes
    const seq = Math.max(this.nextSeq, turn.seq);
    this.nextSeq = seq + 1;
    const sig = hex(sign(this.opts.identity, actionMessage(unhex(live.handId, 16, 'hand_id'), seq, text)));
    live.recordMyAction(seq, text, sig);
    this.send(`{"type":"action","hand_id":"${live.handId}","seq":${seq},"action":${text},"sig":"${sig}"}`);
    this.state.turn = null;
    this.changed();
    return { seq, text };
  }

  /** Whether the seat list of the join answer marks `id` as a house AI. */
  private isHouseAi(id: string): boolean {
    return this.state.players.some((p) => p.id === id && p.house_ai === true);
  }

  /** Whether the open ready check or rematch vote waits for this player's answer. */
  asked(): boolean {
    const v = this.state.vote;
    return !!v && v.state === 'open' && v.waiting.includes(this.opts.identity.playerId) && !this.state.failure;
  }

  /** Answers the ready check (SPEC §9.8). */
  ready() {
    this.send('{"type":"ready"}');
  }

  /** Votes on the rematch (SPEC §9.8); no frees this seat. */
  rematchVote(accept: boolean) {
    this.send(JSON.stringify({ type: 'rematch-vote', accept }));
  }

  /** Leaves the room (mid-hand the dealer plays this seat's timeouts) and closes. */
  leave() {
    this.closing = true;
    this.send('{"type":"leave"}');
    this.ws?.close(1000, 'left');
  }

  /** Closes the connection (the seat stays for the reconnect window). */
  close() {
    this.closing = true;
    this.ws?.close(1000, 'closed');
  }

  /** The current hand's transcript (JSON lines as received), for download or `claw-player audit`. */
  transcript(): string {
    return this.live ? `${this.live.frames.join('\n')}\n` : '';
  }
}

// Live verification of one hand as its events arrive (SPEC.md §10.3), with
// the browser auditor's own definitions (../audit): on every event the hand
// id, seq, hash chain and unsigned run; a dealer signature at each reliance
// point — before the player acts, at the hand's end, and when more than
// MAX_UNSIGNED_RUN events are unconfirmed (one signature covers every event
// before it); at `game-start` what only this player knows (its keys, the
// handshake's room configuration and dealer key, its seed, its balance after
// its previous hand); each card sealed to it opened and checked against its
// leaf; an action in its name must be one it signed. At the hand's end the
// whole audit of §11 runs over the frames as received.

import {
  audit,
  cardText,
  eventMessage,
  hex,
  jsonEqual,
  leafPreimage,
  MAX_UNSIGNED_RUN,
  merkleRoot,
  openSealed,
  parseCard,
  parseTranscript,
  sha,
  unhex,
  verifyStrict,
  type AuditOutcome,
  type Bytes,
  type CheckName,
  type Event,
} from '../audit';
import { rawMembers } from '../rawjson';
import type { Session } from './handshake';
import type { Identity } from './key';

/** A check that failed live: the auditor's names, plus the two across hands (§11.4). */
export type LiveCheck = CheckName | 'previous-hand' | 'balances';

export class LiveFailure extends Error {
  constructor(
    public check: LiveCheck,
    public handId: string,
    public seq: number | null,
    public detail: string,
  ) {
    super(`hand ${handId}${seq === null ? '' : `, event ${seq}`}: check ${check} failed: ${detail}`);
  }
}

/** The last hand of the room this connection saw end: the next hand must continue it. */
export interface HandLink {
  handId: string;
  handNumber: number;
  memoryAfterText: string;
  configHash: string;
}

/** This player's start balance and net in its last finished hand: the next hand it is dealt into starts from them. */
export interface MyLast {
  balance: number;
  net: number;
}

/** The largest balance a hand binds (`MAX_HAND_STAKE` = 2^50): beyond it nothing binds the next start. */
const MAX_HAND_STAKE = 2 ** 50;

const ZERO = new Uint8Array(32);
const equal = (a: Bytes, b: Bytes) => a.length === b.length && a.every((x, i) => x === b[i]);

/** What an accepted event changed, for the view. */
export interface Accepted {
  event: Event;
  body: any;
  /** Cards of this player opened from their sealed boxes by this event: position → card text. */
  opened: { position: number; card: string }[];
  /** The event repeated one already accepted (a resend after a reconnect): nothing changed. */
  repeat: boolean;
}

export class LiveHand {
  readonly handId: string;
  private readonly hand: Bytes;
  private readonly dealer: Bytes;
  /** The frames as received, in seq order: the hand's transcript. */
  readonly frames: string[] = [];
  private readonly hashes: Bytes[] = [];
  private lastHash: Bytes = ZERO;
  private unsignedRun = 0;
  /** Index of the newest event whose signature (covering it and all before) is verified. */
  private confirmed = -1;
  private newestSigned = -1;
  signaturesVerified = 0;
  seat: number | null = null;
  handNumber = 0;
  gameStart: any = null;
  private leaves: Bytes[] = [];
  private mySeed: Bytes | null = null;
  private seedUncertain = false;
  private readonly myActions: { seq: number; text: string; sig: string }[] = [];
  private end: Event | null = null;
  ended = false;
  outcome: AuditOutcome | null = null;

  constructor(
    handId: string,
    private readonly me: Identity,
    private readonly session: Session,
    private readonly previous: HandLink | null,
    private readonly myLast: MyLast | null,
  ) {
    this.handId = handId;
    this.hand = unhex(handId, 16, 'hand_id');
    this.dealer = unhex(session.dealer, 32, 'dealer');
  }

  private fail(check: LiveCheck, seq: number | null, detail: string): never {
    throw new LiveFailure(check, this.handId, seq, detail);
  }

  /** Records the seed this player sent (it must be published at `game-start` under joint entropy). */
  setMySeed(seed: Bytes, uncertain: boolean) {
    this.mySeed = seed;
    this.seedUncertain = uncertain;
  }

  /** Records an action this player signed, so that an `action-result` in its name can be compared with it. */
  recordMyAction(seq: number, text: string, sig: string) {
    this.myActions.push({ seq, text, sig });
  }

  /** The reliance point (§10.3): every event so far must be covered by a verified dealer signature. */
  confirm() {
    const last = this.frames.length - 1;
    if (last < 0 || this.confirmed === last) return;
    if (this.newestSigned !== last) {
      this.fail('dealer-signatures', last, 'the dealer asks to act on events that no dealer signature covers (the newest event is unsigned)');
    }
    this.verifyNewest();
  }

  private verifyNewest() {
    const i = this.newestSigned;
    if (i <= this.confirmed) return;
    const e = parseTranscript(this.frames[i]).events[0];
    this.signaturesVerified += 1;
    if (!verifyStrict(e.sig!, eventMessage(this.hand, e.seq, e.prev, e.bodyText), this.dealer)) {
      this.fail('dealer-signatures', i, `the signature of event ${i} (${e.body?.type}) does not verify under dealer ${this.session.dealer}: the event or one before it differs from what the dealer signed`);
    }
    this.confirmed = i;
  }

  /** Checks one event frame; returns what it means, or throws a [`LiveFailure`]. */
  accept(frame: string): Accepted {
    let e: Event;
    try {
      e = parseTranscript(frame).events[0];
    } catch (err) {
      this.fail('structure', null, `an event frame that does not parse: ${(err as Error).message}`);
    }
    if (e.handId !== this.handId) this.fail('hash-chain', e.seq, `event of hand ${e.handId} in hand ${this.handId}`);
    const msg = eventMessage(this.hand, e.seq, e.prev, e.bodyText);
    if (e.seq < this.frames.length) {
      if (equal(sha(msg), this.hashes[e.seq])) return { event: e, body: e.body, opened: [], repeat: true };
      this.fail('hash-chain', e.seq, 'the dealer sent two different events with this seq');
    }
    if (e.seq !== this.frames.length) this.fail('hash-chain', e.seq, `seq ${e.seq}, expected ${this.frames.length} (a dropped, repeated or reordered event)`);
    if (!equal(e.prev, this.lastHash)) this.fail('hash-chain', e.seq, `prev is not the hash of event ${e.seq - 1}`);
    const body = e.body;
    if (!body || typeof body !== 'object' || typeof body.type !== 'string') this.fail('structure', e.seq, 'an event body without a type');
    if (e.sig === null) {
      this.unsignedRun += 1;
      if (this.unsignedRun > MAX_UNSIGNED_RUN) this.fail('dealer-signatures', e.seq, `more than ${MAX_UNSIGNED_RUN} events in a row without a dealer signature`);
    } else {
      this.unsignedRun = 0;
      this.newestSigned = e.seq;
    }
    const opened = this.checkBody(e, body);
    this.frames.push(frame);
    this.lastHash = sha(msg);
    this.hashes.push(this.lastHash);
    if (e.seq - this.confirmed > MAX_UNSIGNED_RUN) this.verifyNewest();
    if (body.type === 'game-end' || body.type === 'audit-reveal') {
      if (e.sig === null) this.fail('dealer-signatures', e.seq, `the hand's end (${body.type}) is not signed by the dealer`);
      this.confirm();
      if (body.type === 'game-end') this.end = e;
      this.ended = true;
      this.outcome = this.fullAudit();
      const failed = this.outcome.results.find((r) => r.status === 'failed');
      if (failed) this.fail(failed.check, null, `end-of-hand audit: ${failed.detail}`);
    }
    return { event: e, body, opened, repeat: false };
  }

  /** The audit of §11 over the frames received (this player's sealed cards opened, the room's commission). */
  fullAudit(): AuditOutcome {
    return audit(this.frames.join('\n'), {
      dealer: this.session.dealer,
      viewer: { encryptionSecret: this.me.encryptionSecret, playerId: this.me.playerId },
      commission: this.session.roomConfig?.commission ?? 0,
    });
  }

  /** The hand as the next hand must continue it (after `game-end`). */
  link(): HandLink | null {
    const end = this.end;
    if (!this.gameStart || !end) return null;
    return {
      handId: this.handId,
      handNumber: this.handNumber,
      memoryAfterText: rawMembers(end.bodyText).get('memory_after') ?? 'null',
      configHash: this.gameStart.config_hash,
    };
  }

  /** This player's start balance and net in this hand, once it ended (null: not dealt in). */
  mine(): MyLast | null {
    if (!this.gameStart || !this.end || this.seat === null) return null;
    return { balance: this.gameStart.players[this.seat].balance, net: this.end.body.result?.net?.[this.seat] ?? 0 };
  }

  /** Opens a box sealed to this player and checks it against its leaf. */
  private open(seq: number, position: number, sealed: any, what: string): { position: number; card: string } {
    const leaf = this.leaves[position];
    if (!leaf) this.fail('deal-order', seq, `${what}: position ${position} is beyond the deck`);
    let r: ReturnType<typeof openSealed>;
    try {
      r = openSealed(this.session.boxKey, unhex(sealed?.nonce, 24, 'nonce'), unhex(sealed?.ciphertext, null, 'ciphertext'), this.hand);
    } catch (err) {
      this.fail('opened-cards', seq, `${what} at position ${position}: ${(err as Error).message}`);
    }
    if ('error' in r) this.fail('opened-cards', seq, `${what} at position ${position}: ${r.error}`);
    const p = r.plain;
    const pos = (p[28] << 8) | p[29];
    const card = (p[30] << 8) | p[31];
    if (pos !== position) this.fail('opened-cards', seq, `${what} at position ${position} opens to position ${pos}`);
    if (card > 13823) this.fail('opened-cards', seq, `${what} at position ${position} carries card code ${card}`);
    if (!equal(sha(p), leaf)) this.fail('opened-cards', seq, `${what} at position ${position}: the opened card is not the committed leaf`);
    return { position, card: cardText(card) };
  }

  /** A published opening against its leaf. */
  private checkOpening(seq: number, o: any) {
    const leaf = this.leaves[o?.position];
    let ok = false;
    try {
      ok = !!leaf && equal(sha(leafPreimage(this.hand, o.position, parseCard(o.card), unhex(o.salt, 32, 'salt'))), leaf);
    } catch {
      ok = false;
    }
    if (!ok) this.fail('opened-cards', seq, `the opening of position ${o?.position} as ${o?.card} is not the committed leaf`);
  }

  private checkBody(e: Event, b: any): { position: number; card: string }[] {
    const seq = e.seq;
    const opened: { position: number; card: string }[] = [];
    const started = this.gameStart !== null;
    if (b.type !== 'hand-prepare' && b.type !== 'game-start' && !started && b.type !== 'audit-reveal') {
      this.fail('structure', seq, `${b.type} before game-start`);
    }
    switch (b.type) {
      case 'hand-prepare': {
        if (seq !== 0) this.fail('structure', seq, 'hand-prepare is not the first event');
        const i = Array.isArray(b.players) ? b.players.indexOf(this.me.playerId) : -1;
        this.seat = i >= 0 ? i : null;
        this.handNumber = b.hand_number;
        break;
      }
      case 'game-start':
        this.checkStart(seq, e, b);
        break;
      case 'phase-deal':
      case 'new-card':
        for (const c of b.cards ?? []) {
          if (c.opening) this.checkOpening(seq, c.opening);
          if (c.sealed && c.target?.to === 'player' && c.target.seat === this.seat) opened.push(this.open(seq, c.position, c.sealed, 'my sealed card'));
        }
        break;
      case 'reveal':
        for (const o of b.openings ?? []) this.checkOpening(seq, o);
        break;
      case 'card-transfer':
        if (b.opening) this.checkOpening(seq, b.opening);
        if (b.sealed && b.to === this.seat) opened.push(this.open(seq, b.position, b.sealed, 'the card transferred to me'));
        break;
      case 'action-result':
        if (b.seat === this.seat && this.seat !== null) {
          const text = rawMembers(e.bodyText).get('action') ?? '';
          if (!this.myActions.some((a) => a.seq === b.seq && a.text === text && a.sig === b.sig)) {
            this.fail('action-signatures', seq, `action seq ${b.seq} in my name is not one I signed: ${text}`);
          }
        }
        break;
      case 'game-end':
        for (const o of b.openings ?? []) this.checkOpening(seq, o);
        break;
    }
    return opened;
  }

  /** `game-start`: what only this player can check (§10.3), and the chain from its last hand (§11.4). */
  private checkStart(seq: number, e: Event, g: any) {
    if (seq !== 1) this.fail('structure', seq, 'game-start is not the second event');
    const players: any[] = Array.isArray(g.players) ? g.players : [];
    const deck: unknown[] = Array.isArray(g.deck) ? g.deck : [];
    if (!Array.isArray(g.leaves) || g.leaves.length !== deck.length || !deck.length) this.fail('structure', seq, 'the deck and its leaves differ in length');
    try {
      this.leaves = g.leaves.map((l: unknown, i: number) => unhex(l, 32, `leaf ${i}`));
    } catch (err) {
      this.fail('structure', seq, (err as Error).message);
    }
    const root = merkleRoot(this.leaves);
    if (hex(root) !== g.root) this.fail('merkle-root', seq, 'the Merkle root of the leaves is not game-start.root');
    const roomText = rawMembers(e.bodyText).get('room_config');
    if (roomText === undefined) this.fail('structure', seq, 'game-start carries no room configuration');
    if (roomText !== this.session.roomConfigText) this.fail('structure', seq, 'the room configuration differs from the one the dealer signed in the handshake');
    if (g.dealer_encryption_key !== this.session.dealerEncryptionKey) this.fail('structure', seq, 'the dealer encryption key is not the one of the handshake');
    const commission = this.session.roomConfig?.commission ?? 0;
    const other = players.findIndex((p) => (p.commission ?? 0) !== commission);
    if (other >= 0) this.fail('commission', seq, `seat ${other} paid commission ${players[other].commission ?? 0}, the room's is ${commission}`);
    if (this.seat !== null) {
      const mine = players[this.seat];
      if (mine?.id !== this.me.playerId) this.fail('structure', seq, `seat ${this.seat} of game-start is not mine`);
      if (mine.encryption_key !== this.me.encryptionKey) this.fail('structure', seq, 'game-start lists another encryption key for me than mine');
      if (g.entropy === 'joint' && this.mySeed) {
        const s = (g.player_seeds ?? []).find((x: any) => x.seat === this.seat);
        if (s && s.seed !== hex(this.mySeed)) this.fail('player-seeds', seq, `my seed (seat ${this.seat}) was replaced`);
        if (!s && !this.seedUncertain) this.fail('player-seeds', seq, `my seed (seat ${this.seat}) is missing`);
      }
    }
    const prev = this.previous;
    if (prev) {
      const named = g.previous;
      const fail = (d: string) => this.fail('previous-hand', seq, `hand ${this.handId} after hand ${prev.handId}: ${d}`);
      if (!named) fail('it names no previous hand, as if the room had just opened');
      if (named.hand_id === prev.handId) {
        if (named.hand_number !== prev.handNumber) fail(`it names hand number ${named.hand_number}, that hand is number ${prev.handNumber}`);
        if (!jsonEqual(g.memory ?? null, JSON.parse(prev.memoryAfterText))) fail('it does not start from the table memory that hand left');
        if (g.config_hash !== prev.configHash) fail('its game, version or settings (config hash) differ');
      } else if (!(named.hand_number > prev.handNumber)) {
        fail(`it names hand ${named.hand_id} number ${named.hand_number} as its previous hand, not a hand after number ${prev.handNumber}`);
      }
      if (!(this.handNumber > prev.handNumber)) fail(`hand number ${this.handNumber} is not above ${prev.handNumber}`);
    }
    const last = this.myLast;
    if (this.seat !== null && last && last.balance < MAX_HAND_STAKE) {
      const expected = Math.min(last.balance + last.net - commission, MAX_HAND_STAKE);
      const got = players[this.seat].balance;
      if (expected >= 0 && got !== expected) {
        this.fail('balances', seq, `my balance is ${got}: my last hand left me ${last.balance} ${last.net >= 0 ? '+' : ''}${last.net}, less commission ${commission}, = ${expected}`);
      }
    }
    this.gameStart = g;
  }
}

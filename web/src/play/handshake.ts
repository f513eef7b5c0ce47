// The player's side of the 4-step handshake (SPEC.md §8), sans-IO: each
// step takes the frame text and the time and returns the frame to send.
// The dealer must be the invite's key, and every dealer message of the
// handshake must carry its valid signature.

import { boxKey, concat, sha, signed, unhex, utf8, verifyStrict, type Bytes } from '../audit';
import { rawMembers } from '../rawjson';
import { randomBytes, sign, type Identity } from './key';
import { hex } from '../audit';

export const PROTOCOL_VERSION = 'claw/1';
/** `NAME/VERSION` in `hello` (only `claw-player/…` is version-checked by the dealer). */
export const SDK_VERSION = 'claw-web/1';
/** §8.3: hello to response, and the player's wait for the challenge. */
export const HANDSHAKE_DEADLINE_MS = 10_000;
export const CLOCK_SKEW_MS = 15_000;

/** Why the handshake failed: §8.5's player checks (the dealer is not who the invite says), or the dealer's refusal. */
export class HandshakeError extends Error {
  constructor(
    public code: string,
    message: string,
    /** The dealer refused (signed or not): no check failed. */
    public refusal = false,
  ) {
    super(message);
  }
}

/** What the handshake establishes for the session. */
export interface Session {
  dealer: string;
  dealerEncryptionKey: string;
  /** `crypto_box_beforenm` with the dealer: opens this player's sealed cards. */
  boxKey: Bytes;
  /** The room configuration's exact text, as the challenge signed it. */
  roomConfigText: string;
  roomConfig: any;
  sessionId: string;
  reconnectToken: string;
  seat: number | null;
}

const u64 = (n: number): Bytes => {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, BigInt(n));
  return b;
};

/** `lp(s)`: u16 BE byte length, then the UTF-8 bytes (§1.1). */
function lp(s: string): Bytes {
  const b = utf8(s);
  return concat(new Uint8Array([b.length >> 8, b.length & 0xff]), b);
}

const flag = (v: Bytes | null): Bytes => (v ? concat(new Uint8Array([1]), v) : new Uint8Array([0]));

export function helloBody(h: { protocol_version: string; sdk_version: string; room_id: string; player: Bytes; encryption_key: Bytes; timestamp_ms: number; client_nonce: Bytes; reconnect_token: Bytes | null }): Bytes {
  return concat(lp(h.protocol_version), lp(h.sdk_version), lp(h.room_id), h.player, h.encryption_key, u64(h.timestamp_ms), h.client_nonce, flag(h.reconnect_token));
}

/** Number member that must be a non-negative safe integer. */
function uint(v: unknown, what: string): number {
  if (!Number.isSafeInteger(v) || (v as number) < 0) throw new HandshakeError('malformed', `${what}: not an unsigned integer`);
  return v as number;
}

function bytesOf(v: unknown, n: number, what: string): Bytes {
  try {
    return unhex(v, n, what);
  } catch (e) {
    throw new HandshakeError('malformed', (e as Error).message);
  }
}

export class ClientHandshake {
  private state: 'challenge' | 'result' | 'done' = 'challenge';
  private readonly nonce: Bytes;
  private challenge: { challenge: Bytes; dealerEncryptionKey: string; roomConfigText: string; key: Bytes } | null = null;

  /** Starts the handshake with the dealer `dealer` (hex, from the invite) for `room`; `hello` is the first frame. */
  constructor(
    private readonly me: Identity,
    private readonly dealer: string,
    private readonly room: string,
    private readonly startedMs: number,
    reconnectToken: string | null = null,
  ) {
    this.nonce = randomBytes();
    const token = reconnectToken ? unhex(reconnectToken, 32, 'reconnect token') : null;
    const h = {
      protocol_version: PROTOCOL_VERSION,
      sdk_version: SDK_VERSION,
      room_id: room,
      player: unhex(me.playerId, 32, 'player'),
      encryption_key: unhex(me.encryptionKey, 32, 'encryption key'),
      timestamp_ms: startedMs,
      client_nonce: this.nonce,
      reconnect_token: token,
    };
    const sig = sign(me, signed('claw/v1/hello', helloBody(h)));
    this.hello = JSON.stringify({
      type: 'hello',
      protocol_version: h.protocol_version,
      sdk_version: h.sdk_version,
      room_id: room,
      player: me.playerId,
      encryption_key: me.encryptionKey,
      timestamp_ms: startedMs,
      client_nonce: hex(this.nonce),
      ...(reconnectToken ? { reconnect_token: reconnectToken } : {}),
      sig: hex(sig),
    });
  }

  /** The `hello` frame. */
  readonly hello: string;

  private fail(code: string, message: string): never {
    this.state = 'done';
    throw new HandshakeError(code, message);
  }

  /** Step 2 → 3 (§8.5, in order): returns the `response` frame. */
  onChallenge(text: string, nowMs: number): string {
    if (this.state !== 'challenge') this.fail('unexpected-message', 'unexpected handshake message');
    if (nowMs - this.startedMs > HANDSHAKE_DEADLINE_MS) this.fail('deadline-exceeded', `handshake took longer than ${HANDSHAKE_DEADLINE_MS} ms`);
    const c = JSON.parse(text);
    if (c.dealer !== this.dealer) {
      this.fail('dealer-key-mismatch', `the dealer's key is ${c.dealer}, not the invite's ${this.dealer}: a man in the middle, or an invite that is not this dealer's`);
    }
    const roomConfigText = rawMembers(text).get('room_config');
    if (roomConfigText === undefined || typeof c.room_id !== 'string') this.fail('malformed', 'challenge without room_id or room_config');
    const challenge = bytesOf(c.challenge, 32, 'challenge');
    const body = concat(
      challenge,
      bytesOf(c.dealer, 32, 'dealer'),
      bytesOf(c.dealer_encryption_key, 32, 'dealer_encryption_key'),
      lp(c.room_id),
      sha(utf8(roomConfigText)),
      bytesOf(c.client_nonce, 32, 'client_nonce'),
      unhex(this.me.playerId, 32, 'player'),
      u64(uint(c.timestamp_ms, 'timestamp_ms')),
    );
    if (!verifyStrict(bytesOf(c.sig, 64, 'sig'), signed('claw/v1/challenge', body), unhex(this.dealer, 32, 'dealer'))) {
      this.fail('bad-challenge-signature', 'challenge signature does not verify');
    }
    if (c.client_nonce !== hex(this.nonce)) this.fail('nonce-mismatch', 'challenge does not echo our client nonce');
    if (c.room_id !== this.room) this.fail('room-mismatch', `challenge is for room ${JSON.stringify(c.room_id)}, expected ${JSON.stringify(this.room)}`);
    if (Math.abs(c.timestamp_ms - nowMs) > CLOCK_SKEW_MS) this.fail('clock-skew', `dealer timestamp ${c.timestamp_ms} is more than ${CLOCK_SKEW_MS} ms from our clock ${nowMs}`);
    const key = boxKey(this.me.encryptionSecret, bytesOf(c.dealer_encryption_key, 32, 'dealer_encryption_key'));
    if (!key) this.fail('weak-dealer-key', 'dealer encryption key is of small order');
    const responseBody = concat(challenge, this.nonce, unhex(this.dealer, 32, 'dealer'), lp(this.room), unhex(this.me.playerId, 32, 'player'));
    const sig = sign(this.me, signed('claw/v1/response', responseBody));
    this.challenge = { challenge, dealerEncryptionKey: c.dealer_encryption_key, roomConfigText: roomConfigText!, key: key! };
    this.state = 'result';
    return JSON.stringify({ type: 'response', challenge: c.challenge, dealer: this.dealer, room_id: this.room, sig: hex(sig) });
  }

  /** Step 4, success: the dealer's signature over the acceptance. */
  onAccepted(text: string, nowMs: number): Session {
    const ch = this.challenge;
    if (this.state !== 'result' || !ch) this.fail('unexpected-message', 'unexpected handshake message');
    if (nowMs - this.startedMs > HANDSHAKE_DEADLINE_MS) this.fail('deadline-exceeded', `handshake took longer than ${HANDSHAKE_DEADLINE_MS} ms`);
    const a = JSON.parse(text);
    const seat = a.seat === undefined || a.seat === null ? null : uint(a.seat, 'seat');
    if (seat !== null && seat > 255) this.fail('malformed', 'seat out of range');
    const body = concat(
      ch!.challenge,
      unhex(this.me.playerId, 32, 'player'),
      bytesOf(a.session_id, 32, 'session_id'),
      bytesOf(a.reconnect_token, 32, 'reconnect_token'),
      seat === null ? new Uint8Array([0]) : new Uint8Array([1, seat]),
      u64(uint(a.timestamp_ms, 'timestamp_ms')),
    );
    if (!verifyStrict(bytesOf(a.sig, 64, 'sig'), signed('claw/v1/accepted', body), unhex(this.dealer, 32, 'dealer'))) {
      this.fail('bad-accepted-signature', 'accepted signature does not verify');
    }
    this.state = 'done';
    return {
      dealer: this.dealer,
      dealerEncryptionKey: ch!.dealerEncryptionKey,
      boxKey: ch!.key,
      roomConfigText: ch!.roomConfigText,
      roomConfig: JSON.parse(ch!.roomConfigText),
      sessionId: a.session_id,
      reconnectToken: a.reconnect_token,
      seat,
    };
  }

  /** Step 4, refusal: the reason is the dealer's only if it signed it for this hello. */
  onRejected(text: string): HandshakeError {
    this.state = 'done';
    const r = JSON.parse(text);
    let trusted = false;
    try {
      const body = concat(flag(r.client_nonce ? unhex(r.client_nonce, 32, 'client_nonce') : null), lp(String(r.reason)), u64(uint(r.timestamp_ms, 'timestamp_ms')));
      trusted =
        verifyStrict(unhex(r.sig, 64, 'sig'), signed('claw/v1/rejected', body), unhex(this.dealer, 32, 'dealer')) &&
        (!r.client_nonce || r.client_nonce === hex(this.nonce));
    } catch {
      trusted = false;
    }
    const why = typeof r.message === 'string' && r.message ? ` (${r.message})` : '';
    return trusted
      ? new HandshakeError(String(r.reason), `dealer rejected the handshake: ${r.reason}${why}`, true)
      : new HandshakeError('unsigned-rejection', `dealer rejected us (${r.reason}) but the rejection is not signed by the dealer`, true);
  }
}

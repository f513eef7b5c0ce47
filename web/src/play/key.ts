// The player's identity in the browser (SPEC.md §3): an Ed25519 signing key
// and an X25519 key, made here from the browser's CSPRNG, kept in the
// page's local storage, and exported / imported as the very key file
// `claw-player --key FILE` reads and writes (§3.2, `claw-identity-v1`).

import { ed25519, x25519 } from '@noble/curves/ed25519.js';
import { hex, unhex, type Bytes } from '../audit';
import { rawMembers } from '../rawjson';

export const KEY_FILE_FORMAT = 'claw-identity-v1';
/** The local-storage entry holding the key file's text. */
export const STORAGE_KEY = 'claw-identity-v1';

/** A key file that cannot be used, and why. */
export class KeyFileError extends Error {}

export interface Identity {
  readonly signingSecret: Bytes;
  readonly encryptionSecret: Bytes;
  /** The Ed25519 public key, hex: the player id. */
  readonly playerId: string;
  /** The X25519 public key, hex. */
  readonly encryptionKey: string;
}

/** The subset of the Web Storage API the key needs (tests pass a Map-backed one). */
export interface KeyStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

/** 32 bytes from the platform CSPRNG (WebCrypto). */
export function randomBytes(n = 32): Bytes {
  return globalThis.crypto.getRandomValues(new Uint8Array(n));
}

export function identityFromSecrets(signingSecret: Bytes, encryptionSecret: Bytes): Identity {
  return {
    signingSecret,
    encryptionSecret,
    playerId: hex(ed25519.getPublicKey(signingSecret)),
    encryptionKey: hex(x25519.getPublicKey(encryptionSecret)),
  };
}

/** A fresh identity: two independent secrets (SPEC §3.1 allows it). */
export function generateIdentity(): Identity {
  return identityFromSecrets(randomBytes(), randomBytes());
}

/** Ed25519 signature of an already tagged message (`tag 0x00 body`, §4.1). */
export function sign(id: Identity, message: Bytes): Bytes {
  return ed25519.sign(message, id.signingSecret);
}

/** The key file's text, byte for byte as `claw-player` writes it. */
export function keyFileText(id: Identity): string {
  const file = {
    format: KEY_FILE_FORMAT,
    player_id: id.playerId,
    encryption_key: id.encryptionKey,
    signing_secret: hex(id.signingSecret),
    encryption_secret: hex(id.encryptionSecret),
  };
  return `${JSON.stringify(file, null, 2)}\n`;
}

const FIELDS = ['format', 'player_id', 'encryption_key', 'signing_secret', 'encryption_secret'];

/** Reads a key file as `claw-player` does: exact fields, this format, public keys matching the secrets. */
export function parseKeyFile(text: string): Identity {
  let members: Map<string, string>;
  let obj: Record<string, unknown>;
  try {
    obj = JSON.parse(text);
    members = rawMembers(text.trim());
  } catch (e) {
    throw new KeyFileError(`not a key file: ${(e as Error).message}`);
  }
  const unknown = [...members.keys()].filter((k) => !FIELDS.includes(k));
  if (unknown.length) throw new KeyFileError(`unknown field ${JSON.stringify(unknown[0])}`);
  const missing = FIELDS.filter((k) => !members.has(k));
  if (missing.length) throw new KeyFileError(`missing field ${JSON.stringify(missing[0])}`);
  if (obj.format !== KEY_FILE_FORMAT) throw new KeyFileError(`unknown format ${JSON.stringify(obj.format)}, expected "${KEY_FILE_FORMAT}"`);
  const bytes = (k: string) => {
    try {
      return unhex(obj[k], 32, k);
    } catch (e) {
      throw new KeyFileError((e as Error).message);
    }
  };
  const id = identityFromSecrets(bytes('signing_secret'), bytes('encryption_secret'));
  bytes('player_id');
  bytes('encryption_key');
  if (id.playerId !== obj.player_id || id.encryptionKey !== obj.encryption_key) {
    throw new KeyFileError('stored public key does not match the secret key');
  }
  return id;
}

/** The stored identity, or a new one stored now. A damaged entry is an error, never silently replaced. */
export function loadOrCreate(store: KeyStore): { id: Identity; created: boolean } {
  const text = store.getItem(STORAGE_KEY);
  if (text !== null) return { id: parseKeyFile(text), created: false };
  const id = generateIdentity();
  store.setItem(STORAGE_KEY, keyFileText(id));
  return { id, created: true };
}

/** Replaces the stored identity with the key file `text` (checked first). */
export function importKeyFile(store: KeyStore, text: string): Identity {
  const id = parseKeyFile(text);
  store.setItem(STORAGE_KEY, keyFileText(id));
  return id;
}

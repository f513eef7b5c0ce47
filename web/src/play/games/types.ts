// One small interface per game for the table page (`../page.ts` composes
// them): how the seats, the centre of the table and this player's cards are
// drawn, and the controls of a turn. Every control is built from what the
// game itself says: the `your-turn` options (SPEC §9.4) and the public state
// of the last `action-result` (§9.5, docs/games/*.md).

import type { ActionOption, HandView, Turn } from '../client';

/** A seat as a game draws it, beyond id, stack and last action. */
export interface SeatExtras {
  /** Chips in front of the seat (this round's bet, a call). */
  bet?: number;
  badges: string[];
  acting: boolean;
  out: boolean;
  /** Cards to draw instead of the seat's dealt cards (Blackjack's split hands, a count of hidden cards). */
  cards?: Node | null;
}

export interface Card {
  position: number;
  card: string | null;
}

/** Sends a game action (signed by the client after its checks). */
export type Act = (action: any) => void;

export interface GameUi {
  seats(h: HandView): SeatExtras[];
  /** A line under the centre (street, phase, current bet, multiplier). */
  status(h: HandView): string;
  /** What lies in the middle of the table: board, house, the play to beat. */
  center(h: HandView): Node[];
  /** This player's cards as the game holds them now (played cards gone, a kitty joined). */
  hand(h: HandView): Card[];
  /** The controls of a turn: every offered action, with its cost. */
  turn(t: Turn, h: HandView | null, act: Act): HTMLElement;
}

export type { ActionOption, HandView, Turn };

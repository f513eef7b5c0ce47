// The game's table drawing and controls, by registry name.

import { blackjack } from './blackjack';
import { generic } from './common';
import { douDiZhu } from './dou_di_zhu';
import { guandan } from './guandan';
import { samGong } from './sam_gong';
import { texasHoldem } from './texas_holdem';
import type { GameUi } from './types';

const GAMES: Record<string, GameUi> = {
  'texas-holdem': texasHoldem,
  blackjack,
  'sam-gong': samGong,
  'dou-di-zhu': douDiZhu,
  guandan,
};

export const gameUi = (game: string): GameUi => GAMES[game] ?? generic;
export type { GameUi };

// Controls shared by the games: an option as a button with its cost, a
// ranged option (bet, raise, insurance) with slider, number box and presets.

import { describeAction } from '../../view';
import { el } from '../dom';
import type { Act, ActionOption, Card, GameUi, HandView, SeatExtras, Turn } from './types';

/** The numeric member a ranged action sets (`to` in Hold'em, `amount` elsewhere). */
export function amountKey(action: any): string | null {
  for (const k of ['to', 'amount']) if (typeof action?.[k] === 'number') return k;
  return Object.keys(action ?? {}).find((k) => typeof action[k] === 'number') ?? null;
}

/** One option: a button with its label and cost; disabled when not affordable. */
export function optionButton(o: ActionOption, act: Act, label = describeAction(o.action), extra: Record<string, string> = {}): HTMLButtonElement {
  const b = el('button.act', { 'data-type': o.action?.type ?? '', disabled: !o.affordable, title: o.affordable ? null : 'not affordable', ...extra }, label);
  if (o.cost) b.append(el('span.cost', {}, o.cost));
  b.addEventListener('click', () => act(o.action));
  return b;
}

/** A ranged option: the button sends the amount the slider, box or a preset set. */
export function rangedControl(o: ActionOption, act: Act, presets: [string, number][], label = String(o.action?.type)): HTMLElement {
  const key = amountKey(o.action) ?? 'amount';
  const [min, max] = o.range!;
  const amount = el('b', { 'data-amount': '' }, min);
  const cost = el('span.cost', { 'data-cost': '' }, o.cost);
  const send = el('button.act', { 'data-type': o.action?.type ?? '', disabled: !o.affordable }, `${label} ${key} `, amount, ' ', cost);
  const slider = el('input', { type: 'range', min, max, value: min, step: 1, 'aria-label': 'amount' });
  const box = el('input', { type: 'number', min, max, value: min, 'aria-label': 'amount' });
  const set = (v: number) => {
    const x = Math.max(min, Math.min(max, Math.round(Number.isFinite(v) ? v : min)));
    slider.value = box.value = String(x);
    amount.textContent = String(x);
    cost.textContent = String(o.cost + (x - min));
  };
  slider.addEventListener('input', () => set(Number(slider.value)));
  box.addEventListener('input', () => set(Number(box.value)));
  send.addEventListener('click', () => act({ ...o.action, [key]: Number(box.value) }));
  const pre = el('span.presets');
  for (const [l, v] of presets.filter(([, v], i, a) => a.findIndex(([, w]) => w === v) === i)) {
    const p = el('button.preset', { 'data-v': v }, l);
    p.addEventListener('click', () => set(v));
    pre.append(p);
  }
  return el('div.ranged', {}, send, slider, box, pre);
}

/** Every option of a turn as a button (ranged ones with their amount controls). */
export function allOptions(t: Turn, act: Act, presets: (o: ActionOption) => [string, number][] = (o) => minMax(o), label: (o: ActionOption) => string = (o) => (o.range ? String(o.action?.type) : describeAction(o.action))): HTMLElement {
  const box = el('div.actions');
  for (const o of t.actions) box.append(o.range ? rangedControl(o, act, presets(o), label(o)) : optionButton(o, act, label(o)));
  return box;
}

export const minMax = (o: ActionOption): [string, number][] => (o.range ? [['min', o.range[0]], ['max', o.range[1]]] : []);

/** Multiples of the minimum within the range (bet presets). */
export function multiples(o: ActionOption, ks: number[]): [string, number][] {
  if (!o.range) return [];
  const [min, max] = o.range;
  return [...ks.filter((k) => k * min <= max).map((k): [string, number] => [k === 1 ? 'min' : `×${k}`, k * min]), ['max', max]];
}

export const dealt = (h: HandView): Card[] => (h.seat === null ? [] : (h.seats[h.seat]?.cards ?? []));

/** A seat with no game-specific drawing. */
export const plainSeats = (h: HandView): SeatExtras[] => h.seats.map(() => ({ badges: [], acting: false, out: false }));

/** The games without their own drawing: the options as buttons. */
export const generic: GameUi = {
  seats: (h) => plainSeats(h).map((x, i) => ({ ...x, acting: h.publicState?.to_act === i })),
  status: (h) => (h.publicState?.phase ? `phase ${h.publicState.phase}` : ''),
  center: (h) => [],
  hand: dealt,
  turn: (t, _h, act) => allOptions(t, act),
};

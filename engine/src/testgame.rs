//! `high-card`: a tiny deterministic game for tests and benchmarks of the
//! dealer. It exercises every kind of pending action: antes (debits at
//! start), face-down hole cards, a face-up board card, a burn, bets
//! (debits on actions), a mid-hand reveal of the showdown hands and the
//! pot (credits) — so the engine can be tested without depending on the
//! rules of a real game.
//!
//! Rules: every player antes `ante`; each gets one face-down card; one card
//! is burned and one shown. In seat order each player bets `bet` or folds
//! (the auto action is fold). The highest hole card among those who bet
//! wins the pot; if everyone folds the antes are returned.

use claw_games::{
    ActionOption, CardFace, ChipMove, ChipOp, ChipParty, DealSpec, DealTo, DealtCard, GameError, GameMeta,
    GamePlugin, HandResult, PendingAction, PlayerInfo,
};
use claw_protocol::{CardId, Chips, Seat};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// The `high-card` game.
#[derive(Debug, Clone, Copy, Default)]
pub struct HighCard;

/// Table settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HighCardSettings {
    /// Debited from everyone at start.
    pub ante: u64,
    /// The one bet size.
    pub bet: u64,
    /// Accepted so rooms can pass their bet limits (unused by the rules).
    #[serde(default)]
    pub min_bet: u64,
    /// Accepted so rooms can pass their bet limits (unused by the rules).
    #[serde(default)]
    pub max_bet: u64,
}

impl Default for HighCardSettings {
    fn default() -> Self {
        HighCardSettings { ante: 1, bet: 2, min_bet: 0, max_bet: 0 }
    }
}

/// A move.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", from = "ActionWire")]
pub enum HighCardAction {
    /// Put `bet` chips in and stay in.
    Bet,
    /// Give up the hand.
    Fold,
}

/// [`HighCardAction`]'s JSON, decoded through here so decodes are counted.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
enum ActionWire {
    Bet,
    Fold,
}

impl From<ActionWire> for HighCardAction {
    fn from(w: ActionWire) -> HighCardAction {
        COUNTS.with(|c| c.set(Counts { decoded: c.get().decoded + 1, ..c.get() }));
        match w {
            ActionWire::Bet => HighCardAction::Bet,
            ActionWire::Fold => HighCardAction::Fold,
        }
    }
}

/// How often, on this thread, a `high-card` action was decoded into its
/// type and checked by the rules: what the engine's per-action counts are
/// measured with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Actions decoded (from JSON text or a JSON value).
    pub decoded: u64,
    /// Rule checks of an action (`validate`, also run by `apply`).
    pub checked: u64,
}

thread_local! {
    static COUNTS: std::cell::Cell<Counts> = const { std::cell::Cell::new(Counts { decoded: 0, checked: 0 }) };
}

/// This thread's counts so far, and zeroes them.
pub fn take_counts() -> Counts {
    COUNTS.with(|c| c.replace(Counts::default()))
}

/// Everything about a hand in progress.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HighCardState {
    settings: HighCardSettings,
    balances: Vec<u64>,
    hole: Vec<Option<(u16, CardId)>>,
    board: Option<CardId>,
    acted: Vec<Option<bool>>,
    net: Vec<i64>,
    pot: u64,
    over: bool,
    winner: Option<Seat>,
    shown: Vec<CardId>,
}

impl HighCardState {
    fn next(&self) -> Option<usize> {
        if self.over || self.hole.iter().any(Option::is_none) {
            return None;
        }
        self.acted.iter().position(Option::is_none)
    }
}

impl GamePlugin for HighCard {
    type State = HighCardState;
    type Action = HighCardAction;
    type Settings = HighCardSettings;
    type Memory = ();

    fn meta(&self) -> GameMeta {
        GameMeta::new("high-card", "High Card (test game)", 2, 8, "1")
    }

    fn validate_settings(&self, s: &HighCardSettings) -> Result<(), GameError> {
        if s.ante == 0 || s.bet == 0 {
            return Err(GameError::BadSettings("ante and bet must be positive".into()));
        }
        Ok(())
    }

    fn create_deck(&self, _: &HighCardSettings) -> Vec<CardId> {
        CardId::deck(1, false)
    }

    fn create_game(
        &self,
        s: &HighCardSettings,
        players: &[PlayerInfo],
        _: &(),
    ) -> Result<HighCardState, GameError> {
        if let Some(p) = players.iter().find(|p| p.balance.0 < s.ante + s.bet) {
            return Err(GameError::BadPlayers(format!("{} cannot cover ante and bet", p.id.short())));
        }
        let n = players.len();
        Ok(HighCardState {
            settings: s.clone(),
            balances: players.iter().map(|p| p.balance.0).collect(),
            hole: vec![None; n],
            board: None,
            acted: vec![None; n],
            net: vec![0; n],
            pot: 0,
            over: false,
            winner: None,
            shown: Vec::new(),
        })
    }

    fn start(&self, st: &mut HighCardState) -> Result<Vec<PendingAction>, GameError> {
        let n = st.balances.len();
        let mut out = Vec::new();
        for i in 0..n {
            st.net[i] -= st.settings.ante as i64;
            st.balances[i] -= st.settings.ante;
            st.pot += st.settings.ante;
            out.push(PendingAction::Chip(ChipMove {
                op: ChipOp::Debit,
                party: ChipParty::Seat(Seat(i as u8)),
                amount: Chips(st.settings.ante),
                reason: "ante".into(),
            }));
        }
        let mut cards: Vec<DealSpec> = (0..n)
            .map(|i| DealSpec { target: DealTo::Player(Seat(i as u8)), face: CardFace::Down })
            .collect();
        cards.push(DealSpec { target: DealTo::Burn, face: CardFace::Down });
        cards.push(DealSpec { target: DealTo::Community, face: CardFace::Up });
        out.push(PendingAction::Deal { phase: "hole".into(), cards });
        Ok(out)
    }

    fn receive_cards(
        &self,
        st: &mut HighCardState,
        cards: &[DealtCard],
    ) -> Result<Vec<PendingAction>, GameError> {
        for c in cards {
            match c.target {
                DealTo::Player(s) => {
                    *st.hole.get_mut(s.index()).ok_or_else(|| GameError::BadDeal("seat".into()))? =
                        Some((c.position, c.card))
                }
                DealTo::Community => st.board = Some(c.card),
                _ => {}
            }
        }
        Ok(Vec::new())
    }

    fn to_act(&self, st: &HighCardState) -> Option<Seat> {
        st.next().map(|i| Seat(i as u8))
    }

    fn validate(&self, st: &HighCardState, seat: Seat, a: &HighCardAction) -> Result<(), GameError> {
        COUNTS.with(|c| c.set(Counts { checked: c.get().checked + 1, ..c.get() }));
        if st.over {
            return Err(GameError::HandOver);
        }
        if st.next() != Some(seat.index()) {
            return Err(GameError::NotYourTurn);
        }
        if *a == HighCardAction::Bet && st.balances[seat.index()] < st.settings.bet {
            return Err(GameError::BadAmount("cannot cover the bet".into()));
        }
        Ok(())
    }

    fn apply(
        &self,
        st: &mut HighCardState,
        seat: Seat,
        a: &HighCardAction,
    ) -> Result<Vec<PendingAction>, GameError> {
        self.validate(st, seat, a)?;
        let i = seat.index();
        let mut out = Vec::new();
        match a {
            HighCardAction::Bet => {
                st.acted[i] = Some(true);
                st.balances[i] -= st.settings.bet;
                st.net[i] -= st.settings.bet as i64;
                st.pot += st.settings.bet;
                out.push(PendingAction::Chip(ChipMove {
                    op: ChipOp::Debit,
                    party: ChipParty::Seat(seat),
                    amount: Chips(st.settings.bet),
                    reason: "bet".into(),
                }));
            }
            HighCardAction::Fold => st.acted[i] = Some(false),
        }
        if st.next().is_none() {
            st.over = true;
            let live: Vec<usize> = (0..st.acted.len()).filter(|i| st.acted[*i] == Some(true)).collect();
            if live.is_empty() {
                for j in 0..st.acted.len() {
                    st.net[j] += st.settings.ante as i64;
                    out.push(PendingAction::Chip(ChipMove {
                        op: ChipOp::Credit,
                        party: ChipParty::Seat(Seat(j as u8)),
                        amount: Chips(st.settings.ante),
                        reason: "ante returned".into(),
                    }));
                }
            } else {
                let positions: Vec<u16> = live.iter().filter_map(|j| st.hole[*j].map(|h| h.0)).collect();
                st.shown = live.iter().filter_map(|j| st.hole[*j].map(|h| h.1)).collect();
                out.push(PendingAction::Reveal { positions });
                let w =
                    live.iter().copied().max_by_key(|j| st.hole[*j].map(|h| h.1.card().code())).unwrap_or(0);
                st.winner = Some(Seat(w as u8));
                st.net[w] += st.pot as i64;
                out.push(PendingAction::Chip(ChipMove {
                    op: ChipOp::Credit,
                    party: ChipParty::Seat(Seat(w as u8)),
                    amount: Chips(st.pot),
                    reason: "pot".into(),
                }));
            }
            st.pot = 0;
        }
        Ok(out)
    }

    fn is_over(&self, st: &HighCardState) -> bool {
        st.over
    }

    fn result(&self, st: &HighCardState) -> Option<HandResult> {
        st.over.then(|| HandResult {
            winners: st.winner.into_iter().collect(),
            net: st.net.clone(),
            house_net: 0,
            rake: Chips::ZERO,
            summary: match st.winner {
                Some(w) => format!("{w} wins"),
                None => "everyone folded".into(),
            },
        })
    }

    fn valid_actions(&self, st: &HighCardState) -> Vec<ActionOption<HighCardAction>> {
        let Some(i) = st.next() else { return Vec::new() };
        vec![
            ActionOption {
                action: HighCardAction::Bet,
                cost: Chips(st.settings.bet),
                affordable: st.balances[i] >= st.settings.bet,
                range: None,
            },
            ActionOption { action: HighCardAction::Fold, cost: Chips::ZERO, affordable: true, range: None },
        ]
    }

    fn public_state(&self, st: &HighCardState) -> serde_json::Value {
        json!({
            "phase": if st.over { "over" } else { "betting" },
            "pot": st.pot,
            "board": st.board.map(|c| c.to_string()),
            "acted": st.acted,
            "to_act": st.next(),
            "shown": st.shown,
        })
    }

    fn phase(&self, st: &HighCardState) -> Option<&'static str> {
        Some(if st.over { "over" } else { "betting" })
    }

    /// The board card and the showdown hands.
    fn shown_cards(&self, st: &HighCardState) -> Vec<CardId> {
        st.board.iter().chain(&st.shown).copied().collect()
    }

    fn auto_action(&self, _: &HighCardState, _: Seat) -> Option<HighCardAction> {
        Some(HighCardAction::Fold)
    }

    fn memory_after(&self, _: &HighCardState) {}
}

/// `high-card` behind the type-erased interface.
pub fn high_card() -> std::sync::Arc<dyn claw_games::DynGame> {
    std::sync::Arc::new(claw_games::dynamic::Erased(std::sync::Arc::new(HighCard)))
}

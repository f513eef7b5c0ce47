//! Dou Di Zhu (斗地主, "fight the landlord"): three players, one 54-card pack.
//!
//! Flow: 17 cards each, sealed to their owner, and 3 kitty cards face down
//! on the table → bidding 1–3, each player once in turn from the table's
//! first bidder (a bid of 3 ends it) → the highest bidder becomes the
//! landlord, the kitty is revealed to all and joins the landlord's hand →
//! play: the landlord leads; each player in turn beats the last play or
//! passes; after two passes the last player to play leads again → the first
//! to empty their hand wins for their side (the landlord alone, or the two
//! farmers together).
//!
//! Score: base × bid × 2 per bomb or rocket played × 2 for a spring or an
//! anti-spring. Chips move only at the end: debits from the losing side,
//! then credits to the winning side, capped so that nobody pays more than
//! their balance. Nobody bids: the hand ends with no chip movement and the
//! next hand starts from the next first bidder. Details in
//! docs/games/dou-di-zhu.md.

#![deny(missing_docs)]

pub mod patterns;

use std::collections::HashSet;

use claw_protocol::{Card, CardId, Chips, Seat};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::plugin::{
    ActionOption, BlindDeal, CardFace, ChipMove, ChipOp, ChipParty, DealSpec, DealTo, DealtCard, GameDetails,
    GameError, GameMeta, GamePlugin, HandResult, PendingAction, PlayerInfo,
};
pub use patterns::DdzRules;
use patterns::{beating_under, candidate_plays, classify_under, sort_key, Combo};

/// Registry name of the game.
pub const NAME: &str = "dou-di-zhu";
/// Cards dealt to each player.
pub const HAND_SIZE: usize = 17;
/// Cards in the kitty (底牌).
pub const KITTY_SIZE: usize = 3;
/// The largest base a table may set (2^40 chips), so that base × the largest
/// possible multiplier fits comfortably in 64 bits.
pub const BASE_LIMIT: u64 = claw_protocol::limits::MAX_MULTIPLIED_BASE;

/// The Dou Di Zhu plugin.
#[derive(Debug, Clone, Copy, Default)]
pub struct DouDiZhu;

/// Table settings for Dou Di Zhu.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DdzSettings {
    /// Chips per point (底分), at least 1.
    pub base: Chips,
    /// Optional cap on the multiplier (bid × doublings), e.g. 64 (封顶).
    pub max_multiplier: Option<u64>,
    /// Which attachments are legal: `standard` (default) or `permissive`.
    pub rules: DdzRules,
}

impl Default for DdzSettings {
    fn default() -> Self {
        DdzSettings { base: Chips(1), max_multiplier: None, rules: DdzRules::Standard }
    }
}

/// What carries over between hands: who bids first. It moves one seat
/// clockwise every hand (including hands where nobody bid).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct DdzMemory {
    /// Seat that bids first in the next hand (taken modulo 3).
    pub first_bidder: u8,
}

/// A player's move: `{"type": "bid", "points": 2}`, `{"type": "pass"}`,
/// `{"type": "play", "cards": ["3c", "3d"]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub enum DdzAction {
    /// Bidding: bid 1–3 points, above the current bid.
    Bid {
        /// 1, 2 or 3.
        points: u8,
    },
    /// Bidding: do not bid. Play: do not beat the last play (not when leading).
    Pass {},
    /// Play these physical cards.
    Play {
        /// The cards, each named once, all in the player's hand.
        cards: Vec<CardId>,
    },
}

/// Where a hand is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DdzPhase {
    /// Waiting for the hole and kitty deals.
    Dealing,
    /// Players bid for the landlord.
    Bidding,
    /// Cards are played.
    Playing,
    /// Over (played out, or nobody bid).
    Done,
}

impl DdzPhase {
    /// The name it is serialised as.
    fn name(self) -> &'static str {
        match self {
            DdzPhase::Dealing => "dealing",
            DdzPhase::Bidding => "bidding",
            DdzPhase::Playing => "playing",
            DdzPhase::Done => "done",
        }
    }
}

/// The play to beat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lead {
    /// Who played it.
    pub seat: u8,
    /// How it reads.
    pub combo: Combo,
    /// The cards, sorted by rank.
    pub cards: Vec<CardId>,
}

/// One turn in the history: a bid, a play, or a pass (`cards`/`points` None).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Turn {
    /// Who acted.
    pub seat: u8,
    /// The bid, for a bid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub points: Option<u8>,
    /// The cards, for a play.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cards: Option<Vec<CardId>>,
}

/// How a played-out hand scored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DdzOutcome {
    /// The landlord emptied his hand first.
    pub landlord_won: bool,
    /// Landlord won and the farmers never played.
    pub spring: bool,
    /// Farmers won and the landlord played only his first lead.
    pub anti_spring: bool,
    /// bid × 2^bombs × 2 (spring), after the table cap.
    pub multiplier: u64,
    /// Chips moved per seat (credits minus debits).
    pub net: Vec<i64>,
}

/// A finished hand as typed data ([`GamePlugin::details`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DdzDetails {
    /// The landlord; None when nobody bid.
    pub landlord: Option<u8>,
    /// The winning bid (0 when nobody bid).
    pub bid: u8,
    /// Bombs and rockets played.
    pub bombs: u32,
    /// The chips per point.
    pub base: Chips,
    /// The score and chip movements; None when nobody bid.
    pub outcome: Option<DdzOutcome>,
}

/// Everything about a Dou Di Zhu hand in progress, hidden cards included.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DdzState {
    /// The table settings.
    pub settings: DdzSettings,
    /// Each seat's balance at hand start: the most it can lose.
    pub balances: Vec<Chips>,
    /// Each seat's cards, sorted by rank.
    pub hands: Vec<Vec<CardId>>,
    /// The three kitty cards.
    pub kitty: Vec<CardId>,
    /// Their deck positions, for the reveal.
    pub kitty_positions: Vec<u16>,
    /// Whether the kitty has been shown (when the landlord took it).
    pub kitty_revealed: bool,
    /// Where the hand is.
    pub phase: DdzPhase,
    /// Seat that bid first this hand.
    pub first_bidder: u8,
    /// Bids and bidding passes, in order.
    pub bids: Vec<Turn>,
    /// The highest bid so far (0: none).
    pub high_bid: u8,
    /// The landlord, once bidding is over.
    pub landlord: Option<u8>,
    /// Seat to act.
    pub turn: u8,
    /// The play to beat; None when the player to act leads.
    pub lead: Option<Lead>,
    /// Passes since the last play.
    pub passes: u8,
    /// Every play and pass, in order.
    pub plays: Vec<Turn>,
    /// Bombs and rockets played.
    pub bombs: u32,
    /// Plays (not passes) made per seat.
    pub play_counts: Vec<u32>,
    /// The score, once played out.
    pub outcome: Option<DdzOutcome>,
    /// Outcome in words.
    pub summary: String,
}

fn next(seat: u8) -> u8 {
    (seat + 1) % 3
}

fn faces(cards: &[CardId]) -> Vec<Card> {
    cards.iter().map(|c| c.card()).collect()
}

impl DdzState {
    /// bid × 2^bombs, before the spring doubling and the cap.
    fn running_multiplier(&self) -> u128 {
        u128::from(self.high_bid.max(1)) << self.bombs.min(64)
    }
}

impl DouDiZhu {
    fn expected_hole() -> Vec<DealSpec> {
        (0..HAND_SIZE * 3)
            .map(|i| DealSpec { target: DealTo::Player(Seat((i % 3) as u8)), face: CardFace::Down })
            .collect()
    }

    fn expected_kitty() -> Vec<DealSpec> {
        vec![DealSpec { target: DealTo::Community, face: CardFace::Down }; KITTY_SIZE]
    }

    fn end_bidding(&self, st: &mut DdzState) -> Vec<PendingAction> {
        let landlord = st.bids.iter().filter(|b| b.points.is_some()).max_by_key(|b| b.points).map(|b| b.seat);
        let Some(l) = landlord else {
            st.phase = DdzPhase::Done;
            st.summary = "nobody bid: no score, the next hand starts from the next first bidder".into();
            return Vec::new();
        };
        st.landlord = Some(l);
        let kitty = st.kitty.clone();
        let hand = &mut st.hands[usize::from(l)];
        hand.extend(kitty);
        hand.sort_by_key(sort_key);
        st.kitty_revealed = true;
        st.phase = DdzPhase::Playing;
        st.turn = l;
        vec![PendingAction::Reveal { positions: st.kitty_positions.clone() }]
    }

    fn finish(&self, st: &mut DdzState, winner: u8) -> Vec<PendingAction> {
        st.phase = DdzPhase::Done;
        let Some(landlord) = st.landlord else {
            return Vec::new();
        };
        let landlord_won = winner == landlord;
        let farmers: Vec<u8> = (0..3u8).filter(|s| *s != landlord).collect();
        let farmer_plays: u32 = farmers.iter().map(|f| st.play_counts[usize::from(*f)]).sum();
        let spring = landlord_won && farmer_plays == 0;
        let anti_spring = !landlord_won && st.play_counts[usize::from(landlord)] == 1;
        let mut mult = st.running_multiplier();
        if spring || anti_spring {
            mult *= 2;
        }
        if let Some(cap) = st.settings.max_multiplier {
            mult = mult.min(u128::from(cap));
        }
        let multiplier = u64::try_from(mult).unwrap_or(u64::MAX);
        let stake = u128::from(st.settings.base.0) * mult;
        let bal = |s: u8| u128::from(st.balances[usize::from(s)].0);
        let mut net = vec![0i64; 3];
        let mut debits = Vec::new();
        let mut credits = Vec::new();
        let mut mv = |s: u8, amount: u128, reason: String, debit: bool| {
            // Bounded by a balance, so it fits in u64.
            let amount = u64::try_from(amount).unwrap_or(u64::MAX);
            if amount == 0 {
                return;
            }
            let party = ChipParty::Seat(Seat(s));
            if debit {
                net[usize::from(s)] -= amount as i64;
                debits.push(PendingAction::Chip(ChipMove {
                    op: ChipOp::Debit,
                    party,
                    amount: Chips(amount),
                    reason,
                }));
            } else {
                net[usize::from(s)] += amount as i64;
                credits.push(PendingAction::Chip(ChipMove {
                    op: ChipOp::Credit,
                    party,
                    amount: Chips(amount),
                    reason,
                }));
            }
        };
        if landlord_won {
            let mut total = 0u128;
            for f in &farmers {
                let pay = stake.min(bal(*f));
                total += pay;
                mv(*f, pay, "farmer loses".into(), true);
            }
            mv(landlord, total, "landlord wins".into(), false);
        } else {
            let each = stake.min(bal(landlord) / 2);
            mv(landlord, each * 2, "landlord loses".into(), true);
            for f in &farmers {
                mv(*f, each, "farmer wins".into(), false);
            }
        }
        let kind = if spring {
            ", spring"
        } else if anti_spring {
            ", anti-spring"
        } else {
            ""
        };
        st.summary = format!(
            "{} win{kind}: bid {} × {} bomb(s) → multiplier {multiplier}, base {}",
            if landlord_won { format!("landlord (seat {landlord})") } else { "farmers".to_string() },
            st.high_bid,
            st.bombs,
            st.settings.base
        );
        st.outcome = Some(DdzOutcome { landlord_won, spring, anti_spring, multiplier, net });
        debits.extend(credits);
        debits
    }

    /// Checks `seat`'s action now; a play's combination is returned so
    /// that applying it does not read the cards again.
    fn resolve(&self, st: &DdzState, seat: Seat, action: &DdzAction) -> Result<Option<Combo>, GameError> {
        match st.phase {
            DdzPhase::Done => return Err(GameError::HandOver),
            DdzPhase::Dealing => return Err(GameError::NotYourTurn),
            _ => {}
        }
        if self.to_act(st) != Some(seat) {
            return Err(GameError::NotYourTurn);
        }
        match (st.phase, action) {
            (DdzPhase::Bidding, DdzAction::Bid { points }) => {
                if !(1..=3).contains(points) {
                    return Err(GameError::BadAmount(format!("a bid is 1–3 points, not {points}")));
                }
                if *points <= st.high_bid {
                    return Err(GameError::BadAmount(format!(
                        "a bid must be above the current bid of {}",
                        st.high_bid
                    )));
                }
                Ok(None)
            }
            (DdzPhase::Bidding, DdzAction::Pass {}) => Ok(None),
            (DdzPhase::Playing, DdzAction::Pass {}) => {
                if st.lead.is_none() {
                    return Err(GameError::Illegal("the leader must play".into()));
                }
                Ok(None)
            }
            (DdzPhase::Playing, DdzAction::Play { cards }) => self.check_play(st, seat.0, cards).map(Some),
            (DdzPhase::Bidding, DdzAction::Play { .. }) => {
                Err(GameError::Illegal("cards are played after the bidding".into()))
            }
            (_, DdzAction::Bid { .. }) => Err(GameError::Illegal("the bidding is over".into())),
            _ => Err(GameError::Illegal("not allowed now".into())),
        }
    }

    /// Applies an action [`DouDiZhu::resolve`] accepted (`combo`: its play).
    fn apply_valid(
        &self,
        st: &mut DdzState,
        seat: Seat,
        action: &DdzAction,
        combo: Option<Combo>,
    ) -> Result<Vec<PendingAction>, GameError> {
        let s = seat.0;
        match (st.phase, action) {
            (DdzPhase::Bidding, DdzAction::Bid { points }) => {
                st.bids.push(Turn { seat: s, points: Some(*points), cards: None });
                st.high_bid = *points;
                if *points == 3 || st.bids.len() == 3 {
                    return Ok(self.end_bidding(st));
                }
                st.turn = next(s);
                Ok(Vec::new())
            }
            (DdzPhase::Bidding, _) => {
                st.bids.push(Turn { seat: s, points: None, cards: None });
                if st.bids.len() == 3 {
                    return Ok(self.end_bidding(st));
                }
                st.turn = next(s);
                Ok(Vec::new())
            }
            (_, DdzAction::Play { cards }) => {
                let combo =
                    combo.ok_or_else(|| GameError::Illegal("a play without its combination".into()))?;
                let hand = &mut st.hands[usize::from(s)];
                hand.retain(|c| !cards.contains(c));
                let empty = hand.is_empty();
                let mut sorted = cards.clone();
                sorted.sort_by_key(sort_key);
                if combo.is_bomb() {
                    st.bombs += 1;
                }
                st.play_counts[usize::from(s)] += 1;
                st.plays.push(Turn { seat: s, points: None, cards: Some(sorted.clone()) });
                st.lead = Some(Lead { seat: s, combo, cards: sorted });
                st.passes = 0;
                if empty {
                    return Ok(self.finish(st, s));
                }
                st.turn = next(s);
                Ok(Vec::new())
            }
            _ => {
                st.plays.push(Turn { seat: s, points: None, cards: None });
                st.passes += 1;
                st.turn = next(s);
                if st.passes >= 2 {
                    st.lead = None;
                    st.passes = 0;
                }
                Ok(Vec::new())
            }
        }
    }

    /// Checks a play's cards and returns how it reads.
    fn check_play(&self, st: &DdzState, seat: u8, cards: &[CardId]) -> Result<Combo, GameError> {
        if cards.is_empty() {
            return Err(GameError::Illegal("a play needs at least one card".into()));
        }
        let hand = &st.hands[usize::from(seat)];
        if cards.len() > hand.len() {
            return Err(GameError::Illegal(format!("{} cards named, {} in hand", cards.len(), hand.len())));
        }
        let mut seen = HashSet::new();
        for c in cards {
            if !seen.insert(*c) {
                return Err(GameError::Illegal(format!("card {c} named twice")));
            }
            if !hand.contains(c) {
                return Err(GameError::CardNotInHand(c.to_string()));
            }
        }
        let f = faces(cards);
        let rules = st.settings.rules;
        match &st.lead {
            None => classify_under(&f, rules)
                .ok_or_else(|| GameError::Illegal("these cards form no pattern".into())),
            Some(lead) => beating_under(&f, &lead.combo, rules)
                .ok_or_else(|| GameError::Illegal(format!("does not beat the {} on the table", lead.combo))),
        }
    }
}

impl GamePlugin for DouDiZhu {
    type State = DdzState;
    type Action = DdzAction;
    type Settings = DdzSettings;
    type Memory = DdzMemory;

    fn meta(&self) -> GameMeta {
        GameMeta { blind: BlindDeal::OwnerOpening, ..GameMeta::new(NAME, "Dou Di Zhu", 3, 3, "2") }
    }

    fn validate_settings(&self, s: &DdzSettings) -> Result<(), GameError> {
        if s.base.0 == 0 || s.base.0 > BASE_LIMIT {
            return Err(GameError::BadSettings("base must be 1–2^40".into()));
        }
        if s.max_multiplier == Some(0) {
            return Err(GameError::BadSettings("max_multiplier must be at least 1".into()));
        }
        Ok(())
    }

    fn create_deck(&self, _s: &DdzSettings) -> Vec<CardId> {
        CardId::deck(1, true)
    }

    fn create_game(
        &self,
        settings: &DdzSettings,
        players: &[PlayerInfo],
        memory: &DdzMemory,
    ) -> Result<DdzState, GameError> {
        self.validate_settings(settings)?;
        if players.len() != 3 {
            return Err(GameError::BadPlayers(format!(
                "dou di zhu needs exactly 3 players, got {}",
                players.len()
            )));
        }
        let first = memory.first_bidder % 3;
        Ok(DdzState {
            settings: settings.clone(),
            balances: players.iter().map(|p| p.balance).collect(),
            hands: vec![Vec::new(); 3],
            kitty: Vec::new(),
            kitty_positions: Vec::new(),
            kitty_revealed: false,
            phase: DdzPhase::Dealing,
            first_bidder: first,
            bids: Vec::new(),
            high_bid: 0,
            landlord: None,
            turn: first,
            lead: None,
            passes: 0,
            plays: Vec::new(),
            bombs: 0,
            play_counts: vec![0; 3],
            outcome: None,
            summary: String::new(),
        })
    }

    fn start(&self, _st: &mut DdzState) -> Result<Vec<PendingAction>, GameError> {
        Ok(vec![
            PendingAction::Deal { phase: "hole".into(), cards: Self::expected_hole() },
            PendingAction::Deal { phase: "kitty".into(), cards: Self::expected_kitty() },
        ])
    }

    fn receive_cards(&self, st: &mut DdzState, cards: &[DealtCard]) -> Result<Vec<PendingAction>, GameError> {
        if st.phase != DdzPhase::Dealing {
            return Err(GameError::BadDeal("no deal was requested".into()));
        }
        let hole_done = st.hands.iter().any(|h| !h.is_empty());
        let expected = if hole_done { Self::expected_kitty() } else { Self::expected_hole() };
        if cards.len() != expected.len() {
            return Err(GameError::BadDeal(format!(
                "expected {} cards, got {}",
                expected.len(),
                cards.len()
            )));
        }
        for (c, spec) in cards.iter().zip(&expected) {
            if c.target != spec.target || c.face != spec.face {
                return Err(GameError::BadDeal(format!(
                    "card at position {} went to the wrong place",
                    c.position
                )));
            }
            if c.card.pack() != 0 {
                return Err(GameError::BadDeal(format!("{} is not in a single pack", c.card)));
            }
        }
        // Every physical card once across the hole cards and the kitty.
        let mut seen: HashSet<CardId> = st.hands.iter().flatten().copied().collect();
        for c in cards {
            if !seen.insert(c.card) {
                return Err(GameError::BadDeal(format!("card {} dealt twice", c.card)));
            }
        }
        if hole_done {
            st.kitty = cards.iter().map(|c| c.card).collect();
            st.kitty_positions = cards.iter().map(|c| c.position).collect();
            st.phase = DdzPhase::Bidding;
            st.turn = st.first_bidder;
        } else {
            for c in cards {
                if let DealTo::Player(s) = c.target {
                    st.hands[s.index()].push(c.card);
                }
            }
            for h in &mut st.hands {
                h.sort_by_key(sort_key);
            }
        }
        Ok(Vec::new())
    }

    fn to_act(&self, st: &DdzState) -> Option<Seat> {
        matches!(st.phase, DdzPhase::Bidding | DdzPhase::Playing).then_some(Seat(st.turn))
    }

    fn validate(&self, st: &DdzState, seat: Seat, action: &DdzAction) -> Result<(), GameError> {
        self.resolve(st, seat, action).map(|_| ())
    }

    fn apply(
        &self,
        st: &mut DdzState,
        seat: Seat,
        action: &DdzAction,
    ) -> Result<Vec<PendingAction>, GameError> {
        let combo = self.resolve(st, seat, action)?;
        self.apply_valid(st, seat, action, combo)
    }

    fn is_over(&self, st: &DdzState) -> bool {
        st.phase == DdzPhase::Done
    }

    fn result(&self, st: &DdzState) -> Option<HandResult> {
        if st.phase != DdzPhase::Done {
            return None;
        }
        let (winners, net) = match (&st.outcome, st.landlord) {
            (Some(o), Some(l)) => {
                let w: Vec<Seat> = (0..3u8).filter(|s| (*s == l) == o.landlord_won).map(Seat).collect();
                (w, o.net.clone())
            }
            _ => (Vec::new(), vec![0; 3]),
        };
        Some(HandResult { winners, net, house_net: 0, rake: Chips::ZERO, summary: st.summary.clone() })
    }

    fn valid_actions(&self, st: &DdzState) -> Vec<ActionOption<DdzAction>> {
        let free = |action| ActionOption { action, cost: Chips::ZERO, affordable: true, range: None };
        match st.phase {
            DdzPhase::Bidding => std::iter::once(DdzAction::Pass {})
                .chain((st.high_bid + 1..=3).map(|points| DdzAction::Bid { points }))
                .map(free)
                .collect(),
            DdzPhase::Playing => {
                let lead = st.lead.as_ref().map(|l| &l.combo);
                let mut out: Vec<_> = lead.map(|_| free(DdzAction::Pass {})).into_iter().collect();
                out.extend(
                    candidate_plays(&st.hands[usize::from(st.turn)], lead, st.settings.rules)
                        .into_iter()
                        .map(|cards| free(DdzAction::Play { cards })),
                );
                out
            }
            _ => Vec::new(),
        }
    }

    fn public_state(&self, st: &DdzState) -> Value {
        json!({
            "phase": st.phase,
            "to_act": self.to_act(st),
            "first_bidder": st.first_bidder,
            "bids": st.bids,
            "bid": st.high_bid,
            "landlord": st.landlord,
            "kitty": if st.kitty_revealed { json!(st.kitty) } else { json!(st.kitty.len()) },
            "cards_left": st.hands.iter().map(|h| h.len()).collect::<Vec<_>>(),
            "lead": st.lead,
            "plays": st.plays,
            "bombs": st.bombs,
            "multiplier": u64::try_from(st.running_multiplier()).unwrap_or(u64::MAX),
            "base": st.settings.base,
            "rules": st.settings.rules,
            "outcome": st.outcome,
            "summary": st.summary,
        })
    }

    fn phase(&self, st: &DdzState) -> Option<&'static str> {
        Some(st.phase.name())
    }

    /// The kitty once revealed, the play to beat and every card played.
    fn shown_cards(&self, st: &DdzState) -> Vec<CardId> {
        let kitty = st.kitty.iter().filter(|_| st.kitty_revealed);
        let lead = st.lead.iter().flat_map(|l| &l.cards);
        let turns = st.bids.iter().chain(&st.plays).filter_map(|t| t.cards.as_ref()).flatten();
        kitty.chain(lead).chain(turns).copied().collect()
    }

    fn cards_played(&self, action: &DdzAction) -> Vec<CardId> {
        match action {
            DdzAction::Play { cards } => cards.clone(),
            DdzAction::Bid { .. } | DdzAction::Pass {} => Vec::new(),
        }
    }

    fn public_cards_held(&self, public_state: &Value, seat: Seat) -> Vec<CardId> {
        // The revealed kitty (a list; a count while hidden) is the landlord's.
        let landlord = public_state.get("landlord").and_then(Value::as_u64);
        match public_state.get("kitty") {
            Some(kitty @ Value::Array(_)) if landlord == Some(u64::from(seat.0)) => {
                Vec::<CardId>::deserialize(kitty).unwrap_or_default()
            }
            _ => Vec::new(),
        }
    }

    fn auto_action(&self, st: &DdzState, seat: Seat) -> Option<DdzAction> {
        if self.to_act(st) != Some(seat) {
            return None;
        }
        match st.phase {
            DdzPhase::Bidding => Some(DdzAction::Pass {}),
            DdzPhase::Playing if st.lead.is_some() => Some(DdzAction::Pass {}),
            DdzPhase::Playing => st.hands[seat.index()].first().map(|c| DdzAction::Play { cards: vec![*c] }),
            _ => None,
        }
    }

    fn details(&self, st: &DdzState) -> Option<GameDetails> {
        (st.phase == DdzPhase::Done).then(|| {
            GameDetails::DouDiZhu(DdzDetails {
                landlord: st.landlord,
                bid: st.high_bid,
                bombs: st.bombs,
                base: st.settings.base,
                outcome: st.outcome.clone(),
            })
        })
    }

    fn memory_after(&self, st: &DdzState) -> DdzMemory {
        DdzMemory { first_bidder: next(st.first_bidder) }
    }
}

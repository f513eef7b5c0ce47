//! A table driven by the real [`Hand`] engine, in process, for tests and
//! benchmarks of the players' side (the SDK's verifier, the auditor, the
//! malicious-dealer harness). Every key and random draw derives from a
//! seed; a chooser picks each action. No room, no chips, no clock.
//!
//! Feature `test-game` only: not part of the production API.

use std::sync::Arc;

use claw_games::{CardFace, DealTo, HandEvent, HandResult};
use claw_protocol::messages::{
    ActionOption, EntropyMode, EventBody, PlayerSeed, RawJson, RevealPolicy, RoomConfig, SignedAction,
};
use claw_protocol::transcript::{Transcript, TranscriptBuilder, TranscriptError};
use claw_protocol::{CardId, CardOpening, Chips, HandId, Identity, SealedCard, Seat, Seed};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use serde_json::Value;

use crate::hand::{Carried, EngineError, GameSpec, Hand, HandSeat};

/// What a chooser sees on a turn.
pub struct TurnInfo<'a> {
    /// The seat to act.
    pub seat: Seat,
    /// The options of `your-turn`.
    pub actions: &'a [ActionOption],
    /// The game's public state.
    pub public_state: &'a Value,
    /// The seat's own dealt cards (face down or up), minus those it played.
    pub hand: &'a [CardId],
    /// The deck position of each card of `hand`.
    pub positions: &'a [(u16, CardId)],
    /// Face-up community and house cards.
    pub table: &'a [CardId],
    /// The seat's chips left in the hand.
    pub balance: Chips,
    /// The game's normalised settings.
    pub settings: &'a Value,
    /// The table memory the hand started from.
    pub memory: &'a Value,
}

/// Why a table could not play a hand.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    /// The engine refused.
    #[error("engine: {0}")]
    Engine(#[from] EngineError),
    /// The game refused.
    #[error("game: {0}")]
    Game(#[from] claw_games::GameError),
    /// Re-signing failed.
    #[error("transcript: {0}")]
    Transcript(#[from] TranscriptError),
    /// The chooser or the engine refused an action.
    #[error("{0}")]
    Other(String),
}

/// A table of seeded identities playing one game with the real engine.
pub struct Table {
    /// The dealer's keys (signs every event, seals private cards).
    pub dealer: Arc<Identity>,
    /// The players, in seat order.
    pub players: Vec<Arc<Identity>>,
    /// Chips each player brings to every hand.
    pub balance: Chips,
    /// Registry name of the game.
    pub game_name: String,
    /// Reveal policy of the hands.
    pub reveal: RevealPolicy,
    /// Every `n`-th turn is taken by the dealer as a timeout (auto action).
    pub timeout_every: Option<usize>,
    /// The room's commission, taken from each player before every hand.
    pub commission: Chips,
    /// Each player's account carries over from hand to hand (start balance
    /// = previous start + net − commission, as a room does); otherwise every
    /// hand starts from `balance − commission`.
    pub carry_balances: bool,
    /// Each player's chip account between hands (with `carry_balances`).
    accounts: Vec<Chips>,
    game: Arc<dyn claw_games::DynGame>,
    settings: Value,
    /// The table memory and previous hand the next hand starts from.
    carried: Carried,
    rng: ChaCha20Rng,
    hand_number: u64,
}

/// One hand played by [`Table::play_hand`]: the signed transcript, its
/// bodies (to alter and re-sign), and what the players held.
#[derive(Debug, Clone)]
pub struct PlayedHand {
    /// The hand.
    pub hand_id: HandId,
    /// The engine's signed transcript.
    pub transcript: Transcript,
    /// Every event body, `hand-prepare` first, `game-end` last.
    pub bodies: Vec<EventBody>,
    /// The seed each player sent, by seat.
    pub player_seeds: Vec<Option<Seed>>,
    /// The result the rules gave.
    pub result: HandResult,
    /// `your-turn` messages the dealer sent, in order, with the index in
    /// `bodies` they precede.
    pub turns: Vec<(usize, Seat, Vec<ActionOption>)>,
}

impl PlayedHand {
    /// Chains the bodies (altered or not) as `dealer`, with a header naming
    /// `room`, in the engine's bursts: an event is signed where the engine
    /// signed it (and the last one always).
    pub fn sign(&self, dealer: &Identity, room: &str) -> Result<Transcript, TableError> {
        let mut b = TranscriptBuilder::with_header(self.hand_id, dealer.id(), room);
        let last = self.bodies.len().saturating_sub(1);
        for (i, body) in self.bodies.iter().enumerate() {
            let signed = self.transcript.events.get(i).is_none_or(|e| e.sig.is_some());
            if signed || i == last {
                b.append(dealer, body)?;
            } else {
                b.append_unsigned(dealer, body)?;
            }
        }
        Ok(b.into_transcript())
    }
}

impl Table {
    /// A table of `players` seats of registry game `game` (or the test game
    /// `high-card`) with `settings` (`null` = defaults); every key and
    /// random draw derives from `seed`.
    pub fn new(game: &str, settings: &Value, players: usize, seed: u64) -> Result<Table, TableError> {
        let g = match game {
            "high-card" => crate::testgame::high_card(),
            _ => claw_games::registry::get(game)?,
        };
        let settings = g.normalize_settings(settings)?;
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let dealer = Arc::new(Identity::generate(&mut rng));
        let players = (0..players).map(|_| Arc::new(Identity::generate(&mut rng))).collect();
        Ok(Table {
            dealer,
            players,
            balance: Chips(10_000),
            game_name: game.to_owned(),
            reveal: RevealPolicy::Full,
            timeout_every: None,
            commission: Chips::ZERO,
            carry_balances: false,
            accounts: Vec::new(),
            game: g,
            settings,
            carried: Carried::default(),
            rng,
            hand_number: 0,
        })
    }

    /// Seals `opening` to the player in `seat` (for tampering tests that
    /// put another card in a box).
    pub fn seal_for(
        &mut self,
        seat: Seat,
        hand: &HandId,
        opening: &CardOpening,
    ) -> Result<SealedCard, TableError> {
        let p = self.players.get(seat.index()).ok_or_else(|| TableError::Other(format!("no {seat}")))?;
        let key =
            self.dealer.shared_key(&p.encryption_key()).map_err(|e| TableError::Other(e.to_string()))?;
        Ok(key.seal(&mut self.rng, hand, opening))
    }

    /// The room configuration of the table's room (`room`), as the
    /// handshake signs it and every `game-start` carries it: the table's
    /// game, settings, seats, commission, reveal policy, joint entropy and
    /// a seed timeout of 1 s.
    pub fn room_config(&self) -> RoomConfig {
        let seats = u8::try_from(self.players.len()).unwrap_or(u8::MAX);
        RoomConfig {
            room_id: "room".into(),
            game: self.game_name.clone(),
            settings: self.settings.clone(),
            buy_in: Chips::ZERO,
            min_bet: Chips::ZERO,
            max_bet: Chips::ZERO,
            commission: self.commission,
            min_players: seats,
            max_players: seats,
            entropy: EntropyMode::Joint,
            reveal: self.reveal,
            action_timeout_ms: 30_000,
            between_hands_ms: 0,
            seed_timeout_ms: 1_000,
            reveal_delay_ms: None,
            deal: Default::default(),
        }
    }

    /// Plays one hand through the engine, every seat choosing with
    /// `choose`; the table memory moves on to the next hand, which names
    /// this one as its previous hand.
    pub fn play_hand(
        &mut self,
        choose: &mut dyn FnMut(&TurnInfo<'_>, &mut ChaCha20Rng) -> Result<Value, String>,
    ) -> Result<PlayedHand, TableError> {
        let spec = Arc::new(
            GameSpec::new(
                "room",
                Arc::clone(&self.game),
                self.settings.clone(),
                EntropyMode::Joint,
                self.reveal,
                1_000,
            )?
            .for_room(&self.room_config())?,
        );
        if !self.carry_balances || self.accounts.len() != self.players.len() {
            self.accounts = vec![self.balance; self.players.len()];
        }
        let mut seats = Vec::with_capacity(self.players.len());
        for (p, account) in self.players.iter().zip(&self.accounts) {
            let key =
                self.dealer.shared_key(&p.encryption_key()).map_err(|e| TableError::Other(e.to_string()))?;
            seats.push(HandSeat {
                id: p.id(),
                encryption_key: p.encryption_key(),
                balance: account.saturating_sub(self.commission),
                commission: self.commission,
                key,
                house_ai: false,
            });
        }
        let starts: Vec<Chips> = seats.iter().map(|s| s.balance).collect();
        let hand_id = HandId::random(&mut self.rng);
        let (mut hand, _) = Hand::prepare(
            spec,
            Arc::clone(&self.dealer),
            seats,
            self.carried.clone(),
            self.hand_number,
            hand_id,
            &mut self.rng,
        )?;
        let mut player_seeds = Vec::with_capacity(self.players.len());
        for (i, p) in self.players.iter().enumerate() {
            let seed = Seed::random(&mut self.rng);
            hand.add_seed(Seat(i as u8), &PlayerSeed::sign(p, hand_id, seed))
                .map_err(|e| TableError::Other(e.to_string()))?;
            player_seeds.push(Some(seed));
        }
        hand.start(&mut self.rng)?;
        let mut c = hand.commit(&mut self.rng, 0)?;
        let mut played: Vec<Vec<CardId>> = vec![Vec::new(); self.players.len()];
        let mut turns = Vec::new();
        let mut turn_no = 0usize;
        let end = loop {
            if let Some(end) = c.end {
                break end;
            }
            let turn = c.your_turn.take().ok_or_else(|| TableError::Other("nobody to act".into()))?;
            turn_no += 1;
            if turn_no > 10_000 {
                return Err(TableError::Other("hand does not end".into()));
            }
            let seat = turn.seat;
            turns.push((hand.transcript().events.len(), seat, turn.actions.clone()));
            if self.timeout_every.is_some_and(|n| n > 0 && turn_no.is_multiple_of(n)) {
                hand.auto_act(seat, claw_protocol::messages::TimeoutReason::Timeout)?;
                let before = hand.transcript().events.len();
                c = hand.commit(&mut self.rng, 0)?;
                // The cards the dealer played for the seat leave its hand.
                for e in &hand.transcript().events[before..] {
                    if let Ok(EventBody::TimeoutAction(t)) = e.decode_body() {
                        played[seat.index()].extend(self.game.cards_played(&t.action));
                    }
                }
                continue;
            }
            let (positions, table) = cards_of(hand.game_events(), seat, &played[seat.index()]);
            let own: Vec<CardId> = positions.iter().map(|(_, c)| *c).collect();
            let public = hand.public_state().map_or(Value::Null, |p| (*p).clone());
            let info = TurnInfo {
                seat,
                actions: &turn.actions,
                public_state: &public,
                hand: &own,
                positions: &positions,
                table: &table,
                balance: turn.balance,
                settings: &self.settings,
                memory: &self.carried.memory,
            };
            let action = choose(&info, &mut self.rng).map_err(TableError::Other)?;
            played[seat.index()].extend(self.game.cards_played(&action));
            let raw = RawJson::from_value(&action).map_err(|e| TableError::Other(e.to_string()))?;
            let player = &self.players[seat.index()];
            let signed = SignedAction::sign(player, hand_id, turn.seq, raw);
            hand.act(&player.id(), signed).map_err(|r| TableError::Other(r.reason))?;
            c = hand.commit(&mut self.rng, 0)?;
        };
        self.carried = end.carried();
        self.hand_number += 1;
        for ((account, start), net) in self.accounts.iter_mut().zip(&starts).zip(&end.result.net) {
            *account = Chips(start.0.saturating_add_signed(*net));
        }
        let transcript = hand.transcript().clone();
        let bodies = transcript
            .events
            .iter()
            .map(|e| e.decode_body().map_err(|e| TableError::Other(e.to_string())))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(PlayedHand { hand_id, transcript, bodies, player_seeds, result: end.result, turns })
    }
}

/// A seat's own cards with their deck positions (dealt or transferred to it,
/// minus those played and transferred away) and the face-up table cards.
fn cards_of(events: &[HandEvent], seat: Seat, played: &[CardId]) -> (Vec<(u16, CardId)>, Vec<CardId>) {
    let mut held: Vec<(u16, CardId, DealTo)> = Vec::new();
    let mut table = Vec::new();
    for e in events {
        match e {
            HandEvent::Dealt { cards, .. } => {
                for d in cards {
                    held.push((d.position, d.card, d.target));
                    if matches!(d.target, DealTo::Community | DealTo::House) && d.face == CardFace::Up {
                        table.push(d.card);
                    }
                }
            }
            HandEvent::Transfer { position, to, .. } => {
                if let Some(h) = held.iter_mut().find(|h| h.0 == *position) {
                    h.2 = DealTo::Player(*to);
                }
            }
            _ => {}
        }
    }
    let own = held
        .into_iter()
        .filter(|(_, c, t)| *t == DealTo::Player(seat) && !played.contains(c))
        .map(|(p, c, _)| (p, c))
        .collect();
    (own, table)
}

//! An in-process reference dealer that builds complete, signed hand
//! transcripts from the protocol primitives and the games' `HandRunner`,
//! with bots choosing every action. For tests, benchmarks and the
//! malicious-dealer harness: a test takes the honest event bodies of a hand
//! ([`SimHand::bodies`]), alters exactly one thing, signs them
//! ([`SimHand::sign`]) and checks that the live verifier or the auditor
//! names the right check. It is not the dealer node (no sockets, no chips,
//! no timers).

use std::sync::Arc;

use claw_games::{
    registry, DealTarget, DynGame, Face, GameError, GameResult, HandEvent, HandRunner, PlayerInfo,
};
use claw_protocol::messages::{
    config_hash, ActionChoice, ActionResult, CardFace, ChipMove, ChipOp, ChipParty, ChipsMoved, DealEvent,
    DealTo, DealtCardMsg, DeckMode, EntropyMode, EventBody, GameEnd, GameStart, HandPlayer, HandPrepare,
    HandResult, PlayerSeed, RawJson, Reveal, RevealPolicy, SeatSeed, SignedAction, TimeoutAction,
};
use claw_protocol::transcript::{Transcript, TranscriptBuilder, TranscriptError};
use claw_protocol::{
    leaf, merkle_root, seed_commitment, shuffle, shuffle_seed, CardId, CardOpening, Chips, HandId, Identity,
    Salt, SealedCard, Seat, Seed,
};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use serde_json::Value;

use crate::bots::{Strategy, TurnView};

/// Why the simulated dealer could not build a hand.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The game refused something.
    #[error("game: {0}")]
    Game(#[from] GameError),
    /// Signing or chaining failed.
    #[error("transcript: {0}")]
    Transcript(#[from] TranscriptError),
    /// The bot could not choose.
    #[error("bot: {0}")]
    Bot(#[from] crate::bots::BotError),
    /// Anything else.
    #[error("{0}")]
    Other(String),
}

/// A table run by the reference dealer: a dealer identity, players, a game
/// with settings and the table memory carried from hand to hand.
pub struct SimDealer {
    /// The dealer's keys (signs every event, seals private cards).
    pub dealer: Identity,
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
    game: Arc<dyn DynGame>,
    settings: Value,
    memory: Value,
    rng: ChaCha20Rng,
    hand_number: u64,
}

/// One hand built by [`SimDealer::play_hand`]: the honest event bodies in
/// order, before signing, and the secrets a player would hold.
#[derive(Debug, Clone)]
pub struct SimHand {
    /// The hand.
    pub hand_id: HandId,
    /// Every event body, `hand-prepare` first, `game-end` last.
    pub bodies: Vec<EventBody>,
    /// The seed each player sent, by seat.
    pub player_seeds: Vec<Option<Seed>>,
    /// The result the rules gave.
    pub result: GameResult,
    /// `your-turn` messages the dealer would have sent, in order, with the
    /// index in `bodies` they precede.
    pub turns: Vec<(usize, Seat, Vec<ActionChoice>)>,
}

impl SimHand {
    /// Signs and chains the bodies as `dealer`, with a header naming `room`.
    pub fn sign(&self, dealer: &Identity, room: &str) -> Result<Transcript, SimError> {
        let mut b = TranscriptBuilder::with_header(self.hand_id, dealer.id(), room);
        for body in &self.bodies {
            b.append(dealer, body)?;
        }
        Ok(b.into_transcript())
    }
}

fn chip_party(p: claw_games::Party) -> ChipParty {
    match p {
        claw_games::Party::Seat(s) => ChipParty::Seat(s),
        claw_games::Party::House => ChipParty::House,
    }
}

fn deal_to(t: DealTarget) -> DealTo {
    match t {
        DealTarget::Player(s) => DealTo::Player(s),
        DealTarget::Community => DealTo::Community,
        DealTarget::Burn => DealTo::Burn,
        DealTarget::House => DealTo::House,
    }
}

impl SimDealer {
    /// A table of `players` seats of `game` with `settings` (JSON, `null` =
    /// defaults); every key and random draw derives from `seed`.
    pub fn new(game: &str, settings: &Value, players: usize, seed: u64) -> Result<SimDealer, SimError> {
        let g = registry::get(game)?;
        let settings = g.normalize_settings(settings)?;
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let dealer = Identity::generate(&mut rng);
        let players = (0..players).map(|_| Arc::new(Identity::generate(&mut rng))).collect();
        Ok(SimDealer {
            dealer,
            players,
            balance: Chips(10_000),
            game_name: game.to_string(),
            reveal: RevealPolicy::Full,
            timeout_every: None,
            game: g,
            settings,
            memory: Value::Null,
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
    ) -> Result<SealedCard, SimError> {
        let p = self.players.get(seat.index()).ok_or_else(|| SimError::Other(format!("no {seat}")))?;
        let key = self.dealer.shared_key(&p.encryption_key()).map_err(|e| SimError::Other(e.to_string()))?;
        Ok(key.seal(&mut self.rng, hand, opening))
    }

    /// Plays one hand with every seat using `bot`, and returns its bodies.
    /// The table memory moves on to the next hand.
    pub fn play_hand(&mut self, bot: &dyn Strategy) -> Result<SimHand, SimError> {
        let hand_id = HandId::random(&mut self.rng);
        let dealer_seed = Seed::random(&mut self.rng);
        let ids: Vec<_> = self.players.iter().map(|p| p.id()).collect();
        let mut bodies = vec![EventBody::HandPrepare(HandPrepare {
            hand_number: self.hand_number,
            seed_commitment: seed_commitment(&hand_id, &dealer_seed),
            entropy: EntropyMode::Joint,
            players: ids.clone(),
            seed_timeout_ms: 1_000,
        })];
        let mut seat_seeds = Vec::new();
        let mut player_seeds = Vec::new();
        for (i, p) in self.players.iter().enumerate() {
            let seed = Seed::random(&mut self.rng);
            let signed = PlayerSeed::sign(p, hand_id, seed);
            seat_seeds.push(SeatSeed { seat: Seat(i as u8), seed, sig: signed.sig });
            player_seeds.push(Some(seed));
        }
        let deck = self.game.create_deck(&self.settings)?;
        let order = shuffle(&deck, &shuffle_seed(&dealer_seed, &player_seeds));
        let openings: Vec<CardOpening> = order
            .iter()
            .enumerate()
            .map(|(i, c)| CardOpening { position: i as u16, card: *c, salt: Salt::random(&mut self.rng) })
            .collect();
        let leaves: Vec<_> = openings.iter().map(|o| leaf(&hand_id, o.position, o.card, &o.salt)).collect();
        let meta = self.game.meta();
        let settings_raw = RawJson::from_value(&self.settings).map_err(|e| SimError::Other(e.to_string()))?;
        let infos: Vec<PlayerInfo> =
            ids.iter().map(|id| PlayerInfo { id: *id, balance: self.balance }).collect();
        bodies.push(EventBody::GameStart(GameStart {
            game: meta.name.to_string(),
            game_version: meta.version.to_string(),
            config_hash: config_hash(meta.name, meta.version, &settings_raw),
            settings: settings_raw,
            players: self
                .players
                .iter()
                .enumerate()
                .map(|(i, p)| HandPlayer {
                    id: p.id(),
                    seat: Seat(i as u8),
                    balance: self.balance,
                    encryption_key: p.encryption_key(),
                })
                .collect(),
            memory: self.memory.clone(),
            dealer_encryption_key: self.dealer.encryption_key(),
            deck_mode: DeckMode::Shuffled,
            entropy: EntropyMode::Joint,
            reveal: self.reveal,
            player_seeds: seat_seeds,
            deck,
            root: merkle_root(&leaves),
            leaves,
        }));
        let (mut runner, events) =
            HandRunner::start(self.game.as_ref(), &self.settings, &infos, &self.memory, order.clone())?;
        self.publish(&hand_id, &openings, events, &mut bodies)?;
        let mut seqs = vec![0u32; self.players.len()];
        let mut played: Vec<Vec<CardId>> = vec![Vec::new(); self.players.len()];
        let mut turns = Vec::new();
        let mut turn_no = 0usize;
        while let Some(seat) = runner.hand().to_act() {
            turn_no += 1;
            if turn_no > 10_000 {
                return Err(SimError::Other("hand does not end".into()));
            }
            let options = runner.hand().valid_actions();
            let public = runner.hand().public_state();
            turns.push((
                bodies.len(),
                seat,
                options
                    .iter()
                    .map(|o| ActionChoice {
                        action: o.action.clone(),
                        cost: o.cost,
                        affordable: o.affordable,
                        range: o.range,
                    })
                    .collect(),
            ));
            let timeout = self.timeout_every.is_some_and(|n| n > 0 && turn_no.is_multiple_of(n));
            if timeout {
                let action = runner
                    .hand()
                    .auto_action(seat)
                    .ok_or_else(|| SimError::Other(format!("no auto action for {seat}")))?;
                let events = runner.act(seat, &action)?;
                bodies.push(EventBody::TimeoutAction(TimeoutAction {
                    seat,
                    action,
                    reason: "timeout".into(),
                    public_state: runner.hand().public_state(),
                }));
                self.publish(&hand_id, &openings, events, &mut bodies)?;
                continue;
            }
            let hand: Vec<CardId> = runner
                .dealt()
                .iter()
                .filter(|d| d.target == DealTarget::Player(seat) && !played[seat.index()].contains(&d.card))
                .map(|d| d.card)
                .collect();
            let table: Vec<CardId> = runner
                .dealt()
                .iter()
                .filter(|d| d.target == DealTarget::Community && d.face == Face::Up)
                .map(|d| d.card)
                .collect();
            let view = TurnView {
                game: &self.game_name,
                seat,
                actions: &options,
                public_state: &public,
                hand: &hand,
                table: &table,
                balance: self.balance,
            };
            let action = bot.choose(&view, &mut self.rng)?;
            if let Some(cards) =
                action.get("cards").and_then(|c| serde_json::from_value::<Vec<CardId>>(c.clone()).ok())
            {
                played[seat.index()].extend(cards);
            }
            let raw = RawJson::from_value(&action).map_err(|e| SimError::Other(e.to_string()))?;
            let signed = SignedAction::sign(&self.players[seat.index()], hand_id, seqs[seat.index()], raw);
            seqs[seat.index()] += 1;
            let events = runner.act(seat, &action)?;
            bodies.push(EventBody::ActionResult(ActionResult::from_signed(
                seat,
                &signed,
                runner.hand().public_state(),
            )));
            self.publish(&hand_id, &openings, events, &mut bodies)?;
        }
        let result = runner.hand().result().ok_or_else(|| SimError::Other("no result".into()))?;
        let memory_after = runner.hand().memory_after();
        bodies.push(EventBody::GameEnd(GameEnd {
            result: HandResult {
                winners: result.winners.clone(),
                net: result.net.clone(),
                house_net: result.house_net,
                rake: result.rake,
                summary: result.summary.clone(),
            },
            memory_after: memory_after.clone(),
            dealer_seed: Some(dealer_seed),
            openings,
        }));
        self.memory = memory_after;
        self.hand_number += 1;
        Ok(SimHand { hand_id, bodies, player_seeds, result, turns })
    }

    /// Turns the runner's events into event bodies: one deal event per deal,
    /// consecutive chip movements grouped in one `chips` event.
    fn publish(
        &mut self,
        hand_id: &HandId,
        openings: &[CardOpening],
        events: Vec<HandEvent>,
        bodies: &mut Vec<EventBody>,
    ) -> Result<(), SimError> {
        let mut moves: Vec<ChipMove> = Vec::new();
        let flush = |moves: &mut Vec<ChipMove>, bodies: &mut Vec<EventBody>| {
            if !moves.is_empty() {
                bodies.push(EventBody::Chips(ChipsMoved { moves: std::mem::take(moves) }));
            }
        };
        for e in events {
            match e {
                HandEvent::Debit { party, amount, reason } => {
                    moves.push(ChipMove { op: ChipOp::Debit, party: chip_party(party), amount, reason })
                }
                HandEvent::Credit { party, amount, reason } => {
                    moves.push(ChipMove { op: ChipOp::Credit, party: chip_party(party), amount, reason })
                }
                HandEvent::Dealt { phase, cards } => {
                    flush(&mut moves, bodies);
                    let mut out = Vec::with_capacity(cards.len());
                    for c in &cards {
                        let o = openings[usize::from(c.position)];
                        let (opening, sealed) = match (c.face, c.target) {
                            (Face::Up, _) => (Some(o), None),
                            (Face::Down, DealTarget::Player(s)) => {
                                (None, Some(self.seal_for(s, hand_id, &o)?))
                            }
                            (Face::Down, _) => (None, None),
                        };
                        out.push(DealtCardMsg {
                            position: c.position,
                            target: deal_to(c.target),
                            face: match c.face {
                                Face::Up => CardFace::Up,
                                Face::Down => CardFace::Down,
                            },
                            opening,
                            sealed,
                        });
                    }
                    let one_player = match cards.first().map(|c| c.target) {
                        Some(t @ DealTarget::Player(_)) => cards.iter().all(|c| c.target == t),
                        _ => false,
                    };
                    let d = DealEvent { phase, cards: out };
                    bodies.push(
                        if one_player && bodies.iter().any(|b| matches!(b, EventBody::PhaseDeal(_))) {
                            EventBody::NewCard(d)
                        } else {
                            EventBody::PhaseDeal(d)
                        },
                    );
                }
                HandEvent::Reveal { positions } => {
                    flush(&mut moves, bodies);
                    bodies.push(EventBody::Reveal(Reveal {
                        openings: positions.iter().map(|p| openings[usize::from(*p)]).collect(),
                    }));
                }
            }
        }
        flush(&mut moves, bodies);
        Ok(())
    }
}

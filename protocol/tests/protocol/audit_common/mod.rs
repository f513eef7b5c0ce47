//! A complete synthetic hand built directly with the crypto primitives
//! (shuffle, leaves, root, sealing, reveals), for the transcript and audit
//! tests. Tests tamper with the bodies (a cheating dealer, re-signed) or with
//! the signed envelopes (a cheating network) and check the named failure.

use claw_protocol::messages::*;
use claw_protocol::transcript::{Transcript, TranscriptBuilder};
use claw_protocol::{
    leaf, merkle_root, seed_commitment, shuffle, shuffle_seed, CardId, CardOpening, Chips, HandId, Identity,
    Salt, Seat, Seed,
};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use serde_json::json;

/// How the synthetic hand is dealt.
#[derive(Debug, Clone, Copy)]
pub struct Opts {
    pub reveal: RevealPolicy,
    pub deck_mode: DeckMode,
    pub entropy: EntropyMode,
}

impl Default for Opts {
    fn default() -> Opts {
        Opts { reveal: RevealPolicy::Full, deck_mode: DeckMode::Shuffled, entropy: EntropyMode::Joint }
    }
}

pub struct Hand {
    pub dealer: Identity,
    pub players: Vec<Identity>,
    pub hand_id: HandId,
    pub dealer_seed: Seed,
    pub player_seeds: Vec<Seed>,
    /// The card at each position.
    pub order: Vec<CardId>,
    pub salts: Vec<Salt>,
    pub bodies: Vec<EventBody>,
    /// Bodies published after game-end (deferred `audit-reveal`).
    pub late: Vec<EventBody>,
}

pub const ROOM: &str = "room-1";

pub fn raw(s: &str) -> RawJson {
    RawJson::from_string(s.to_owned()).unwrap()
}

impl Hand {
    pub fn new(opts: Opts) -> Hand {
        Hand::with_order(opts, None)
    }

    /// `order`: deal this order instead of the shuffle's (a stacked deck).
    pub fn with_order(opts: Opts, order: Option<Vec<CardId>>) -> Hand {
        let mut rng = ChaCha20Rng::from_seed([42; 32]);
        let dealer = Identity::from_seed([100; 32]);
        let players: Vec<Identity> = (0..3u8).map(|i| Identity::from_seed([i + 1; 32])).collect();
        let hand_id = HandId([0x11; 16]);
        let dealer_seed = Seed([0x22; 32]);
        let player_seeds: Vec<Seed> = (0..3u8).map(|i| Seed([0x30 + i; 32])).collect();
        let deck = CardId::deck(1, false);
        let joint = opts.entropy == EntropyMode::Joint;
        // Seat 2 stays silent: its seed is not used.
        let used: Vec<Option<Seed>> =
            (0..3).map(|i| if joint && i < 2 { Some(player_seeds[i]) } else { None }).collect();
        let order = order.unwrap_or_else(|| match opts.deck_mode {
            DeckMode::Shuffled => shuffle(&deck, &shuffle_seed(&dealer_seed, &used)),
            // Blind hands are built by the engine's tests (engine/src/hand/blind_tests.rs).
            DeckMode::Scripted | DeckMode::Blind => deck.iter().rev().copied().collect(),
        });
        let salts: Vec<Salt> = (0..deck.len()).map(|_| Salt::random(&mut rng)).collect();
        let leaves: Vec<_> =
            order.iter().zip(&salts).enumerate().map(|(i, (c, s))| leaf(&hand_id, i as u16, *c, s)).collect();
        let opening = |p: usize| CardOpening { position: p as u16, card: order[p], salt: salts[p] };
        let keys: Vec<_> = players.iter().map(|p| dealer.shared_key(&p.encryption_key()).unwrap()).collect();

        let mut bodies = Vec::new();
        bodies.push(EventBody::HandPrepare(HandPrepare {
            hand_number: 7,
            seed_commitment: seed_commitment(&hand_id, &dealer_seed),
            entropy: opts.entropy,
            players: players.iter().map(Identity::id).collect(),
            seed_timeout_ms: 2000,
        }));
        let settings = raw(r#"{"ante":1}"#);
        bodies.push(EventBody::GameStart(GameStart {
            game: "toy".into(),
            game_version: "1".into(),
            config_hash: config_hash("toy", "1", &settings),
            settings,
            room_config: None,
            players: players
                .iter()
                .enumerate()
                .map(|(i, p)| HandPlayer {
                    id: p.id(),
                    seat: Seat(i as u8),
                    balance: Chips(100),
                    encryption_key: p.encryption_key(),
                    commission: Chips::ZERO,
                    house_ai: false,
                })
                .collect(),
            memory: json!({"button": 0}),
            previous: None,
            dealer_encryption_key: dealer.encryption_key(),
            deck_mode: opts.deck_mode,
            entropy: opts.entropy,
            reveal: opts.reveal,
            player_seeds: used
                .iter()
                .enumerate()
                .filter_map(|(i, s)| {
                    s.map(|seed| {
                        let ps = PlayerSeed::sign(&players[i], hand_id, seed);
                        SeatSeed { seat: Seat(i as u8), seed, sig: ps.sig }
                    })
                })
                .collect(),
            deck: deck.clone(),
            root: merkle_root(&leaves),
            leaves,
        }));
        bodies.push(EventBody::Chips(ChipsMoved {
            moves: (0..3u8)
                .map(|s| ChipMove {
                    op: ChipOp::Debit,
                    party: ChipParty::Seat(Seat(s)),
                    amount: Chips(1),
                    reason: "ante".into(),
                })
                .collect(),
        }));
        let down = |p: usize, seat: usize, rng: &mut ChaCha20Rng| DealtCardMsg {
            position: p as u16,
            target: DealTo::Player(Seat(seat as u8)),
            face: CardFace::Down,
            opening: None,
            sealed: Some(keys[seat].seal(rng, &hand_id, &opening(p))),
        };
        let up = |p: usize, target: DealTo| DealtCardMsg {
            position: p as u16,
            target,
            face: CardFace::Up,
            opening: Some(opening(p)),
            sealed: None,
        };
        // Hole cards: positions 0..6, two rounds of three seats.
        let hole: Vec<DealtCardMsg> = (0..6).map(|p| down(p, p % 3, &mut rng)).collect();
        bodies.push(EventBody::PhaseDeal(DealEvent { phase: "hole".into(), cards: hole }));
        let act = |seat: usize, seq: u32, text: &str| {
            let signed = SignedAction::sign(&players[seat], hand_id, seq, raw(text));
            EventBody::ActionResult(ActionResult::from_signed(Seat(seat as u8), &signed, json!({"pot": 3})))
        };
        bodies.push(act(0, 0, r#"{"type":"check"}"#));
        bodies.push(act(1, 0, r#"{ "type": "check" }"#));
        // Board: a burn (down, unsealed), three community cards up, a house card up.
        bodies.push(EventBody::PhaseDeal(DealEvent {
            phase: "flop".into(),
            cards: vec![
                DealtCardMsg {
                    position: 6,
                    target: DealTo::Burn,
                    face: CardFace::Down,
                    opening: None,
                    sealed: None,
                },
                up(7, DealTo::Community),
                up(8, DealTo::Community),
                up(9, DealTo::Community),
                up(10, DealTo::House),
            ],
        }));
        bodies.push(act(2, 0, r#"{"type":"bet","amount":2}"#));
        bodies.push(EventBody::Chips(ChipsMoved {
            moves: vec![ChipMove {
                op: ChipOp::Debit,
                party: ChipParty::Seat(Seat(2)),
                amount: Chips(2),
                reason: "bet".into(),
            }],
        }));
        // A hit to seat 0 (new-card), a face-down kitty card then revealed.
        bodies
            .push(EventBody::NewCard(DealEvent { phase: "hit".into(), cards: vec![down(11, 0, &mut rng)] }));
        bodies.push(EventBody::PhaseDeal(DealEvent {
            phase: "kitty".into(),
            cards: vec![DealtCardMsg {
                position: 12,
                target: DealTo::Community,
                face: CardFace::Down,
                opening: None,
                sealed: None,
            }],
        }));
        bodies.push(EventBody::Reveal(Reveal { openings: vec![opening(12)] }));
        bodies.push(act(0, 1, r#"{"type":"call"}"#));
        bodies.push(EventBody::TimeoutAction(TimeoutAction {
            seat: Seat(1),
            action: json!({"type": "fold"}),
            reason: claw_protocol::messages::TimeoutReason::Timeout,
            public_state: json!({}).into(),
        }));
        bodies.push(EventBody::Chips(ChipsMoved {
            moves: vec![
                ChipMove {
                    op: ChipOp::Debit,
                    party: ChipParty::Seat(Seat(0)),
                    amount: Chips(2),
                    reason: "call".into(),
                },
                ChipMove {
                    op: ChipOp::Credit,
                    party: ChipParty::Seat(Seat(0)),
                    amount: Chips(7),
                    reason: "pot".into(),
                },
            ],
        }));
        let all: Vec<CardOpening> = (0..deck.len()).map(opening).collect();
        let result = HandResult {
            winners: vec![Seat(0)],
            net: vec![4, -1, -3],
            house_net: 0,
            rake: Chips(0),
            summary: "toy".into(),
        };
        let mut late = Vec::new();
        match opts.reveal {
            RevealPolicy::Full => bodies.push(EventBody::GameEnd(GameEnd {
                result,
                memory_after: json!({"button": 1}),
                dealer_seed: Some(dealer_seed),
                openings: all,
            })),
            RevealPolicy::Deferred => {
                // Showdown: seat 0's hole cards only.
                bodies.push(EventBody::GameEnd(GameEnd {
                    result,
                    memory_after: json!({"button": 1}),
                    dealer_seed: None,
                    openings: vec![opening(0), opening(3)],
                }));
                late.push(EventBody::AuditReveal(AuditReveal { dealer_seed, openings: all }));
            }
        }
        Hand { dealer, players, hand_id, dealer_seed, player_seeds, order, salts, bodies, late }
    }

    /// The room configuration of the synthetic room (`ROOM`, game `toy`
    /// with the hand's settings, policies and seed timeout, commission 0).
    pub fn room(&self) -> RoomConfig {
        let g = self.start();
        RoomConfig {
            room_id: ROOM.into(),
            game: "toy".into(),
            settings: json!({"ante": 1}),
            buy_in: Chips(10),
            min_bet: Chips::ZERO,
            max_bet: Chips::ZERO,
            commission: Chips::ZERO,
            min_players: 2,
            max_players: 6,
            entropy: g.entropy,
            reveal: g.reveal,
            action_timeout_ms: 30_000,
            between_hands_ms: 0,
            seed_timeout_ms: 2000,
            reveal_delay_ms: None,
            deal: Default::default(),
        }
    }

    /// The hand as a current dealer writes it: `game-start` carries the
    /// room configuration (`room`) and names the room's previous hand
    /// (number 6, whose table memory this hand starts from).
    pub fn in_room(mut self, room: &RoomConfig) -> Hand {
        let g = self.start_mut();
        g.room_config = Some(RawJson::from_value(room).unwrap());
        g.previous = Some(PreviousHand { hand_id: HandId([0x10; 16]), hand_number: 6 });
        self
    }

    pub fn start(&self) -> &GameStart {
        self.bodies.iter().find_map(|b| if let EventBody::GameStart(g) = b { Some(g) } else { None }).unwrap()
    }

    pub fn opening(&self, p: usize) -> CardOpening {
        CardOpening { position: p as u16, card: self.order[p], salt: self.salts[p] }
    }

    /// Signs the bodies (and, if `with_late`, the deferred reveal) into a
    /// transcript with a header.
    pub fn transcript_with(&self, with_late: bool) -> Transcript {
        let mut b = TranscriptBuilder::with_header(self.hand_id, self.dealer.id(), ROOM);
        for body in self.bodies.iter().chain(self.late.iter().filter(|_| with_late)) {
            b.append(&self.dealer, body).unwrap();
        }
        b.into_transcript()
    }

    pub fn transcript(&self) -> Transcript {
        self.transcript_with(true)
    }

    pub fn start_mut(&mut self) -> &mut GameStart {
        self.bodies
            .iter_mut()
            .find_map(|b| if let EventBody::GameStart(g) = b { Some(g) } else { None })
            .unwrap()
    }

    pub fn end_mut(&mut self) -> &mut GameEnd {
        self.bodies
            .iter_mut()
            .find_map(|b| if let EventBody::GameEnd(g) = b { Some(g) } else { None })
            .unwrap()
    }

    pub fn prepare_mut(&mut self) -> &mut HandPrepare {
        self.bodies
            .iter_mut()
            .find_map(|b| if let EventBody::HandPrepare(g) = b { Some(g) } else { None })
            .unwrap()
    }

    /// The `n`-th deal event (phase-deal or new-card).
    pub fn deal_mut(&mut self, n: usize) -> &mut DealEvent {
        self.bodies
            .iter_mut()
            .filter_map(|b| match b {
                EventBody::PhaseDeal(d) | EventBody::NewCard(d) => Some(d),
                _ => None,
            })
            .nth(n)
            .unwrap()
    }

    pub fn reveal_mut(&mut self) -> &mut Reveal {
        self.bodies
            .iter_mut()
            .find_map(|b| if let EventBody::Reveal(r) = b { Some(r) } else { None })
            .unwrap()
    }

    /// The `n`-th action-result.
    pub fn action_mut(&mut self, n: usize) -> &mut ActionResult {
        self.bodies
            .iter_mut()
            .filter_map(|b| if let EventBody::ActionResult(a) = b { Some(a) } else { None })
            .nth(n)
            .unwrap()
    }
}

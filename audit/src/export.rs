//! Hand histories from audited hands: the PokerStars text format and Open
//! Hand History (OHH) JSON for the games that are a poker variant
//! ([`GameMeta::poker_variant`]: Texas Hold'em), which tracking tools import,
//! and a readable text history for every game. Input is the [`VerifiedHand`]
//! of a passed audit, so nothing unverified is ever written; the time is an
//! input (transcripts carry none). The table size is the room's seat count,
//! from the room configuration `game-start` signs. Formats:
//! docs/player-cli.md.
//!
//! Pots are written as the dealer credited them: a split pot's odd chips go
//! one each to the winners nearest the button's left, clockwise (the
//! PokerStars convention, and the rules' own, SPEC.md Texas Hold'em).
//!
//! [`GameMeta::poker_variant`]: claw_games::GameMeta::poker_variant

use std::fmt::Write as _;

use claw_games::texas_holdem::{self as holdem, evaluate};
use claw_games::PokerVariant;
use claw_protocol::audit::{ActionSource, AnnouncedEvent, VerifiedAction, VerifiedHand};
use claw_protocol::messages::{ChipMove, ChipOp, ChipParty, DealTo};
use claw_protocol::{CardId, PlayerId};
use serde::Deserialize;
use serde_json::{json, Value};

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// PokerStars hand-history text (poker variants only).
    Pokerstars,
    /// Open Hand History JSON, one `{"ohh": …}` object per line (poker variants only).
    Ohh,
    /// A readable text history (every game).
    Text,
}

impl Format {
    /// Every format.
    pub const ALL: [Format; 3] = [Format::Pokerstars, Format::Ohh, Format::Text];

    /// Its name (`--format`, `?format=`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Pokerstars => "pokerstars",
            Format::Ohh => "ohh",
            Format::Text => "text",
        }
    }

    /// What it is, in a line (for help texts).
    pub fn description(self) -> &'static str {
        match self {
            Format::Pokerstars => "PokerStars hand-history text (Texas Hold'em only)",
            Format::Ohh => "Open Hand History JSON, one {\"ohh\": …} object per line (Texas Hold'em only)",
            Format::Text => "a readable text history (every game)",
        }
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A format name that is not one of [`Format::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown format {0:?} (one of: {known})", known = Format::ALL.map(Format::name).join(", "))]
pub struct UnknownFormat(pub String);

impl std::str::FromStr for Format {
    type Err = UnknownFormat;

    fn from_str(s: &str) -> Result<Format, UnknownFormat> {
        Format::ALL.into_iter().find(|f| f.name() == s).ok_or_else(|| UnknownFormat(s.to_owned()))
    }
}

/// What the transcript does not say.
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    /// When the hand was played (unix ms), e.g. the transcript file's time.
    pub time_ms: u64,
    /// Table name written in the history (e.g. the room id).
    pub table: String,
    /// The player whose history this is: only their hole cards are "dealt"
    /// (others appear when shown). `None`: an observer's history with every
    /// player's cards (all are public once the hand is revealed).
    pub hero: Option<PlayerId>,
    /// The room's seat count (its configured `max_players`, PokerStars'
    /// `N-max` and OHH's `table_size`) for a hand whose `game-start` carries
    /// no room configuration (written before it did); the signed one wins.
    /// `None`: the game's maximum, the seat count of a room that sets none.
    pub seats: Option<u8>,
}

/// Why a hand cannot be written in a format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExportError {
    /// PokerStars and OHH hold poker hands only.
    #[error("{format} holds Texas Hold'em hands only; this hand is {game} (use the text format)")]
    WrongGame {
        /// The format asked for.
        format: &'static str,
        /// The hand's game.
        game: String,
    },
    /// The deck order is not revealed yet (deferred reveal).
    #[error("the hand's cards are not revealed yet (deferred reveal pending)")]
    NotRevealed,
    /// The verified hand does not have the shape a Hold'em hand must have.
    #[error("unexpected Hold'em hand: {0}")]
    Shape(String),
}

/// The poker variant of the hand's game, if it is one.
fn poker_variant(hand: &VerifiedHand) -> Option<PokerVariant> {
    claw_games::registry::get(&hand.game).ok().and_then(|g| g.meta().poker_variant)
}

/// Writes one audited hand in `format` (no trailing blank lines).
pub fn export(hand: &VerifiedHand, format: Format, opts: &ExportOptions) -> Result<String, ExportError> {
    match format {
        Format::Text => Ok(text_history(hand, opts)),
        Format::Pokerstars => Ok(pokerstars(&Holdem::build(hand, opts, "PokerStars")?, hand, opts)),
        Format::Ohh => Ok(ohh(&Holdem::build(hand, opts, "OHH")?, hand, opts).to_string()),
    }
}

/// One step of a hand in transcript order.
enum Step<'a> {
    Act(&'a VerifiedAction),
    Event(&'a AnnouncedEvent),
}

/// Actions and announced events merged in transcript order.
fn steps(hand: &VerifiedHand) -> Vec<Step<'_>> {
    let mut out = Vec::with_capacity(hand.actions.len() + hand.announced.len());
    let mut acts = hand.actions.iter().peekable();
    for (i, ev) in hand.announced.iter().enumerate() {
        while let Some(a) = acts.next_if(|a| a.events_before <= i) {
            out.push(Step::Act(a));
        }
        out.push(Step::Event(ev));
    }
    out.extend(acts.map(Step::Act));
    out
}

/// `YYYY/MM/DD HH:MM:SS` (UTC) and ISO 8601 of unix milliseconds.
fn utc(ms: u64) -> ((i64, u32, u32), (u64, u64, u64)) {
    let secs = ms / 1000;
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    ((y, m, d), (rem / 3600, rem / 60 % 60, rem % 60))
}

fn card_of(hand: &VerifiedHand, position: u16) -> Option<CardId> {
    hand.deck_order.as_ref().and_then(|d| d.get(usize::from(position)).copied())
}

fn join_cards(cards: &[CardId]) -> String {
    cards.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(" ")
}

/// What a Hold'em action did, with its amounts.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Move {
    Fold,
    Check,
    Call(u64),
    Bet(u64),
    /// Raise by `by` to `to` (this round's total).
    Raise {
        by: u64,
        to: u64,
    },
}

#[derive(Debug, Clone)]
struct HAction {
    seat: usize,
    mv: Move,
    all_in: bool,
    timeout: bool,
}

#[derive(Debug, Clone)]
struct Round {
    /// `Preflop`, `Flop`, `Turn`, `River`.
    name: &'static str,
    /// Cards dealt to the board on this street.
    board: Vec<CardId>,
    actions: Vec<HAction>,
}

/// A Hold'em hand laid out the way hand-history formats need it.
#[derive(Debug, Clone)]
struct Holdem {
    /// The room's seat count.
    table_size: usize,
    names: Vec<String>,
    stacks: Vec<u64>,
    button: usize,
    small_blind: u64,
    big_blind: u64,
    ante: u64,
    /// Blind and ante posts in order: seat, reason, amount.
    posts: Vec<(usize, String, u64)>,
    /// Hole cards by seat, in deal order of the first card.
    hole: Vec<(usize, Vec<CardId>)>,
    streets: Vec<Round>,
    /// Seats whose cards were revealed at showdown.
    shown: Vec<usize>,
    /// Uncalled chips returned: seat, amount.
    returned: Vec<(usize, u64)>,
    /// Pots paid: name (`main pot`, `side pot 1`…), seat, amount.
    pots: Vec<(String, usize, u64)>,
}

impl Holdem {
    fn build(hand: &VerifiedHand, opts: &ExportOptions, format: &'static str) -> Result<Holdem, ExportError> {
        let Some(PokerVariant::NoLimitHoldem) = poker_variant(hand) else {
            return Err(ExportError::WrongGame { format, game: hand.game.clone() });
        };
        if hand.deck_order.is_none() {
            return Err(ExportError::NotRevealed);
        }
        let n = hand.players.len();
        let settings = holdem::Settings::deserialize(&hand.settings)
            .map_err(|e| ExportError::Shape(format!("settings: {e}")))?;
        let game_seats =
            claw_games::registry::get(&hand.game).map_or(n, |g| usize::from(g.meta().max_players));
        let room_seats = hand.room.as_ref().map(|r| r.max_players).or(opts.seats);
        let table_size = room_seats.map_or(game_seats, usize::from).max(n);
        let mut names: Vec<String> = hand.players.iter().map(|p| p.id.short()).collect();
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        if sorted.len() != n {
            names = hand.players.iter().map(|p| p.id.to_string()).collect();
        }
        let stacks: Vec<u64> = hand.players.iter().map(|p| p.balance.0).collect();
        let mut h = Holdem {
            table_size,
            names,
            stacks: stacks.clone(),
            button: 0,
            small_blind: settings.small_blind.0,
            big_blind: settings.big_blind.0,
            ante: settings.ante.0,
            posts: Vec::new(),
            hole: Vec::new(),
            streets: vec![Round { name: "Preflop", board: Vec::new(), actions: Vec::new() }],
            shown: Vec::new(),
            returned: Vec::new(),
            pots: Vec::new(),
        };
        let mut left = stacks;
        let mut bets = vec![0u64; n];
        // The action whose chips are being collected: (street, index in it).
        let mut pending: Option<(usize, usize)> = None;
        let mut sb_seat = None;
        let seat_ix = |s: claw_protocol::Seat| -> Result<usize, ExportError> {
            (s.index() < n)
                .then_some(s.index())
                .ok_or_else(|| ExportError::Shape(format!("seat {s} out of range")))
        };
        for step in steps(hand) {
            match step {
                Step::Act(a) => {
                    let seat = seat_ix(a.seat)?;
                    let action = holdem::Action::deserialize(&a.action)
                        .map_err(|e| ExportError::Shape(format!("action {}: {e}", a.action)))?;
                    let mv = match action {
                        holdem::Action::Fold => Move::Fold,
                        holdem::Action::Check => Move::Check,
                        // Amounts come with the chips that follow.
                        holdem::Action::Call
                        | holdem::Action::Bet { .. }
                        | holdem::Action::Raise { .. }
                        | holdem::Action::AllIn => Move::Call(0),
                    };
                    let puts_chips = matches!(mv, Move::Call(_));
                    let timeout = matches!(a.source, ActionSource::Timeout { .. });
                    let street = h.streets.len() - 1;
                    h.streets[street].actions.push(HAction { seat, mv, all_in: false, timeout });
                    pending = puts_chips.then_some((street, h.streets[street].actions.len() - 1));
                }
                Step::Event(AnnouncedEvent::Chip(ChipMove {
                    op: ChipOp::Debit,
                    party: ChipParty::Seat(s),
                    amount,
                    reason,
                })) => {
                    let seat = seat_ix(*s)?;
                    let amount = amount.0;
                    left[seat] = left[seat].saturating_sub(amount);
                    match (reason.as_str(), pending.take()) {
                        (holdem::reason::ANTE, _) => h.posts.push((seat, reason.clone(), amount)),
                        (holdem::reason::SMALL_BLIND | holdem::reason::BIG_BLIND, _) => {
                            if reason == holdem::reason::SMALL_BLIND {
                                sb_seat = Some(seat);
                            }
                            bets[seat] += amount;
                            h.posts.push((seat, reason.clone(), amount));
                        }
                        (_, Some((st, ix))) => {
                            let max = bets.iter().copied().max().unwrap_or(0);
                            let act = &mut h.streets[st].actions[ix];
                            if act.seat != seat {
                                return Err(ExportError::Shape(format!(
                                    "seat {seat} paid for seat {}'s action",
                                    act.seat
                                )));
                            }
                            let total = bets[seat] + amount;
                            act.mv = if total <= max {
                                Move::Call(amount)
                            } else if max == 0 {
                                Move::Bet(amount)
                            } else {
                                Move::Raise { by: total - max, to: total }
                            };
                            act.all_in = left[seat] == 0;
                            bets[seat] = total;
                        }
                        (r, None) => {
                            return Err(ExportError::Shape(format!("debit {r:?} without an action")))
                        }
                    }
                }
                Step::Event(AnnouncedEvent::Chip(ChipMove {
                    op: ChipOp::Credit,
                    party: ChipParty::Seat(s),
                    amount,
                    reason,
                })) => {
                    let seat = seat_ix(*s)?;
                    left[seat] += amount.0;
                    if reason == holdem::reason::UNCALLED_BET || reason == holdem::reason::UNCALLED_CHIPS {
                        bets[seat] = bets[seat].saturating_sub(amount.0);
                        h.returned.push((seat, amount.0));
                    } else {
                        h.pots.push((reason.clone(), seat, amount.0));
                    }
                }
                Step::Event(AnnouncedEvent::Chip(_)) => {
                    return Err(ExportError::Shape("house chips in a Hold'em hand".into()))
                }
                Step::Event(AnnouncedEvent::Dealt { phase, cards }) => {
                    let dealt = |c: &claw_protocol::audit::AnnouncedCard| {
                        card_of(hand, c.position).ok_or_else(|| ExportError::Shape("card missing".into()))
                    };
                    match holdem::Street::of_phase(phase) {
                        Some(holdem::Street::Preflop) => {
                            for c in cards {
                                if let DealTo::Player(s) = c.target {
                                    let seat = seat_ix(s)?;
                                    let card = dealt(c)?;
                                    match h.hole.iter_mut().find(|(x, _)| *x == seat) {
                                        Some((_, v)) => v.push(card),
                                        None => h.hole.push((seat, vec![card])),
                                    }
                                }
                            }
                        }
                        Some(
                            street @ (holdem::Street::Flop | holdem::Street::Turn | holdem::Street::River),
                        ) => {
                            let mut board = Vec::new();
                            for c in cards.iter().filter(|c| c.target == DealTo::Community) {
                                board.push(dealt(c)?);
                            }
                            let name = match street {
                                holdem::Street::Flop => "Flop",
                                holdem::Street::Turn => "Turn",
                                _ => "River",
                            };
                            bets.iter_mut().for_each(|b| *b = 0);
                            h.streets.push(Round { name, board, actions: Vec::new() });
                        }
                        _ => return Err(ExportError::Shape(format!("unknown deal phase {phase:?}"))),
                    }
                }
                Step::Event(AnnouncedEvent::Reveal { positions }) => {
                    for p in positions {
                        let owner = hand.announced.iter().find_map(|e| match e {
                            AnnouncedEvent::Dealt { cards, .. } => {
                                cards.iter().find(|c| c.position == *p).map(|c| c.target)
                            }
                            _ => None,
                        });
                        if let Some(DealTo::Player(s)) = owner {
                            let seat = seat_ix(s)?;
                            if !h.shown.contains(&seat) {
                                h.shown.push(seat);
                            }
                        }
                    }
                }
                Step::Event(AnnouncedEvent::Transfer { .. }) => {
                    return Err(ExportError::Shape("a card transfer in a Hold'em hand".into()))
                }
            }
        }
        // The button: this hand's, from the table memory the hand leaves;
        // else the seat before the small blind (heads-up: the small blind).
        let from_memory = holdem::Memory::deserialize(&hand.memory_after)
            .ok()
            .and_then(|m| m.button)
            .and_then(|b| hand.players.iter().position(|p| p.id == b));
        h.button = from_memory.unwrap_or(match sb_seat {
            Some(sb) if n == 2 => sb,
            Some(sb) => (sb + n - 1) % n,
            None => 0,
        });
        Ok(h)
    }

    fn board(&self) -> Vec<CardId> {
        self.streets.iter().flat_map(|s| s.board.iter().copied()).collect()
    }

    fn hole_of(&self, seat: usize) -> Option<&[CardId]> {
        self.hole.iter().find(|(s, _)| *s == seat).map(|(_, c)| c.as_slice())
    }

    /// The hand a player shows, described ("pair of kings").
    fn describe(&self, seat: usize) -> String {
        let mut cards: Vec<_> = self.hole_of(seat).unwrap_or_default().iter().map(|c| c.card()).collect();
        cards.extend(self.board().iter().map(|c| c.card()));
        evaluate(&cards).to_string()
    }

    fn dealt_to(&self, hero: Option<usize>) -> impl Iterator<Item = &(usize, Vec<CardId>)> {
        self.hole.iter().filter(move |(s, _)| hero.is_none_or(|h| h == *s))
    }
}

fn hero_seat(hand: &VerifiedHand, opts: &ExportOptions) -> Option<usize> {
    opts.hero.and_then(|h| hand.players.iter().position(|p| p.id == h))
}

/// A PokerStars hand number from the hand id (its first 7 bytes, decimal).
fn game_number(hand: &VerifiedHand) -> u64 {
    let b = hand.hand_id.as_bytes();
    b[..7].iter().fold(0u64, |n, x| (n << 8) | u64::from(*x))
}

fn pokerstars(h: &Holdem, hand: &VerifiedHand, opts: &ExportOptions) -> String {
    let ((y, mo, d), (hh, mi, ss)) = utc(opts.time_ms);
    let n = hand.players.len();
    let hero = hero_seat(hand, opts);
    let mut o = String::new();
    let _ = writeln!(
        o,
        "PokerStars Hand #{}:  Hold'em No Limit ({}/{}) - {y}/{mo:02}/{d:02} {hh}:{mi:02}:{ss:02} UTC",
        game_number(hand),
        h.small_blind,
        h.big_blind
    );
    let _ = writeln!(o, "Table '{}' {}-max Seat #{} is the button", opts.table, h.table_size, h.button + 1);
    for (s, name) in h.names.iter().enumerate() {
        let _ = writeln!(o, "Seat {}: {} ({} in chips)", s + 1, name, h.stacks[s]);
    }
    for (s, reason, amount) in &h.posts {
        let what = if reason == holdem::reason::ANTE { "the ante".to_owned() } else { reason.clone() };
        let _ = writeln!(o, "{}: posts {what} {amount}", h.names[*s]);
    }
    let mut folded_on: Vec<Option<&str>> = vec![None; n];
    let mut put_in = vec![false; n];
    let shows_at = |o: &mut String| {
        let _ = writeln!(o, "*** SHOW DOWN ***");
        for s in &h.shown {
            if let Some(c) = h.hole_of(*s) {
                let _ = writeln!(o, "{}: shows [{}] ({})", h.names[*s], join_cards(c), h.describe(*s));
            }
        }
    };
    let mut board: Vec<CardId> = Vec::new();
    for st in &h.streets {
        match st.name {
            "Preflop" => {
                let _ = writeln!(o, "*** HOLE CARDS ***");
                for (s, c) in h.dealt_to(hero) {
                    let _ = writeln!(o, "Dealt to {} [{}]", h.names[*s], join_cards(c));
                }
            }
            name => {
                let label = name.to_uppercase();
                if board.is_empty() {
                    let _ = writeln!(o, "*** {label} *** [{}]", join_cards(&st.board));
                } else {
                    let _ =
                        writeln!(o, "*** {label} *** [{}] [{}]", join_cards(&board), join_cards(&st.board));
                }
            }
        }
        board.extend(st.board.iter().copied());
        for a in &st.actions {
            let who = &h.names[a.seat];
            let all_in = if a.all_in { " and is all-in" } else { "" };
            let line = match &a.mv {
                Move::Fold => {
                    folded_on[a.seat] = Some(st.name);
                    format!("{who}: folds")
                }
                Move::Check => format!("{who}: checks"),
                Move::Call(x) => format!("{who}: calls {x}{all_in}"),
                Move::Bet(x) => format!("{who}: bets {x}{all_in}"),
                Move::Raise { by, to } => format!("{who}: raises {by} to {to}{all_in}"),
            };
            if !matches!(a.mv, Move::Fold | Move::Check) {
                put_in[a.seat] = true;
            }
            let _ = writeln!(o, "{line}{}", if a.timeout { " (timeout)" } else { "" });
        }
    }
    for (s, x) in &h.returned {
        let _ = writeln!(o, "Uncalled bet ({x}) returned to {}", h.names[*s]);
    }
    if !h.shown.is_empty() {
        shows_at(&mut o);
    }
    let side_pots = h.pots.iter().any(|(p, _, _)| p != holdem::reason::MAIN_POT);
    for (pot, s, x) in &h.pots {
        let from = match (side_pots, pot.strip_prefix(holdem::reason::SIDE_POT)) {
            (false, _) => "pot".to_owned(),
            (true, Some(k)) => format!("side pot-{k}"),
            (true, None) => "main pot".to_owned(),
        };
        let _ = writeln!(o, "{} collected {x} from {from}", h.names[*s]);
    }
    let total: u64 = h.pots.iter().map(|p| p.2).sum();
    let _ = writeln!(o, "*** SUMMARY ***");
    let _ = writeln!(o, "Total pot {total} | Rake {}", hand.result.rake.0);
    if !board.is_empty() {
        let _ = writeln!(o, "Board [{}]", join_cards(&board));
    }
    for s in 0..n {
        let mut tags = String::new();
        if s == h.button {
            tags.push_str(" (button)");
        }
        if let Some((_, reason, _)) = h.posts.iter().find(|p| p.0 == s && p.1 != holdem::reason::ANTE) {
            tags.push_str(if reason == holdem::reason::SMALL_BLIND {
                " (small blind)"
            } else {
                " (big blind)"
            });
        }
        let won: u64 = h.pots.iter().filter(|p| p.1 == s).map(|p| p.2).sum();
        let what = if let Some(street) = folded_on[s] {
            let when =
                if street == "Preflop" { "before Flop".to_owned() } else { format!("on the {street}") };
            let bet = if put_in[s] || h.posts.iter().any(|p| p.0 == s) { "" } else { " (didn't bet)" };
            format!("folded {when}{bet}")
        } else if h.shown.contains(&s) {
            let cards = join_cards(h.hole_of(s).unwrap_or_default());
            if won > 0 {
                format!("showed [{cards}] and won ({won}) with {}", h.describe(s))
            } else {
                format!("showed [{cards}] and lost with {}", h.describe(s))
            }
        } else if won > 0 {
            format!("collected ({won})")
        } else {
            "mucked".to_owned()
        };
        let _ = writeln!(o, "Seat {}: {}{tags} {what}", s + 1, h.names[s]);
    }
    o.truncate(o.trim_end().len());
    o
}

fn ohh(h: &Holdem, hand: &VerifiedHand, opts: &ExportOptions) -> Value {
    let ((y, mo, d), (hh, mi, ss)) = utc(opts.time_ms);
    let hero = hero_seat(hand, opts);
    let players: Vec<Value> = (0..hand.players.len())
        .map(|s| json!({"id": s, "seat": s + 1, "name": h.names[s], "starting_stack": h.stacks[s]}))
        .collect();
    let mut number = 0u64;
    let mut next = || {
        number += 1;
        number - 1
    };
    let mut rounds = Vec::new();
    for (id, st) in h.streets.iter().enumerate() {
        let mut actions = Vec::new();
        if id == 0 {
            for (s, reason, amount) in &h.posts {
                let action = match reason.as_str() {
                    holdem::reason::ANTE => "Post Ante",
                    holdem::reason::SMALL_BLIND => "Post SB",
                    _ => "Post BB",
                };
                actions.push(
                    json!({"action_number": next(), "player_id": s, "action": action, "amount": amount}),
                );
            }
            for (s, c) in h.dealt_to(hero) {
                let cards: Vec<String> = c.iter().map(|c| c.to_string()).collect();
                actions.push(
                    json!({"action_number": next(), "player_id": s, "action": "Dealt Cards", "cards": cards}),
                );
            }
        }
        for a in &st.actions {
            let (action, amount) = match a.mv {
                Move::Fold => ("Fold", None),
                Move::Check => ("Check", None),
                Move::Call(x) => ("Call", Some(x)),
                Move::Bet(x) => ("Bet", Some(x)),
                Move::Raise { to, .. } => ("Raise", Some(to)),
            };
            let mut v = json!({"action_number": next(), "player_id": a.seat, "action": action});
            if let Some(x) = amount {
                v["amount"] = json!(x);
                v["is_allin"] = json!(a.all_in);
            }
            actions.push(v);
        }
        let mut round = json!({"id": id, "street": st.name, "actions": actions});
        if !st.board.is_empty() {
            round["cards"] = json!(st.board.iter().map(|c| c.to_string()).collect::<Vec<_>>());
        }
        rounds.push(round);
    }
    if !h.shown.is_empty() {
        let actions: Vec<Value> = h
            .shown
            .iter()
            .filter_map(|s| h.hole_of(*s).map(|c| (s, c)))
            .map(|(s, c)| {
                let cards: Vec<String> = c.iter().map(|c| c.to_string()).collect();
                json!({"action_number": next(), "player_id": s, "action": "Shows Cards", "cards": cards})
            })
            .collect();
        rounds.push(json!({"id": rounds.len(), "street": "Showdown", "actions": actions}));
    }
    let mut pots: Vec<(String, Vec<(usize, u64)>)> = Vec::new();
    for (pot, s, x) in &h.pots {
        match pots.iter_mut().find(|p| &p.0 == pot) {
            Some(p) => p.1.push((*s, *x)),
            None => pots.push((pot.clone(), vec![(*s, *x)])),
        }
    }
    let pots: Vec<Value> = pots
        .iter()
        .enumerate()
        .map(|(i, (_, wins))| {
            json!({
                "number": i,
                "amount": wins.iter().map(|w| w.1).sum::<u64>(),
                "rake": 0,
                "player_wins": wins.iter().map(|(s, x)| json!({"player_id": s, "win_amount": x})).collect::<Vec<_>>(),
            })
        })
        .collect();
    let mut o = json!({
        "spec_version": "1.4.6",
        "site_name": "game-claw",
        "network_name": "game-claw",
        "internal_version": env!("CARGO_PKG_VERSION"),
        "tournament": false,
        "game_number": hand.hand_id.to_string(),
        "start_date_utc": format!("{y:04}-{mo:02}-{d:02}T{hh:02}:{mi:02}:{ss:02}Z"),
        "table_name": opts.table,
        "table_size": h.table_size,
        "game_type": "Holdem",
        "bet_limit": {"bet_type": "NL", "bet_cap": 0},
        "currency": "PPC",
        "dealer_seat": h.button + 1,
        "small_blind_amount": h.small_blind,
        "big_blind_amount": h.big_blind,
        "ante_amount": h.ante,
        "players": players,
        "rounds": rounds,
        "pots": pots,
    });
    match hero {
        Some(s) => o["hero_player_id"] = json!(s),
        None => o["flags"] = json!(["Observed"]),
    }
    json!({ "ohh": o })
}

/// Who a deal target or chip party is, in words.
fn seat_name(hand: &VerifiedHand, seat: usize) -> String {
    match hand.players.get(seat) {
        Some(p) => format!("seat {seat} ({})", p.id.short()),
        None => format!("seat {seat}"),
    }
}

fn text_history(hand: &VerifiedHand, opts: &ExportOptions) -> String {
    let ((y, mo, d), (hh, mi, ss)) = utc(opts.time_ms);
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{} hand {} (#{} at table {}) - {y}/{mo:02}/{d:02} {hh:02}:{mi:02}:{ss:02} UTC",
        hand.game, hand.hand_id, hand.hand_number, opts.table
    );
    let _ = writeln!(o, "Dealer {}; settings {}", hand.dealer, hand.settings);
    for (s, p) in hand.players.iter().enumerate() {
        let _ = writeln!(o, "Seat {s}: {} ({} in chips)", p.id, p.balance);
    }
    for step in steps(hand) {
        let line = match step {
            Step::Act(a) => {
                let by = match &a.source {
                    ActionSource::Player { .. } => String::new(),
                    ActionSource::Timeout { reason } => format!(" (dealer, {reason})"),
                };
                format!("{}: {}{by}", seat_name(hand, a.seat.index()), a.action)
            }
            Step::Event(AnnouncedEvent::Dealt { phase, cards }) => {
                let list: Vec<String> = cards
                    .iter()
                    .map(|c| {
                        let to = match c.target {
                            DealTo::Player(s) => format!("seat {}", s.index()),
                            DealTo::Community => "board".into(),
                            DealTo::Burn => "burn".into(),
                            DealTo::House => "house".into(),
                        };
                        let card = card_of(hand, c.position).map_or("??".into(), |c| c.to_string());
                        let face =
                            if c.face == claw_protocol::messages::CardFace::Down { " (down)" } else { "" };
                        format!("{to} {card}{face}")
                    })
                    .collect();
                format!("*** deal {phase}: {}", list.join(", "))
            }
            Step::Event(AnnouncedEvent::Chip(ChipMove { op: ChipOp::Debit, party, amount, reason })) => {
                format!("{} pays {amount} ({reason})", party_name(hand, party))
            }
            Step::Event(AnnouncedEvent::Chip(ChipMove { op: ChipOp::Credit, party, amount, reason })) => {
                format!("{} receives {amount} ({reason})", party_name(hand, party))
            }
            Step::Event(AnnouncedEvent::Reveal { positions }) => {
                let list: Vec<String> = positions
                    .iter()
                    .map(|p| card_of(hand, *p).map_or("??".into(), |c| c.to_string()))
                    .collect();
                format!("*** revealed: {}", list.join(" "))
            }
            Step::Event(AnnouncedEvent::Transfer { position, from, to, face }) => {
                let card = card_of(hand, *position).map_or("??".into(), |c| c.to_string());
                let face = if *face == claw_protocol::messages::CardFace::Down { " (down)" } else { "" };
                format!("*** transfer: seat {} gives {card} to seat {}{face}", from.index(), to.index())
            }
        };
        let _ = writeln!(o, "{line}");
    }
    let r = &hand.result;
    let _ = writeln!(o, "*** result: {}", r.summary);
    let winners: Vec<String> = r.winners.iter().map(|s| s.index().to_string()).collect();
    let _ = writeln!(o, "Winners: seats {}; house net {}; rake {}", winners.join(", "), r.house_net, r.rake);
    for (s, net) in r.net.iter().enumerate() {
        let _ = writeln!(o, "Seat {s}: net {net:+}");
    }
    o.truncate(o.trim_end().len());
    o
}

fn party_name(hand: &VerifiedHand, p: &ChipParty) -> String {
    match p {
        ChipParty::Seat(s) => seat_name(hand, s.index()),
        ChipParty::House => "house".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::{utc, Format, UnknownFormat};

    #[test]
    fn formats_are_named_once() {
        for f in Format::ALL {
            assert_eq!(f.name().parse::<Format>(), Ok(f));
            assert_eq!(f.to_string(), f.name());
        }
        let e = "pokerstar".parse::<Format>().unwrap_err();
        assert_eq!(e, UnknownFormat("pokerstar".into()));
        assert_eq!(e.to_string(), r#"unknown format "pokerstar" (one of: pokerstars, ohh, text)"#);
    }

    #[test]
    fn civil_dates() {
        assert_eq!(utc(0), ((1970, 1, 1), (0, 0, 0)));
        // 2026-12-01T09:02:23Z
        assert_eq!(utc(1_796_115_743_000), ((2026, 12, 1), (9, 2, 23)));
        // 2000-02-29T23:59:59Z (leap day)
        assert_eq!(utc(951_868_799_000), ((2000, 2, 29), (23, 59, 59)));
    }
}

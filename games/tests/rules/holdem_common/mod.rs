//! Helpers for the Hold'em tests: scripted decks and a table that records
//! events and actions and checks conservation and replay at the end.

use std::sync::Arc;

use claw_games::{
    check_conservation, registry, replay, ChipMove, ChipOp, ChipParty, DynGame, GameError, HandEvent,
    HandResult, HandRunner, PlayerInfo, RecordedAction,
};
use claw_protocol::{CardId, Seat};
use serde_json::Value;

pub use crate::support::{pid, players};

pub fn game() -> Arc<dyn DynGame> {
    registry::get("texas-holdem").unwrap()
}

fn parse(s: &str) -> Vec<CardId> {
    let s: String = s.split_whitespace().collect();
    s.as_bytes().chunks(2).map(|c| std::str::from_utf8(c).unwrap().parse().unwrap()).collect()
}

/// The deck order that gives `holes[seat]` ("AsKd") to each seat and the
/// five-card `board` ("2c 7d 9h Js Kd"), for a table whose button is `button`:
/// hole cards one at a time from the button's left, then burn, flop, burn,
/// turn, burn, river; unused cards fill the burns and the rest.
pub fn deck(button: usize, holes: &[&str], board: &str) -> Vec<CardId> {
    let n = holes.len();
    let holes: Vec<Vec<CardId>> = holes.iter().map(|h| parse(h)).collect();
    let board = parse(board);
    let used: Vec<CardId> = holes.iter().flatten().chain(&board).copied().collect();
    let mut filler = CardId::deck(1, false).into_iter().filter(|c| !used.contains(c));
    let mut out = Vec::new();
    for k in 0..2 * n {
        out.push(holes[(button + 1 + k) % n][k / n]);
    }
    out.push(filler.next().unwrap());
    out.extend(&board[..3]);
    out.push(filler.next().unwrap());
    out.push(board[3]);
    out.push(filler.next().unwrap());
    out.push(board[4]);
    out.extend(filler);
    assert_eq!(out.len(), 52);
    out
}

pub struct Table {
    pub game: Arc<dyn DynGame>,
    pub settings: Value,
    pub players: Vec<PlayerInfo>,
    pub memory: Value,
    pub deck: Vec<CardId>,
    pub runner: HandRunner,
    pub events: Vec<HandEvent>,
    pub actions: Vec<RecordedAction>,
}

impl Table {
    pub fn new(settings: Value, balances: &[u64], memory: Value, deck: Vec<CardId>) -> Table {
        Table::try_new(settings, balances, memory, deck).unwrap()
    }

    pub fn try_new(
        settings: Value,
        balances: &[u64],
        memory: Value,
        deck: Vec<CardId>,
    ) -> Result<Table, GameError> {
        let game = game();
        let players = players(balances);
        let (runner, events) = HandRunner::start(game.as_ref(), &settings, &players, &memory, deck.clone())?;
        Ok(Table { game, settings, players, memory, deck, runner, events, actions: Vec::new() })
    }

    /// A table with default settings, the first hand (button seat 0).
    pub fn simple(balances: &[u64], holes: &[&str], board: &str) -> Table {
        Table::new(Value::Null, balances, Value::Null, deck(0, holes, board))
    }

    pub fn act(&mut self, seat: u8, action: Value) -> Result<Vec<HandEvent>, GameError> {
        let before = self.runner.hand().state_json();
        let r = self.runner.act(Seat(seat), &action);
        match &r {
            Ok(ev) => {
                self.events.extend(ev.iter().cloned());
                self.actions.push(RecordedAction { seat: Seat(seat), action });
            }
            Err(_) => {
                assert_eq!(before, self.runner.hand().state_json(), "a refused action changed the state")
            }
        }
        r
    }

    /// Acts, panicking with the reason when refused.
    pub fn ok(&mut self, seat: u8, action: Value) -> Vec<HandEvent> {
        let a = action.clone();
        self.act(seat, action).unwrap_or_else(|e| panic!("seat {seat} {a}: {e}"))
    }

    pub fn to_act(&self) -> Option<u8> {
        self.runner.hand().to_act().map(|s| s.0)
    }

    pub fn public(&self) -> Value {
        self.runner.hand().public_state()
    }

    /// The action types offered to the player to act.
    pub fn offered(&self) -> Vec<String> {
        self.runner
            .hand()
            .valid_actions()
            .iter()
            .map(|o| o.action["type"].as_str().unwrap().to_owned())
            .collect()
    }

    /// Everyone to act checks (or calls when facing a bet) until the hand ends.
    pub fn check_down(&mut self) {
        while let Some(s) = self.to_act() {
            let owe = self.public()["to_call"].as_u64().unwrap();
            let a = if owe == 0 { "check" } else { "call" };
            self.ok(s, serde_json::json!({ "type": a }));
        }
    }

    pub fn credits(&self) -> Vec<(u8, u64, String)> {
        self.events
            .iter()
            .filter_map(|e| match e {
                HandEvent::Chip(ChipMove {
                    op: ChipOp::Credit,
                    party: ChipParty::Seat(s),
                    amount,
                    reason,
                }) => Some((s.0, amount.0, reason.clone())),
                _ => None,
            })
            .collect()
    }

    pub fn debits(&self) -> Vec<(u8, u64, String)> {
        self.events
            .iter()
            .filter_map(|e| match e {
                HandEvent::Chip(ChipMove {
                    op: ChipOp::Debit,
                    party: ChipParty::Seat(s),
                    amount,
                    reason,
                }) => Some((s.0, amount.0, reason.clone())),
                _ => None,
            })
            .collect()
    }

    /// The result, after checking conservation and that a replay of the
    /// recorded actions reproduces events, result and memory.
    pub fn result(&self) -> HandResult {
        let hand = self.runner.hand();
        assert!(hand.is_over(), "hand not over");
        let r = hand.result().unwrap();
        check_conservation(&self.events, &r, self.players.len()).unwrap();
        let rep = replay(
            self.game.as_ref(),
            &self.settings,
            &self.players,
            &self.memory,
            self.deck.clone(),
            &self.actions,
        )
        .unwrap();
        assert_eq!(rep.events, self.events);
        assert_eq!(rep.result, r);
        assert_eq!(rep.memory_after, hand.memory_after());
        r
    }
}

pub fn j(s: &str) -> Value {
    serde_json::from_str(s).unwrap()
}

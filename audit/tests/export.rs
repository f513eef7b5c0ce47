//! The hand-history export of real engine hands: the checked-in split-pot
//! fixture (the one `scripts/check_exports.py` gives to pokerkit too) and a
//! hand of a game that is not a poker variant.

use claw_audit::export::{export, ExportError, ExportOptions, Format};
use claw_audit::Auditor;
use claw_engine::testing::Table;
use claw_games::PokerVariant;
use claw_protocol::audit::VerifiedHand;
use serde_json::Value;

/// The fixture's hand, audited with the game replay: four-handed, button
/// seat 0, the small blind folded, seats 0, 2 and 3 split 35 chips.
fn split_pot() -> VerifiedHand {
    let text = include_str!("fixtures/transcripts/holdem-split-odd-chips.jsonl");
    let mut verdicts = Auditor::new(None).audit_jsonl(text).expect("a transcript");
    assert_eq!(verdicts.len(), 1);
    let report = verdicts.remove(0).outcome.expect("the fixture audits OK");
    assert!(report.complete(), "skipped: {:?}", report.skipped);
    report.hand
}

#[test]
fn a_split_pots_odd_chips_go_one_each_clockwise_from_the_buttons_left() {
    let hand = split_pot();
    assert_eq!(hand.result.net, [1, -5, 2, 2], "the dealer's signed division");
    let name = |seat: usize| hand.players[seat].id.short();

    let ps = export(&hand, Format::Pokerstars, &ExportOptions::default()).unwrap();
    assert!(ps.contains("Seat #1 is the button"), "{ps}");
    let collected: Vec<&str> = ps.lines().filter(|l| l.contains(" collected ")).collect();
    assert_eq!(
        collected,
        [
            format!("{} collected 12 from pot", name(2)),
            format!("{} collected 12 from pot", name(3)),
            format!("{} collected 11 from pot", name(0)),
        ]
    );

    let ohh: Value =
        serde_json::from_str(&export(&hand, Format::Ohh, &ExportOptions::default()).unwrap()).unwrap();
    let wins: Vec<(u64, u64)> = ohh["ohh"]["pots"][0]["player_wins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| (w["player_id"].as_u64().unwrap(), w["win_amount"].as_u64().unwrap()))
        .collect();
    assert_eq!(wins, [(2, 12), (3, 12), (0, 11)]);
}

/// `N-max` and OHH's `table_size` of `hand` exported with `seats`.
fn table_size(hand: &VerifiedHand, seats: Option<u8>) -> u64 {
    let opts = ExportOptions { seats, ..ExportOptions::default() };
    let ps = export(hand, Format::Pokerstars, &opts).unwrap();
    let line = ps.lines().nth(1).unwrap();
    let max: u64 = line.split(' ').find_map(|w| w.strip_suffix("-max")).unwrap().parse().unwrap();
    let ohh: Value = serde_json::from_str(&export(hand, Format::Ohh, &opts).unwrap()).unwrap();
    assert_eq!(ohh["ohh"]["table_size"], max, "{line}");
    max
}

#[test]
fn the_table_size_is_the_signed_rooms_seat_count() {
    let mut hand = split_pot();
    let room = hand.room.clone().expect("game-start carries the room configuration");
    assert_eq!(table_size(&hand, None), u64::from(room.max_players));
    // The signed seat count wins over one given; a room of ten seats is 10-max
    // whoever is dealt in.
    hand.room = Some(claw_protocol::messages::RoomConfig { max_players: 10, ..room });
    assert_eq!(table_size(&hand, Some(6)), 10);
}

#[test]
fn without_a_signed_room_the_table_size_is_the_given_one_else_the_games_maximum() {
    let mut hand = split_pot();
    hand.room = None;
    for (seats, size) in [(None, 10), (Some(6), 6), (Some(2), 4)] {
        assert_eq!(table_size(&hand, seats), size, "{seats:?}");
    }
}

#[test]
fn only_poker_variants_have_poker_histories() {
    for game in claw_games::registry::all() {
        let meta = game.meta();
        let want = (meta.name == claw_games::texas_holdem::NAME).then_some(PokerVariant::NoLimitHoldem);
        assert_eq!(meta.poker_variant, want, "{}", meta.name);
    }
    let mut table = Table::new(claw_games::blackjack::NAME, &Value::Null, 2, 7).unwrap();
    let played = table
        .play_hand(&mut |turn, _| {
            turn.actions
                .iter()
                .find(|o| o.affordable)
                .map(|o| o.action.clone())
                .ok_or_else(|| "no action".into())
        })
        .unwrap();
    let transcript = played.sign(&table.dealer, &table.room_config().room_id).unwrap();
    let hand = Auditor::new(None).audit(&transcript, None).expect("audits OK").hand;
    for (format, name) in [(Format::Pokerstars, "PokerStars"), (Format::Ohh, "OHH")] {
        assert_eq!(
            export(&hand, format, &ExportOptions::default()),
            Err(ExportError::WrongGame { format: name, game: "blackjack".into() })
        );
    }
    let text = export(&hand, Format::Text, &ExportOptions::default()).unwrap();
    assert!(text.starts_with("blackjack hand ") && text.contains("*** result:"), "{text}");
}

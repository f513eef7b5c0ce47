//! Every game over real WebSockets on 127.0.0.1: a real dealer node, bots
//! as ordinary SDK clients (each verifying every event live), 100 hands,
//! and every hand audited OK by every bot seated in it.

use claw_e2e::harness::*;
use claw_player::node::NodeConfig;
use claw_player::play::BotReport;

const HANDS: u64 = 100;

async fn play_game(game: &str, strategies: &[&str], seed: u64) -> Vec<BotReport> {
    let mut room = fast_room("r", game);
    room.min_players = strategies.len() as u8;
    let d = start_dealer(vec![room], 50_000_000).await;
    let nodes = connect_players(&d.invite("r"), strategies.len(), seed, NodeConfig::default()).await;
    let strategies: Vec<String> = strategies.iter().map(|s| s.to_string()).collect();
    let reports = within(600, game, run_mixed(nodes, game, &strategies, HANDS, seed)).await;
    for (i, r) in reports.iter().enumerate() {
        assert!(r.failures.is_empty(), "{game}: bot {i}: failed checks {:?}", r.failures);
        assert_eq!(r.hands, HANDS, "{game}: bot {i} played {} hands ({:?})", r.hands, r.closed);
        assert_eq!(r.audited_ok, HANDS, "{game}: bot {i}: {} hands audited OK", r.audited_ok);
        assert!(r.actions > 0, "{game}: bot {i} never acted");
    }
    let net: i64 = reports.iter().map(|r| r.net).sum();
    eprintln!("{game}: {} bots × {HANDS} hands audited OK; bots' net {net}", reports.len());
    d.stop().await;
    reports
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn texas_holdem_6_bots_100_hands() {
    play_game("texas-holdem", &["simple", "simple", "simple", "simple", "simple", "simple"], 10).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blackjack_6_bots_100_hands() {
    play_game("blackjack", &["simple", "simple", "simple", "random", "random", "random"], 20).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dou_di_zhu_3_bots_100_hands() {
    play_game("dou-di-zhu", &["simple", "simple", "random"], 30).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sam_gong_6_bots_100_hands() {
    play_game("sam-gong", &["simple", "simple", "simple", "random", "random", "random"], 40).await;
}

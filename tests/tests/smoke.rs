use claw_e2e::harness::*;
use claw_player::node::NodeConfig;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_bots_play_holdem() {
    let d = start_dealer(vec![fast_room("t", "texas-holdem")], 100_000).await;
    let nodes = connect_players(&d.invite("t"), 2, 1, NodeConfig::default()).await;
    let reports = run_bots(nodes, "texas-holdem", "random", 5, 1).await;
    eprintln!("bots done");
    for r in &reports {
        assert!(r.failures.is_empty(), "{r:?}");
        assert_eq!(r.hands, 5, "{r:?}");
    }
    d.stop().await;
    eprintln!("dealer stopped");
}

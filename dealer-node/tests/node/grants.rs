//! Rescue grants over real sockets: never a faucet. A player whose chips
//! are out on another table is not rescued (its true balance counts them),
//! and a grant a crash left between its record and its payment is paid
//! exactly once at the next start, or refused cleanly.

use std::sync::Arc;
use std::time::Duration;

use claw_chips::ledger::welcome::{DayCaps, GrantKind, GrantLine};
use claw_chips::{AccountId, AccountOp, ChipOp, ChipProvider, IdempotencyKey, LocalChips};
use claw_dealer::{DealerNode, NodeConfig, NodeHandle, RoomConfig};
use claw_protocol::messages::{EntropyMode, EventBody, ServerMessage};
use claw_protocol::{Chips, Identity};

use crate::common::*;

/// Rescue: 1 000 chips below 500, once a day, from `operator`.
fn rescue() -> Vec<(GrantKind, DayCaps)> {
    let caps =
        DayCaps { amount: Chips(1_000), below: Some(Chips(500)), per_account: 1, budget_per_day: None };
    vec![(GrantKind::Rescue, caps)]
}

async fn start(
    dir: &std::path::Path,
    chips: &Arc<LocalChips>,
    rooms: Vec<RoomConfig>,
    from: &str,
) -> NodeHandle {
    let mut config = NodeConfig::local(dir, rooms);
    config.limits.ping_interval = Duration::from_secs(10);
    DealerNode::builder(config)
        .local_chips(chips.clone(), Chips::ZERO)
        .day_grants(rescue(), Some(AccountId::new(from).unwrap()))
        .game(claw_engine::testgame::high_card())
        .launch()
        .await
        .unwrap()
}

fn account(seed: u8) -> AccountId {
    AccountId::from(Identity::from_seed([seed; 32]).id())
}

async fn client(node: &NodeHandle, room: &str, seed: u8) -> Client {
    let me = Arc::new(Identity::from_seed([seed; 32]));
    Client::connect(node.addr(), room, node.dealer_id(), me, None).await.unwrap()
}

fn record(dir: &std::path::Path) -> String {
    std::fs::read_to_string(dir.join("welcome.jsonl")).unwrap_or_default()
}

/// The attack: stake almost everything at one table, then claim a rescue
/// at another while the chips are out of the account. Refused: the
/// decision counts the chips out in running hands. A player who really
/// has nothing is still rescued.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_player_whose_chips_are_out_on_another_table_is_not_rescued() {
    let dir = tempfile::tempdir().unwrap();
    let chips = Arc::new(LocalChips::new());
    chips.grant(&AccountId::new("operator").unwrap(), Chips(20_000)).await.unwrap();
    for seed in [1, 2] {
        chips.grant(&account(seed), Chips(1_001)).await.unwrap();
    }
    let mut a = RoomConfig::new("a", "high-card");
    a.settings = serde_json::json!({"ante": 1_000, "bet": 1});
    a.entropy = EntropyMode::Dealer;
    a.min_players = 2;
    a.action_timeout = Duration::from_secs(3_600);
    let node = start(dir.path(), &chips, vec![a, RoomConfig::new("b", "high-card")], "operator").await;
    let (mut x, mut y) = (client(&node, "a", 1).await, client(&node, "a", 2).await);
    assert!(x.join().await.accepted && y.join().await.accepted);
    // The antes are out: the hand's `chips` event comes after the debits.
    x.recv_until(|m| match m {
        ServerMessage::Event(e) => matches!(e.decode_body(), Ok(EventBody::Chips(_))).then_some(()),
        _ => None,
    })
    .await;
    assert_eq!(chips.balance(&account(1)).await.unwrap(), Chips(1), "1 000 staked at table a");

    // The claim at table b: its balance alone (1) is below 500.
    let mut claim = client(&node, "b", 1).await;
    let j = claim.join().await;
    let seen = j.players.iter().find(|p| p.id == claim.id()).map(|p| p.chips);
    assert!(seen.is_none() || seen == Some(Chips(1)), "not rescued: {j:?}");
    assert_eq!(chips.balance(&account(1)).await.unwrap(), Chips(1), "no chip granted");
    assert!(!record(dir.path()).contains(r#""grant":"rescue""#), "{}", record(dir.path()));

    // Control: an identity with nothing anywhere is rescued.
    let mut broke = client(&node, "b", 3).await;
    assert!(broke.join().await.accepted, "rescued, then seated");
    assert_eq!(chips.balance(&account(3)).await.unwrap(), Chips(1_000));
    let operator = chips.balance(&AccountId::new("operator").unwrap()).await.unwrap();
    assert_eq!(operator, Chips(19_000), "the one rescue, paid by the operator");
    node.shutdown(Duration::ZERO).await;
}

/// A crash between a grant's record and its payment: the next start pays
/// it once (also when the provider had applied it already: same key), a
/// later start pays nothing more, and one the operator account cannot
/// cover is refused and not counted. Lines written before the node kept
/// outcomes are never asked again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grant_a_crash_left_unpaid_is_paid_exactly_once_after_restart() {
    let dir = tempfile::tempdir().unwrap();
    let chips = Arc::new(LocalChips::new());
    let operator = AccountId::new("operator").unwrap();
    chips.grant(&operator, Chips(20_000)).await.unwrap();
    let at_ms = now_ms();
    let grant = |seed: u8, at_ms: u64| GrantLine::Grant {
        grant: GrantKind::Rescue,
        account: account(seed),
        amount: Chips(1_000),
        at_ms,
    };
    // Seed 4: recorded by an older node (before `paid-lines`): never asked
    // again. Seeds 5 and 6: decided, then the crash; the provider had
    // applied 6's transfer before it (its key is the grant's).
    let key6 = IdempotencyKey::new(format!("rescue/{}/{at_ms}", account(6))).unwrap();
    let ops = [
        AccountOp::new(ChipOp::Debit, &operator, Chips(1_000), "rescue chips"),
        AccountOp::new(ChipOp::Credit, &account(6), Chips(1_000), "rescue chips"),
    ];
    chips.settle(&key6, &ops).await.unwrap();
    let lines = [grant(4, at_ms), GrantLine::PaidLines, grant(5, at_ms), grant(6, at_ms)];
    let text: String = lines.iter().map(|l| serde_json::to_string(l).unwrap() + "\n").collect();
    std::fs::write(dir.path().join("welcome.jsonl"), text).unwrap();
    let total = chips.total().await;

    let rooms = || vec![RoomConfig::new("a", "high-card")];
    let node = start(dir.path(), &chips, rooms(), "operator").await;
    let balances = || async {
        let mut v = Vec::new();
        for seed in [4, 5, 6] {
            v.push(chips.balance(&account(seed)).await.unwrap().0);
        }
        v
    };
    assert_eq!(balances().await, vec![0, 1_000, 1_000], "5 paid at start, 6 not twice, 4 never");
    assert_eq!(chips.balance(&operator).await.unwrap(), Chips(18_000));
    let paid = record(dir.path()).matches(r#""kind":"paid""#).count();
    assert_eq!(paid, 2, "{}", record(dir.path()));
    node.shutdown(Duration::ZERO).await;
    let node = start(dir.path(), &chips, rooms(), "operator").await;
    assert_eq!(balances().await, vec![0, 1_000, 1_000], "a second start pays nothing");
    assert_eq!(chips.total().await, total, "no chip created");
    node.shutdown(Duration::ZERO).await;

    // An open grant the operator account cannot cover: refused, recorded,
    // and no longer counted.
    let other = tempfile::tempdir().unwrap();
    let text: String = [GrantLine::PaidLines, grant(7, at_ms)]
        .iter()
        .map(|l| serde_json::to_string(l).unwrap() + "\n")
        .collect();
    std::fs::write(other.path().join("welcome.jsonl"), text).unwrap();
    let node = start(other.path(), &chips, rooms(), "broke").await;
    assert_eq!(chips.balance(&account(7)).await.unwrap(), Chips::ZERO);
    assert!(record(other.path()).contains(r#""kind":"refused""#), "{}", record(other.path()));
    node.shutdown(Duration::ZERO).await;
    let node = start(other.path(), &chips, rooms(), "operator").await;
    assert_eq!(chips.balance(&account(7)).await.unwrap(), Chips::ZERO, "refused for good: not asked again");
    node.shutdown(Duration::ZERO).await;
}

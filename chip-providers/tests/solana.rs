//! `SolanaChips` on the real SPL Token, Associated Token Account and Memo
//! programs, run in process by `litesvm` (no validator can run here): the
//! player's approve, debits and credits settled per hand, commission,
//! revocation and exhausted allowances, retries and restarts that never move
//! chips twice, concurrent rooms, and the JSON-RPC backend against a real
//! HTTP JSON-RPC responder over the same bank.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use claw_chips::solana::client::{RawAccount, TxStatus};
use claw_chips::solana::litesvm::LiteSvmChain;
use claw_chips::solana::{
    player, player_address, spl, Address, Hash, Keypair, RpcClient, Signature, Signer, SolanaChips,
    SolanaClient, SolanaError, Timing, Transaction,
};
use claw_chips::{AccountId, ChipError, ChipProvider, HandRef, IdempotencyKey};
use claw_protocol::{Chips, Identity};

const FUNDS: u64 = 1000;

/// Fault injection over the real bank: `DROP` loses the next send before
/// it reaches the bank, `LOSE_ANSWER` delivers it and loses the answer.
struct Flaky {
    chain: LiteSvmChain,
    mode: AtomicU8,
}

const PASS: u8 = 0;
const DROP: u8 = 1;
const LOSE_ANSWER: u8 = 2;

#[async_trait]
impl SolanaClient for Flaky {
    async fn latest_blockhash(&self) -> Result<Hash, SolanaError> {
        self.chain.latest_blockhash().await
    }
    async fn is_blockhash_valid(&self, hash: &Hash) -> Result<bool, SolanaError> {
        self.chain.is_blockhash_valid(hash).await
    }
    async fn account(&self, address: &Address) -> Result<Option<RawAccount>, SolanaError> {
        self.chain.account(address).await
    }
    async fn send(&self, tx: &Transaction) -> Result<(), SolanaError> {
        match self.mode.swap(PASS, Ordering::SeqCst) {
            DROP => Err(SolanaError::Unreachable("dropped before the bank".into())),
            LOSE_ANSWER => {
                self.chain.send(tx).await?;
                Err(SolanaError::Unreachable("answer lost".into()))
            }
            _ => self.chain.send(tx).await,
        }
    }
    async fn status(&self, signature: &Signature) -> Result<TxStatus, SolanaError> {
        self.chain.status(signature).await
    }
}

struct World {
    chain: LiteSvmChain,
    flaky: Arc<Flaky>,
    operator: Keypair,
    mint: Address,
    escrow: Address,
    players: Vec<Identity>,
    dir: tempfile::TempDir,
}

fn kp(id: &Identity) -> Keypair {
    player::game_keypair(&id.signing_secret())
}

fn acct(id: &Identity) -> AccountId {
    AccountId::from(id.id())
}

fn house() -> AccountId {
    AccountId::new("dealer:test").unwrap()
}

fn key(s: &str) -> IdempotencyKey {
    IdempotencyKey::new(s).unwrap()
}

/// A bank with a chip mint, the operator's escrow, and `n` players holding
/// `FUNDS` chips each who approved the operator for `allowance`.
async fn world(n: usize, allowance: u64) -> World {
    let chain = LiteSvmChain::new();
    let operator = Keypair::new();
    chain.airdrop(&operator.pubkey(), 10_000_000_000).unwrap();
    let mint = chain.create_mint(&operator).unwrap();
    let escrow = chain.fund(&operator, &mint, &operator.pubkey(), 0).unwrap();
    let mut players = Vec::new();
    for i in 0..n {
        let id = Identity::from_seed([i as u8 + 1; 32]);
        let addr = player_address(&id.id());
        chain.airdrop(&addr, 1_000_000_000).unwrap();
        chain.fund(&operator, &mint, &addr, FUNDS).unwrap();
        if allowance > 0 {
            player::approve(&chain, &kp(&id), &mint, &operator.pubkey(), allowance).await.unwrap();
        }
        players.push(id);
    }
    let flaky = Arc::new(Flaky { chain: chain.clone(), mode: AtomicU8::new(PASS) });
    World { chain, flaky, operator, mint, escrow, players, dir: tempfile::tempdir().unwrap() }
}

impl World {
    async fn provider(&self) -> SolanaChips {
        let op = Keypair::new_from_array(*self.operator.secret_bytes());
        let timing = Timing { tx_timeout: Duration::from_secs(5), poll: Duration::from_millis(20) };
        SolanaChips::with_client(
            self.flaky.clone(),
            op,
            self.mint,
            self.escrow,
            self.dir.path(),
            house(),
            timing,
        )
        .await
        .unwrap()
    }

    fn tokens(&self, i: usize) -> u64 {
        let a = spl::associated_account(&player_address(&self.players[i].id()), &self.mint);
        self.chain.token_account(&a).map(|t| t.amount).unwrap_or(0)
    }

    fn allowance(&self, i: usize) -> u64 {
        let a = spl::associated_account(&player_address(&self.players[i].id()), &self.mint);
        self.chain.token_account(&a).and_then(|t| t.delegate).map(|d| d.1).unwrap_or(0)
    }

    fn escrow_tokens(&self) -> u64 {
        self.chain.token_account(&self.escrow).unwrap().amount
    }

    /// Signatures of settlements the journal records (ended hands).
    fn settlement_signatures(&self) -> Vec<Signature> {
        let text = std::fs::read_to_string(self.dir.path().join("hands.jsonl")).unwrap_or_default();
        text.lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|v| v["line"] == "sent")
            .map(|v| v["signature"].as_str().unwrap().parse().unwrap())
            .collect()
    }
}

/// Opens a hand with `stakes`, then plays: seat 0 wins the others' `bet`
/// minus a `fee` for the house.
async fn play(c: &SolanaChips, w: &World, hand: &HandRef, seats: &[usize], stake: u64, bet: u64, fee: u64) {
    let stakes: Vec<(AccountId, Chips)> =
        seats.iter().map(|&i| (acct(&w.players[i]), Chips(stake))).collect();
    c.open_hand(hand, &stakes).await.unwrap();
    let p = hand.key_prefix();
    for (n, &i) in seats.iter().enumerate() {
        c.debit(&key(&format!("{p}/d{n}")), &acct(&w.players[i]), Chips(bet), "bet").await.unwrap();
    }
    let pot = bet * seats.len() as u64;
    if fee > 0 {
        c.credit(&key(&format!("{p}/fee")), &house(), Chips(fee), "commission").await.unwrap();
    }
    c.credit(&key(&format!("{p}/win")), &acct(&w.players[seats[0]]), Chips(pot - fee), "pot").await.unwrap();
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim().to_owned()
}

#[tokio::test]
async fn approve_debit_credit_commission_in_one_transaction() {
    let w = world(3, 600).await;
    let c = w.provider().await;
    assert_eq!(c.balance(&acct(&w.players[0])).await.unwrap(), Chips(600), "the approval caps the balance");
    let hand = HandRef::new("room1", "00aa");
    play(&c, &w, &hand, &[0, 1, 2], 500, 100, 6).await;
    // Debit at bet time: the provider's view moves now, the chain at close.
    assert_eq!(c.balance(&acct(&w.players[1])).await.unwrap(), Chips(500));
    assert_eq!(w.tokens(1), FUNDS);
    let started = std::time::Instant::now();
    c.close_hand(&hand).await.unwrap();
    let took = started.elapsed();
    assert_eq!([w.tokens(0), w.tokens(1), w.tokens(2)], [FUNDS + 194, FUNDS - 100, FUNDS - 100]);
    assert_eq!(w.escrow_tokens(), 6, "the commission stays in the escrow");
    assert_eq!(
        [w.allowance(0), w.allowance(1), w.allowance(2)],
        [600, 500, 500],
        "losses use up the approval"
    );
    assert_eq!(c.balance(&house()).await.unwrap(), Chips(6));
    let sigs = w.settlement_signatures();
    assert_eq!(sigs.len(), 1, "one settlement transaction for the hand");
    let cost = w.chain.cost(&sigs[0]).unwrap();
    assert!(cost.compute_units > 0 && cost.lamports == 5000, "{cost:?}");
    let logs = w.chain.svm().get_transaction(&sigs[0]).unwrap().clone().unwrap().logs;
    assert!(logs.iter().any(|l| l.contains("claw:room1/00aa/settle fee=6")), "memo names the hand: {logs:?}");
    println!(
        "solana settlement, 3 seats (2 losses, 1 gain, memo): {} compute units, {} lamports fee, close_hand {:?} in litesvm; load {}",
        cost.compute_units,
        cost.lamports,
        took,
        load()
    );
    // Closing again is refused (the hand is over), nothing moves.
    assert!(c.close_hand(&hand).await.is_err());
    assert_eq!(w.tokens(0), FUNDS + 194);
}

#[tokio::test]
async fn six_seat_hand_cost() {
    let w = world(6, 1000).await;
    let c = w.provider().await;
    let hand = HandRef::new("room6", "0006");
    play(&c, &w, &hand, &[0, 1, 2, 3, 4, 5], 1000, 50, 10).await;
    c.close_hand(&hand).await.unwrap();
    let sig = w.settlement_signatures()[0];
    let cost = w.chain.cost(&sig).unwrap();
    assert_eq!(w.tokens(0), FUNDS + 240);
    println!(
        "solana settlement, 6 seats (5 losses, 1 gain, memo): {} compute units, {} lamports fee; load {}",
        cost.compute_units,
        cost.lamports,
        load()
    );
}

#[tokio::test]
async fn idempotency_keys_replay_and_refuse_other_requests() {
    let w = world(2, 500).await;
    let c = w.provider().await;
    let hand = HandRef::new("r", "01");
    let stakes = vec![(acct(&w.players[0]), Chips(300)), (acct(&w.players[1]), Chips(300))];
    c.open_hand(&hand, &stakes).await.unwrap();
    c.open_hand(&hand, &stakes).await.unwrap();
    assert!(matches!(c.open_hand(&hand, &stakes[..1]).await, Err(ChipError::KeyReused(_))));
    let k = key("r/01/1");
    let a = acct(&w.players[0]);
    assert_eq!(c.debit(&k, &a, Chips(40), "bet").await.unwrap(), Chips(260));
    assert_eq!(c.debit(&k, &a, Chips(40), "bet").await.unwrap(), Chips(260), "replayed, not applied twice");
    assert!(matches!(c.debit(&k, &a, Chips(41), "bet").await, Err(ChipError::KeyReused(_))));
    assert!(matches!(
        c.debit(&key("r/01/2"), &a, Chips(261), "bet").await,
        Err(ChipError::Insufficient { balance: 260, .. })
    ));
    assert!(matches!(c.debit(&key("other/01/1"), &a, Chips(1), "x").await, Err(ChipError::BadRequest(_))));
    c.credit(&key("r/01/3"), &acct(&w.players[1]), Chips(40), "pot").await.unwrap();
    c.close_hand(&hand).await.unwrap();
    assert_eq!([w.tokens(0), w.tokens(1)], [FUNDS - 40, FUNDS + 40]);
}

#[tokio::test]
async fn revoked_mid_hand_voids_the_hand() {
    let w = world(2, 500).await;
    let c = w.provider().await;
    let hand = HandRef::new("r", "02");
    play(&c, &w, &hand, &[0, 1], 400, 100, 0).await;
    player::revoke(&w.chain, &kp(&w.players[1]), &w.mint).await.unwrap();
    let e = c.close_hand(&hand).await.unwrap_err();
    assert!(matches!(e, ChipError::Unauthorized(_)), "{e:?}");
    assert!(!e.is_retryable());
    assert_eq!([w.tokens(0), w.tokens(1), w.escrow_tokens()], [FUNDS, FUNDS, 0], "void: nothing moved");
    // No further hand for the player who revoked.
    let e = c.open_hand(&HandRef::new("r", "03"), &[(acct(&w.players[1]), Chips(10))]).await.unwrap_err();
    assert!(matches!(e, ChipError::Unauthorized(_)), "{e:?}");
    assert_eq!(c.balance(&acct(&w.players[1])).await.unwrap(), Chips(0));
    assert!(w.settlement_signatures().is_empty());
}

#[tokio::test]
async fn exhausted_allowance_is_refused_and_voids_a_hand() {
    let w = world(2, 100).await;
    let c = w.provider().await;
    let e = c.open_hand(&HandRef::new("r", "04"), &[(acct(&w.players[0]), Chips(500))]).await.unwrap_err();
    assert!(matches!(e, ChipError::Insufficient { balance: 100, needed: 500, .. }), "{e:?}");
    // Mid-hand: the player lowers the approval below their loss.
    let hand = HandRef::new("r", "05");
    play(&c, &w, &hand, &[0, 1], 100, 80, 0).await;
    player::approve(&w.chain, &kp(&w.players[1]), &w.mint, &w.operator.pubkey(), 30).await.unwrap();
    let e = c.close_hand(&hand).await.unwrap_err();
    assert!(matches!(e, ChipError::Insufficient { balance: 30, needed: 80, .. }), "{e:?}");
    assert_eq!([w.tokens(0), w.tokens(1)], [FUNDS, FUNDS]);
}

#[tokio::test]
async fn missing_token_account_is_typed() {
    let w = world(1, 100).await;
    let c = w.provider().await;
    let stranger = acct(&Identity::from_seed([99; 32]));
    assert!(matches!(c.balance(&stranger).await, Err(ChipError::UnknownAccount(_))));
    let e = c.open_hand(&HandRef::new("r", "06"), &[(stranger, Chips(1))]).await.unwrap_err();
    assert!(matches!(e, ChipError::UnknownAccount(_)), "{e:?}");
    assert!(matches!(
        c.balance(&AccountId::new("not-a-player").unwrap()).await,
        Err(ChipError::UnknownAccount(_))
    ));
}

#[tokio::test]
async fn a_lost_answer_is_looked_up_not_sent_twice() {
    let w = world(2, 500).await;
    let c = w.provider().await;
    let hand = HandRef::new("r", "07");
    play(&c, &w, &hand, &[0, 1], 300, 100, 0).await;
    w.flaky.mode.store(LOSE_ANSWER, Ordering::SeqCst);
    let e = c.close_hand(&hand).await.unwrap_err();
    assert!(e.is_retryable(), "{e:?}");
    assert_eq!(w.tokens(0), FUNDS + 100, "it landed");
    c.close_hand(&hand).await.unwrap();
    assert_eq!([w.tokens(0), w.tokens(1)], [FUNDS + 100, FUNDS - 100], "moved once");
    // A dropped send is sent again (same signature while its blockhash lives).
    let hand = HandRef::new("r", "08");
    play(&c, &w, &hand, &[0, 1], 300, 50, 0).await;
    w.flaky.mode.store(DROP, Ordering::SeqCst);
    assert!(c.close_hand(&hand).await.unwrap_err().is_retryable());
    assert_eq!(w.tokens(0), FUNDS + 100);
    c.close_hand(&hand).await.unwrap();
    assert_eq!([w.tokens(0), w.tokens(1)], [FUNDS + 150, FUNDS - 150]);
    let sigs = w.settlement_signatures();
    assert_eq!(sigs.len(), 2, "each hand signed once: {sigs:?}");
}

#[tokio::test]
async fn crash_and_restart_settle_or_refund_each_hand_once() {
    let w = world(3, 900).await;
    {
        let c = w.provider().await;
        // Hand A: crashed mid-hand (no result): nothing moved, refunded.
        play(&c, &w, &HandRef::new("r", "0a"), &[0, 1], 200, 50, 0).await;
        // Hand B: the settlement was signed and journaled, never sent, and
        // its blockhash expires while the dealer is down.
        let b = HandRef::new("r", "0b");
        play(&c, &w, &b, &[0, 2], 200, 60, 0).await;
        w.flaky.mode.store(DROP, Ordering::SeqCst);
        assert!(c.close_hand(&b).await.is_err());
        // Hand C: landed, the answer lost, then the crash.
        let hc = HandRef::new("r2", "0c");
        play(&c, &w, &hc, &[1, 2], 200, 70, 0).await;
        w.flaky.mode.store(LOSE_ANSWER, Ordering::SeqCst);
        assert!(c.close_hand(&hc).await.is_err());
    } // the dealer process dies here
    w.chain.svm().expire_blockhash();
    let after_c = [FUNDS, FUNDS + 70, FUNDS - 70];
    assert_eq!([w.tokens(0), w.tokens(1), w.tokens(2)], after_c);
    let c = w.provider().await;
    let mut r = c.reconcile().await.unwrap();
    r.refunded.sort();
    assert_eq!(r.refunded, vec![HandRef::new("r", "0a")]);
    assert_eq!(r.settled, vec![HandRef::new("r", "0b")], "re-signed on a fresh blockhash");
    assert_eq!(r.already, vec![HandRef::new("r2", "0c")]);
    assert_eq!([w.tokens(0), w.tokens(1), w.tokens(2)], [FUNDS + 60, FUNDS + 70, FUNDS - 130]);
    // A second restart finds nothing to do.
    let c2 = w.provider().await;
    assert_eq!(c2.reconcile().await.unwrap(), claw_chips::Reconciled::default());
    assert_eq!([w.tokens(0), w.tokens(1), w.tokens(2)], [FUNDS + 60, FUNDS + 70, FUNDS - 130]);
}

#[tokio::test]
async fn concurrent_rooms_share_players_without_overspending() {
    let w = world(6, 600).await;
    let c = Arc::new(w.provider().await);
    // A player's approval is shared by their hands: 500 + 500 > 600.
    let a = HandRef::new("ra", "01");
    c.open_hand(&a, &[(acct(&w.players[0]), Chips(500))]).await.unwrap();
    let e = c.open_hand(&HandRef::new("rb", "01"), &[(acct(&w.players[0]), Chips(500))]).await.unwrap_err();
    assert!(matches!(e, ChipError::Insufficient { balance: 100, .. }), "{e:?}");
    assert_eq!(c.balance(&acct(&w.players[0])).await.unwrap(), Chips(600));
    c.close_hand(&a).await.unwrap();
    // Three rooms, two seats each, every room plays 3 hands at once.
    let mut tasks = Vec::new();
    for room in 0..3usize {
        let (c, seats) = (Arc::clone(&c), [room * 2, room * 2 + 1]);
        let stakes: Vec<(AccountId, Chips)> =
            seats.iter().map(|&i| (acct(&w.players[i]), Chips(150))).collect();
        tasks.push(tokio::spawn(async move {
            for h in 0..3 {
                let hand = HandRef::new(format!("room{room}"), format!("{h:02x}"));
                c.open_hand(&hand, &stakes).await.unwrap();
                let p = hand.key_prefix();
                c.debit(&key(&format!("{p}/1")), &stakes[1].0, Chips(20), "bet").await.unwrap();
                c.credit(&key(&format!("{p}/2")), &stakes[0].0, Chips(20), "pot").await.unwrap();
                c.close_hand(&hand).await.unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    for room in 0..3 {
        assert_eq!([w.tokens(room * 2), w.tokens(room * 2 + 1)], [FUNDS + 60, FUNDS - 60]);
    }
    assert_eq!(w.settlement_signatures().len(), 9);
}

#[tokio::test]
async fn rpc_backend_plays_against_a_json_rpc_server() {
    let w = world(2, 500).await;
    let addr = w.chain.spawn_rpc("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let rpc = Arc::new(RpcClient::new(&format!("http://{addr}"), false, Duration::from_secs(5)).unwrap());
    let op = Keypair::new_from_array(*w.operator.secret_bytes());
    let timing = Timing { tx_timeout: Duration::from_secs(5), poll: Duration::from_millis(20) };
    let c = SolanaChips::with_client(rpc.clone(), op, w.mint, w.escrow, w.dir.path(), house(), timing)
        .await
        .unwrap();
    assert_eq!(c.balance(&acct(&w.players[1])).await.unwrap(), Chips(500));
    let hand = HandRef::new("rpc", "01");
    play(&c, &w, &hand, &[0, 1], 300, 90, 4).await;
    c.close_hand(&hand).await.unwrap();
    assert_eq!([w.tokens(0), w.tokens(1), w.escrow_tokens()], [FUNDS + 86, FUNDS - 90, 4]);
    // The player's revoke over RPC, then a typed refusal.
    player::revoke(rpc.as_ref(), &kp(&w.players[1]), &w.mint).await.unwrap();
    let e = c.open_hand(&HandRef::new("rpc", "02"), &[(acct(&w.players[1]), Chips(1))]).await.unwrap_err();
    assert!(matches!(e, ChipError::Unauthorized(_)), "{e:?}");
    // An expired blockhash is typed.
    let stale = rpc.latest_blockhash().await.unwrap();
    w.chain.svm().expire_blockhash();
    assert!(!rpc.is_blockhash_valid(&stale).await.unwrap());
    let tx = player::approve_tx(&kp(&w.players[0]), &w.mint, &w.operator.pubkey(), 1, stale);
    assert!(matches!(rpc.send(&tx).await, Err(SolanaError::BlockhashExpired(_))));
    // A wrong mint or escrow refuses to start.
    let op = Keypair::new_from_array(*w.operator.secret_bytes());
    let e = SolanaChips::with_client(rpc, op, w.escrow, w.escrow, w.dir.path(), house(), timing)
        .await
        .unwrap_err();
    assert!(matches!(e, SolanaError::Config(_)), "{e:?}");
}

#[test]
fn rpc_urls_follow_the_chip_url_rules() {
    let t = Duration::from_secs(1);
    assert!(RpcClient::new("http://127.0.0.1:8899", false, t).is_ok());
    assert!(RpcClient::new("https://api.devnet.solana.com", false, t).is_ok());
    for bad in
        ["http://api.devnet.solana.com", "https://user:pw@api.devnet.solana.com", "https://10.0.0.5:8899"]
    {
        assert!(matches!(RpcClient::new(bad, false, t), Err(SolanaError::Config(_))), "{bad}");
    }
    assert!(RpcClient::new("https://10.0.0.5:8899", true, t).is_ok());
}

#[test]
fn keypair_files_are_private_and_in_the_cli_format() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("op.json");
    let k = Keypair::new();
    claw_chips::solana::write_keypair_file(&k, &p).unwrap();
    assert_eq!(claw_chips::solana::load_keypair_file(&p).unwrap().pubkey(), k.pubkey());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(matches!(claw_chips::solana::load_keypair_file(&p), Err(SolanaError::Config(_))));
    }
    let short = dir.path().join("short.json");
    claw_chips::solana::write_keypair_file(&k, &short).unwrap();
    std::fs::write(&short, "[1,2,3]").unwrap();
    assert!(matches!(claw_chips::solana::load_keypair_file(&short), Err(SolanaError::Config(_))));
}

#[test]
fn the_game_key_is_the_solana_address() {
    let id = Identity::from_seed([7; 32]);
    assert_eq!(kp(&id).pubkey(), player_address(&id.id()));
}

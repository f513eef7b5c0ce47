//! Cost of a dealer-blind deal (docs/blind-deal.md, issue 35), on this
//! machine, with the load average beside every figure:
//!
//! 1. the primitives: shuffle + proof of 52, 54 and 108 cards, verifying
//!    one shuffle (as received: both decks and the proof decoded), one
//!    decryption share with its proof, verifying one share;
//! 2. the blind deal of a six-player Hold'em hand with the dealer and the six
//!    players as seven threads sharing the machine's cores, each doing what
//!    the engine (`engine/src/hand/blind.rs`) and the SDK
//!    (`player-sdk/src/blind.rs` and its live audit, `protocol/src/audit/blind.rs`)
//!    do for each message: key shares signed and checked, six shuffles
//!    proven and checked by the dealer as they come and by every player's
//!    audit at `game-start`, the hole cards' shares made, checked by the
//!    dealer and by every player's audit, and each owner's opening; then the
//!    board (flop, turn, river). No network, JSON or event chaining: the
//!    added cryptographic latency of a blind hand over a dealer-dealt one.
//!
//! Run: `cargo bench -p claw-bench --bench blind_deal [-- HANDS]` (default 20).

use std::collections::HashMap;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread;
use std::time::{Duration, Instant};

use claw_protocol::mental::{
    shuffle, verify_shuffle, CardTable, Deck, DecryptionShare, JointKey, KeyShare, SecretShare, ShuffleProof,
};
use claw_protocol::messages::{
    blind_deck_digest, blind_key_signing_body, blind_shuffle_signing_body, BlindKeyMsg, BlindShuffleMsg,
};
use claw_protocol::{verify, CardId, HandId, Identity, PlayerId, Purpose, Seat, SignerKey};
use rand::rngs::OsRng;

const SEATS: usize = 6;

/// `uptime`'s load averages (from /proc/loadavg).
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// This thread's time on a CPU so far (/proc/thread-self/schedstat), if the kernel says.
fn thread_cpu() -> Option<Duration> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    Some(Duration::from_nanos(s.split_whitespace().next()?.parse().ok()?))
}

/// Median and minimum of `iters` runs of `f` after one warm-up run.
fn time<T>(iters: usize, mut f: impl FnMut() -> T) -> (Duration, Duration) {
    black_box(f());
    let mut v: Vec<Duration> = (0..iters)
        .map(|_| {
            let t = Instant::now();
            black_box(f());
            t.elapsed()
        })
        .collect();
    v.sort();
    (v[v.len() / 2], v[0])
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn line(what: &str, (median, min): (Duration, Duration), goal: &str) {
    println!("{what:<46} median {:>9.3} ms  min {:>9.3} ms  {goal:<10} load {}", ms(median), ms(min), load());
}

/// Operations counted over every party of one hand.
#[derive(Default)]
struct Counts {
    key_shares_made: AtomicU64,
    key_shares_checked: AtomicU64,
    signatures_checked: AtomicU64,
    shuffles_made: AtomicU64,
    shuffles_checked: AtomicU64,
    shares_made: AtomicU64,
    shares_checked: AtomicU64,
    openings: AtomicU64,
}

impl Counts {
    fn add(c: &AtomicU64, n: usize) {
        c.fetch_add(n as u64, Ordering::Relaxed);
    }
    fn text(&self) -> String {
        let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
        format!(
            "key shares made {}, checked {}; signatures checked {}; shuffles made {}, checked {}; \
             decryption shares made {}, checked {}; cards opened {}",
            g(&self.key_shares_made),
            g(&self.key_shares_checked),
            g(&self.signatures_checked),
            g(&self.shuffles_made),
            g(&self.shuffles_checked),
            g(&self.shares_made),
            g(&self.shares_checked),
            g(&self.openings)
        )
    }
}

/// A dealer event, as each player receives it (bytes as on the wire).
#[derive(Clone)]
enum Event {
    Prepare,
    Keys(Vec<(Vec<u8>, claw_protocol::Signature)>),
    Shuffle {
        seat: u8,
        deck: Vec<u8>,
        proof: Vec<u8>,
        sig: claw_protocol::Signature,
    },
    GameStart {
        root: claw_protocol::Digest,
    },
    /// Positions and, for a hole card, its owner.
    Request(Vec<(u16, Option<u8>)>),
    Shares {
        seat: u8,
        shares: Vec<(u16, Vec<u8>)>,
    },
    Stop,
}

/// A player's message to the dealer.
enum Msg {
    Key(u8, BlindKeyMsg),
    Shuffle(u8, BlindShuffleMsg),
    Shares(u8, Vec<(u16, Vec<u8>)>),
    /// Every card of the last request is open for this player.
    Done(u8, Duration),
}

/// The positions of a six-seat Hold'em hand: hole cards round the table
/// twice, then burn + flop, burn + turn, burn + river.
fn hole_positions() -> Vec<(u16, Option<u8>)> {
    (0..2 * SEATS).map(|p| (p as u16, Some((p % SEATS) as u8))).collect()
}
const BOARD: [&[u16]; 3] = [&[13, 14, 15], &[17], &[19]];

struct Player {
    me: Identity,
    seat: u8,
    players: Vec<PlayerId>,
    hand: HandId,
    declared: Vec<CardId>,
    table: CardTable,
    secret: Option<SecretShare>,
    /// The SDK's joint key and current deck.
    key: Option<JointKey>,
    deck: Option<Deck>,
    /// The audit's setup events, checked at game-start.
    keys_seen: Vec<(Vec<u8>, claw_protocol::Signature)>,
    shuffles_seen: Vec<(u8, Vec<u8>, Vec<u8>, claw_protocol::Signature)>,
    audit_key: Option<JointKey>,
    audit_deck: Option<Deck>,
    requested: HashMap<u16, Option<u8>>,
    audit_shares: HashMap<u16, Vec<(Seat, DecryptionShare)>>,
    mine: Vec<u16>,
    sdk_shares: HashMap<u16, Vec<(Seat, DecryptionShare)>>,
    open_now: usize,
}

impl Player {
    fn run(mut self, rx: Receiver<Event>, tx: Sender<Msg>, counts: &Counts) {
        let start = thread_cpu().unwrap_or_default();
        while let Ok(e) = rx.recv() {
            if let Event::Stop = e {
                break;
            }
            self.on_event(e, &tx, counts, start);
        }
    }

    fn on_event(&mut self, e: Event, tx: &Sender<Msg>, counts: &Counts, start: Duration) {
        let seat = Seat(self.seat);
        match e {
            Event::Prepare => {
                let secret = SecretShare::generate(&mut OsRng);
                let share = secret.key_share(&self.hand, seat, &mut OsRng);
                Counts::add(&counts.key_shares_made, 1);
                self.secret = Some(secret);
                let _ = tx.send(Msg::Key(self.seat, BlindKeyMsg::sign(&self.me, self.hand, seat, &share)));
            }
            Event::Keys(keys) => {
                // SDK: the joint key (every proof checked), the initial deck.
                let list: Vec<(Seat, KeyShare)> = keys
                    .iter()
                    .enumerate()
                    .map(|(i, (b, _))| (Seat(i as u8), KeyShare::from_bytes(b).expect("key share")))
                    .collect();
                self.key = Some(JointKey::combine(&self.hand, &list).expect("joint key"));
                Counts::add(&counts.key_shares_checked, SEATS);
                self.deck = Some(Deck::initial(&self.declared).expect("deck"));
                self.keys_seen = keys;
                self.shuffle_if(0, tx, counts);
            }
            Event::Shuffle { seat: s, deck, proof, sig } => {
                self.deck = Some(Deck::from_bytes(&deck).expect("deck"));
                self.shuffles_seen.push((s, deck, proof, sig));
                self.shuffle_if(s + 1, tx, counts);
            }
            Event::GameStart { root } => self.audit_start(root, counts),
            Event::Request(positions) => {
                let (Some(secret), Some(deck)) = (&self.secret, &self.deck) else { return };
                let mut out = Vec::new();
                for (p, to) in &positions {
                    self.requested.insert(*p, *to);
                    if *to == Some(self.seat) {
                        self.mine.push(*p);
                        continue;
                    }
                    let ct = deck.get(*p).expect("position");
                    let d = secret.decryption_share(&self.hand, seat, *p, ct, &mut OsRng);
                    out.push((*p, d.to_bytes().to_vec()));
                }
                Counts::add(&counts.shares_made, out.len());
                self.open_now = positions.len();
                let _ = tx.send(Msg::Shares(self.seat, out));
            }
            Event::Shares { seat: from, shares } => {
                self.audit_shares_event(from, &shares, counts);
                self.sdk_open(from, &shares, counts);
                let opened = self.requested.keys().filter(|p| self.is_open(**p)).count();
                if opened == self.requested.len() && self.open_now > 0 {
                    self.open_now = 0;
                    let cpu = thread_cpu().unwrap_or_default().saturating_sub(start);
                    let _ = tx.send(Msg::Done(self.seat, cpu));
                }
            }
            Event::Stop => {}
        }
    }

    fn shuffle_if(&mut self, next: u8, tx: &Sender<Msg>, counts: &Counts) {
        if next != self.seat {
            return;
        }
        let (Some(key), Some(deck)) = (&self.key, &self.deck) else { return };
        let (out, proof) = shuffle(&self.hand, Seat(self.seat), key, deck, &mut OsRng);
        Counts::add(&counts.shuffles_made, 1);
        let msg = BlindShuffleMsg::sign(&self.me, self.hand, Seat(self.seat), &out, &proof);
        let _ = tx.send(Msg::Shuffle(self.seat, msg));
    }

    /// The live audit at `game-start` (`BlindSetup::start`).
    fn audit_start(&mut self, root: claw_protocol::Digest, counts: &Counts) {
        let mut list = Vec::new();
        for (i, (b, sig)) in self.keys_seen.iter().enumerate() {
            let bytes: [u8; 96] = b.as_slice().try_into().expect("96 bytes");
            let body = blind_key_signing_body(&self.hand, Seat(i as u8), &bytes);
            verify(&self.players[i], Purpose::BlindKey, &body, sig).expect("key signature");
            list.push((Seat(i as u8), KeyShare::from_bytes(&bytes).expect("key share")));
        }
        Counts::add(&counts.signatures_checked, list.len());
        let key = JointKey::combine(&self.hand, &list).expect("joint key");
        Counts::add(&counts.key_shares_checked, SEATS);
        let mut deck = Deck::initial(&self.declared).expect("deck");
        for (s, d, p, sig) in &self.shuffles_seen {
            let body = blind_shuffle_signing_body(&self.hand, Seat(*s), d, p);
            verify(&self.players[usize::from(*s)], Purpose::BlindShuffle, &body, sig)
                .expect("shuffle signature");
            let out = Deck::from_bytes(d).expect("deck");
            let proof = ShuffleProof::from_bytes(deck.len(), p).expect("proof");
            verify_shuffle(&self.hand, Seat(*s), &key, &deck, &out, &proof).expect("shuffle");
            deck = out;
        }
        Counts::add(&counts.signatures_checked, self.shuffles_seen.len());
        Counts::add(&counts.shuffles_checked, self.shuffles_seen.len());
        assert_eq!(blind_deck_digest(&self.hand, &deck), root, "final deck digest");
        self.audit_key = Some(key);
        self.audit_deck = Some(deck);
    }

    /// The live audit of a `blind-shares` event (`BlindAudit::shares`).
    fn audit_shares_event(&mut self, from: u8, shares: &[(u16, Vec<u8>)], counts: &Counts) {
        let (Some(key), Some(deck)) = (&self.audit_key, &self.audit_deck) else { return };
        for (p, b) in shares {
            let ct = deck.get(*p).expect("position");
            let d = DecryptionShare::from_bytes(b).expect("share");
            key.verify_share(&self.hand, Seat(from), *p, ct, &d).expect("share proof");
            Counts::add(&counts.shares_checked, 1);
            let list = self.audit_shares.entry(*p).or_default();
            list.push((Seat(from), d));
            if self.requested.get(p) == Some(&None) && list.len() == SEATS {
                key.open(&self.hand, *p, ct, list, &self.table).expect("card");
                Counts::add(&counts.shares_checked, SEATS);
                Counts::add(&counts.openings, 1);
            }
        }
    }

    /// The SDK's opening of its own hole cards (`BlindSeat::opened`).
    fn sdk_open(&mut self, from: u8, shares: &[(u16, Vec<u8>)], counts: &Counts) {
        let (Some(secret), Some(key), Some(deck)) = (&self.secret, &self.key, &self.deck) else { return };
        for (p, b) in shares {
            if self.mine.contains(p) {
                let d = DecryptionShare::from_bytes(b).expect("share");
                self.sdk_shares.entry(*p).or_default().push((Seat(from), d));
            }
        }
        let mut opened = Vec::new();
        for p in &self.mine {
            let list = self.sdk_shares.entry(*p).or_default();
            if list.len() + 1 < SEATS {
                continue;
            }
            let ct = deck.get(*p).expect("position");
            list.push((
                Seat(self.seat),
                secret.decryption_share(&self.hand, Seat(self.seat), *p, ct, &mut OsRng),
            ));
            key.open(&self.hand, *p, ct, list, &self.table).expect("my card");
            Counts::add(&counts.shares_made, 1);
            Counts::add(&counts.shares_checked, SEATS);
            Counts::add(&counts.openings, 1);
            opened.push(*p);
        }
        self.mine.retain(|p| !opened.contains(p));
        for p in opened {
            self.sdk_shares.insert(p, Vec::new());
            self.requested.insert(p, Some(u8::MAX));
        }
    }

    fn is_open(&self, p: u16) -> bool {
        match self.requested.get(&p) {
            // Opened by this player (its own card), or another's hole card: nothing to open.
            Some(Some(s)) => *s != self.seat,
            Some(None) => self.audit_shares.get(&p).is_some_and(|l| l.len() == SEATS),
            None => false,
        }
    }
}

/// One hand's timings (wall clock from `hand-prepare`).
struct HandTimes {
    keys: Duration,
    shuffles: Duration,
    hole: Duration,
    river: Duration,
    cpu: Duration,
    cpu_hole: Duration,
}

/// One blind hand: the dealer on this thread, six player threads.
fn deal_hand(declared: &[CardId], counts: &Counts) -> HandTimes {
    let ids: Vec<Identity> = (0..SEATS).map(|_| Identity::generate(&mut OsRng)).collect();
    let players: Vec<PlayerId> = ids.iter().map(Identity::id).collect();
    let signers: Vec<SignerKey> = players.iter().map(SignerKey::new).collect();
    let hand = HandId(rand::random());
    let table = CardTable::new(declared);
    let (to_dealer, inbox) = channel::<Msg>();
    let mut outs: Vec<Sender<Event>> = Vec::new();
    thread::scope(|scope| {
        for (i, me) in ids.into_iter().enumerate() {
            let (tx, rx) = channel();
            outs.push(tx);
            let p = Player {
                me,
                seat: i as u8,
                players: players.clone(),
                hand,
                declared: declared.to_vec(),
                table: CardTable::new(declared),
                secret: None,
                key: None,
                deck: None,
                keys_seen: Vec::new(),
                shuffles_seen: Vec::new(),
                audit_key: None,
                audit_deck: None,
                requested: HashMap::new(),
                audit_shares: HashMap::new(),
                mine: Vec::new(),
                sdk_shares: HashMap::new(),
                open_now: 0,
            };
            let to_dealer = to_dealer.clone();
            scope.spawn(move || p.run(rx, to_dealer, counts));
        }
        let broadcast = |e: Event| outs.iter().for_each(|o| drop(o.send(e.clone())));
        let cpu0 = thread_cpu().unwrap_or_default();
        let t0 = Instant::now();
        broadcast(Event::Prepare);
        // Keys: each checked as it comes (`add_key`), then combined.
        let mut keys: Vec<Option<(KeyShare, BlindKeyMsg)>> = vec![None; SEATS];
        while keys.iter().any(Option::is_none) {
            let Ok(Msg::Key(s, m)) = inbox.recv() else { panic!("expected a key share") };
            let share = KeyShare::from_bytes(&m.key_share).expect("key share");
            m.verify_by(&signers[usize::from(s)], Seat(s)).expect("key signature");
            share.verify(&hand, Seat(s)).expect("key proof");
            keys[usize::from(s)] = Some((share, m));
        }
        Counts::add(&counts.signatures_checked, SEATS);
        Counts::add(&counts.key_shares_checked, SEATS);
        let list: Vec<(Seat, KeyShare)> =
            keys.iter().enumerate().map(|(i, k)| (Seat(i as u8), k.as_ref().expect("key").0)).collect();
        let key = JointKey::combine(&hand, &list).expect("joint key");
        Counts::add(&counts.key_shares_checked, SEATS);
        broadcast(Event::Keys(keys.iter().flatten().map(|(_, m)| (m.key_share.clone(), m.sig)).collect()));
        let t_keys = t0.elapsed();
        // Shuffles, one seat at a time (`check_shuffle`).
        let mut deck = Deck::initial(declared).expect("deck");
        for seat in 0..SEATS as u8 {
            let Ok(Msg::Shuffle(s, m)) = inbox.recv() else { panic!("expected a shuffle") };
            assert_eq!(s, seat);
            m.verify_by(&signers[usize::from(s)], Seat(s)).expect("shuffle signature");
            let out = Deck::from_bytes(&m.deck).expect("deck");
            let proof = ShuffleProof::from_bytes(deck.len(), &m.proof).expect("proof");
            verify_shuffle(&hand, Seat(s), &key, &deck, &out, &proof).expect("shuffle");
            Counts::add(&counts.signatures_checked, 1);
            Counts::add(&counts.shuffles_checked, 1);
            deck = out;
            broadcast(Event::Shuffle { seat: s, deck: m.deck, proof: m.proof, sig: m.sig });
        }
        let t_shuffles = t0.elapsed();
        broadcast(Event::GameStart { root: blind_deck_digest(&hand, &deck) });
        // Hole cards, then the board; each request answered by every key holder.
        let mut requests = vec![hole_positions()];
        requests.extend(BOARD.iter().map(|b| b.iter().map(|p| (*p, None)).collect()));
        let mut dealer_shares: HashMap<u16, Vec<(Seat, DecryptionShare)>> = HashMap::new();
        let mut t_hole = Duration::ZERO;
        let mut cpu_hole = Duration::ZERO;
        let mut player_cpu = [Duration::ZERO; SEATS];
        for (k, req) in requests.into_iter().enumerate() {
            broadcast(Event::Request(req.clone()));
            let mut answered = 0;
            let mut done = 0;
            while answered < SEATS || done < SEATS {
                match inbox.recv().expect("a player message") {
                    Msg::Shares(s, shares) => {
                        // `add_shares`: every share checked against the final deck.
                        for (p, b) in &shares {
                            let d = DecryptionShare::from_bytes(b).expect("share");
                            key.verify_share(&hand, Seat(s), *p, deck.get(*p).expect("position"), &d)
                                .expect("share proof");
                            dealer_shares.entry(*p).or_default().push((Seat(s), d));
                        }
                        Counts::add(&counts.shares_checked, shares.len());
                        answered += 1;
                        broadcast(Event::Shares { seat: s, shares });
                        if answered == SEATS {
                            // `complete`: the public positions open into the view.
                            for (p, to) in &req {
                                if to.is_none() {
                                    let list = &dealer_shares[p];
                                    key.open(&hand, *p, deck.get(*p).expect("position"), list, &table)
                                        .expect("card");
                                    Counts::add(&counts.shares_checked, list.len());
                                    Counts::add(&counts.openings, 1);
                                }
                            }
                        }
                    }
                    Msg::Done(s, cpu) => {
                        player_cpu[usize::from(s)] = cpu;
                        done += 1;
                    }
                    _ => panic!("unexpected message"),
                }
            }
            if k == 0 {
                t_hole = t0.elapsed();
                cpu_hole = thread_cpu().unwrap_or_default().saturating_sub(cpu0)
                    + player_cpu.iter().sum::<Duration>();
            }
        }
        let t_river = t0.elapsed();
        let cpu = thread_cpu().unwrap_or_default().saturating_sub(cpu0) + player_cpu.iter().sum::<Duration>();
        broadcast(Event::Stop);
        HandTimes { keys: t_keys, shuffles: t_shuffles, hole: t_hole, river: t_river, cpu, cpu_hole }
    })
}

fn median(mut v: Vec<Duration>) -> (Duration, Duration) {
    v.sort();
    (v[v.len() / 2], v[0])
}

fn main() {
    // `cargo bench` passes `--bench`; any other run (`cargo test --benches`) is a one-pass smoke run.
    let full = std::env::args().any(|a| a == "--bench");
    let hands: usize =
        std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(if full { 20 } else { 1 });
    let runs = |n: usize| if full { n } else { 1 };
    println!(
        "dealer-blind deal, {} cores, load before {}",
        thread::available_parallelism().map_or(0, |n| n.get()),
        load()
    );
    let hand = HandId([7; 16]);
    let secrets: Vec<SecretShare> = (0..SEATS).map(|_| SecretShare::generate(&mut OsRng)).collect();
    let shares: Vec<(Seat, KeyShare)> = secrets
        .iter()
        .enumerate()
        .map(|(i, s)| (Seat(i as u8), s.key_share(&hand, Seat(i as u8), &mut OsRng)))
        .collect();
    let key = JointKey::combine(&hand, &shares).expect("honest key shares");
    println!("\n-- primitives (6-party joint key; one thread)");
    for (n, ids, goal) in [
        (52, CardId::deck(1, false), ("<= 20 ms", "<= 10 ms")),
        (54, CardId::deck(1, true), ("", "")),
        (108, CardId::deck(2, true), ("", "")),
    ] {
        let (deck, _) = shuffle(&hand, Seat(0), &key, &Deck::initial(&ids).expect("deck"), &mut OsRng);
        line(
            &format!("shuffle + proof, {n} cards"),
            time(runs(21), || shuffle(&hand, Seat(1), &key, &deck, &mut OsRng)),
            goal.0,
        );
        let (out, proof) = shuffle(&hand, Seat(1), &key, &deck, &mut OsRng);
        let (db, ob, pb) = (deck.to_bytes(), out.to_bytes(), proof.to_bytes());
        line(
            &format!("verify one shuffle, {n} cards (decoded)"),
            time(runs(21), || verify_shuffle(&hand, Seat(1), &key, &deck, &out, &proof).expect("verifies")),
            goal.1,
        );
        line(
            &format!("decode + verify one shuffle, {n} cards"),
            time(runs(21), || {
                let i = Deck::from_bytes(&db).expect("deck");
                let o = Deck::from_bytes(&ob).expect("deck");
                let p = ShuffleProof::from_bytes(n, &pb).expect("proof");
                verify_shuffle(&hand, Seat(1), &key, &i, &o, &p).expect("verifies")
            }),
            "",
        );
        if n == 52 {
            let ct = *out.get(3).expect("position 3");
            line(
                "one decryption share + proof",
                time(runs(401), || secrets[2].decryption_share(&hand, Seat(2), 3, &ct, &mut OsRng)),
                "<= 0.1 ms",
            );
            let share = secrets[2].decryption_share(&hand, Seat(2), 3, &ct, &mut OsRng);
            line(
                "verify one decryption share",
                time(runs(401), || key.verify_share(&hand, Seat(2), 3, &ct, &share).expect("verifies")),
                "",
            );
            let list: Vec<(Seat, DecryptionShare)> = secrets
                .iter()
                .enumerate()
                .map(|(i, s)| (Seat(i as u8), s.decryption_share(&hand, Seat(i as u8), 3, &ct, &mut OsRng)))
                .collect();
            let table = CardTable::new(&ids);
            line(
                "open one card (6 shares checked)",
                time(runs(101), || key.open(&hand, 3, &ct, &list, &table).expect("card")),
                "",
            );
        }
    }

    println!("\n-- six-player Hold'em blind deal: dealer + 6 players as 7 threads ({hands} hands, 52 cards)");
    let declared = CardId::deck(1, false);
    let counts = Counts::default();
    deal_hand(&declared, &Counts::default());
    let times: Vec<HandTimes> = (0..hands).map(|_| deal_hand(&declared, &counts)).collect();
    let pick = |f: fn(&HandTimes) -> Duration| median(times.iter().map(f).collect());
    line("keys (made, signed, checked, joint key)", pick(|t| t.keys), "");
    line("+ 6 shuffles proven and checked by the dealer", pick(|t| t.shuffles), "");
    line("+ players' audit, hole shares, own cards opened", pick(|t| t.hole), "<= 250 ms");
    line("+ flop, turn, river opened (whole deal)", pick(|t| t.river), "");
    line("CPU of all 7 parties, to the hole cards", pick(|t| t.cpu_hole), "");
    line("CPU of all 7 parties, whole deal", pick(|t| t.cpu), "");
    println!("per hand: {}", {
        let per = Counts::default();
        let g = |c: &AtomicU64| c.load(Ordering::Relaxed) / hands as u64;
        Counts::add(&per.key_shares_made, g(&counts.key_shares_made) as usize);
        Counts::add(&per.key_shares_checked, g(&counts.key_shares_checked) as usize);
        Counts::add(&per.signatures_checked, g(&counts.signatures_checked) as usize);
        Counts::add(&per.shuffles_made, g(&counts.shuffles_made) as usize);
        Counts::add(&per.shuffles_checked, g(&counts.shuffles_checked) as usize);
        Counts::add(&per.shares_made, g(&counts.shares_made) as usize);
        Counts::add(&per.shares_checked, g(&counts.shares_checked) as usize);
        Counts::add(&per.openings, g(&counts.openings) as usize);
        per.text()
    });
    println!("load after {}", load());
}

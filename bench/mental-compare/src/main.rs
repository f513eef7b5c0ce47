//! claw-protocol's shuffle proof (Terelius–Wikström over Ristretto255,
//! docs/blind-deal.md §6) beside the public `ziffle` crate (Bayer–Groth 2012
//! over secp256k1 with arkworks) on the same deck sizes, in one run:
//! shuffle + prove, verify one shuffle, one decryption share (ziffle: reveal
//! token) with its proof, and its check. Medians of repeated runs, with the
//! load average beside each figure.
//!
//!   cd bench/mental-compare && cargo run --release [-- ITERATIONS]

use std::hint::black_box;
use std::time::{Duration, Instant};

use claw_protocol::mental::{shuffle, verify_shuffle, Deck, JointKey, KeyShare, SecretShare};
use claw_protocol::{CardId, HandId, Seat};
use rand::rngs::{OsRng, StdRng};
use rand::SeedableRng;
use ziffle::{AggregatePublicKey, Shuffle};

const PARTIES: u8 = 6;

/// `uptime`'s load averages (from /proc/loadavg).
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// Median and minimum of `iters` runs of `f` (after one warm-up run).
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

struct Row {
    what: String,
    claw: Duration,
    ziffle: Duration,
}

fn report(
    rows: &mut Vec<Row>,
    what: String,
    iters: usize,
    claw: (Duration, Duration),
    ziffle: (Duration, Duration),
) {
    println!(
        "{what:<34} claw {:>9.3} ms (min {:>8.3})   ziffle {:>9.3} ms (min {:>8.3})   ziffle/claw {:>5.2}   n={iters}   load {}",
        ms(claw.0),
        ms(claw.1),
        ms(ziffle.0),
        ms(ziffle.1),
        ziffle.0.as_secs_f64() / claw.0.as_secs_f64(),
        load()
    );
    rows.push(Row { what, claw: claw.0, ziffle: ziffle.0 });
}

fn compare<const N: usize>(ids: &[CardId], iters: usize, rng: &mut StdRng, rows: &mut Vec<Row>) {
    assert_eq!(ids.len(), N);
    // claw: a 6-party joint key, a deck masked by one earlier shuffle.
    let hand = HandId([7; 16]);
    let secrets: Vec<SecretShare> = (0..PARTIES).map(|_| SecretShare::generate(rng)).collect();
    let shares: Vec<(Seat, KeyShare)> = secrets
        .iter()
        .enumerate()
        .map(|(i, s)| (Seat(i as u8), s.key_share(&hand, Seat(i as u8), rng)))
        .collect();
    let key = JointKey::combine(&hand, &shares).expect("honest key shares");
    let (deck, _) = shuffle(&hand, Seat(0), &key, &Deck::initial(ids).expect("deck"), rng);
    let (out, proof) = shuffle(&hand, Seat(1), &key, &deck, rng);
    verify_shuffle(&hand, Seat(1), &key, &deck, &out, &proof).expect("honest shuffle");

    // ziffle: the same 6 parties, a deck masked by one earlier shuffle.
    let z = Shuffle::<N>::default();
    let ctx = b"claw mental-compare";
    let keys: Vec<_> = (0..PARTIES).map(|_| z.keygen(rng, ctx)).collect();
    let verified: Vec<_> =
        keys.iter().map(|(_, pk, p)| p.verify(*pk, ctx).expect("ownership proof")).collect();
    let apk = AggregatePublicKey::new(&verified);
    let (d0, p0) = z.shuffle_initial_deck(rng, apk, ctx);
    let zdeck = z.verify_initial_shuffle(apk, d0, p0, ctx).expect("initial shuffle");
    let (zout, zproof) = z.shuffle_deck(rng, apk, &zdeck, ctx);
    assert!(z.verify_shuffle(apk, &zdeck, zout, zproof, ctx).is_some(), "ziffle shuffle verifies");

    let c = time(iters, || shuffle(&hand, Seat(1), &key, &deck, rng));
    let zt = time(iters, || z.shuffle_deck(rng, apk, &zdeck, ctx));
    report(rows, format!("shuffle + prove, {N} cards"), iters, c, zt);
    let c = time(iters, || verify_shuffle(&hand, Seat(1), &key, &deck, &out, &proof).expect("verifies"));
    let zt = time(iters, || z.verify_shuffle(apk, &zdeck, zout, zproof, ctx).expect("verifies"));
    report(rows, format!("verify one shuffle, {N} cards"), iters, c, zt);

    if N == 52 {
        let ct = *out.get(3).expect("position 3");
        let card = zdeck.get(3).expect("card 3");
        let (sk, pk, _) = &keys[2];
        let share_iters = iters * 20;
        let c = time(share_iters, || secrets[2].decryption_share(&hand, Seat(2), 3, &ct, rng));
        let zt = time(share_iters, || card.reveal_token(rng, sk, *pk, ctx));
        report(rows, "decryption share + proof".into(), share_iters, c, zt);
        let share = secrets[2].decryption_share(&hand, Seat(2), 3, &ct, rng);
        let (token, tproof) = card.reveal_token(rng, sk, *pk, ctx);
        let c = time(share_iters, || key.verify_share(&hand, Seat(2), 3, &ct, &share).expect("verifies"));
        let zt = time(share_iters, || tproof.verify(verified[2], token, card, ctx).expect("verifies"));
        report(rows, "verify one decryption share".into(), share_iters, c, zt);
    }
}

fn main() {
    let iters: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(21);
    let mut rng = StdRng::from_rng(OsRng).expect("OS randomness");
    println!("load before: {}", load());
    let mut rows = Vec::new();
    compare::<52>(&CardId::deck(1, false), iters, &mut rng, &mut rows);
    compare::<54>(&CardId::deck(1, true), iters, &mut rng, &mut rows);
    compare::<108>(&CardId::deck(2, true), iters, &mut rng, &mut rows);
    println!(
        "\n| Operation | claw-protocol (ms) | ziffle 0.1.0 (ms) | ziffle / claw |\n|---|---:|---:|---:|"
    );
    for r in &rows {
        println!(
            "| {} | {:.3} | {:.3} | {:.2} |",
            r.what,
            ms(r.claw),
            ms(r.ziffle),
            r.ziffle.as_secs_f64() / r.claw.as_secs_f64()
        );
    }
    println!("load after: {}", load());
}

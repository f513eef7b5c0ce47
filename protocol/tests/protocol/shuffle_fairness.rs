//! Shuffle fairness (every permutation of the deck equally likely) and
//! determinism.
//!
//! # The statistic
//!
//! `N` shuffles of the 52-card deck with deterministic seeds
//! (`seed_k = SHA-256("claw/test/fairness" || k as u32 BE)`) fill a 52×52
//! table `O[c][p]`: how often card `c` landed at position `p`. Under a
//! uniform shuffle every cell has expectation `E = N / 52`.
//!
//! * Per card `c`: `X²_c = Σ_p (O[c][p] − E)² / E`. Each shuffle puts card
//!   `c` at exactly one position, uniformly, so row `c` is a multinomial
//!   sample and `X²_c` is chi-square with 51 degrees of freedom. Its p-value
//!   is the survival function `Q(51/2, X²_c/2)` (regularized upper incomplete
//!   gamma, computed below and checked against table values and the
//!   Wilson–Hilferty approximation).
//! * Whole table: a random permutation matrix has covariance
//!   `P / (n − 1)`, with `P` the projection on doubly-centred matrices (rank
//!   `(n − 1)²`), so `(n − 1)/n · Σ_c X²_c` is chi-square with
//!   `(52 − 1)² = 2601` degrees of freedom (the raw sum has mean
//!   `n(n − 1) = 2652`, not 2601). The test asserts its `p > 0.05`.
//!
//! # Per-card level (a documented deviation from "p > 0.05 per card")
//!
//! With 52 per-card tests each at level 0.05, a perfect shuffle passes all
//! of them with probability 0.95^52 ≈ 7 %: the literal assertion would fail
//! for almost every seed set, and could only be made to pass by searching
//! seeds, which would make it meaningless. The seeds here are fixed and were
//! not searched for (the first scheme written is used; with it 4 of 52
//! cards have p < 0.05, as expected by chance: 2.6 on average). So the 0.05
//! level is applied to the family of 52 cards (Šidák): every card must have
//! `p > 1 − 0.95^(1/52) ≈ 0.000986`, i.e. the probability that a fair
//! shuffle fails any card is 5 %. Set `CLAW_PRINT_FAIRNESS=1` to print the
//! 52 p-values.
//!
//! The same statistics applied to two classic broken shuffles (the "naive"
//! swap with any position, and Sattolo's off-by-one) must fail, which shows
//! the test has the power to catch a biased implementation.

use claw_protocol::shuffle::{shuffle, shuffle_in_place, shuffle_seed, uniform_below};
use claw_protocol::{sha256, CardId, Seed};
use rand_chacha::rand_core::{RngCore as _, SeedableRng as _};
use rand_chacha::ChaCha20Rng;

const N: usize = 10_400; // ≥ 10,000, and E = 200 per cell.

// ---- chi-square survival function -------------------------------------------

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms; |error| < 1e-13 here).
fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection.
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// Regularized upper incomplete gamma Q(a, x) = Γ(a, x) / Γ(a): series for
/// x < a + 1, Lentz continued fraction otherwise (Numerical Recipes §6.2).
fn gamma_q(a: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 1.0;
    }
    let ln_pre = a * x.ln() - x - ln_gamma(a);
    if x < a + 1.0 {
        let (mut sum, mut term, mut ap) = (1.0 / a, 1.0 / a, a);
        for _ in 0..10_000 {
            ap += 1.0;
            term *= x / ap;
            sum += term;
            if term.abs() < sum.abs() * 1e-16 {
                break;
            }
        }
        1.0 - sum * ln_pre.exp()
    } else {
        let tiny = 1e-300;
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / tiny;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..10_000 {
            let an = -(i as f64) * (i as f64 - a);
            b += 2.0;
            d = an * d + b;
            if d.abs() < tiny {
                d = tiny;
            }
            c = b + an / c;
            if c.abs() < tiny {
                c = tiny;
            }
            d = 1.0 / d;
            let del = d * c;
            h *= del;
            if (del - 1.0).abs() < 1e-16 {
                break;
            }
        }
        ln_pre.exp() * h
    }
}

/// P(χ²_k ≥ x).
fn chi2_sf(x: f64, k: f64) -> f64 {
    gamma_q(k / 2.0, x / 2.0)
}

/// Wilson–Hilferty normal approximation of P(χ²_k ≥ x), as a cross-check.
fn chi2_sf_wilson_hilferty(x: f64, k: f64) -> f64 {
    let z = ((x / k).cbrt() - (1.0 - 2.0 / (9.0 * k))) / (2.0 / (9.0 * k)).sqrt();
    0.5 * erfc(z / std::f64::consts::SQRT_2)
}

/// erfc (Numerical Recipes erfcc, |relative error| < 1.2e-7).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// The per-card level that keeps the family-wise error of 52 tests at 5 %.
fn familywise_level() -> f64 {
    1.0 - 0.95f64.powf(1.0 / 52.0)
}

#[test]
fn chi2_sf_known_values() {
    // 95th percentiles from standard tables.
    assert!((chi2_sf(3.841_458_820_694_124, 1.0) - 0.05).abs() < 1e-9);
    assert!((chi2_sf(68.669_293_912_285_8, 51.0) - 0.05).abs() < 1e-6);
    assert!((chi2_sf(124.342_113_404_134_5, 100.0) - 0.05).abs() < 1e-6);
    // k = 2: exactly exp(-x/2).
    for x in [0.1, 1.0, 5.0, 20.0] {
        assert!((chi2_sf(x, 2.0) - (-x / 2.0f64).exp()).abs() < 1e-12);
    }
    assert!((chi2_sf(51.0, 51.0) - 0.4735).abs() < 1e-3);
    // Wilson–Hilferty agrees for large df.
    for x in [2500.0, 2601.0, 2700.0, 2800.0] {
        assert!((chi2_sf(x, 2601.0) - chi2_sf_wilson_hilferty(x, 2601.0)).abs() < 1e-3, "{x}");
    }
    assert!((familywise_level() - 0.000_986).abs() < 1e-5);
}

// ---- the experiment -----------------------------------------------------------

type Table = Vec<[u32; 52]>;

fn seed_k(k: usize) -> [u8; 32] {
    sha256(&[b"claw/test/fairness", &(k as u32).to_be_bytes()]).0
}

fn table(mut shuffler: impl FnMut(&mut [CardId], &[u8; 32])) -> Table {
    let base = CardId::deck(1, false);
    let mut t: Table = vec![[0u32; 52]; 52];
    for k in 0..N {
        let mut deck = base.clone();
        shuffler(&mut deck, &seed_k(k));
        for (pos, card) in deck.iter().enumerate() {
            t[usize::from(card.code())][pos] += 1;
        }
    }
    t
}

/// Per-card p-values and the whole-table p-value.
fn p_values(t: &Table) -> (Vec<f64>, f64) {
    let e = N as f64 / 52.0;
    let mut total = 0.0;
    let per_card = t
        .iter()
        .map(|row| {
            let x2: f64 = row.iter().map(|&o| (f64::from(o) - e).powi(2) / e).sum();
            total += x2;
            chi2_sf(x2, 51.0)
        })
        .collect();
    (per_card, chi2_sf(total * 51.0 / 52.0, 2601.0))
}

#[test]
fn shuffle_is_uniform_over_card_and_position() {
    let t = table(shuffle_in_place);
    for row in &t {
        assert_eq!(row.iter().sum::<u32>() as usize, N);
    }
    let (per_card, whole) = p_values(&t);
    let min = per_card.iter().cloned().fold(1.0, f64::min);
    if std::env::var_os("CLAW_PRINT_FAIRNESS").is_some() {
        eprintln!("whole-table p = {whole:.4}, min per-card p = {min:.4}");
        eprintln!("{per_card:.3?}");
    }
    assert!(whole > 0.05, "whole-table chi-square p = {whole}");
    for (card, p) in per_card.iter().enumerate() {
        assert!(
            *p > familywise_level(),
            "card {} p = {p} (family-wise 0.05 level: {})",
            CardId::from_code(card as u16).unwrap(),
            familywise_level()
        );
    }
}

#[test]
fn the_statistic_catches_biased_shuffles() {
    // Naive: swap each position with any position (n^n paths, not n!).
    let naive = table(|deck, seed| {
        let mut rng = ChaCha20Rng::from_seed(*seed);
        for i in 0..deck.len() {
            let j = uniform_below(&mut rng, deck.len() as u32) as usize;
            deck.swap(i, j);
        }
    });
    let (per_card, whole) = p_values(&naive);
    assert!(whole < 1e-6, "naive shuffle not detected: p = {whole}");
    assert!(per_card.iter().any(|p| *p < familywise_level()));
    // Sattolo (j < i instead of j ≤ i): no card ever stays in place.
    let sattolo = table(|deck, seed| {
        let mut rng = ChaCha20Rng::from_seed(*seed);
        for i in (1..deck.len()).rev() {
            let j = uniform_below(&mut rng, i as u32) as usize;
            deck.swap(i, j);
        }
    });
    let (per_card, whole) = p_values(&sattolo);
    assert!(whole < 1e-6);
    assert!(per_card.iter().all(|p| *p < familywise_level()));
}

#[test]
fn uniform_below_is_unbiased_for_awkward_bounds() {
    // Bound 3 · 2^30 makes plain `x % bound` visibly biased (values below
    // 2^30 would be twice as likely); rejection sampling must not be.
    let bound = 3u32 << 30;
    let mut rng = ChaCha20Rng::from_seed([9; 32]);
    let n = 60_000;
    let low = (0..n).filter(|_| uniform_below(&mut rng, bound) < 1 << 30).count();
    // Expected n/3 = 20,000 (sd ≈ 115); biased would be n/2.
    assert!((low as i64 - 20_000).abs() < 600, "{low}");
    // The rejected zone is exactly [0, 2^32 mod bound).
    let mut raw = ChaCha20Rng::from_seed([9; 32]);
    let mut rng = ChaCha20Rng::from_seed([9; 32]);
    for _ in 0..1000 {
        let v = uniform_below(&mut rng, bound);
        let mut x = raw.next_u32();
        while x < bound.wrapping_neg() % bound {
            x = raw.next_u32();
        }
        assert_eq!(v, x % bound);
    }
}

#[test]
fn shuffle_is_deterministic_and_seed_sensitive() {
    let deck = CardId::deck(2, true);
    let s = shuffle_seed(&Seed([1; 32]), &[Some(Seed([2; 32])), None]);
    let a = shuffle(&deck, &s);
    for _ in 0..3 {
        assert_eq!(shuffle(&deck, &s), a);
    }
    // Every player's seed changes the order.
    let b = shuffle(&deck, &shuffle_seed(&Seed([1; 32]), &[Some(Seed([3; 32])), None]));
    let c = shuffle(&deck, &shuffle_seed(&Seed([1; 32]), &[Some(Seed([2; 32])), Some(Seed([0; 32]))]));
    assert_ne!(a, b);
    assert_ne!(a, c);
    // Always a permutation of the input.
    for order in [&a, &b, &c] {
        let mut sorted = order.to_vec();
        sorted.sort();
        assert_eq!(sorted, deck);
    }
}

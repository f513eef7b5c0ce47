//! Runs every scenario of `guandan_regression/scenarios.txt` (format in its
//! header): pattern readings, ordering under each profile, tribute and return
//! choices, legal-move counts.

use claw_games::guandan::cards::{Level, Tally, Wilds};
use claw_games::guandan::compare::{beats, BombPriority, BombProfile};
use claw_games::guandan::moves::legal_moves;
use claw_games::guandan::patterns::{Kind, PatternRules, Purity, Reading};
use claw_games::guandan::tribute::{return_choices, tribute_choices};
use claw_games::guandan::{read_play, GdSettings};
use claw_protocol::CardId;

const SCENARIOS: &str = include_str!("guandan_regression/scenarios.txt");

fn cards(s: &str) -> Vec<CardId> {
    s.split_whitespace().map(|c| c.parse().unwrap_or_else(|e| panic!("{c}: {e}"))).collect()
}

fn sorted(mut v: Vec<CardId>) -> Vec<CardId> {
    v.sort();
    v
}

fn profile(name: &str) -> BombProfile {
    match name {
        "competition" => BombProfile::competition(),
        "seed" => BombProfile::seed(true, BombPriority::ByRank),
        "seed-count" => BombProfile::seed(true, BombPriority::ByCount),
        "seed-sf-low" => BombProfile::seed(false, BombPriority::ByRank),
        other => panic!("unknown profile {other}"),
    }
}

fn read(c: &str, level: Level, p: &BombProfile) -> Option<Reading> {
    let t = Tally::of_ids(&cards(c), Wilds { level, count: 2 });
    read_play(&t, PatternRules { level, ace_high: true, purity: Purity::StandIn }, p, None, None).ok()
}

fn run(line: &str) -> Result<(), String> {
    let fields: Vec<&str> = line.split('|').map(str::trim).collect();
    let head: Vec<&str> = fields[0].split_whitespace().collect();
    let level_at =
        |i: usize| Level::new(head[i].parse().map_err(|e| format!("{e}"))?).ok_or("bad level".to_string());
    let comp = BombProfile::competition();
    let settings = GdSettings::default();
    match head[0] {
        "read" => {
            let level = level_at(1)?;
            let got = read(fields[1], level, &comp);
            let want: Vec<&str> = fields[2].split_whitespace().collect();
            match (want.as_slice(), got) {
                (["none"], None) => Ok(()),
                ([kind, rank, purity @ ..], Some(r)) => {
                    let kind: Kind =
                        serde_json::from_value(serde_json::json!(kind)).map_err(|e| e.to_string())?;
                    let ok = r.kind == kind
                        && r.rank.to_string() == *rank
                        && purity.first().is_none_or(|p| (*p == "pure") == r.pure);
                    ok.then_some(()).ok_or_else(|| format!("read as {r:?}"))
                }
                (_, got) => Err(format!("read as {got:?}")),
            }
        }
        "beats" => {
            let p = profile(head[1]);
            let level = level_at(2)?;
            let a = read(fields[1], level, &p).ok_or("play reads as nothing")?;
            let b = read(fields[2], level, &p).ok_or("table reads as nothing")?;
            let got = beats(&a, &b, level, &p);
            (got == (fields[3] == "yes"))
                .then_some(())
                .ok_or_else(|| format!("beats = {got}: {a:?} vs {b:?}"))
        }
        "tribute" | "return" => {
            let w = Wilds { level: level_at(1)?, count: 2 };
            let hand = cards(fields[1]);
            let got = if head[0] == "tribute" {
                tribute_choices(&hand, w, &settings)
            } else {
                return_choices(&hand, w, &settings)
            };
            (sorted(got.clone()) == sorted(cards(fields[2])))
                .then_some(())
                .ok_or_else(|| format!("choices {got:?}"))
        }
        "moves" => {
            let level = level_at(1)?;
            let rules = PatternRules { level, ace_high: true, purity: Purity::StandIn };
            let table = (fields[2] != "-").then(|| read(fields[2], level, &comp)).flatten();
            let n = legal_moves(&cards(fields[1]), rules, 2, &comp, table.as_ref()).len();
            (n.to_string() == fields[3]).then_some(()).ok_or_else(|| format!("{n} legal plays"))
        }
        other => Err(format!("unknown scenario kind {other}")),
    }
}

#[test]
fn every_regression_scenario_passes() {
    let lines: Vec<(usize, &str)> = SCENARIOS
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
        .collect();
    assert!(lines.len() >= 50, "only {} scenarios", lines.len());
    let failures: Vec<String> =
        lines.iter().filter_map(|(n, l)| run(l).err().map(|e| format!("line {n}: {l}\n    {e}"))).collect();
    assert!(
        failures.is_empty(),
        "{} of {} scenarios fail:\n{}",
        failures.len(),
        lines.len(),
        failures.join("\n")
    );
}

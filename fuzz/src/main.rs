//! `claw-fuzz`: runs the fuzz targets with the coverage-free mutator on stable Rust.
//!
//! ```text
//! claw-fuzz run TARGET|all [--inputs N] [--seconds S] [--seed N] [--artifacts DIR]
//! claw-fuzz seeds DIR                  write every target's seeds to DIR/TARGET/ (a libFuzzer corpus)
//! claw-fuzz replay TARGET FILE...      run saved inputs (a crash artifact) once each
//! ```
//! Exit status 1 when an input crashed a target (saved under the artifacts
//! directory, default `fuzz/artifacts/TARGET/`).

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use claw_fuzz::mutate::Mutator;
use claw_fuzz::{Target, TARGETS};
use rand::seq::SliceRandom;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use sha2::{Digest, Sha256};

thread_local! {
    static LAST_PANIC: RefCell<String> = const { RefCell::new(String::new()) };
}

fn usage() -> ExitCode {
    eprintln!(
        "usage: claw-fuzz run TARGET|all [--inputs N] [--seconds S] [--seed N] [--artifacts DIR]\n       \
         claw-fuzz seeds DIR\n       claw-fuzz replay TARGET FILE...\n\
         targets: {}",
        TARGETS.map(|t| t.name).join(", ")
    );
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::panic::set_hook(Box::new(|info| {
        let at = info.location().map(|l| format!(" at {l}")).unwrap_or_default();
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic".into());
        LAST_PANIC.with(|p| *p.borrow_mut() = format!("{msg}{at}"));
    }));
    match args.first().map(String::as_str) {
        Some("run") => run(&args[1..]),
        Some("seeds") if args.len() == 2 => seeds(Path::new(&args[1])),
        Some("replay") if args.len() >= 3 => replay(&args[1], &args[2..]),
        _ => usage(),
    }
}

fn targets_named(name: &str) -> Option<Vec<Target>> {
    if name == "all" {
        return Some(TARGETS.to_vec());
    }
    TARGETS.iter().find(|t| t.name == name).map(|t| vec![*t])
}

/// Runs one input; the panic message if it crashed.
fn attempt(t: &Target, input: &[u8]) -> Result<(), String> {
    std::panic::catch_unwind(|| (t.run)(input)).map_err(|_| LAST_PANIC.with(|p| p.borrow().clone()))
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".into())
}

struct RunOpts {
    inputs: u64,
    seconds: Option<f64>,
    seed: u64,
    artifacts: PathBuf,
}

fn run(args: &[String]) -> ExitCode {
    let Some(targets) = args.first().and_then(|n| targets_named(n)) else { return usage() };
    let mut o = RunOpts { inputs: 100_000, seconds: None, seed: 1, artifacts: PathBuf::from("artifacts") };
    let mut rest = args[1..].iter();
    while let Some(flag) = rest.next() {
        let value = rest.next();
        let ok = match (flag.as_str(), value) {
            ("--inputs", Some(v)) => v.parse().map(|n| o.inputs = n).is_ok(),
            ("--seconds", Some(v)) => v.parse().map(|s| o.seconds = Some(s)).is_ok(),
            ("--seed", Some(v)) => v.parse().map(|s| o.seed = s).is_ok(),
            ("--artifacts", Some(v)) => {
                o.artifacts = PathBuf::from(v);
                true
            }
            _ => false,
        };
        if !ok {
            return usage();
        }
    }
    let mut crashed = false;
    for t in &targets {
        crashed |= fuzz_one(t, &o) > 0;
    }
    if crashed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Fuzzes one target; returns the number of crashing inputs.
fn fuzz_one(t: &Target, o: &RunOpts) -> u64 {
    let seeds = (t.seeds)();
    let load_before = loadavg();
    let start = Instant::now();
    let mut crashes = 0u64;
    let report = |input: &[u8], msg: String| {
        let name = format!("crash-{}", &hex::encode(Sha256::digest(input))[..16]);
        let dir = o.artifacts.join(t.name);
        let saved = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(dir.join(&name), input));
        let path = dir.join(&name);
        match saved {
            Ok(()) => eprintln!("CRASH {}: {msg}\n  input saved to {}", t.name, path.display()),
            Err(e) => eprintln!("CRASH {}: {msg}\n  (could not save {}: {e})", t.name, path.display()),
        }
    };
    for s in &seeds {
        if let Err(msg) = attempt(t, s) {
            crashes += 1;
            report(s, format!("seed input: {msg}"));
        }
    }
    let mut m = Mutator::new(ChaCha20Rng::seed_from_u64(o.seed));
    let limit = o.seconds.map(Duration::from_secs_f64);
    let mut done = 0u64;
    while done < o.inputs {
        if limit.is_some_and(|l| start.elapsed() >= l) {
            break;
        }
        let a = seeds.choose(m.rng()).cloned().unwrap_or_default();
        let b = seeds.choose(m.rng()).cloned().unwrap_or_default();
        let input = m.mutate(&a, &b);
        done += 1;
        if let Err(msg) = attempt(t, &input) {
            crashes += 1;
            report(&input, msg);
            if crashes >= 20 {
                eprintln!("{}: stopping after 20 crashes", t.name);
                break;
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{:<13} {:>9} inputs in {:>8.1} s ({:>7.0}/s), {} seeds, {} crashes; seed {}, load {} -> {}",
        t.name,
        done,
        secs,
        done as f64 / secs.max(1e-9),
        seeds.len(),
        crashes,
        o.seed,
        load_before,
        loadavg()
    );
    crashes
}

fn seeds(dir: &Path) -> ExitCode {
    for t in TARGETS {
        let d = dir.join(t.name);
        for (i, s) in (t.seeds)().iter().enumerate() {
            if let Err(e) =
                std::fs::create_dir_all(&d).and_then(|()| std::fs::write(d.join(format!("seed-{i:03}")), s))
            {
                eprintln!("cannot write {}: {e}", d.display());
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}

fn replay(name: &str, files: &[String]) -> ExitCode {
    let Some(t) = TARGETS.iter().find(|t| t.name == name) else { return usage() };
    let mut failed = false;
    for f in files {
        match std::fs::read(f) {
            Ok(input) => match attempt(t, &input) {
                Ok(()) => println!("{f}: ok"),
                Err(msg) => {
                    println!("{f}: CRASH {msg}");
                    failed = true;
                }
            },
            Err(e) => {
                eprintln!("{f}: {e}");
                failed = true;
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

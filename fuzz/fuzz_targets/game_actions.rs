//! libFuzzer entry point of the `game_actions` target (see `claw_fuzz::targets::game_actions`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| claw_fuzz::targets::game_actions(data));

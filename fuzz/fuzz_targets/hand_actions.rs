//! libFuzzer entry point of the `hand_actions` target (see `claw_fuzz::targets::hand_actions`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| claw_fuzz::targets::hand_actions(data));

//! libFuzzer entry point of the `frames` target (see `claw_fuzz::targets::frames`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| claw_fuzz::targets::frames(data));

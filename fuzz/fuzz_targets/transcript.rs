//! libFuzzer entry point of the `transcript` target (see `claw_fuzz::targets::transcript`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| claw_fuzz::targets::transcript(data));

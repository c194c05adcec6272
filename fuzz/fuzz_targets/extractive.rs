#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mf_fuzz::extractive_target(data);
});

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mf_fuzz::cite_target(data);
});

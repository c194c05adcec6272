#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mf_fuzz::audit_target(data);
});

#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| collegium_fuzz_harness::audit::run(data));

#![no_main]
//! The edit engine (file NUL old NUL new) must never panic.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    wrench_tools_edit::fuzz::edit_engine(data);
});

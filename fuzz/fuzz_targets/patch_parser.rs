#![no_main]
//! The V4A patch parser and hunk applier must never panic.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    wrench_tools_edit::fuzz::patch_parser(data);
});

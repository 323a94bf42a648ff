#![no_main]
//! The patch parser (V4A and unified diffs) and hunk applier must never panic.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    wrench_tools_edit::fuzz::patch_parser(data);
});

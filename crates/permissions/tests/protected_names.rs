//! The sandbox keeps the same names read-only that the file tools protect.

#[test]
fn the_sandbox_protects_every_name_the_file_tools_protect() {
    for n in wrench_permissions::write::PROTECTED_DIRS {
        assert!(
            wrench_process::decide::PROTECTED_DIRS.contains(n),
            "{n} is protected from file tools but writable from the sandbox"
        );
    }
}

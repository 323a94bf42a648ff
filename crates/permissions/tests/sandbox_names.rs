//! The sandbox keeps every protected name read-only: its own list
//! (`wrench_process::sandbox::AUTO_RUN_NAMES`, which cannot name this crate's
//! table: this crate depends on it) holds every pattern of [`PROTECTED`].

use wrench_permissions::protected::PROTECTED;
use wrench_process::sandbox::AUTO_RUN_NAMES;

#[test]
fn the_sandbox_keeps_every_protected_name_read_only() {
    let sandbox: Vec<String> = AUTO_RUN_NAMES.iter().map(|n| n.to_lowercase()).collect();
    let missing: Vec<String> = PROTECTED
        .iter()
        .map(|p| p.pattern().to_lowercase())
        .filter(|p| !sandbox.contains(p))
        .collect();
    assert!(
        missing.is_empty(),
        "protected names the sandbox leaves writable (add them to AUTO_RUN_NAMES): {missing:?}"
    );
}

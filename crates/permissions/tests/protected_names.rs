//! The sandbox keeps the same directories read-only that the file tools refuse.

use wrench_permissions::protected::{Guard, PROTECTED, Shape};

#[test]
fn the_sandbox_protects_every_directory_the_file_tools_refuse() {
    for e in PROTECTED {
        if let (Shape::Dir(n), Guard::Refuse) = (e.shape, e.guard) {
            assert!(
                wrench_process::decide::PROTECTED_DIRS.contains(&n),
                "{n} is refused to file tools but writable from the sandbox"
            );
        }
    }
}

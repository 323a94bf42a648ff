//! Link flags of the `wrench` binary.

fn main() {
    // Pack the relative relocations (DT_RELR): the loader applies the ~60k
    // relocations of this position-independent binary from a table of a few
    // KB instead of 1.4 MB of RELA entries, so every one-shot call starts
    // sooner. GNU/Linux only: glibc 2.36+ reads RELR, GNU ld 2.38+ and lld
    // 15+ write it (and mark the binary as needing GLIBC_ABI_DT_RELR).
    let target = std::env::var("TARGET").unwrap_or_default();
    if target.ends_with("-linux-gnu") {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    println!("cargo:rerun-if-changed=build.rs");
}

//! What a language server would execute of the workspace, decided before it
//! starts. A read-only call (`definition`, `hover`...) must not run code the
//! repository chose, so unless `[lsp] trust_workspace = true`:
//!
//! - rust-analyzer starts with build scripts and proc macros off, its target
//!   dir in wrench's state dir, `cargo metadata` locked and offline (no
//!   `Cargo.lock`, no `target/` and no download in the workspace), and is
//!   refused when the workspace can still make it run its own programs:
//!   a `rust-toolchain(.toml)` naming a path (rustup would run that
//!   directory's `cargo`/`rustc`), a `.cargo/config(.toml)` naming programs
//!   (`build.rustc`, wrappers, runners, linkers, credential providers,
//!   `[env]` variables that choose programs, `-Z` flags, includes), a
//!   `rust-analyzer.toml` (it could turn build scripts back on) or a
//!   `rust-project.json` whose sysroot lies in the workspace;
//! - typescript-language-server gets the TypeScript installed next to the
//!   global `tsc`, never the workspace's `node_modules/typescript`, and no
//!   automatic type acquisition (npm installs for the workspace's names);
//! - gopls runs `go` with the local toolchain only and no version-control
//!   programs (`GOTOOLCHAIN=local`, `GOVCS=*:off`);
//! - every server's `PATH` is the absolute entries outside the workspace
//!   (`wrench_process::which::path_var_outside`), since servers look
//!   programs up themselves (`env node`, pyright's `python3`).

use std::path::{Path, PathBuf};
use wrench_core::{ToolError, ToolResult};

/// Directory levels below the root searched for toolchain and cargo config
/// files (rust-analyzer runs cargo in every Cargo workspace it discovers).
pub const LSP_PROJECT_SCAN_DEPTH: usize = 3;

/// Directories never searched: build output, dependencies, VCS internals.
const SKIP_DIRS: [&str; 4] = ["target", "node_modules", ".git", ".hg"];

fn refused(what: &Path, why: &str) -> ToolError {
    ToolError::denied(format!(
        "{} {why}, so starting the language server for a read-only call would run the workspace's own code; remove it, or set `[lsp] trust_workspace = true` in your wrench config if you trust this workspace",
        what.display()
    ))
}

/// Refuse a Rust workspace that could make rust-analyzer (or the cargo and
/// rustup it runs) execute programs of the workspace.
///
/// rust-analyzer finds a `Cargo.toml` in the root or in any directory one
/// level down (hidden ones, `target` and `node_modules` included, and
/// through symlinks), and cargo and rustup then read the config and
/// toolchain files of that directory and of each of its ancestors. So every
/// directory seen is checked — the skipped names too, only not descended
/// into — and a directory reached through a symlink is checked at its real
/// place with each ancestor up to the root.
pub fn check_rust_workspace(root: &Path) -> ToolResult<()> {
    let real_root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let mut checked = std::collections::HashSet::new();
    let mut todo = vec![(root.to_path_buf(), 0usize)];
    while let Some((dir, depth)) = todo.pop() {
        check_rust_chain(&real_root, &dir, &mut checked)?;
        if depth >= LSP_PROJECT_SCAN_DEPTH {
            continue;
        }
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            let link = e.file_type().is_ok_and(|t| t.is_symlink());
            if !std::fs::metadata(e.path()).is_ok_and(|m| m.is_dir()) {
                continue;
            }
            if link || name.starts_with('.') || SKIP_DIRS.contains(&name.as_ref()) {
                check_rust_chain(&real_root, &e.path(), &mut checked)?;
            } else {
                todo.push((e.path(), depth + 1));
            }
        }
    }
    Ok(())
}

/// [`check_rust_dir`] on the real directory of `dir` and, when it is inside
/// the root, on each of its ancestors up to the root (cargo's config search).
fn check_rust_chain(
    real_root: &Path,
    dir: &Path,
    checked: &mut std::collections::HashSet<PathBuf>,
) -> ToolResult<()> {
    let real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut at = Some(real.as_path());
    while let Some(d) = at {
        if checked.insert(d.to_path_buf()) {
            check_rust_dir(real_root, d)?;
        }
        if d == real_root || !d.starts_with(real_root) {
            break;
        }
        at = d.parent();
    }
    Ok(())
}

fn read_if_exists(p: &Path) -> ToolResult<Option<String>> {
    match std::fs::read_to_string(p) {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ToolError::from_io(p.display(), &e)),
    }
}

fn check_rust_dir(root: &Path, dir: &Path) -> ToolResult<()> {
    for name in ["rust-toolchain.toml", "rust-toolchain"] {
        let p = dir.join(name);
        if let Some(text) = read_if_exists(&p)?
            && let Some(why) = toolchain_override(&text)
        {
            return Err(refused(&p, &why));
        }
    }
    for name in [".cargo/config.toml", ".cargo/config"] {
        let p = dir.join(name);
        if let Some(text) = read_if_exists(&p)?
            && let Some(why) = cargo_config_runs_programs(&text)
        {
            return Err(refused(&p, &why));
        }
    }
    for name in ["rust-analyzer.toml", ".rust-analyzer.toml"] {
        let p = dir.join(name);
        if p.exists() {
            return Err(refused(
                &p,
                "configures rust-analyzer from inside the workspace (it can turn build scripts, proc macros and check commands back on)",
            ));
        }
    }
    let p = dir.join("rust-project.json");
    if let Some(text) = read_if_exists(&p)? {
        let j: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        for key in ["sysroot", "sysroot_src"] {
            if let Some(s) = j[key].as_str() {
                let s = lexical(&dir.join(s));
                if s.starts_with(root) {
                    return Err(refused(
                        &p,
                        &format!("puts the {key} inside the workspace (its rustc would run)"),
                    ));
                }
            }
        }
    }
    Ok(())
}

fn lexical(p: &Path) -> PathBuf {
    let p = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

fn looks_like_path(s: &str) -> bool {
    s.contains('/') || s.contains('\\') || s.starts_with('.') || s.starts_with('~')
}

/// Why a toolchain file makes rustup run a toolchain from a path, if it does.
pub fn toolchain_override(text: &str) -> Option<String> {
    match text.parse::<toml::Table>() {
        Ok(t) => {
            let tc = t.get("toolchain").and_then(toml::Value::as_table);
            let Some(tc) = tc else {
                return (!t.is_empty())
                    .then(|| "is not a toolchain file wrench can read".to_string());
            };
            if tc.contains_key("path") {
                return Some("names a toolchain by path".into());
            }
            match tc.get("channel").map(toml::Value::as_str) {
                Some(Some(c)) if looks_like_path(c) => {
                    Some(format!("names the toolchain {c:?}, a path"))
                }
                Some(None) => Some("has a channel that is not a string".into()),
                _ => None,
            }
        }
        Err(_) => {
            // The legacy one-line form: a toolchain name (or a path).
            let line = text.trim();
            (line.lines().count() > 1 || looks_like_path(line))
                .then(|| format!("names the toolchain {line:?}, a path"))
        }
    }
}

/// `[env]` variables that choose which programs cargo and rustc run.
fn env_chooses_programs(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    [
        "RUSTC", "RUSTDOC", "CARGO", "RUSTUP", "LD_", "DYLD_", "__CARGO",
    ]
    .iter()
    .any(|p| n.starts_with(p))
        || [
            "PATH",
            "RUSTFLAGS",
            "SHELL",
            "BASH_ENV",
            "ENV",
            "PYTHONPATH",
        ]
        .contains(&n.as_str())
}

/// Why a cargo config makes cargo run programs of the workspace, if it does.
pub fn cargo_config_runs_programs(text: &str) -> Option<String> {
    let t = match text.parse::<toml::Table>() {
        Ok(t) => t,
        Err(e) => return Some(format!("does not parse ({})", e.message())),
    };
    let mut leaves = Vec::new();
    flatten("", &toml::Value::Table(t), &mut leaves);
    for (key, value) in leaves {
        let parts: Vec<&str> = key.split('.').collect();
        let last = parts.last().copied().unwrap_or_default();
        let bad = match parts.as_slice() {
            [
                "build",
                "rustc" | "rustc-wrapper" | "rustc-workspace-wrapper" | "rustdoc",
            ] => true,
            ["target", .., "runner" | "linker"] => true,
            ["env", name, ..] => env_chooses_programs(name),
            ["include", ..] | ["unstable", ..] => true,
            ["registry" | "registries", ..] => {
                last == "credential-provider" || last == "global-credential-providers"
            }
            ["credential-alias", ..] => true,
            _ if last == "rustflags" || last == "rustdocflags" => {
                value.contains("-Z") || value.contains("codegen-backend")
            }
            _ => false,
        };
        if bad {
            return Some(format!(
                "sets `{key}`, which makes cargo run a chosen program"
            ));
        }
    }
    None
}

fn flatten(prefix: &str, v: &toml::Value, out: &mut Vec<(String, String)>) {
    match v {
        toml::Value::Table(t) => {
            for (k, v) in t {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, v, out);
            }
        }
        other => out.push((prefix.to_string(), other.to_string())),
    }
}

/// Refuse a configured server program given as a path that is relative
/// (it runs from the workspace, the server's working directory) or whose
/// real file is inside the workspace (`./node_modules/.bin/…`): the
/// repository would choose what runs. A bare name is looked up outside the
/// workspace by [`super::which_outside`].
pub fn check_server_program(program: &str, root: &Path) -> ToolResult<()> {
    if !program.contains('/') {
        return Ok(());
    }
    let p = Path::new(program);
    let real_root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let inside = !p.is_absolute()
        || p.starts_with(root)
        || std::fs::canonicalize(p).is_ok_and(|r| r.starts_with(&real_root));
    if inside {
        return Err(refused(
            p,
            "is a language server inside the workspace (or a relative path, which runs from it)",
        ));
    }
    Ok(())
}

/// The environment of gopls for an untrusted workspace. The `go` command
/// it runs would otherwise download and run the toolchain a `go.mod` or
/// `go.work` names (`toolchain go1.X`, GOTOOLCHAIN=auto) and run version
/// control programs (`git`, `hg`, `svn`, `bzr`, `fossil`) for module paths
/// the workspace requires that the proxy does not serve.
pub fn go_env() -> Vec<(String, String)> {
    vec![
        ("GOTOOLCHAIN".into(), "local".into()),
        ("GOVCS".into(), "*:off".into()),
    ]
}

/// rust-analyzer's settings for an untrusted workspace (sent as
/// `initializationOptions` and as the `rust-analyzer` section of
/// `workspace/configuration`).
pub fn rust_analyzer_settings(target_dir: &Path) -> serde_json::Value {
    let dir = target_dir.display().to_string();
    serde_json::json!({
        "cargo": {
            "buildScripts": { "enable": false },
            "targetDir": dir,
            "extraEnv": { "CARGO_TARGET_DIR": dir, "CARGO_NET_OFFLINE": "true" },
            "metadataExtraArgs": ["--locked", "--offline"],
        },
        "procMacro": { "enable": false },
        "checkOnSave": false,
        "check": { "workspace": false },
        "cachePriming": { "enable": false },
    })
}

/// Overlay `safe` onto `user` (objects merged key by key, `safe` wins).
pub fn overlay(user: Option<serde_json::Value>, safe: serde_json::Value) -> serde_json::Value {
    match (user, safe) {
        (Some(serde_json::Value::Object(mut u)), serde_json::Value::Object(s)) => {
            for (k, v) in s {
                let merged = overlay(u.remove(&k), v);
                u.insert(k, merged);
            }
            serde_json::Value::Object(u)
        }
        (_, safe) => safe,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toolchain_files_naming_paths_are_refused() {
        for bad in [
            "[toolchain]\npath = \"./tc\"\n",
            "[toolchain]\nchannel = \"./tc\"\n",
            "[toolchain]\nchannel = \"/opt/evil\"\n",
            "../evil-toolchain\n",
            "~/tc\n",
        ] {
            assert!(toolchain_override(bad).is_some(), "{bad}");
        }
        for ok in [
            "[toolchain]\nchannel = \"1.80.0\"\ncomponents = [\"rustfmt\"]\n",
            "nightly-2024-01-01\n",
            "stable",
        ] {
            assert_eq!(toolchain_override(ok), None, "{ok}");
        }
    }

    #[test]
    fn cargo_configs_naming_programs_are_refused() {
        for bad in [
            "[build]\nrustc = \"./evil\"\n",
            "build.rustc-wrapper = \"sh\"\n",
            "[target.x86_64-unknown-linux-gnu]\nrunner = \"./evil\"\n",
            "[target.'cfg(unix)']\nlinker = \"./evil\"\n",
            "[env]\nRUSTC_WRAPPER = \"./evil\"\n",
            "[env]\nLD_PRELOAD = { value = \"evil.so\", relative = true }\n",
            "[registry]\ncredential-provider = \"./evil\"\n",
            "[registries.x]\ncredential-provider = [\"./evil\"]\n",
            "include = \"other.toml\"\n",
            "[unstable]\nconfig-include = true\n",
            "[build]\nrustflags = [\"-Zcodegen-backend=./evil.so\"]\n",
            "not toml [",
        ] {
            assert!(cargo_config_runs_programs(bad).is_some(), "{bad}");
        }
        for ok in [
            "[alias]\nb = \"build\"\n",
            "[build]\njobs = 2\nrustflags = [\"-Dwarnings\"]\n",
            "[env]\nRUST_TEST_THREADS = \"1\"\n",
            "[net]\noffline = true\n",
        ] {
            assert_eq!(cargo_config_runs_programs(ok), None, "{ok}");
        }
    }

    proptest::proptest! {
        /// A toolchain named by anything path-like is refused, in the TOML
        /// form and the legacy one-line form.
        #[test]
        fn path_like_toolchain_names_are_refused(
            a in "[a-z0-9._-]{0,12}",
            b in "[a-z0-9._-]{0,12}",
            lead in proptest::sample::select(vec!["", ".", "./", "../", "~/", "/"]),
        ) {
            let name = format!("{lead}{a}/{b}");
            let toml = format!("[toolchain]\nchannel = {name:?}\n");
            proptest::prop_assert!(toolchain_override(&toml).is_some(), "{}", toml);
            proptest::prop_assert!(toolchain_override(&format!("{name}\n")).is_some(), "{}", name);
        }
    }

    #[test]
    fn safe_settings_win_over_the_users() {
        let user = serde_json::json!({"cargo": {"features": "all", "buildScripts": {"enable": true}}, "procMacro": {"enable": true}});
        let m = overlay(Some(user), rust_analyzer_settings(Path::new("/s/t")));
        assert_eq!(m["cargo"]["features"], "all");
        assert_eq!(m["cargo"]["buildScripts"]["enable"], false);
        assert_eq!(m["procMacro"]["enable"], false);
    }
}

//! Shared harness of the end-to-end tests: real servers on copies of the
//! fixture projects, calls through the real Executor.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use wrench_core::{AllowAll, Call, CallResult, Context, Executor, ReadEvidence, Registry};

/// One runtime for the whole test binary, so pooled servers outlive a test.
pub fn rt() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
    })
}

/// Put the project-local language servers (`target/ci-node`, installed by
/// `.ci/install.sh`) on PATH after what is already there, once.
pub fn ci_node_on_path() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let ws = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let bin = ws.join("target/ci-node/node_modules/.bin");
        let Ok(bin) = std::fs::canonicalize(bin) else {
            return;
        };
        let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect())
            .unwrap_or_default();
        if !dirs.contains(&bin) {
            dirs.push(bin);
            if let Ok(p) = std::env::join_paths(dirs) {
                // SAFETY: called once, before any server or thread of the test
                // reads the environment (every test asks `have` first).
                unsafe { std::env::set_var("PATH", p) };
            }
        }
    });
}

/// True when `program` is on PATH (or in `target/ci-node`). When it is
/// missing the test fails, unless WRENCH_TEST_ALLOW_MISSING=1, which skips
/// with a printed message.
pub fn have(program: &str, install: &str) -> bool {
    ci_node_on_path();
    if wrench_lsp::discovery::which(program).is_some() {
        return true;
    }
    if std::env::var("WRENCH_TEST_ALLOW_MISSING").as_deref() == Ok("1") {
        eprintln!(
            "SKIPPED: {program} is not installed (install: {install}); WRENCH_TEST_ALLOW_MISSING=1"
        );
        return false;
    }
    panic!(
        "{program} is not on PATH: install it ({install}) or set WRENCH_TEST_ALLOW_MISSING=1 to skip"
    );
}

/// A fixture project copied into a temp dir, with a context and an executor.
pub struct Env {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub ctx: Context,
    pub exec: Executor,
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let t = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &t);
        } else {
            std::fs::copy(e.path(), &t).unwrap();
        }
    }
}

/// A fresh copy of `tests/fixtures/<name>`.
pub fn env(name: &str) -> Env {
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let root = dir.path().join(name);
    copy_dir(&src, &root);
    let root = std::fs::canonicalize(&root).unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    let ctx = wrench_core::context_for(&root, &state, Arc::new(AllowAll))
        .unwrap()
        .with_change_diagnostics(Some(wrench_lsp::change_hook()));
    let mut reg = Registry::new();
    wrench_lsp::register(&mut reg).unwrap();
    wrench_tools_edit::register(&mut reg).unwrap();
    wrench_tools_shell::register_with_sources(&mut reg, vec![wrench_lsp::diagnostics_source()])
        .unwrap();
    let exec = Executor::new(Arc::new(reg), ctx.clone());
    Env {
        _dir: dir,
        root,
        ctx,
        exec,
    }
}

impl Env {
    pub fn call(&self, tool: &str, args: serde_json::Value) -> CallResult {
        rt().block_on(self.exec.run_one(Call::new("t", tool, args)))
    }

    /// The text of a successful call, or a panic with the error.
    pub fn ok(&self, tool: &str, args: serde_json::Value) -> String {
        let r = self.call(tool, args.clone());
        match r.result {
            Ok(o) => o.text,
            Err(e) => panic!("{tool} {args} failed: {:?}: {}", e.kind, e.message),
        }
    }

    /// Record read evidence for `rel` through the session store, as `read` does.
    pub fn record_read(&self, rel: &str) {
        let p = self.root.join(rel);
        let bytes = std::fs::read(&p).unwrap();
        let meta = std::fs::metadata(&p).unwrap();
        self.ctx
            .session
            .record_read(ReadEvidence::of(&p, &bytes, &meta, true, None))
            .unwrap();
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root.join(rel)).unwrap()
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        let root = self.root.clone();
        rt().block_on(wrench_lsp::shutdown_root(&root));
    }
}

/// One shared read-only environment per fixture for a test binary.
pub fn shared(name: &'static str, prepare: fn(&Env)) -> &'static Env {
    static ENVS: OnceLock<std::sync::Mutex<Vec<(&'static str, &'static Env)>>> = OnceLock::new();
    let m = ENVS.get_or_init(Default::default);
    let mut g = m.lock().unwrap();
    if let Some((_, e)) = g.iter().find(|(n, _)| *n == name) {
        return e;
    }
    let e: &'static Env = Box::leak(Box::new(env(name)));
    prepare(e);
    g.push((name, e));
    e
}

/// The 1-based character column of the `nth` (0-based) occurrence of `needle` on line `line` of `text`.
pub fn col_of(text: &str, line: usize, needle: &str, nth: usize) -> u32 {
    let l = text.lines().nth(line - 1).unwrap();
    let (byte, _) = l.match_indices(needle).nth(nth).unwrap();
    u32::try_from(l[..byte].chars().count() + 1).unwrap()
}

/// Live (non-zombie) processes of process group `g`, from /proc.
fn live_in_group(g: i32) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp ...; comm may hold spaces: split after the last ')'.
        let Some(close) = stat.rfind(')') else {
            continue;
        };
        let rest: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        if rest.len() > 2 && rest[2] == g.to_string() && rest[0] != "Z" && rest[0] != "X" {
            out.push(stat[..close + 1].to_string());
        }
    }
    out
}

/// True when no process of these groups is alive any more (zombies waiting
/// for init to reap them do not count). Polls briefly: SIGKILL is delivered
/// asynchronously.
pub fn groups_gone(groups: &[i32]) -> bool {
    for _ in 0..100 {
        if groups.iter().all(|&g| live_in_group(g).is_empty()) {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    for &g in groups {
        eprintln!("group {g} still has: {:?}", live_in_group(g));
    }
    false
}

/// What the shared suite needs to know about one language's fixture.
pub struct Lang {
    pub fixture: &'static str,
    pub program: &'static str,
    pub install: &'static str,
    /// File using the symbol (line 3 or 4 holds a use after a non-ASCII string).
    pub main: &'static str,
    /// (line, text on that line) of the use in `main`, right after "😀".
    pub use_line: usize,
    /// File defining the symbol; (line, needle) of its definition.
    pub util: &'static str,
    pub def: (usize, &'static str),
    /// Files that may hold the definition (a header or the source).
    pub def_files: &'static [&'static str],
    /// Files a rename of the symbol must change.
    pub rename_files: &'static [&'static str],
    pub new_name: &'static str,
    /// A type in the fixture for workspace_symbol.
    pub class: &'static str,
    /// Words the hover text of the symbol must contain.
    pub hover_words: &'static [&'static str],
    /// A file with one type error, and the line it is on.
    pub broken: (&'static str, u32),
    /// A scratch file's clean and broken contents (diagnostics delta).
    pub scratch: (&'static str, &'static str, &'static str),
    /// Two comment lines in the language (pushed above a use).
    pub comment_lines: &'static str,
    /// Extra setup (clangd's compile_commands.json).
    pub prepare: fn(&Env),
}

fn nothing(_: &Env) {}

pub const NO_PREPARE: fn(&Env) = nothing;

pub fn lang_env(l: &Lang) -> Env {
    let e = env(l.fixture);
    (l.prepare)(&e);
    e
}

pub fn shared_env(l: &'static Lang) -> &'static Env {
    shared(l.fixture, l.prepare)
}

pub mod suite {
    use super::*;
    use serde_json::json;
    use wrench_core::ErrorKind;

    pub fn definition_crosses_files_at_a_non_ascii_position(l: &'static Lang) {
        if !have(l.program, l.install) {
            return;
        }
        let e = shared_env(l);
        let main = e.read(l.main);
        let col = col_of(&main, l.use_line, l.def.1, 0);
        let text = e.ok(
            "definition",
            json!({"path": l.main, "line": l.use_line, "character": col}),
        );
        let first = text.lines().next().unwrap_or_default();
        assert!(
            l.def_files
                .iter()
                .any(|f| first.starts_with(&format!("{f}:"))),
            "definition should be in {:?}, got:\n{text}",
            l.def_files
        );
        assert!(first.contains(l.def.1), "{text}");
    }

    pub fn references_list_uses_in_every_file(l: &'static Lang) {
        if !have(l.program, l.install) {
            return;
        }
        let e = shared_env(l);
        let util = e.read(l.util);
        let col = col_of(&util, l.def.0, l.def.1, 0);
        let r = e.call(
            "references",
            json!({"path": l.util, "line": l.def.0, "character": col}),
        );
        let out = r.result.unwrap();
        let locs = out.data["locations"].as_array().unwrap().clone();
        let main = e.read(l.main);
        let use_col = col_of(&main, l.use_line, l.def.1, 0);
        // The use after "😀" is reported in characters, not UTF-16 units.
        let want = format!("{}:{}:{}:", l.main, l.use_line, use_col);
        assert!(out.text.contains(&want), "want {want} in:\n{}", out.text);
        let files: std::collections::BTreeSet<&str> =
            locs.iter().filter_map(|x| x["path"].as_str()).collect();
        assert!(files.contains(l.main), "{}", out.text);
        assert!(
            files.len() >= 2,
            "references in one file only:\n{}",
            out.text
        );
        assert!(
            locs.iter().all(|x| x["in_workspace"] == true),
            "{}",
            out.text
        );
    }

    pub fn hover_shows_signature_and_docs(l: &'static Lang) {
        if !have(l.program, l.install) {
            return;
        }
        let e = shared_env(l);
        let util = e.read(l.util);
        let col = col_of(&util, l.def.0, l.def.1, 0);
        let text = e.ok(
            "hover",
            json!({"path": l.util, "line": l.def.0, "character": col}),
        );
        for w in l.hover_words {
            assert!(text.contains(w), "hover lacks {w:?}:\n{text}");
        }
        assert!(
            text.contains(&format!("range: {}:{col}-", l.def.0)),
            "{text}"
        );
    }

    pub fn workspace_symbol_finds_a_type_by_name(l: &'static Lang) {
        if !have(l.program, l.install) {
            return;
        }
        let e = shared_env(l);
        let text = e.ok(
            "workspace_symbol",
            json!({"query": l.class, "path": l.main}),
        );
        let line = text
            .lines()
            .find(|x| x.contains(&format!(" {}", l.class)))
            .unwrap_or_else(|| panic!("no {} in:\n{text}", l.class));
        assert!(
            l.def_files
                .iter()
                .any(|f| line.starts_with(&format!("{f}:"))),
            "{text}"
        );
        // Without a path, the workspace's language picks the server.
        let text2 = e.ok("workspace_symbol", json!({"query": l.class}));
        assert!(text2.contains(l.class), "{text2}");
    }

    pub fn rename_changes_every_file_after_reads(l: &'static Lang) {
        if !have(l.program, l.install) {
            return;
        }
        let e = lang_env(l);
        let util = e.read(l.util);
        let col = col_of(&util, l.def.0, l.def.1, 0);
        let args =
            json!({"path": l.util, "line": l.def.0, "character": col, "new_name": l.new_name});
        // Unread files are refused whole, nothing changes.
        let r = e.call("rename_symbol", args.clone());
        let err = r.result.unwrap_err();
        assert_eq!(err.kind, ErrorKind::Stale, "{}", err.message);
        assert_eq!(e.read(l.util), util);
        for f in l.rename_files {
            e.record_read(f);
        }
        // A dry run shows the diff and writes nothing.
        let mut dry = args.clone();
        dry["dry_run"] = json!(true);
        let out = e.call("rename_symbol", dry).result.unwrap();
        assert!(
            out.text.starts_with("Dry run: nothing was written"),
            "{}",
            out.text
        );
        assert!(
            out.text.contains(&format!("+++ b/{}", l.util)),
            "{}",
            out.text
        );
        assert_eq!(e.read(l.util), util);
        let r = e.call("rename_symbol", args);
        let out = match r.result {
            Ok(o) => o,
            Err(err) => panic!("rename failed: {:?}: {}", err.kind, err.message),
        };
        assert_eq!(out.kind, wrench_core::OutputKind::Edit);
        for f in l.rename_files {
            let t = e.read(f);
            assert!(t.contains(l.new_name), "{f} not renamed:\n{t}");
            let old_call = format!("{}(", l.def.1);
            assert!(!t.contains(&old_call), "{f} still has {old_call}:\n{t}");
            assert!(out.text.contains(&format!("+++ b/{f}")), "{}", out.text);
        }
        // Evidence now covers the new content: a second rename back needs no read.
        let col2 = col_of(&e.read(l.util), l.def.0, l.new_name, 0);
        let back = e.call(
            "rename_symbol",
            json!({"path": l.util, "line": l.def.0, "character": col2, "new_name": l.def.1}),
        );
        assert!(back.result.is_ok(), "{:?}", back.result.err());
        assert_eq!(e.read(l.util), util);
    }

    pub fn diagnostics_report_the_type_error(l: &'static Lang) {
        if !have(l.program, l.install) {
            return;
        }
        let e = shared_env(l);
        let src = wrench_lsp::diagnostics_source();
        assert_eq!(src.name(), "lsp");
        let d = rt()
            .block_on(src.diagnostics(&e.ctx, Some(Path::new(l.broken.0))))
            .unwrap();
        let err = d
            .iter()
            .find(|d| d.severity == wrench_core::Severity::Error)
            .unwrap_or_else(|| panic!("no error in {d:#?}"));
        assert_eq!(err.path, PathBuf::from(l.broken.0));
        assert_eq!(err.line, l.broken.1, "{err:#?}");
        assert!(err.source.starts_with("lsp:"), "{err:#?}");
    }

    pub fn diagnostics_delta_reports_errors_an_edit_introduced(l: &'static Lang) {
        if !have(l.program, l.install) {
            return;
        }
        let e = lang_env(l);
        let (name, clean, broken) = l.scratch;
        std::fs::write(e.root.join(name), clean).unwrap();
        let before = rt()
            .block_on(wrench_lsp::file_diagnostics(&e.ctx, Path::new(name)))
            .unwrap();
        assert!(
            before
                .iter()
                .all(|d| d.severity != wrench_core::Severity::Error),
            "{before:#?}"
        );
        std::fs::write(e.root.join(name), broken).unwrap();
        let delta = rt()
            .block_on(wrench_lsp::diagnostics_delta(
                &e.ctx,
                Path::new(name),
                &before,
            ))
            .unwrap();
        let errors = delta
            .introduced
            .iter()
            .filter(|d| d.severity == wrench_core::Severity::Error)
            .count();
        assert_eq!(errors, 1, "{delta:#?}");
        assert!(delta.render().contains(name), "{}", delta.render());
    }

    fn write(
        e: &Env,
        path: &str,
        content: &str,
        extra: serde_json::Value,
    ) -> wrench_core::ToolOutput {
        let mut args = json!({"path": path, "content": content});
        if let (Some(a), Some(x)) = (args.as_object_mut(), extra.as_object()) {
            a.extend(x.clone());
        }
        let r = e.call("write", args);
        match r.result {
            Ok(o) => o,
            Err(err) => panic!("write {path} failed: {:?}: {}", err.kind, err.message),
        }
    }

    fn errors_in<'a>(out: &'a wrench_core::ToolOutput, list: &str) -> Vec<&'a serde_json::Value> {
        out.data["diagnostics"][list]
            .as_array()
            .map(|v| v.iter().filter(|d| d["severity"] == "error").collect())
            .unwrap_or_default()
    }

    /// With the server warm, a write that breaks the file reports the error
    /// it introduced, and the write that fixes it reports it resolved, each
    /// with the server ready; `diagnostics: false` reports nothing.
    pub fn a_change_reports_the_errors_it_introduced_and_resolved(l: &'static Lang) {
        if !have(l.program, l.install) {
            return;
        }
        let e = lang_env(l);
        let (name, clean, broken) = l.scratch;
        std::fs::write(e.root.join(name), clean).unwrap();
        // Warm the server on the project (opens the scratch file).
        rt().block_on(wrench_lsp::lsp_diagnostics(&e.ctx, Some(Path::new(name))))
            .unwrap();
        e.record_read(name);
        let t = std::time::Instant::now();
        let out = write(&e, name, broken, json!({}));
        let took = t.elapsed();
        let introduced = errors_in(&out, "introduced");
        assert_eq!(introduced.len(), 1, "{}\n{:#}", out.text, out.data);
        assert_eq!(introduced[0]["path"], name, "{:#}", out.data);
        assert!(
            out.text.contains("diagnostics introduced by this change:")
                && out.text.contains(&format!("{name}:1:")),
            "{}",
            out.text
        );
        let servers = out.data["diagnostics"]["servers"].as_array().unwrap();
        assert!(
            servers.iter().any(|s| s["state"] == "ready"),
            "{:#}",
            out.data
        );
        assert!(took < std::time::Duration::from_secs(10), "{took:?}");
        // The fix: the same error reported resolved, nothing introduced.
        let out = write(&e, name, clean, json!({}));
        assert_eq!(
            errors_in(&out, "resolved").len(),
            1,
            "{}\n{:#}",
            out.text,
            out.data
        );
        assert!(errors_in(&out, "introduced").is_empty(), "{}", out.text);
        assert!(
            out.text.contains("diagnostics resolved by this change:"),
            "{}",
            out.text
        );
        // Off per call: no report, no wait.
        let out = write(&e, name, broken, json!({"diagnostics": false}));
        assert!(out.data.get("diagnostics").is_none(), "{:#}", out.data);
        assert!(!out.text.contains("[diagnostics:"), "{}", out.text);
    }

    /// No server running for the workspace: the write is not held up by a
    /// server start; the report says the server is cold, claims nothing,
    /// and starts nothing.
    pub fn a_change_with_a_cold_server_says_so_and_starts_none(l: &'static Lang) {
        if !have(l.program, l.install) {
            return;
        }
        let e = lang_env(l);
        let (name, _, broken) = l.scratch;
        let out = write(&e, name, broken, json!({}));
        assert!(out.text.contains("cold"), "{}", out.text);
        let servers = out.data["diagnostics"]["servers"].as_array().unwrap();
        assert!(
            servers.iter().all(|s| s["state"] == "cold"),
            "{:#}",
            out.data
        );
        assert!(errors_in(&out, "introduced").is_empty(), "{:#}", out.data);
        assert!(
            wrench_lsp::pool::groups_of(&e.root).is_empty(),
            "a server was started"
        );
        assert_eq!(e.read(name), broken);
    }

    /// `diagnostics` with both the project's checker (`checker`, installed)
    /// and the language server: the type error is listed once, naming both.
    pub fn a_checker_and_server_finding_is_listed_once(l: &'static Lang, checker: &str) {
        if !have(l.program, l.install) || !have(checker, l.install) {
            return;
        }
        let e = lang_env(l);
        let r = e.call("diagnostics", json!({"path": l.broken.0}));
        let out = match r.result {
            Ok(o) => o,
            Err(err) => panic!("diagnostics failed: {:?}: {}", err.kind, err.message),
        };
        let errors: Vec<&serde_json::Value> = out.data["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["severity"] == "error" && d["line"] == l.broken.1)
            .collect();
        assert_eq!(errors.len(), 1, "{}\n{:#}", out.text, out.data);
        let source = errors[0]["source"].as_str().unwrap();
        assert!(
            source.contains("lsp:") && source.split(", ").any(|s| s == checker),
            "{source}"
        );
        let lines = out
            .text
            .lines()
            .filter(|t| t.starts_with(&format!("{}:{}:", l.broken.0, l.broken.1)))
            .count();
        assert_eq!(lines, 1, "{}", out.text);
    }

    /// A navigation call right after an edit sees the new text (didChange,
    /// then the request at once).
    pub fn navigation_after_an_edit_sees_the_new_text(l: &'static Lang) {
        if !have(l.program, l.install) {
            return;
        }
        let e = lang_env(l);
        let main = e.read(l.main);
        let col = col_of(&main, l.use_line, l.def.1, 0);
        let args = json!({"path": l.main, "line": l.use_line, "character": col});
        e.ok("definition", args);
        // Two lines pushed above the use: the answer must follow them.
        let moved = format!("{}{}", l.comment_lines, main);
        std::fs::write(e.root.join(l.main), &moved).unwrap();
        let moved_args = json!({"path": l.main, "line": l.use_line + 2, "character": col});
        let t = std::time::Instant::now();
        let text = e.ok("definition", moved_args);
        let took = t.elapsed();
        assert!(
            l.def_files
                .iter()
                .any(|f| text.starts_with(&format!("{f}:"))),
            "{text}"
        );
        assert!(took < std::time::Duration::from_secs(5), "{took:?}");
    }

    pub fn servers_are_gone_after_shutdown(l: &'static Lang) {
        if !have(l.program, l.install) {
            return;
        }
        let e = lang_env(l);
        let main = e.read(l.main);
        let col = col_of(&main, l.use_line, l.def.1, 0);
        e.ok(
            "definition",
            json!({"path": l.main, "line": l.use_line, "character": col}),
        );
        let mine = wrench_lsp::pool::groups_of(&e.root);
        assert_eq!(mine.len(), 1, "one server started: {mine:?}");
        rt().block_on(wrench_lsp::shutdown_root(&e.root));
        assert!(
            wrench_lsp::pool::running_groups()
                .iter()
                .all(|g| !mine.contains(g)),
            "still tracked"
        );
        assert!(groups_gone(&mine), "process group still alive: {mine:?}");
    }

    pub fn a_crashed_server_is_restarted_once(l: &'static Lang) {
        if !have(l.program, l.install) {
            return;
        }
        let e = lang_env(l);
        let main = e.read(l.main);
        let col = col_of(&main, l.use_line, l.def.1, 0);
        let args = json!({"path": l.main, "line": l.use_line, "character": col});
        let first = e.ok("definition", args.clone());
        let old = wrench_lsp::pool::groups_of(&e.root);
        assert_eq!(old.len(), 1);
        wrench_lsp::client::kill_group(old[0]);
        assert!(groups_gone(&old));
        // The next call finds the server dead, starts a new one and answers.
        assert_eq!(e.ok("definition", args), first);
        let new = wrench_lsp::pool::groups_of(&e.root);
        assert_eq!(new.len(), 1);
        assert_ne!(new, old);
    }

    /// The model-facing text of definition and references, snapshotted.
    pub fn navigation_text_snapshots(l: &'static Lang) {
        if !have(l.program, l.install) {
            return;
        }
        let e = shared_env(l);
        let main = e.read(l.main);
        let col = col_of(&main, l.use_line, l.def.1, 0);
        let def = e.ok(
            "definition",
            json!({"path": l.main, "line": l.use_line, "character": col}),
        );
        insta::assert_snapshot!(format!("{}_definition", l.fixture), def);
        let util = e.read(l.util);
        let col = col_of(&util, l.def.0, l.def.1, 0);
        let refs = e.ok(
            "references",
            json!({"path": l.util, "line": l.def.0, "character": col}),
        );
        insta::assert_snapshot!(format!("{}_references", l.fixture), refs);
    }
}

/// Write an executable script `p` (its directories made as needed).
pub fn executable(p: &Path, body: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, body).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

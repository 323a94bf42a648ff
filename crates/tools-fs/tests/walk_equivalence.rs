//! grep's fd walker (`fdwalk::files`) held to ripgrep's walker
//! (`ignore::WalkBuilder` as `scope::walker` configures it, built
//! sequentially, regular files only): the same files over generated trees
//! (nested repositories, `.gitignore`/`.ignore`/`.git/info/exclude` lines
//! from a pattern vocabulary with CRLF, BOM and invalid UTF-8, hidden names,
//! starts below ignore files), named rows for the rules the generator hits
//! rarely, and hostile ignore files only the fd walker is run on (ripgrep's
//! own walker would block on them).
//!
//! The user's global git excludes file is read on both sides, so it cannot
//! tip a comparison; rows with a fixed expected list show only names a
//! global excludes file would not hide (or names an ignore file here
//! whitelists), and `the_global_excludes_file_applies_alike` sets one up in
//! a child process of its own.
//!
//! `PROPTEST_CASES=N` runs N generated cases a property instead of 64.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use ignore::types::{Types, TypesBuilder};
use proptest::prelude::*;
use proptest::test_runner::Config;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use wrench_permissions::Workspace;
use wrench_tools_fs::fdwalk;
use wrench_tools_fs::scope::{self, Start, Visibility};

// ---------------------------------------------------------------------------
// The two walkers.

/// ripgrep's walker as grep configured it before fdwalk: sorted absolute
/// paths of the regular files it yields.
fn reference(starts: &[Start], vis: Visibility, types: Option<&Types>) -> Vec<PathBuf> {
    let (mut b, _) = scope::walker(starts, vis).expect("at least one start");
    if let Some(t) = types {
        b.types(t.clone());
    }
    let mut out: Vec<PathBuf> = b
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .map(|e| e.path().to_path_buf())
        .collect();
    out.sort();
    out
}

fn starts_of(ws: &Workspace, rels: &[&str]) -> Vec<Start> {
    rels.iter()
        .map(|r| scope::start(ws, r).unwrap_or_else(|e| panic!("start {r:?}: {e:?}")))
        .collect()
}

/// Paths relative to `root` as `/`-joined strings (a `.` component dropped).
fn rels(root: &Path, paths: &[PathBuf]) -> Vec<String> {
    paths
        .iter()
        .map(|p| {
            let p: PathBuf = p.components().collect();
            p.strip_prefix(root)
                .map(|r| r.to_string_lossy().into_owned())
                .unwrap_or_else(|_| format!("OUTSIDE {}", p.display()))
        })
        .collect()
}

/// Both walkers over `starts` in the workspace at `root`: (fdwalk, reference),
/// as paths relative to the root.
fn both(
    root: &Path,
    starts: &[&str],
    vis: Visibility,
    types: Option<&Types>,
) -> (Vec<String>, Vec<String>) {
    let ws = Workspace::open(root).unwrap();
    let starts = starts_of(&ws, starts);
    let (fd, _) = fdwalk::files(&ws, &starts, vis, types);
    let rf = reference(&starts, vis, types);
    (rels(root, &fd), rels(root, &rf))
}

fn rust_types() -> Types {
    let mut t = TypesBuilder::new();
    t.add_defaults();
    t.select("rust");
    t.build().unwrap()
}

/// Every entry under `root`, one a line, with the bytes of ignore files and
/// `.git` files: what a failure prints.
fn render(root: &Path) -> String {
    fn go(dir: &Path, root: &Path, out: &mut String) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        let mut ents: Vec<_> = rd.filter_map(Result::ok).collect();
        ents.sort_by_key(|e| e.file_name());
        for e in ents {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap_or(&p).display().to_string();
            let Ok(m) = std::fs::symlink_metadata(&p) else {
                continue;
            };
            if m.is_dir() {
                let _ = writeln!(out, "{rel}/");
                go(&p, root, out);
            } else if m.file_type().is_symlink() {
                let t = std::fs::read_link(&p).unwrap_or_default();
                let _ = writeln!(out, "{rel} -> {}", t.display());
            } else if m.is_file() {
                let name = e.file_name();
                let shown = [".gitignore", ".ignore", ".git", "exclude", "commondir"]
                    .iter()
                    .any(|n| name == *n);
                if shown {
                    let text = std::fs::read(&p).unwrap_or_default();
                    let shown = &text[..text.len().min(200)];
                    let more = if text.len() > 200 {
                        format!(" ... ({} bytes)", text.len())
                    } else {
                        String::new()
                    };
                    let _ = writeln!(out, "{rel}  \"{}\"{more}", shown.escape_ascii());
                } else {
                    let _ = writeln!(out, "{rel}");
                }
            } else {
                let _ = writeln!(out, "{rel} (special)");
            }
        }
    }
    let mut out = String::new();
    go(root, root, &mut out);
    out
}

fn write(root: &Path, rel: &str, text: &[u8]) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn mkdir(root: &Path, rel: &str) {
    std::fs::create_dir_all(root.join(rel)).unwrap();
}

/// A workspace root in a fresh temp dir (canonical), with the guard.
fn fixture() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(d.path()).unwrap().join("ws");
    std::fs::create_dir(&root).unwrap();
    (d, root)
}

// ---------------------------------------------------------------------------
// Generated trees.

const DIR_NAMES: [&str; 8] = ["a", "b", "sub", "deep", "rooted", ".hidden", "build", "ign"];

const FILE_NAMES: [&str; 12] = [
    "x.rs", "y.log", "z.txt", ".env", ".foo.rs", "deep", "rooted", "keep.log", "build", "a",
    "notes.md", "ign",
];

/// Where generated symlinks lead: files, directories, an ignore file,
/// out of the directory, nowhere.
const LINK_TARGETS: [&str; 7] = ["x.rs", "sub", "..", ".gitignore", "../x.rs", "nowhere", "/"];

/// Lines an ignore file is made of.
const PATTERNS: [&str; 54] = [
    "x.rs",
    "*.log",
    "a/",
    "sub/",
    "build/",
    "/rooted",
    "**/deep",
    "deep/",
    "!keep.log",
    "!.env",
    "!.hidden/",
    "!.hidden",
    ".hidden/",
    "sub/*.rs",
    "a/**/z.txt",
    "# comment",
    "",
    "z.txt   ",
    "*.rs",
    "!x.rs",
    "!/sub",
    "/a",
    "*",
    "!*/",
    "ign",
    ".env",
    "!*.rs",
    "\\#x",
    "build",
    "**/sub/**",
    "deep/*",
    "!deep",
    "*.md",
    ".*",
    "!.foo.rs",
    "a/x.rs",
    "x.rs\\ ",
    "[ab]",
    "?.txt",
    "**",
    "/ign/",
    "!/ign/x.rs",
    "sub/deep/",
    "  ",
    "{x,z}.*",
    "a{b",
    "[z-a]",
    "!{keep,y}.log",
    "!.*",
    "!.git",
    "!.jj/",
    "ws/sub/",
    "/ws/a",
    "ws/**/x.rs",
];

/// One line that is not UTF-8 (a reader that stops there, or reads it
/// lossily, differs from ripgrep).
const INVALID_LINE: &[u8] = b"notes.md\xff";

#[derive(Debug, Clone)]
struct IgnoreText {
    bom: bool,
    /// (index into PATTERNS, CRLF line end)
    lines: Vec<(usize, bool)>,
    /// Put [`INVALID_LINE`] before this line.
    invalid_at: Option<usize>,
    final_newline: bool,
}

impl IgnoreText {
    fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        if self.bom {
            out.extend_from_slice("\u{feff}".as_bytes());
        }
        let n = self.lines.len();
        for (i, (p, crlf)) in self.lines.iter().enumerate() {
            if self.invalid_at == Some(i) {
                out.extend_from_slice(INVALID_LINE);
                out.push(b'\n');
            }
            out.extend_from_slice(PATTERNS[*p].as_bytes());
            if i + 1 < n || self.final_newline {
                out.extend_from_slice(if *crlf { b"\r\n" } else { b"\n" });
            }
        }
        if self.invalid_at.is_some_and(|i| i >= n) {
            out.extend_from_slice(INVALID_LINE);
        }
        out
    }
}

#[derive(Debug, Clone)]
enum Repo {
    None,
    /// `.git/`, with `info/exclude` when Some.
    GitDir(Option<IgnoreText>),
    /// A `.git` file (`gitdir:` to a directory outside the workspace whose
    /// `commondir` is `.`), with `info/exclude` there when Some.
    GitFile(Option<IgnoreText>),
    /// `.jj/`.
    Jj,
    /// `.git` a link to a git directory outside the workspace, with
    /// `info/exclude` there when Some. (A link to a `gitdir:` file is a
    /// known mismatch, held by its own test.)
    GitLink(Option<IgnoreText>),
}

#[derive(Debug, Clone)]
struct Dir {
    files: Vec<usize>,
    /// Symlinks: (index into FILE_NAMES, index into LINK_TARGETS).
    links: Vec<(usize, usize)>,
    /// `.gitignore` is a link to `rules.txt`, which holds its text.
    gitignore_linked: bool,
    /// A FIFO named `pipe.rs`.
    fifo: bool,
    /// An unusable ignore file both walkers survive, in place of
    /// `.ignore`: 1 a directory, 2 one with 10001 patterns.
    unusable: u8,
    gitignore: Option<IgnoreText>,
    ignore: Option<IgnoreText>,
    repo: Repo,
    dirs: Vec<(usize, Dir)>,
}

/// Makes `d` at `at`; `outside` holds `.git` files' git dirs. Returns the
/// paths made, relative to `root` (directories and files).
fn make(d: &Dir, at: &Path, root: &Path, outside: &Path, n: &mut usize, made: &mut Vec<String>) {
    std::fs::create_dir_all(at).unwrap();
    let rel = |p: &Path| p.strip_prefix(root).unwrap().display().to_string();
    if let Some(t) = &d.gitignore {
        if d.gitignore_linked {
            std::fs::write(at.join("rules.txt"), t.bytes()).unwrap();
            std::os::unix::fs::symlink("rules.txt", at.join(".gitignore")).unwrap();
            made.push(rel(&at.join("rules.txt")));
        } else {
            std::fs::write(at.join(".gitignore"), t.bytes()).unwrap();
        }
        made.push(rel(&at.join(".gitignore")));
    }
    if d.fifo {
        nix::unistd::mkfifo(&at.join("pipe.rs"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        // A start may be the FIFO too (neither walker opens it).
        made.push(rel(&at.join("pipe.rs")));
    }
    match (d.unusable, &d.ignore) {
        (1, _) => std::fs::create_dir(at.join(".ignore")).unwrap(),
        (2, _) => {
            let text: String = (0..=10_000).map(|i| format!("p{i}\n")).collect();
            std::fs::write(at.join(".ignore"), text).unwrap();
        }
        (_, Some(t)) => {
            std::fs::write(at.join(".ignore"), t.bytes()).unwrap();
            made.push(rel(&at.join(".ignore")));
        }
        (_, None) => {}
    }
    match &d.repo {
        Repo::None => {}
        Repo::GitDir(ex) => {
            std::fs::create_dir_all(at.join(".git/info")).unwrap();
            made.push(rel(&at.join(".git")));
            if let Some(t) = ex {
                std::fs::write(at.join(".git/info/exclude"), t.bytes()).unwrap();
                made.push(rel(&at.join(".git/info/exclude")));
            }
        }
        Repo::GitFile(ex) => {
            *n += 1;
            let gd = outside.join(format!("gd{n}"));
            std::fs::create_dir_all(gd.join("info")).unwrap();
            std::fs::write(gd.join("commondir"), ".\n").unwrap();
            if let Some(t) = ex {
                std::fs::write(gd.join("info/exclude"), t.bytes()).unwrap();
            }
            std::fs::write(at.join(".git"), format!("gitdir: {}\n", gd.display())).unwrap();
            made.push(rel(&at.join(".git")));
        }
        Repo::GitLink(ex) => {
            *n += 1;
            let gd = outside.join(format!("linked{n}"));
            std::fs::create_dir_all(gd.join("info")).unwrap();
            if let Some(t) = ex {
                std::fs::write(gd.join("info/exclude"), t.bytes()).unwrap();
            }
            // Not a start: it leads out of the workspace.
            std::os::unix::fs::symlink(&gd, at.join(".git")).unwrap();
        }
        Repo::Jj => {
            std::fs::create_dir_all(at.join(".jj")).unwrap();
            made.push(rel(&at.join(".jj")));
        }
    }
    for f in &d.files {
        let p = at.join(FILE_NAMES[*f]);
        if p.exists() {
            continue;
        }
        std::fs::write(&p, b"x\n").unwrap();
        made.push(rel(&p));
    }
    for (name, sub) in &d.dirs {
        let p = at.join(DIR_NAMES[*name]);
        if p.exists() {
            // A file of that name, or a directory made already.
            continue;
        }
        made.push(rel(&p));
        make(sub, &p, root, outside, n, made);
    }
    // Links last, so they may lead to the files and directories made.
    for (name, target) in &d.links {
        let p = at.join(FILE_NAMES[*name]);
        if std::fs::symlink_metadata(&p).is_ok() {
            continue;
        }
        std::os::unix::fs::symlink(LINK_TARGETS[*target], &p).unwrap();
    }
}

fn ignore_text() -> impl Strategy<Value = IgnoreText> {
    (
        prop::bool::weighted(0.15),
        prop::collection::vec((0..PATTERNS.len(), prop::bool::weighted(0.2)), 0..6),
        prop::option::weighted(0.15, 0..6usize),
        prop::bool::weighted(0.8),
    )
        .prop_map(|(bom, lines, invalid_at, final_newline)| IgnoreText {
            bom,
            lines,
            invalid_at,
            final_newline,
        })
}

/// Weights: none, `.git/`, `.git` file, `.jj/`; a `.git` link takes the
/// `.git` file's weight again.
fn repo(weights: [u32; 4]) -> impl Strategy<Value = Repo> {
    prop_oneof![
        weights[0] => Just(Repo::None),
        weights[1] => prop::option::weighted(0.6, ignore_text()).prop_map(Repo::GitDir),
        weights[2] => prop::option::weighted(0.6, ignore_text()).prop_map(Repo::GitFile),
        weights[2] => prop::option::weighted(0.6, ignore_text()).prop_map(Repo::GitLink),
        weights[3] => Just(Repo::Jj),
    ]
}

fn leaf(weights: [u32; 4]) -> impl Strategy<Value = Dir> {
    (
        prop::collection::vec(0..FILE_NAMES.len(), 0..5),
        prop::option::weighted(0.45, ignore_text()),
        prop::option::weighted(0.25, ignore_text()),
        repo(weights),
        prop::collection::vec((0..FILE_NAMES.len(), 0..LINK_TARGETS.len()), 0..2),
        prop::bool::weighted(0.1),
        prop::bool::weighted(0.05),
        prop_oneof![40 => Just(0u8), 1 => Just(1u8), 1 => Just(2u8)],
    )
        .prop_map(
            |(files, gitignore, ignore, repo, links, gitignore_linked, fifo, unusable)| Dir {
                files,
                links,
                gitignore_linked,
                fifo,
                unusable,
                gitignore,
                ignore,
                repo,
                dirs: Vec::new(),
            },
        )
}

/// A tree at most four directories deep below its root; the root is a
/// repository more often than the directories in it.
fn tree() -> impl Strategy<Value = Dir> {
    let nested = [12, 2, 1, 1];
    let sub = leaf(nested).prop_recursive(3, 16, 3, move |inner| {
        (
            leaf(nested),
            prop::collection::vec((0..DIR_NAMES.len(), inner), 0..3),
        )
            .prop_map(|(mut d, dirs)| {
                d.dirs = dirs;
                d
            })
    });
    (
        leaf([3, 4, 1, 1]),
        prop::collection::vec((0..DIR_NAMES.len(), sub), 0..4),
    )
        .prop_map(|(mut d, dirs)| {
            d.dirs = dirs;
            d
        })
}

/// How a start is picked: the root, a directory, a file, anything made.
#[derive(Debug, Clone)]
struct StartPick(u8, prop::sample::Index);

fn starts() -> impl Strategy<Value = Vec<StartPick>> {
    let kind = prop_oneof![2 => Just(0u8), 4 => Just(1u8), 1 => Just(2u8), 2 => Just(3u8)];
    prop::collection::vec(
        (kind, any::<prop::sample::Index>()).prop_map(|(k, i)| StartPick(k, i)),
        1..=2,
    )
}

/// The file types a case keeps: none, Rust, Rust and text, all but Rust.
fn types_of(pick: u8) -> Option<Types> {
    let mut t = TypesBuilder::new();
    t.add_defaults();
    match pick {
        1 => {
            t.select("rust");
        }
        2 => {
            t.select("rust");
            t.select("txt");
        }
        3 => {
            t.negate("rust");
        }
        _ => return None,
    }
    Some(t.build().unwrap())
}

/// The directory holding the workspace root: its ignore files and
/// repository marker apply to the walk too (ripgrep reads every directory
/// above a start); it holds no files of its own.
fn outer() -> impl Strategy<Value = Dir> {
    (
        prop::option::weighted(0.25, ignore_text()),
        prop::option::weighted(0.1, ignore_text()),
        repo([8, 2, 1, 1]),
    )
        .prop_map(|(gitignore, ignore, repo)| Dir {
            files: Vec::new(),
            links: Vec::new(),
            gitignore_linked: false,
            fifo: false,
            unusable: 0,
            gitignore,
            ignore,
            repo,
            dirs: Vec::new(),
        })
}

fn case(
    d: &Dir,
    above: &Dir,
    picks: &[StartPick],
    vis: Visibility,
    types: u8,
) -> Result<(), TestCaseError> {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let root = base.join("ws");
    let outside = base.join("gitdirs");
    let mut made = Vec::new();
    let mut n = 0;
    make(above, &base, &base, &outside, &mut n, &mut Vec::new());
    make(d, &root, &root, &outside, &mut n, &mut made);
    let dirs: Vec<&String> = made.iter().filter(|p| root.join(p).is_dir()).collect();
    let files: Vec<&String> = made.iter().filter(|p| root.join(p).is_file()).collect();
    let chosen: Vec<&str> = picks
        .iter()
        .map(|StartPick(k, i)| {
            let from = match k {
                1 => dirs.clone(),
                2 => files.clone(),
                3 => made.iter().collect(),
                _ => Vec::new(),
            };
            if from.is_empty() {
                "."
            } else {
                from[i.index(from.len())].as_str()
            }
        })
        .collect();
    let label = ["none", "rust", "rust and txt", "all but rust"][usize::from(types % 4)];
    let types = types_of(types);
    let ws = Workspace::open(&root).unwrap();
    let starts = starts_of(&ws, &chosen);
    let (fd, fd_left) = fdwalk::files(&ws, &starts, vis, types.as_ref());
    let (mut b, rf_left) = scope::walker(&starts, vis).unwrap();
    if let Some(t) = &types {
        b.types(t.clone());
    }
    let mut rf: Vec<PathBuf> = b
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .map(|e| e.path().to_path_buf())
        .collect();
    rf.sort();
    let (fd, rf) = (rels(&root, &fd), rels(&root, &rf));
    // What each left out: the notes' heads (how many directories, or that
    // ignore files were off); the lists may come in another order.
    let heads = |u: &scope::Unwalked| -> Vec<String> {
        u.notes(None)
            .iter()
            .map(|n| n.split(':').next().unwrap_or("").to_string())
            .collect()
    };
    prop_assert_eq!(
        heads(&fd_left),
        heads(&rf_left),
        "what fdwalk (left) and ripgrep's walker (right) left out differs\nstarts {:?}, {:?}\n{:?}\n{:?}\ntree (the workspace is ws/):\n{}",
        chosen,
        vis,
        fd_left.notes(None),
        rf_left.notes(None),
        render(&base)
    );
    prop_assert_eq!(
        &fd,
        &rf,
        "fdwalk (left) and ripgrep's walker (right) differ\nstarts {:?}, {:?}, types {}\ntree (the workspace is ws/):\n{}",
        chosen,
        vis,
        label,
        render(&base)
    );
    Ok(())
}

/// 64 cases a property (a few seconds in a debug build); `PROPTEST_CASES`
/// asks for more.
fn config() -> Config {
    Config {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(64),
        failure_persistence: None,
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(config())]

    /// With ripgrep's standard filters both walkers yield the same files.
    #[test]
    fn standard_walk_yields_what_ripgreps_walker_yields(
        d in tree(), above in outer(), picks in starts(), types in 0..4u8,
    ) {
        case(&d, &above, &picks, Visibility::Standard, types)?;
    }

    /// Showing everything (only `.git` skipped), the same files too.
    #[test]
    fn everything_walk_yields_what_ripgreps_walker_yields(
        d in tree(), above in outer(), picks in starts(), types in 0..4u8,
    ) {
        case(&d, &above, &picks, Visibility::Everything, types)?;
    }
}

// ---------------------------------------------------------------------------
// Named rows: rules the generator reaches rarely. Each asserts both walkers
// agree, and the rule's decision.

/// Asserts both walkers yield `want` (relative paths, sorted).
fn agree(root: &Path, starts: &[&str], vis: Visibility, types: Option<&Types>, want: &[&str]) {
    let (fd, rf) = both(root, starts, vis, types);
    let tree = render(root);
    assert_eq!(fd, rf, "fdwalk (left) vs ripgrep's walker (right)\n{tree}");
    let mut want: Vec<String> = want.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(rf, want, "ripgrep's walker vs the rule\n{tree}");
}

#[test]
fn a_gitignore_whitelist_lets_a_hidden_file_through() {
    let (_d, root) = fixture();
    mkdir(&root, ".git");
    write(&root, ".gitignore", b"!.env\n");
    write(&root, ".env", b"K=v\n");
    write(&root, ".other", b"x\n");
    write(&root, "a.txt", b"x\n");
    agree(
        &root,
        &["."],
        Visibility::Standard,
        None,
        &[".env", "a.txt"],
    );
}

#[test]
fn a_gitignore_above_a_nested_repository_does_not_apply_inside_it() {
    let (_d, root) = fixture();
    mkdir(&root, ".git");
    write(&root, ".gitignore", b"*.rs\n");
    write(&root, "top.rs", b"x\n");
    mkdir(&root, "nested/.git");
    write(&root, "nested/in.rs", b"x\n");
    write(&root, "nested/deeper/in2.rs", b"x\n");
    agree(
        &root,
        &["."],
        Visibility::Standard,
        None,
        &["nested/deeper/in2.rs", "nested/in.rs"],
    );
    // From a start inside the nested repository too (the root's
    // .gitignore is then an ignore file above the start).
    agree(
        &root,
        &["nested/deeper"],
        Visibility::Standard,
        None,
        &["nested/deeper/in2.rs"],
    );
}

#[test]
fn a_git_file_marks_a_nested_repository_as_a_git_dir_does() {
    let (d, root) = fixture();
    mkdir(&root, ".git");
    write(&root, ".gitignore", b"*.rs\n");
    let gd = d.path().join("gitdirs/sm");
    std::fs::create_dir_all(&gd).unwrap();
    write(
        &root,
        "sm/.git",
        format!(
            "gitdir: {}\n",
            std::fs::canonicalize(&gd).unwrap().display()
        )
        .as_bytes(),
    );
    write(&root, "sm/in.rs", b"x\n");
    agree(&root, &["."], Visibility::Standard, None, &["sm/in.rs"]);
}

#[test]
fn a_jj_directory_makes_gitignore_apply() {
    let (_d, root) = fixture();
    mkdir(&root, ".jj");
    write(&root, ".gitignore", b"*.log\n");
    write(&root, "a.log", b"x\n");
    write(&root, "a.rs", b"x\n");
    agree(&root, &["."], Visibility::Standard, None, &["a.rs"]);
}

#[test]
fn gitignore_needs_a_repository_but_ignore_does_not() {
    let (_d, root) = fixture();
    // Nothing above the temp dir may be a repository for this row to mean
    // what it says.
    let above_is_repo = root
        .ancestors()
        .any(|a| a.join(".git").exists() || a.join(".jj").exists());
    assert!(
        !above_is_repo,
        "a directory above {} is a repository: run with TMPDIR outside any repository",
        root.display()
    );
    write(&root, ".gitignore", b"a.txt\n");
    write(&root, ".ignore", b"b.txt\n");
    write(&root, "a.txt", b"x\n");
    write(&root, "b.txt", b"x\n");
    write(&root, "c.txt", b"x\n");
    agree(
        &root,
        &["."],
        Visibility::Standard,
        None,
        &["a.txt", "c.txt"],
    );
}

#[test]
fn ignore_overrides_a_gitignore_whitelist_and_the_other_way_round() {
    let (_d, root) = fixture();
    mkdir(&root, ".git");
    write(&root, "one/.gitignore", b"!keep.log\n");
    write(&root, "one/.ignore", b"*.log\n");
    write(&root, "one/keep.log", b"x\n");
    write(&root, "two/.gitignore", b"*.log\n");
    write(&root, "two/.ignore", b"!keep.log\n");
    write(&root, "two/keep.log", b"x\n");
    write(&root, "two/drop.log", b"x\n");
    agree(&root, &["."], Visibility::Standard, None, &["two/keep.log"]);
}

#[test]
fn a_dir_pattern_matches_directories_only() {
    let (_d, root) = fixture();
    mkdir(&root, ".git");
    write(&root, ".gitignore", b"build/\n");
    write(&root, "build", b"a file named build\n");
    write(&root, "sub/build/x.rs", b"x\n");
    write(&root, "sub/y.rs", b"x\n");
    agree(
        &root,
        &["."],
        Visibility::Standard,
        None,
        &["build", "sub/y.rs"],
    );
}

#[test]
fn a_start_below_an_ignored_directory_is_walked_with_the_rules_above_it() {
    let (_d, root) = fixture();
    mkdir(&root, ".git");
    write(&root, ".gitignore", b"ign/\n*.log\n");
    write(&root, "ign/sub/f.rs", b"x\n");
    write(&root, "ign/sub/x.log", b"x\n");
    write(&root, "ign/top.rs", b"x\n");
    agree(
        &root,
        &["ign/sub"],
        Visibility::Standard,
        None,
        &["ign/sub/f.rs"],
    );
}

#[test]
fn a_file_type_lets_a_hidden_file_through() {
    let (_d, root) = fixture();
    write(&root, ".foo.rs", b"x\n");
    write(&root, ".bar.txt", b"x\n");
    write(&root, "a.rs", b"x\n");
    write(&root, "b.txt", b"x\n");
    write(&root, ".hid/c.rs", b"x\n");
    let t = rust_types();
    agree(
        &root,
        &["."],
        Visibility::Standard,
        Some(&t),
        &[".foo.rs", "a.rs"],
    );
}

#[test]
fn git_info_exclude_applies_in_its_repository_only() {
    let (_d, root) = fixture();
    write(&root, ".git/info/exclude", b"*.md\n");
    write(&root, "a.md", b"x\n");
    write(&root, "b.rs", b"x\n");
    mkdir(&root, "inner/.git");
    write(&root, "inner/c.md", b"x\n");
    agree(
        &root,
        &["."],
        Visibility::Standard,
        None,
        &["b.rs", "inner/c.md"],
    );
}

#[test]
fn crlf_bom_and_an_invalid_line_read_as_ripgrep_reads_them() {
    let (_d, root) = fixture();
    mkdir(&root, ".git");
    // BOM before the first pattern, CRLF ends, a line that is not UTF-8 in
    // the middle (skipped; the lines after it still count), a last line
    // without a newline. (Names no global excludes file would name: the
    // expected list is fixed.)
    write(
        &root,
        ".gitignore",
        b"\xef\xbb\xbfa.wq\r\nb.wq\r\n\xff\xfe\nc.wq\r\nd.wq   \ne.wq",
    );
    for f in [
        "a.wq",
        "b.wq",
        "c.wq",
        "d.wq",
        "e.wq",
        "f.wq",
        "\u{feff}a.wq",
    ] {
        write(&root, f, b"x\n");
    }
    agree(
        &root,
        &["."],
        Visibility::Standard,
        None,
        &["f.wq", "\u{feff}a.wq"],
    );
}

#[test]
fn a_start_that_is_a_file_is_yielded_whatever_the_rules_say() {
    let (_d, root) = fixture();
    mkdir(&root, ".git");
    write(&root, ".gitignore", b"*.log\n");
    write(&root, "sub/.hidden.log", b"x\n");
    write(&root, "sub/a.rs", b"x\n");
    let t = rust_types();
    agree(
        &root,
        &["sub/.hidden.log", "sub"],
        Visibility::Standard,
        Some(&t),
        &["sub/.hidden.log", "sub/a.rs"],
    );
}

// ---------------------------------------------------------------------------
// Hostile ignore files, through fdwalk only: rows in
// data/walk_hostile_ignore_files.txt.

/// Opens `fifo` for writing after a while, so a walk blocked reading it
/// gets an end of file and the row fails instead of hanging (a walk that
/// never blocks never meets this writer: it opens without waiting for a
/// reader, and fails when there is none).
fn unblock_later(fifo: PathBuf) {
    use std::os::unix::fs::OpenOptionsExt;
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(5));
        let _ = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
            .open(&fifo);
    });
}

/// The files of the hostile rows' tree: a repository with `*.log` ignored.
const HOSTILE_TREE: [&str; 6] = [
    "top.rs",
    "gone.log",
    "sub/inner.rs",
    "sub/deeper/d.rs",
    "sub/deeper/gone.log",
    "other/o.rs",
];

fn make_hostile(root: &Path, at: &str, kind: &str) {
    let p = root.join(at);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    match kind {
        "fifo" => {
            nix::unistd::mkfifo(&p, nix::sys::stat::Mode::S_IRWXU).unwrap();
            unblock_later(p);
        }
        "devzero" => std::os::unix::fs::symlink("/dev/zero", &p).unwrap(),
        "dir" => std::fs::create_dir(&p).unwrap(),
        "big" => {
            let line = b"*.generated-pattern-line\n";
            let text: Vec<u8> = line.iter().copied().cycle().take(2 << 20).collect();
            std::fs::write(&p, text).unwrap();
        }
        "many" => {
            // One pattern over the bound, in a small file.
            let text: String = (0..=10_000).map(|i| format!("p{i}\n")).collect();
            std::fs::write(&p, text).unwrap();
        }
        "atlimit" => {
            // Exactly at the byte bound (usable): a pattern, then comments.
            let mut text = b"*.rs\n".to_vec();
            text.resize(1 << 20, b'#');
            std::fs::write(&p, text).unwrap();
        }
        "overlimit" => {
            let mut text = b"*.rs\n".to_vec();
            text.resize((1 << 20) + 1, b'#');
            std::fs::write(&p, text).unwrap();
        }
        "comments" => {
            // Three times as many comment lines as the pattern bound, and
            // a pattern: usable.
            let mut text: String = (0..30_000).map(|i| format!("# c{i}\n")).collect();
            text.push_str("*.rs\n");
            std::fs::write(&p, text).unwrap();
        }
        other => panic!("unknown hostile kind {other:?} in the data file"),
    }
}

#[test]
fn hostile_ignore_files_skip_their_directory_only_and_are_named() {
    let table = include_str!("data/walk_hostile_ignore_files.txt");
    let mut rows = 0;
    for line in table.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let cols: Vec<&str> = line.split_whitespace().collect();
        let [start, at, kind, expect] = cols[..] else {
            panic!("bad row {line:?}: want start, path, kind, expect");
        };
        rows += 1;
        let (_d, root) = fixture();
        mkdir(&root, ".git");
        write(&root, ".gitignore", b"*.log\n");
        for f in HOSTILE_TREE {
            write(&root, f, b"x\n");
        }
        if at.contains("/.git/") {
            mkdir(&root, at.split("/.git/").next().unwrap());
        }
        make_hostile(&root, at, kind);
        let ws = Workspace::open(&root).unwrap();
        let starts = starts_of(&ws, &[start]);
        let (found, unwalked) = fdwalk::files(&ws, &starts, Visibility::Standard, None);
        let found = rels(&root, &found);
        let notes = unwalked.notes(None);
        let under = |f: &str, dir: &str| dir == "." || f.starts_with(&format!("{dir}/"));
        let mut want: Vec<String> = match expect {
            "skip" => {
                // The directory holding the ignore file (the repository's
                // root for its exclude file).
                let skipped = match at.split_once("/.git/") {
                    Some((repo, _)) => repo.to_string(),
                    None => Path::new(at).parent().unwrap().display().to_string(),
                };
                assert_eq!(notes.len(), 1, "row {line:?}: {notes:?}");
                assert!(
                    notes[0].starts_with("1 directory not searched: ")
                        && notes[0].contains(&format!("{at} ")),
                    "row {line:?}: the note names {at}: {notes:?}"
                );
                HOSTILE_TREE
                    .iter()
                    .filter(|f| under(f, start) && !under(f, &skipped) && !f.ends_with(".log"))
                    .map(|f| f.to_string())
                    .collect()
            }
            "off" => {
                assert_eq!(notes.len(), 1, "row {line:?}: {notes:?}");
                assert!(
                    notes[0].starts_with("ignore files were not honoured") && notes[0].contains(at),
                    "row {line:?}: the note says why: {notes:?}"
                );
                HOSTILE_TREE
                    .iter()
                    .filter(|f| under(f, start))
                    .map(|f| f.to_string())
                    .collect()
            }
            other => panic!("row {line:?}: unknown expectation {other:?}"),
        };
        want.sort();
        assert_eq!(found, want, "row {line:?}\n{}", render(&root));
    }
    assert!(rows >= 10, "the data file lost its rows ({rows})");
}

// ---------------------------------------------------------------------------
// More named rows: links, names, what lies above the workspace.

/// A workspace whose `.git` is a symlink to a regular `gitdir:` file (a
/// worktree's `.git` file moved aside and linked back), the git dir's
/// `info/exclude` hiding `*.md`.
fn git_linked_to_a_gitdir_file() -> (tempfile::TempDir, PathBuf) {
    let (d, root) = fixture();
    let base = std::fs::canonicalize(d.path()).unwrap();
    let gd = base.join("gitdirs/wt");
    std::fs::create_dir_all(gd.join("info")).unwrap();
    std::fs::write(gd.join("commondir"), ".\n").unwrap();
    std::fs::write(gd.join("info/exclude"), "*.md\n").unwrap();
    std::fs::write(
        base.join("gitdirs/dot-git"),
        format!("gitdir: {}\n", gd.display()),
    )
    .unwrap();
    std::os::unix::fs::symlink(base.join("gitdirs/dot-git"), root.join(".git")).unwrap();
    write(&root, "a.md", b"x\n");
    write(&root, "b.rs", b"x\n");
    write(&root, "sub/c.md", b"x\n");
    (d, root)
}

/// ripgrep's walker stats `.git` through the link, sees a file, and reads
/// the exclude file its `gitdir:`/`commondir` lines lead to; fdwalk
/// (`ignore_files::git_exclude_path`, which looks at the link itself)
/// looks for `.git/info/exclude` and finds nothing.
#[test]
fn a_git_link_to_a_gitdir_file_reads_that_repositorys_exclude_file() {
    let (_d, root) = git_linked_to_a_gitdir_file();
    agree(&root, &["."], Visibility::Standard, None, &["b.rs"]);
}

/// The same repository seen from a start below its root (the exclude file
/// is then read with the directories above the start).
#[test]
fn a_git_link_to_a_gitdir_file_reads_its_exclude_file_from_a_start_below() {
    let (_d, root) = git_linked_to_a_gitdir_file();
    agree(&root, &["sub"], Visibility::Standard, None, &[]);
}

#[test]
fn a_git_link_to_a_directory_marks_a_repository() {
    let (d, root) = fixture();
    let base = std::fs::canonicalize(d.path()).unwrap();
    std::fs::create_dir_all(base.join("gitdirs/real/info")).unwrap();
    std::fs::write(base.join("gitdirs/real/info/exclude"), "*.md\n").unwrap();
    std::os::unix::fs::symlink(base.join("gitdirs/real"), root.join(".git")).unwrap();
    write(&root, ".gitignore", b"*.log\n");
    write(&root, "a.md", b"x\n");
    write(&root, "a.log", b"x\n");
    write(&root, "b.rs", b"x\n");
    agree(&root, &["."], Visibility::Standard, None, &["b.rs"]);
}

#[test]
fn links_are_not_yielded_and_a_linked_gitignore_is_read() {
    let (_d, root) = fixture();
    mkdir(&root, ".git");
    write(&root, "rules.txt", b"*.log\n");
    std::os::unix::fs::symlink("rules.txt", root.join(".gitignore")).unwrap();
    write(&root, "a.log", b"x\n");
    write(&root, "dir/b.rs", b"x\n");
    std::os::unix::fs::symlink("dir/b.rs", root.join("link.rs")).unwrap();
    std::os::unix::fs::symlink("dir", root.join("linkdir")).unwrap();
    std::os::unix::fs::symlink("nowhere", root.join("dangling.rs")).unwrap();
    agree(
        &root,
        &["."],
        Visibility::Standard,
        None,
        &["dir/b.rs", "rules.txt"],
    );
    agree(
        &root,
        &["."],
        Visibility::Everything,
        None,
        &["a.log", "dir/b.rs", "rules.txt"],
    );
}

#[test]
fn names_that_are_not_utf8_are_matched_as_ripgrep_matches_them() {
    use std::os::unix::ffi::OsStrExt;
    let (_d, root) = fixture();
    mkdir(&root, ".git");
    write(&root, ".gitignore", b"*.log\n");
    let odd = std::ffi::OsStr::from_bytes(b"caf\xe9.log");
    std::fs::write(root.join(odd), b"x\n").unwrap();
    let odd_rs = std::ffi::OsStr::from_bytes(b"caf\xe9.rs");
    std::fs::write(root.join(odd_rs), b"x\n").unwrap();
    let (fd, rf) = both(&root, &["."], Visibility::Standard, None);
    assert_eq!(fd, rf, "{}", render(&root));
    assert_eq!(rf.len(), 1, "only the .rs file: {rf:?}");
}

#[test]
fn ignore_files_above_the_workspace_root_apply_as_ripgrep_applies_them() {
    // The workspace is a directory inside a repository whose root (the
    // temp dir) is above the workspace root.
    let (d, root) = fixture();
    let base = std::fs::canonicalize(d.path()).unwrap();
    std::fs::create_dir_all(base.join(".git/info")).unwrap();
    std::fs::write(base.join(".git/info/exclude"), "*.md\n").unwrap();
    std::fs::write(base.join(".gitignore"), "*.log\nws/deep/\n").unwrap();
    std::fs::write(base.join(".ignore"), "*.tmp\n").unwrap();
    write(&root, "a.log", b"x\n");
    write(&root, "a.md", b"x\n");
    write(&root, "a.tmp", b"x\n");
    write(&root, "a.rs", b"x\n");
    write(&root, "deep/b.rs", b"x\n");
    agree(&root, &["."], Visibility::Standard, None, &["a.rs"]);
}

/// Hostile ignore files ripgrep's walker survives (a directory named
/// `.gitignore`, one over the size bound): both walkers leave out the same
/// directory, or stop honouring ignore files, and say the same.
#[test]
fn unusable_ignore_files_are_left_out_alike_by_both_walkers() {
    // (start, ignore file, kind, notes): usable files at the bounds give
    // no note.
    for (start, at, kind, notes) in [
        (".", "sub/.gitignore", "dir", 1),
        (".", "sub/.ignore", "dir", 1),
        (".", "sub/.gitignore", "big", 1),
        (".", "sub/deeper/.ignore", "big", 1),
        ("sub", "sub/.gitignore", "dir", 1),
        ("sub/deeper", "sub/.ignore", "big", 1),
        ("sub", "sub/deeper/.gitignore", "dir", 1),
        (".", "sub/.gitignore", "many", 1),
        ("sub", "sub/.ignore", "many", 1),
        (".", "sub/.gitignore", "overlimit", 1),
        (".", "sub/.gitignore", "atlimit", 0),
        ("sub", "sub/.ignore", "atlimit", 0),
        (".", "sub/.gitignore", "comments", 0),
        ("sub/deeper", "sub/.ignore", "comments", 0),
        ("sub/inner.rs", "sub/.gitignore", "dir", 1),
        ("sub/deeper/d.rs", "sub/.ignore", "many", 1),
    ] {
        let (_d, root) = fixture();
        mkdir(&root, ".git");
        write(&root, ".gitignore", b"*.log\n");
        for f in HOSTILE_TREE {
            write(&root, f, b"x\n");
        }
        make_hostile(&root, at, kind);
        let ws = Workspace::open(&root).unwrap();
        let starts = starts_of(&ws, &[start]);
        let (fd, fd_left) = fdwalk::files(&ws, &starts, Visibility::Standard, None);
        let (b, rf_left) = scope::walker(&starts, Visibility::Standard).unwrap();
        let mut rf: Vec<PathBuf> = b
            .build()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
            .map(|e| e.path().to_path_buf())
            .collect();
        rf.sort();
        let row = format!("{start} {at} {kind}");
        assert_eq!(rels(&root, &fd), rels(&root, &rf), "row {row}");
        assert_eq!(fd_left.notes(None), rf_left.notes(None), "row {row}");
        assert_eq!(fd_left.notes(None).len(), notes, "row {row}: notes");
        if notes == 0 {
            // The file was honoured: its `*.rs` hides sub's Rust files.
            assert!(
                !rels(&root, &fd)
                    .iter()
                    .any(|f| f.starts_with("sub/") && f.ends_with(".rs")),
                "row {row}: {:?}",
                rels(&root, &fd)
            );
        }
    }
}

#[test]
fn a_wide_directory_handed_out_in_batches_yields_what_ripgrep_yields() {
    // More files than one thread lists alone (fdwalk hands the rest out in
    // batches of 64), some ignored, some hidden, some whitelisted.
    let (_d, root) = fixture();
    mkdir(&root, ".git");
    write(&root, "wide/.gitignore", b"*.log\n!k7*.log\n");
    for i in 0..300 {
        let name = match i % 5 {
            0 => format!("wide/f{i}.rs"),
            1 => format!("wide/k{i}.log"),
            2 => format!("wide/.h{i}.rs"),
            3 => format!("wide/t{i}.txt"),
            _ => format!("wide/d{i}/in.rs"),
        };
        write(&root, &name, b"x\n");
    }
    for vis in [Visibility::Standard, Visibility::Everything] {
        for types in [None, Some(rust_types())] {
            let (fd, rf) = both(&root, &["."], vis, types.as_ref());
            assert_eq!(fd, rf, "{vis:?} types {}", types.is_some());
            assert!(rf.len() > 100, "{vis:?}: {}", rf.len());
        }
    }
}

#[test]
fn special_files_in_the_tree_are_not_yielded() {
    let (_d, root) = fixture();
    write(&root, "a.rs", b"x\n");
    nix::unistd::mkfifo(&root.join("pipe.rs"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let _sock = std::os::unix::net::UnixListener::bind(root.join("sock.rs")).unwrap();
    for vis in [Visibility::Standard, Visibility::Everything] {
        agree(&root, &["."], vis, None, &["a.rs"]);
    }
}

#[test]
fn hostile_ignore_files_in_ignored_or_hidden_directories_are_never_read() {
    // A directory the rules leave out is not listed, so its ignore files
    // are neither read nor reported, by either walker.
    let (_d, root) = fixture();
    mkdir(&root, ".git");
    write(&root, ".gitignore", b"gone/\n");
    write(&root, "a.rs", b"x\n");
    write(&root, "gone/b.rs", b"x\n");
    write(&root, ".hid/c.rs", b"x\n");
    make_hostile(&root, "gone/.gitignore", "dir");
    make_hostile(&root, ".hid/.ignore", "big");
    let ws = Workspace::open(&root).unwrap();
    let starts = starts_of(&ws, &["."]);
    let (fd, fd_left) = fdwalk::files(&ws, &starts, Visibility::Standard, None);
    let (b, rf_left) = scope::walker(&starts, Visibility::Standard).unwrap();
    let mut rf: Vec<PathBuf> = b
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .map(|e| e.path().to_path_buf())
        .collect();
    rf.sort();
    assert_eq!(rels(&root, &fd), vec!["a.rs".to_string()]);
    assert_eq!(rels(&root, &fd), rels(&root, &rf));
    assert!(fd_left.notes(None).is_empty(), "{:?}", fd_left.notes(None));
    assert!(rf_left.notes(None).is_empty(), "{:?}", rf_left.notes(None));
}

#[test]
fn showing_everything_never_reads_hostile_ignore_files_and_matches_ripgrep() {
    // With ignore files off neither walker opens them, so ripgrep's walker
    // can run on FIFOs and device links too.
    let table = include_str!("data/walk_hostile_ignore_files.txt");
    for line in table.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let cols: Vec<&str> = line.split_whitespace().collect();
        let [start, at, kind, _] = cols[..] else {
            panic!("bad row {line:?}");
        };
        let (_d, root) = fixture();
        mkdir(&root, ".git");
        write(&root, ".gitignore", b"*.log\n");
        for f in HOSTILE_TREE {
            write(&root, f, b"x\n");
        }
        if let Some((repo, _)) = at.split_once("/.git/") {
            mkdir(&root, repo);
        }
        make_hostile(&root, at, kind);
        let (fd, rf) = both(&root, &[start], Visibility::Everything, None);
        assert_eq!(fd, rf, "row {line:?}\n{}", render(&root));
    }
}

#[test]
fn a_git_file_longer_than_its_first_line_bound_reads_as_ripgrep_reads_it() {
    // A `.git` file whose `gitdir:` line is short but which goes on past
    // 4 KiB: ripgrep reads the first line and honours the exclude file it
    // leads to. fdwalk refuses the file as over its 4096-byte bound for a
    // link file and leaves the whole repository out.
    let (d, root) = fixture();
    let base = std::fs::canonicalize(d.path()).unwrap();
    let gd = base.join("gitdirs/wt");
    std::fs::create_dir_all(gd.join("info")).unwrap();
    std::fs::write(gd.join("commondir"), ".\n").unwrap();
    std::fs::write(gd.join("info/exclude"), "*.md\n").unwrap();
    let mut text = format!("gitdir: {}\n", gd.display()).into_bytes();
    text.resize(5000, b'#');
    write(&root, "sm/.git", &text);
    write(&root, "sm/a.md", b"x\n");
    write(&root, "sm/b.rs", b"x\n");
    agree(&root, &["."], Visibility::Standard, None, &["sm/b.rs"]);
}

/// Every file a walk with `threads` threads lets through, sorted.
fn fdwalk_threads(ws: &Workspace, starts: &[Start], threads: usize) -> Vec<PathBuf> {
    let walk = fdwalk::Walk::new(ws, starts, Visibility::Standard, None).threads(threads);
    let found = std::sync::Mutex::new(Vec::new());
    walk.run(|| {
        let found = &found;
        move |v: fdwalk::Visit<'_>| {
            if let fdwalk::Visit::File(e) = v {
                found.lock().unwrap().push(e.path().to_path_buf());
            }
            fdwalk::Flow::Continue
        }
    });
    let mut found = found.into_inner().unwrap();
    found.sort();
    found
}

#[test]
fn any_number_of_threads_yields_what_ripgrep_yields_on_a_bushy_tree() {
    // Many small directories, nested repositories and ignore files at
    // several levels: work handed between threads is neither lost nor
    // walked twice.
    let (_d, root) = fixture();
    mkdir(&root, ".git");
    write(&root, ".gitignore", b"*.log\n");
    for a in 0..12 {
        if a % 4 == 0 {
            mkdir(&root, &format!("d{a}/.git"));
        }
        if a % 3 == 0 {
            write(&root, &format!("d{a}/.gitignore"), b"!keep.log\nb1/\n");
        }
        for b in 0..6 {
            for c in 0..4 {
                let dir = format!("d{a}/b{b}/c{c}");
                write(&root, &format!("{dir}/x.rs"), b"x\n");
                write(&root, &format!("{dir}/keep.log"), b"x\n");
                if c == 0 {
                    write(&root, &format!("{dir}/.ignore"), b"x.rs\n");
                }
            }
        }
    }
    // Wide directories, listed by one thread and handed out in batches.
    for i in 0..400 {
        write(&root, &format!("w/f{i}.rs"), b"x\n");
        write(&root, &format!("d3/w/f{i}.log"), b"x\n");
    }
    let ws = Workspace::open(&root).unwrap();
    let starts = starts_of(&ws, &["."]);
    let want = reference(&starts, Visibility::Standard, None);
    assert!(want.len() > 700, "{}", want.len());
    for threads in [1, 2, 3, 8, 16] {
        for _ in 0..3 {
            let got = fdwalk_threads(&ws, &starts, threads);
            assert_eq!(rels(&root, &got), rels(&root, &want), "{threads} threads");
        }
    }
}

/// A nested repository whose `.git` file leads (`gitdir:`) to a git dir
/// outside the workspace: the fixture, the git dir.
fn linked_repo() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let (d, root) = fixture();
    let base = std::fs::canonicalize(d.path()).unwrap();
    let gd = base.join("gitdirs/sm");
    std::fs::create_dir_all(gd.join("info")).unwrap();
    mkdir(&root, ".git");
    write(&root, ".gitignore", b"*.log\n");
    write(&root, "top.rs", b"x\n");
    write(&root, "other/o.rs", b"x\n");
    write(&root, "sm/in.rs", b"x\n");
    write(
        &root,
        "sm/.git",
        format!("gitdir: {}\n", gd.display()).as_bytes(),
    );
    (d, root, gd)
}

#[test]
fn a_fifo_where_a_git_file_leads_skips_that_repository_only() {
    for (file, named) in [("commondir", "commondir"), ("info/exclude", "info/exclude")] {
        let (_d, root, gd) = linked_repo();
        if file != "commondir" {
            std::fs::write(gd.join("commondir"), ".\n").unwrap();
        }
        make_hostile(&gd, file, "fifo");
        let ws = Workspace::open(&root).unwrap();
        let starts = starts_of(&ws, &["."]);
        let (found, left) = fdwalk::files(&ws, &starts, Visibility::Standard, None);
        assert_eq!(
            rels(&root, &found),
            vec!["other/o.rs".to_string(), "top.rs".to_string()],
            "{file}"
        );
        let notes = left.notes(None);
        assert_eq!(notes.len(), 1, "{file}: {notes:?}");
        assert!(
            notes[0].starts_with("1 directory not searched: sm/.git leads to ")
                && notes[0].contains(&gd.display().to_string())
                && notes[0].contains(&format!("{named}, which is not a regular file")),
            "{file}: the note names sm and {named}: {notes:?}"
        );
    }
}

#[test]
fn a_git_that_is_a_fifo_or_a_device_link_marks_a_repository_and_is_not_read() {
    for kind in ["fifo", "devzero"] {
        let (_d, root) = fixture();
        mkdir(&root, ".git");
        write(&root, ".gitignore", b"*.rs\n");
        write(&root, "top.rs", b"x\n");
        write(&root, "sm/in.rs", b"x\n");
        make_hostile(&root, "sm/.git", kind);
        let (fd, rf) = both(&root, &["."], Visibility::Standard, None);
        assert_eq!(fd, rf, "{kind}");
        assert_eq!(rf, vec!["sm/in.rs".to_string()], "{kind}");
    }
}

/// The environment variable that makes
/// [`the_global_excludes_file_applies_alike`] the child: the workspace root.
const GLOBAL_CHILD: &str = "WRENCH_WALK_EQ_GLOBAL_ROOT";

/// The global git excludes file (`core.excludesFile`), read from the
/// user's git config on both sides: set up in a child process of this test
/// binary (its own HOME, XDG_CONFIG_HOME, GIT_CONFIG_GLOBAL and working
/// directory), so nothing leaks into the other tests.
#[test]
fn the_global_excludes_file_applies_alike() {
    if let Some(root) = std::env::var_os(GLOBAL_CHILD) {
        let root = PathBuf::from(root);
        // Outside any repository the global file does not apply; inside
        // one it does, anchored patterns relative to the working
        // directory (the repository's root here).
        agree(
            &root,
            &["."],
            Visibility::Standard,
            None,
            &[
                "a.bak",
                "anch.tmp",
                "repo/keep.bak",
                "repo/sub/anch.tmp",
                "repo/sub/y.txt",
            ],
        );
        agree(
            &root,
            &["repo/sub"],
            Visibility::Standard,
            None,
            &["repo/sub/anch.tmp", "repo/sub/y.txt"],
        );
        return;
    }
    let (d, root) = fixture();
    let base = std::fs::canonicalize(d.path()).unwrap();
    std::fs::write(
        base.join("global-ignore"),
        "*.bak\n/anch.tmp\nsub/*.rs\n!keep.bak\n",
    )
    .unwrap();
    std::fs::write(
        base.join("gitconfig"),
        format!(
            "[core]\n\texcludesFile = {}\n",
            base.join("global-ignore").display()
        ),
    )
    .unwrap();
    std::fs::create_dir_all(base.join("home")).unwrap();
    for f in [
        "a.bak",
        "anch.tmp",
        "repo/a.bak",
        "repo/keep.bak",
        "repo/anch.tmp",
        "repo/sub/anch.tmp",
        "repo/sub/x.rs",
        "repo/sub/y.txt",
    ] {
        write(&root, f, b"x\n");
    }
    mkdir(&root, "repo/.git");
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "the_global_excludes_file_applies_alike",
            "--test-threads=1",
        ])
        .env(GLOBAL_CHILD, &root)
        .env("HOME", base.join("home"))
        .env("XDG_CONFIG_HOME", base.join("home/.config"))
        .env("GIT_CONFIG_GLOBAL", base.join("gitconfig"))
        .env("GIT_CONFIG_SYSTEM", base.join("home/no-system-config"))
        .current_dir(root.join("repo"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "the child failed:\n{text}");
    assert!(text.contains("1 passed"), "the child ran no test:\n{text}");
}

/// The bound every other walker relies on ([`scope::walker`] through
/// `wrench_core::ignore_files`) follows a `.git` link as ripgrep's walker
/// does: a `.git` that links to a `gitdir:` file whose `commondir` is a
/// FIFO makes ripgrep's walker block opening it, so the start's ignore
/// files must be refused (same root cause as
/// [`a_git_link_to_a_gitdir_file_reads_that_repositorys_exclude_file`]).
#[test]
fn a_git_link_to_a_gitdir_file_leading_to_a_fifo_is_refused_before_a_walk() {
    let (d, root) = fixture();
    let base = std::fs::canonicalize(d.path()).unwrap();
    let gd = base.join("gitdirs/wt");
    std::fs::create_dir_all(&gd).unwrap();
    nix::unistd::mkfifo(&gd.join("commondir"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    std::fs::write(
        base.join("gitdirs/dot-git"),
        format!("gitdir: {}\n", gd.display()),
    )
    .unwrap();
    std::os::unix::fs::symlink(base.join("gitdirs/dot-git"), root.join(".git")).unwrap();
    write(&root, "a.rs", b"x\n");
    let why = wrench_core::ignore_files::dir_unusable_why(&root);
    assert!(
        why.as_deref().is_some_and(|w| w.contains("commondir")),
        "the FIFO commondir behind the .git link is not refused: {why:?}"
    );
}

#[test]
fn no_starts_yield_nothing() {
    // ripgrep's walker needs a start (`scope::walker` gives None); fdwalk
    // given none walks nothing and leaves nothing out.
    let (_d, root) = fixture();
    write(&root, "a.rs", b"x\n");
    let ws = Workspace::open(&root).unwrap();
    assert!(scope::walker(&[], Visibility::Standard).is_none());
    for vis in [Visibility::Standard, Visibility::Everything] {
        let (found, left) = fdwalk::files(&ws, &[], vis, None);
        assert!(found.is_empty(), "{found:?}");
        assert!(left.notes(None).is_empty());
    }
}

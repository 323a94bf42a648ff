//! What undoing a range of checkpoints means, path by path: the state to
//! go back to (the before-state in the oldest checkpoint of the range that
//! touched the path) and the state wrench last left there (the after-state
//! in the newest), which the disk must still show unless `force`.

use crate::config::CheckpointsConfig;
use crate::hook::close_open;
use crate::record::{Checkpoint, State};
use crate::store::Store;
use crate::tree::{lstat_beneath, read_beneath, read_link_beneath};
use globset::{Glob, GlobSet, GlobSetBuilder};
use std::collections::BTreeMap;
use wrench_core::{Context, ToolError, ToolResult};
use wrench_permissions::Workspace;

/// Longest diff shown for one file, in lines.
pub const MAX_DIFF_LINES: usize = 200;

/// One path to restore.
#[derive(Debug, Clone)]
pub struct Item {
    /// Relative to the workspace root, `/`-separated (as in [`crate::Entry`]).
    pub path: String,
    /// The state before the range.
    pub to: State,
    /// The state the newest checkpoint of the range left (None: unknown).
    pub expected: Option<State>,
    /// The newest checkpoint of the range that touched the path.
    pub last: u64,
}

/// The restore of every checkpoint from `from` on.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The oldest checkpoint undone (its id).
    pub from: u64,
    /// The closed checkpoints undone, ascending by id (`from` first).
    pub checkpoints: Vec<Checkpoint>,
    /// Every path they touched that the path filter lets through, sorted.
    pub items: Vec<Item>,
}

/// Which checkpoint a call starts from: `to` (an id), else the `steps`-th
/// newest (default 1).
pub fn pick_from(all: &[Checkpoint], to: Option<&str>, steps: Option<u64>) -> ToolResult<u64> {
    let newest: Vec<String> = all.iter().rev().take(5).map(Checkpoint::name).collect();
    let known = if newest.is_empty() {
        "there are no checkpoints yet in this workspace".to_string()
    } else {
        format!("the newest are {}", newest.join(", "))
    };
    match (to, steps) {
        (Some(_), Some(_)) => Err(ToolError::invalid_args(
            "give either `to` (a checkpoint id) or `steps` (how many to undo), not both",
        )),
        (Some(t), None) => {
            let id = crate::record::parse_id(t).ok_or_else(|| {
                ToolError::invalid_args(format!(
                    "{:?} is not a checkpoint id: ids look like cp-12 (see `wrench checkpoints`)",
                    wrench_core::frame::echo(t)
                ))
            })?;
            if all.iter().any(|c| c.id == id) {
                Ok(id)
            } else {
                Err(ToolError::not_found(format!(
                    "there is no checkpoint cp-{id} (it was pruned or never taken); {known}"
                )))
            }
        }
        (None, steps) => {
            let n = steps.unwrap_or(1);
            if n == 0 {
                return Err(ToolError::invalid_args(
                    "steps must be 1 or more (how many of the newest checkpoints to undo)",
                ));
            }
            let count = all.len() as u64;
            if n > count {
                return Err(ToolError::invalid_args(format!(
                    "only {count} checkpoint(s) exist, so {n} steps cannot be undone; {known}"
                )));
            }
            let idx = usize::try_from(count - n).unwrap_or(0);
            Ok(all[idx].id)
        }
    }
}

/// Globs on relative paths; a plain path also covers what lies under it.
pub fn path_filter(globs: &[String]) -> ToolResult<Option<GlobSet>> {
    if globs.is_empty() {
        return Ok(None);
    }
    let mut b = GlobSetBuilder::new();
    for g in globs {
        let g = g.trim_start_matches("./").trim_end_matches('/');
        for pat in [g.to_string(), format!("{g}/**")] {
            let glob = Glob::new(&pat).map_err(|e| {
                ToolError::invalid_args(format!("paths: {g:?} is not a valid glob ({e})"))
            })?;
            b.add(glob);
        }
    }
    b.build()
        .map(Some)
        .map_err(|e| ToolError::invalid_args(format!("paths: {e}")))
}

/// The restore plan. With `close`, open checkpoints are closed first (a
/// background job's changes so far join its checkpoint); a call inside a
/// checkpoint of its own must not, or it would close that one.
pub fn plan(
    ctx: &Context,
    cfg: &CheckpointsConfig,
    close: bool,
    to: Option<&str>,
    steps: Option<u64>,
    paths: &[String],
) -> ToolResult<Plan> {
    let filter = path_filter(paths)?;
    let mut store = Store::open(ctx, cfg.clone())?;
    if close {
        let ws = Workspace::open(&ctx.root)?;
        close_open(ctx, &ws, &mut store, None, true, None);
    }
    let all: Vec<Checkpoint> = store.all()?.into_iter().filter(|c| !c.open).collect();
    let from = pick_from(&all, to, steps)?;
    let checkpoints: Vec<Checkpoint> = all.into_iter().filter(|c| c.id >= from).collect();
    let items = items(&checkpoints, filter.as_ref());
    Ok(Plan {
        from,
        checkpoints,
        items,
    })
}

/// Per path the checkpoints (ascending) touched: the before-state in the
/// oldest, the after-state in the newest.
pub fn items(checkpoints: &[Checkpoint], filter: Option<&GlobSet>) -> Vec<Item> {
    let mut items: BTreeMap<String, Item> = BTreeMap::new();
    for cp in checkpoints {
        for e in &cp.entries {
            if filter.is_some_and(|f| !f.is_match(&e.path)) {
                continue;
            }
            items
                .entry(e.path.clone())
                .and_modify(|i| {
                    i.expected = e.after.clone();
                    i.last = cp.id;
                })
                .or_insert_with(|| Item {
                    path: e.path.clone(),
                    to: e.before.clone(),
                    expected: e.after.clone(),
                    last: cp.id,
                });
        }
    }
    items.into_values().collect()
}

/// A path's state on disk now and its bytes (not stored).
pub fn current(ws: &Workspace, rel: &str, max: u64) -> (State, Option<Vec<u8>>) {
    match lstat_beneath(ws, rel) {
        Ok(None) => (State::Absent, None),
        Ok(Some(m)) if m.file_type().is_symlink() => match read_link_beneath(ws, rel) {
            Some(target) => {
                use sha2::Digest;
                let st = State::Symlink {
                    sha256: hex::encode(sha2::Sha256::digest(&target)),
                    size: target.len() as u64,
                };
                (st, Some(target))
            }
            None => (
                State::Other {
                    what: "a symlink that could not be read".into(),
                },
                None,
            ),
        },
        Ok(Some(m)) if m.is_dir() => {
            use std::os::unix::fs::MetadataExt;
            (
                State::Dir {
                    mode: m.mode() & 0o7777,
                },
                None,
            )
        }
        Ok(Some(m)) if !m.is_file() => (
            State::Other {
                what: "not a regular file".into(),
            },
            None,
        ),
        Ok(Some(m)) => match read_beneath(ws, rel, max) {
            Some((bytes, meta)) => {
                use sha2::Digest;
                use std::os::unix::fs::MetadataExt;
                let st = State::File {
                    sha256: hex::encode(sha2::Sha256::digest(&bytes)),
                    size: meta.len(),
                    mode: meta.mode() & 0o7777,
                };
                (st, Some(bytes))
            }
            None => {
                use std::os::unix::fs::MetadataExt;
                (
                    State::Unstored {
                        size: m.len(),
                        mode: m.mode() & 0o7777,
                        why: "too large to compare".into(),
                    },
                    None,
                )
            }
        },
        Err(e) => (
            State::Other {
                what: format!("not reachable inside the root ({e})"),
            },
            None,
        ),
    }
}

/// The content of a state from the store (None: absent or not kept).
pub fn content(store: &Store, s: &State) -> Option<Vec<u8>> {
    s.blob().and_then(|h| store.get(h).ok())
}

/// How long one diff may refine before it is given coarser.
pub const DIFF_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(300);

/// A unified diff of `path` from `old` to `new` (None: absent), cut at
/// [`MAX_DIFF_LINES`]; binary content is named, not shown.
pub fn unified(path: &str, old: Option<&[u8]>, new: Option<&[u8]>) -> String {
    let text = |b: Option<&[u8]>| -> Option<String> {
        match b {
            None => Some(String::new()),
            Some(b) if b.contains(&0) => None,
            Some(b) => String::from_utf8(b.to_vec()).ok(),
        }
    };
    let (Some(a), Some(b)) = (text(old), text(new)) else {
        return format!(
            "Binary file {path} differs ({} → {} bytes)\n",
            old.map_or(0, <[u8]>::len),
            new.map_or(0, <[u8]>::len)
        );
    };
    // An empty file made or removed has no line to show: name the change.
    if a.is_empty() && b.is_empty() && old.is_some() != new.is_some() {
        return if new.is_some() {
            format!("{path}: created, empty\n")
        } else {
            format!("{path}: deleted, was empty\n")
        };
    }
    let from = if old.is_some() {
        format!("a/{path}")
    } else {
        "/dev/null".into()
    };
    let to = if new.is_some() {
        format!("b/{path}")
    } else {
        "/dev/null".into()
    };
    // Secrets are found on each whole version and masked before diffing: a
    // diff shows pieces, and a key's body without its header would escape a
    // scrub of the pieces. Past the deadline the diff is coarser, never wrong.
    let r = wrench_core::redact::Redactor::global();
    let (a_masked, b_masked) = (r.scrub(&a), r.scrub(&b));
    if a_masked == b_masked && a != b {
        return format!("{path}: changed only inside a masked secret (content not shown)\n");
    }
    let (a, b) = (a_masked, b_masked);
    let d = similar::TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(a.as_ref(), b.as_ref());
    let full = d
        .unified_diff()
        .context_radius(3)
        .header(&from, &to)
        .to_string();
    let mut out = String::new();
    for (i, line) in full.split_inclusive('\n').enumerate() {
        if i >= MAX_DIFF_LINES {
            out.push_str(&format!("… diff cut at {MAX_DIFF_LINES} lines\n"));
            break;
        }
        out.push_str(line);
        if !line.ends_with('\n') {
            out.push_str("\n\\ No newline at end of file\n");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Entry, Scope};
    use proptest::prelude::*;

    #[test]
    fn an_empty_file_made_or_removed_is_named_in_the_diff() {
        assert_eq!(unified("x", None, Some(b"")), "x: created, empty\n");
        assert_eq!(unified("x", Some(b""), None), "x: deleted, was empty\n");
        assert!(unified("x", None, Some(b"a\n")).contains("+a"));
    }

    fn file(n: u8) -> State {
        if n == 0 {
            State::Absent
        } else {
            State::File {
                sha256: format!("{n:064x}"),
                size: u64::from(n),
                mode: 0o644,
            }
        }
    }

    /// A history of calls, each changing some of three paths to a new
    /// version (0: deleted), recorded as checkpoints the way the hook
    /// records them (before = the version then, after = the new one).
    fn history(steps: &[Vec<(usize, u8)>]) -> (Vec<Checkpoint>, Vec<[u8; 3]>) {
        let mut disk = [1u8, 2, 3];
        let mut states = vec![disk];
        let mut cps = Vec::new();
        for (i, changes) in steps.iter().enumerate() {
            let mut entries = Vec::new();
            for &(p, v) in changes {
                if disk[p] == v || entries.iter().any(|e: &Entry| e.path == format!("p{p}")) {
                    continue;
                }
                entries.push(Entry {
                    path: format!("p{p}"),
                    before: file(disk[p]),
                    after: Some(file(v)),
                });
                disk[p] = v;
            }
            states.push(disk);
            cps.push(Checkpoint {
                id: i as u64 + 1,
                call_id: String::new(),
                tool: "t".into(),
                session: "s".into(),
                time: 0,
                scope: Scope::Files,
                open: false,
                background: false,
                pgid: None,
                partial: vec![],
                entries,
            });
        }
        (cps, states)
    }

    proptest! {
        #[test]
        fn undoing_from_a_checkpoint_restores_every_path_to_its_state_before_it(
            steps in prop::collection::vec(prop::collection::vec((0usize..3, 0u8..5), 0..4), 1..8),
            k in 0usize..8,
        ) {
            let (cps, states) = history(&steps);
            let k = k % cps.len();
            let range = &cps[k..];
            let now = states[states.len() - 1];
            let target = states[k];
            let items = items(range, None);
            for p in 0..3 {
                let path = format!("p{p}");
                match items.iter().find(|i| i.path == path) {
                    Some(i) => {
                        prop_assert_eq!(&i.to, &file(target[p]));
                        prop_assert_eq!(i.expected.as_ref(), Some(&file(now[p])));
                    }
                    // Untouched by the range: already as it was before it.
                    None => prop_assert_eq!(target[p], now[p]),
                }
            }
        }
    }

    #[test]
    fn a_path_filter_keeps_only_matching_paths_and_what_is_under_a_directory() {
        let f = path_filter(&["src".into(), "*.md".into()])
            .unwrap()
            .unwrap();
        assert!(f.is_match("src/a.rs") && f.is_match("src") && f.is_match("README.md"));
        assert!(!f.is_match("srcx/a.rs") && !f.is_match("lib/a.rs"));
        assert!(path_filter(&["[".into()]).is_err());
    }
}

//! `ls`: the entries of one directory, with sizes.

use crate::read::human_size;
use crate::scope::{self, PathGlob, ReadFilter};
use nix::dir::{Dir, Type};
use nix::fcntl::AtFlags;
use nix::sys::stat::{SFlag, fstatat};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::os::fd::OwnedFd;
use std::path::Path;
use wrench_core::{
    Access, ActionPlan, Authorized, Context, Effect, Tool, ToolError, ToolOutput, ToolResult,
    ToolSpec, trailer,
};

/// Entries listed at most (then a trailer).
pub const LS_MAX_ENTRIES: usize = 1000;

/// Arguments of `ls`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LsArgs {
    /// Directory, relative to the workspace root (default: the root).
    #[serde(default, alias = "file_path", skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Globs of entry names to leave out (e.g. `["*.log", "target"]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignore: Vec<String>,
}

/// One listed entry.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LsEntry {
    pub name: String,
    /// `file`, `dir`, `symlink` or `other`.
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

/// Typed output of `ls`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LsView {
    pub path: String,
    pub entries: Vec<LsEntry>,
    pub total: usize,
    pub truncated: bool,
}

/// The `ls` tool.
pub struct Ls;

const DESCRIPTION: &str = "List one directory: directories first (with a trailing `/`), then files with their sizes; symlinks end in `@`. \
Shows every entry, hidden and gitignored ones too (unlike glob and grep); `ignore` takes globs of names to leave out. \
For a recursive view use `read` on the directory with `depth`, or `glob`.";

#[wrench_core::async_trait]
impl Tool for Ls {
    type Args = LsArgs;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new::<LsArgs>("ls", Effect::ReadOnly, DESCRIPTION)
            .aliases(&["LS", "list_directory"])
            .positional(&["path"])
            .limit("LS_MAX_ENTRIES", LS_MAX_ENTRIES, "entries listed per call")
    }

    fn access(&self, args: &LsArgs, ctx: &Context) -> Access {
        Access::read(&ctx.root, args.path.as_deref().unwrap_or("."))
    }

    async fn plan(
        &self,
        a: &LsArgs,
        mut base: ActionPlan,
        ctx: &Context,
    ) -> ToolResult<ActionPlan> {
        scope::workspace(ctx)?.plan_read(&mut base, a.path.as_deref().unwrap_or("."))?;
        Ok(base)
    }

    async fn run(&self, a: LsArgs, auth: Authorized, ctx: &Context) -> ToolResult<ToolOutput> {
        let ws = scope::workspace(ctx)?;
        let p = a.path.as_deref().unwrap_or(".");
        let ignore = a
            .ignore
            .iter()
            .map(|g| PathGlob::new(g))
            .collect::<ToolResult<Vec<_>>>()?;
        let (f, r) = ws.open_read(p)?;
        let shown = r.display_rel();
        let reads = ReadFilter::new(&auth);
        let real_dir = if auth.has_read_rules() {
            ws.root().join(ws.real_rel_of(&f, p)?)
        } else {
            r.abs.clone()
        };
        let meta = f.metadata().map_err(|e| ToolError::from_io(&shown, &e))?;
        if !meta.is_dir() {
            return Err(ToolError::invalid_args(format!(
                "{shown} is a file, not a directory; use `read` to see it"
            )));
        }
        // List through the directory fd opened beneath the root: no path is
        // re-resolved, so nothing outside can be listed.
        let mut dir = Dir::from_fd(OwnedFd::from(f))
            .map_err(|e| ToolError::io(format!("{shown}: cannot list: {e}")))?;
        let mut names: Vec<(String, Option<Type>)> = Vec::new();
        for ent in dir.iter() {
            let Ok(ent) = ent else { continue };
            let name = ent.file_name().to_string_lossy().into_owned();
            if name == "." || name == ".." {
                continue;
            }
            if ignore.iter().any(|g| g.is_match(Path::new(&name)))
                || !reads.allows_both(&r.abs.join(&name), &real_dir.join(&name))
            {
                continue;
            }
            names.push((name, ent.file_type()));
        }
        let mut entries: Vec<LsEntry> = names
            .into_iter()
            .map(|(name, t)| {
                let st = fstatat(&dir, name.as_str(), AtFlags::AT_SYMLINK_NOFOLLOW).ok();
                let fmt = st.map(|s| SFlag::from_bits_truncate(s.st_mode) & SFlag::S_IFMT);
                let kind = match (fmt, t) {
                    (Some(m), _) if m == SFlag::S_IFDIR => "dir",
                    (Some(m), _) if m == SFlag::S_IFREG => "file",
                    (Some(m), _) if m == SFlag::S_IFLNK => "symlink",
                    (None, Some(Type::Directory)) => "dir",
                    (None, Some(Type::File)) => "file",
                    (None, Some(Type::Symlink)) => "symlink",
                    _ => "other",
                };
                let size = match (kind, st) {
                    ("file", Some(s)) => u64::try_from(s.st_size).ok(),
                    _ => None,
                };
                LsEntry {
                    // A hostile name (a newline, a bidi override, a frame tag)
                    // is shown escaped, never raw.
                    name: wrench_core::frame::echo(&name).into_owned(),
                    kind: kind.to_string(),
                    size,
                }
            })
            .collect();
        entries.sort_by(|x, y| (x.kind != "dir", &x.name).cmp(&(y.kind != "dir", &y.name)));
        let total = entries.len();
        let truncated = total > LS_MAX_ENTRIES;
        entries.truncate(LS_MAX_ENTRIES);
        let mut text = String::new();
        for e in &entries {
            match (e.kind.as_str(), e.size) {
                ("dir", _) => text.push_str(&format!("{}/\n", e.name)),
                ("symlink", _) => text.push_str(&format!("{}@\n", e.name)),
                (_, Some(s)) => text.push_str(&format!("{}  ({})\n", e.name, human_size(s))),
                _ => text.push_str(&format!("{}\n", e.name)),
            }
        }
        if total == 0 {
            text.push_str(&format!("{shown}/ is empty\n"));
        }
        if truncated {
            text.push_str(&trailer(
                LS_MAX_ENTRIES,
                Some(total),
                "entries",
                "pass `ignore` globs, or use glob with a pattern",
            ));
            text.push('\n');
        }
        Ok(reads.annotate(ToolOutput::text(text).with_data(&LsView {
            path: shown,
            entries,
            total,
            truncated,
        })))
    }
}

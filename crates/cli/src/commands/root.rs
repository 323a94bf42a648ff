//! `wrench root`: which directory is the workspace root, and why.

use super::{Ctx, code, fail};
use clap::Command;
use std::process::ExitCode;
use wrench_cli::{exit, out, root};

pub(super) fn command() -> Command {
    Command::new("root").about("Print the workspace root and why it is the root (--root, the git work tree above, or the current directory)")
}

pub(super) fn run(cx: &Ctx) -> ExitCode {
    let choice = match root::choose(cx.opts.root.as_deref()) {
        Ok(c) => c,
        Err(e) => return fail(&e, cx.json),
    };
    let base = choice.cwd_in_root();
    if cx.json {
        let v = serde_json::json!({
            "root": choice.root,
            "spelled": choice.spelled,
            "reason": match choice.reason {
                root::RootReason::Flag => "flag",
                root::RootReason::GitTop { .. } => "git",
                root::RootReason::CurrentDir { .. } => "cwd",
            },
            "why": choice.why(),
            "relative_paths_from": base.as_ref().map(|b| choice.root.join(b)),
        });
        out::json_line(v.to_string());
        return code(exit::OK);
    }
    let mut s = format!("{}\n", choice.root.display());
    s.push_str(&format!("why: {}\n", choice.why()));
    if choice.spelled != choice.root {
        s.push_str(&format!(
            "also spelled: {} (absolute paths through it are accepted)\n",
            choice.spelled.display()
        ));
    }
    match base {
        Some(b) if !b.as_os_str().is_empty() => s.push_str(&format!(
            "relative paths of `wrench TOOL` start at the current directory, {} ({} in the root)\n",
            choice.cwd.display(),
            b.display()
        )),
        Some(_) => {}
        None => {
            s.push_str("relative paths start at the root (the current directory is outside it)\n")
        }
    }
    out::stdout(s);
    code(exit::OK)
}

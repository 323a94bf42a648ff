//! Protected names: paths file tools never change, or change only after a
//! person says yes (even under `--mode yolo`). One table; the write path
//! refuses the `Refuse` entries, the gate asks for the `Ask` entries, and
//! `cargo xtask contract` lists them in docs/TOOLS.md.
//!
//! Matching is by path component, case-insensitively (`.VSCode/Tasks.json`
//! is `.vscode/tasks.json` on a case-insensitive file system), at any
//! depth (a nested project's `.vscode/` runs as well), on every path a
//! change plans: the name as given and the real path a symlink leads to,
//! whether the file exists yet or not.
//!
//! The line drawn: files that another program runs, or turns into a
//! command, without the person starting a project command — editors and
//! agents on open, git on commit, CI on push, direnv on `cd`, a dev
//! container on build — and files that make an *ordinary* command (any
//! `yarn`, `cargo` or `rustc`, even `--version`; `cd` with mise; `npm
//! install`; `./gradlew`) run or fetch a program or registry the file
//! names: package-manager and toolchain configuration (`.yarnrc.yml`'s
//! `yarnPath` and the `.yarn/releases/` it points to, `.npmrc`'s
//! `script-shell`/`node-options`/`registry`, `.cargo/config.toml`'s
//! `rustc-wrapper`/`runner`/`[source]`, `rust-toolchain.toml`'s `path`,
//! mise's `[hooks]`, `.tool-versions`' `path:` versions, `pip.conf`'s
//! index, a build wrapper's `distributionUrl`). Project files whose code
//! runs only when the person runs that project's own command
//! (`package.json` scripts, `Makefile`, `build.rs`) are not here
//! (protecting them would protect the whole project), nor are files that
//! only pick a version from a fixed source (`.python-version`, `.nvmrc`)
//! or that nothing reads from a project (`.pypirc` is read from `~`).
//! `.env` is a secret, not a config that runs: guard it with a
//! `read(**/.env)` deny rule. `.gitmodules` and git hook managers
//! (`.husky/`, `.pre-commit-config.yaml`, lefthook) are here: they decide
//! what code git fetches or runs on the next commit.

use std::ffi::OsStr;
use std::path::{Component, Path};

/// Name prefix of wrench's temp files (and rollback backups) next to a target.
pub const TEMP_PREFIX: &str = ".wrench-tmp-";

/// What the gate does with a change to a protected name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guard {
    /// File tools never change it (the write path refuses; approval cannot help).
    Refuse,
    /// Asked in every mode, yolo included; an allow rule whose path glob
    /// names the file (`--allow 'edit(.vscode/settings.json)'`) allows it.
    Ask,
}

/// How an entry matches a root-relative path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A directory (or file) with this name, and everything under it.
    Dir(&'static str),
    /// Two consecutive components (`.github/workflows`) and everything under them.
    SubDir(&'static str, &'static str),
    /// A file with this name, at any depth.
    File(&'static str),
    /// A file whose name ends with this suffix, at any depth.
    Suffix(&'static str),
    /// A file whose name starts with this prefix, at any depth.
    Prefix(&'static str),
}

/// One protected name.
#[derive(Debug, Clone, Copy)]
pub struct Protected {
    /// Which paths the entry matches.
    pub shape: Shape,
    /// What happens to a change of a matching path.
    pub guard: Guard,
    /// Who runs it, for the message and the contract.
    pub why: &'static str,
}

const fn p(shape: Shape, guard: Guard, why: &'static str) -> Protected {
    Protected { shape, guard, why }
}

/// Every protected name.
pub const PROTECTED: &[Protected] = &[
    p(
        Shape::Dir(".git"),
        Guard::Refuse,
        "git's internals (hooks, config, HEAD, refs, objects); use git itself to change them",
    ),
    p(
        Shape::Dir(".wrench"),
        Guard::Refuse,
        "wrench's own configuration and state; edit it outside wrench",
    ),
    p(
        Shape::Prefix(TEMP_PREFIX),
        Guard::Refuse,
        "wrench's temp files",
    ),
    p(
        Shape::File(".mcp.json"),
        Guard::Ask,
        "MCP servers an agent starts on open",
    ),
    p(
        Shape::Dir(".vscode"),
        Guard::Ask,
        "VS Code tasks, launch configs and settings (which name programs it runs)",
    ),
    p(
        Shape::Suffix(".code-workspace"),
        Guard::Ask,
        "VS Code workspace settings and tasks",
    ),
    p(
        Shape::Dir(".idea"),
        Guard::Ask,
        "JetBrains run configurations and settings",
    ),
    p(
        Shape::Dir(".zed"),
        Guard::Ask,
        "Zed tasks and language-server settings",
    ),
    p(
        Shape::Dir(".devcontainer"),
        Guard::Ask,
        "dev container build and lifecycle commands",
    ),
    p(
        Shape::File(".devcontainer.json"),
        Guard::Ask,
        "dev container build and lifecycle commands",
    ),
    p(
        Shape::File(".envrc"),
        Guard::Ask,
        "direnv runs it on entering the directory",
    ),
    p(
        Shape::Dir(".claude"),
        Guard::Ask,
        "Claude Code hooks, settings and MCP servers",
    ),
    p(
        Shape::Dir(".cursor"),
        Guard::Ask,
        "Cursor rules, hooks and MCP servers",
    ),
    p(
        Shape::Dir(".codex"),
        Guard::Ask,
        "Codex configuration and MCP servers",
    ),
    p(
        Shape::Dir(".gemini"),
        Guard::Ask,
        "Gemini CLI settings and MCP servers",
    ),
    p(
        Shape::Dir(".windsurf"),
        Guard::Ask,
        "Windsurf rules and workflows",
    ),
    p(
        Shape::SubDir(".github", "workflows"),
        Guard::Ask,
        "GitHub Actions workflows (run with the repository's secrets)",
    ),
    p(
        Shape::SubDir(".github", "actions"),
        Guard::Ask,
        "GitHub Actions local actions (run by workflows)",
    ),
    p(
        Shape::File(".gitlab-ci.yml"),
        Guard::Ask,
        "GitLab CI pipeline",
    ),
    p(Shape::Dir(".circleci"), Guard::Ask, "CircleCI pipeline"),
    p(
        Shape::File(".gitmodules"),
        Guard::Ask,
        "which repositories git fetches and checks out as submodules",
    ),
    p(
        Shape::Dir(".husky"),
        Guard::Ask,
        "git hooks husky runs on commit and push",
    ),
    p(
        Shape::File(".pre-commit-config.yaml"),
        Guard::Ask,
        "hooks pre-commit runs on commit",
    ),
    p(
        Shape::File("lefthook.yml"),
        Guard::Ask,
        "git hooks lefthook runs",
    ),
    p(
        Shape::File(".lefthook.yml"),
        Guard::Ask,
        "git hooks lefthook runs",
    ),
    p(
        Shape::File(".lfsconfig"),
        Guard::Ask,
        "the server git-lfs fetches from on checkout and pull",
    ),
    p(
        Shape::File(".yarnrc.yml"),
        Guard::Ask,
        "the yarn binary every yarn command runs (yarnPath), plugins and registries",
    ),
    p(
        Shape::SubDir(".yarn", "releases"),
        Guard::Ask,
        "the yarn binary a yarnPath names, run by every yarn command",
    ),
    p(
        Shape::SubDir(".yarn", "plugins"),
        Guard::Ask,
        "yarn plugins every yarn command loads",
    ),
    p(
        Shape::File(".yarnrc"),
        Guard::Ask,
        "the yarn binary every yarn 1 command runs (yarn-path) and its registry",
    ),
    p(
        Shape::File(".npmrc"),
        Guard::Ask,
        "npm's script shell, node options and registry",
    ),
    p(
        Shape::File(".pnpmfile.cjs"),
        Guard::Ask,
        "hooks pnpm runs on every install",
    ),
    p(
        Shape::File("bunfig.toml"),
        Guard::Ask,
        "scripts bun preloads and the registry it installs from",
    ),
    p(
        Shape::File(".bunfig.toml"),
        Guard::Ask,
        "scripts bun preloads and the registry it installs from",
    ),
    p(
        Shape::File("mise.toml"),
        Guard::Ask,
        "mise hooks run on cd, tasks, env and tool versions",
    ),
    p(
        Shape::File(".mise.toml"),
        Guard::Ask,
        "mise hooks run on cd, tasks, env and tool versions",
    ),
    p(
        Shape::File("mise.local.toml"),
        Guard::Ask,
        "mise hooks run on cd, tasks, env and tool versions",
    ),
    p(
        Shape::File(".mise.local.toml"),
        Guard::Ask,
        "mise hooks run on cd, tasks, env and tool versions",
    ),
    p(
        Shape::SubDir(".config", "mise"),
        Guard::Ask,
        "mise hooks run on cd, tasks, env and tool versions",
    ),
    p(
        Shape::File(".tool-versions"),
        Guard::Ask,
        "which tool binaries asdf and mise run (a `path:` version is any directory)",
    ),
    p(
        Shape::SubDir(".cargo", "config.toml"),
        Guard::Ask,
        "cargo's rustc wrapper, runners, aliases and registry sources",
    ),
    p(
        Shape::SubDir(".cargo", "config"),
        Guard::Ask,
        "cargo's rustc wrapper, runners, aliases and registry sources",
    ),
    p(
        Shape::File("rust-toolchain.toml"),
        Guard::Ask,
        "the toolchain every cargo and rustc runs (a `path` is any directory)",
    ),
    p(
        Shape::File("rust-toolchain"),
        Guard::Ask,
        "the toolchain every cargo and rustc runs",
    ),
    p(
        Shape::File("pip.conf"),
        Guard::Ask,
        "the package index pip installs from (a virtualenv's pip.conf applies to it)",
    ),
    p(
        Shape::File("pip.ini"),
        Guard::Ask,
        "the package index pip installs from",
    ),
    p(
        Shape::File("uv.toml"),
        Guard::Ask,
        "the package index and Python downloads uv uses",
    ),
    p(
        Shape::File("gradle-wrapper.properties"),
        Guard::Ask,
        "the Gradle distribution ./gradlew downloads and runs",
    ),
    p(
        Shape::Dir(".mvn"),
        Guard::Ask,
        "the Maven distribution ./mvnw downloads and the options every Maven run takes",
    ),
    p(
        Shape::File(".bazelrc"),
        Guard::Ask,
        "options every bazel command takes (--run_under, remote executors)",
    ),
    p(
        Shape::File(".exrc"),
        Guard::Ask,
        "commands vim and neovim run on open",
    ),
    p(
        Shape::File(".nvim.lua"),
        Guard::Ask,
        "commands neovim runs on open",
    ),
    p(
        Shape::File(".nvimrc"),
        Guard::Ask,
        "commands neovim runs on open",
    ),
    p(
        Shape::File(".dir-locals.el"),
        Guard::Ask,
        "Emacs variables (and eval forms) applied on open",
    ),
    // A workspace that is (or holds) a home directory: what runs in the
    // person's next shell, git or login, outside any sandbox.
    p(
        Shape::SubDir(".config", "wrench"),
        Guard::Refuse,
        "wrench's own configuration (permissions, hooks, MCP servers); edit it outside wrench",
    ),
    p(
        Shape::File(".bashrc"),
        Guard::Ask,
        "commands every interactive bash runs",
    ),
    p(
        Shape::File(".bash_profile"),
        Guard::Ask,
        "commands every login bash runs",
    ),
    p(
        Shape::File(".bash_login"),
        Guard::Ask,
        "commands every login bash runs",
    ),
    p(
        Shape::File(".bash_logout"),
        Guard::Ask,
        "commands bash runs on logout",
    ),
    p(
        Shape::File(".profile"),
        Guard::Ask,
        "commands every login shell runs",
    ),
    p(
        Shape::File(".zshrc"),
        Guard::Ask,
        "commands every interactive zsh runs",
    ),
    p(
        Shape::File(".zshenv"),
        Guard::Ask,
        "commands every zsh runs, scripts included",
    ),
    p(
        Shape::File(".zprofile"),
        Guard::Ask,
        "commands every login zsh runs",
    ),
    p(
        Shape::File(".zlogin"),
        Guard::Ask,
        "commands every login zsh runs",
    ),
    p(
        Shape::SubDir(".config", "fish"),
        Guard::Ask,
        "commands every fish shell runs",
    ),
    p(
        Shape::File(".gitconfig"),
        Guard::Ask,
        "git's user configuration (hooks path, fsmonitor, aliases, credential helpers)",
    ),
    p(
        Shape::SubDir(".config", "git"),
        Guard::Ask,
        "git's user configuration (hooks path, fsmonitor, aliases, credential helpers)",
    ),
    p(
        Shape::Dir(".ssh"),
        Guard::Ask,
        "ssh keys, authorized_keys and the ssh config (ProxyCommand runs programs)",
    ),
    p(
        Shape::SubDir(".local", "bin"),
        Guard::Ask,
        "programs found on PATH before the system's",
    ),
    p(
        Shape::SubDir(".config", "autostart"),
        Guard::Ask,
        "programs the desktop session starts on login",
    ),
    p(
        Shape::SubDir(".config", "systemd"),
        Guard::Ask,
        "user services systemd starts",
    ),
];

impl Protected {
    /// The entry as a pattern, for messages and the contract (`.vscode/`).
    pub fn pattern(&self) -> String {
        match self.shape {
            Shape::Dir(d) => format!("{d}/"),
            Shape::SubDir(a, b) => format!("{a}/{b}/"),
            Shape::File(f) => f.to_string(),
            Shape::Suffix(s) => format!("*{s}"),
            Shape::Prefix(s) => format!("{s}*"),
        }
    }

    fn matches(&self, comps: &[String]) -> bool {
        let last = comps.len().saturating_sub(1);
        comps.iter().enumerate().any(|(i, c)| match self.shape {
            Shape::Dir(d) => c == d,
            Shape::SubDir(a, b) => c == a && comps.get(i + 1).is_some_and(|n| n == b),
            Shape::File(f) => i == last && c == f,
            Shape::Suffix(s) => i == last && c.ends_with(s) && c.len() > s.len(),
            Shape::Prefix(s) => i == last && c.starts_with(s),
        })
    }
}

/// Components of a root-relative path, lowercased, `.`/`..`/root dropped
/// (paths reaching here are already normalized).
fn lower_components(rel: &Path) -> Vec<String> {
    rel.components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(lower(n)),
            _ => None,
        })
        .collect()
}

fn lower(n: &OsStr) -> String {
    n.to_string_lossy().to_lowercase()
}

/// The first protected entry `rel` (root-relative) falls under.
pub fn protected(rel: &Path) -> Option<&'static Protected> {
    let comps = lower_components(rel);
    if comps.is_empty() {
        return None;
    }
    PROTECTED.iter().find(|e| e.matches(&comps))
}

/// The git directory (by its shape, as git itself finds one:
/// [`wrench_process::sandbox::is_git_dir`]) that holds `abs`, when
/// one does below or at `root` and is not named `.git` (those are
/// protected by name). A `.git` *file* (`gitdir: gd`) makes `gd` the
/// repository's git directory; a bare repository committed in the tree is
/// one for any git run inside it. Either way its `hooks/` and `config` run
/// programs, so it is protected as `.git/` is. A few `lstat`s per ancestor.
pub fn git_dir_holding(root: &Path, abs: &Path) -> Option<std::path::PathBuf> {
    let mut cur = abs;
    loop {
        if !cur.starts_with(root) {
            return None;
        }
        let named_git = cur
            .file_name()
            .is_some_and(|n| n.eq_ignore_ascii_case(".git"));
        if !named_git && wrench_process::sandbox::is_git_dir(cur) {
            return Some(cur.to_path_buf());
        }
        if cur == root {
            return None;
        }
        cur = cur.parent()?;
    }
}

/// A sentence saying why `rel` is protected.
pub fn describe(rel: &Path, e: &Protected) -> String {
    format!(
        "{} is protected: {} holds {}",
        rel.display(),
        e.pattern(),
        e.why
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(p: &str) -> Option<Guard> {
        protected(Path::new(p)).map(|e| e.guard)
    }

    #[test]
    fn auto_run_configs_are_asked_at_any_depth_and_case() {
        for p in [
            ".mcp.json",
            ".MCP.JSON",
            "sub/.mcp.json",
            ".vscode/tasks.json",
            ".VSCode/Settings.json",
            ".vscode",
            ".github/workflows/ci.yml",
            ".GitHub/Workflows/x.yaml",
            ".envrc",
            ".devcontainer/devcontainer.json",
            ".claude/settings.json",
            "app.code-workspace",
            ".husky/pre-commit",
            ".bashrc",
            ".ZSHRC",
            ".profile",
            ".gitconfig",
            ".config/git/config",
            ".ssh/authorized_keys",
            ".ssh/config",
            ".local/bin/git",
            ".config/systemd/user/x.service",
            ".config/autostart/x.desktop",
            ".config/fish/config.fish",
        ] {
            assert_eq!(guard(p), Some(Guard::Ask), "{p}");
        }
    }

    #[test]
    fn git_internals_and_wrench_state_are_refused() {
        for p in [
            ".git/config",
            ".GIT/hooks/x",
            "a/.git/HEAD",
            ".wrench/x",
            "a/.wrench-tmp-1",
            ".config/wrench/config.toml",
            ".Config/Wrench/new.toml",
            ".config/wrench",
        ] {
            assert_eq!(guard(p), Some(Guard::Refuse), "{p}");
        }
    }

    #[test]
    fn look_alikes_are_not_protected() {
        for p in [
            "src/main.rs",
            "mcp.json",
            ".mcp.json.bak",
            "vscode/tasks.json",
            ".github/ISSUE_TEMPLATE/bug.md",
            "workflows/.github",
            ".envrc.example",
            ".env",
            ".code-workspace",
            "docs/.gitignore",
            ".gitignore",
            ".config/other/x",
            "bin/tool",
            "local/bin/x",
            "bashrc",
            ".bashrc.example",
            "ssh/config",
        ] {
            assert_eq!(guard(p), None, "{p}");
        }
    }
}

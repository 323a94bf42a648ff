//! `project_info`: what this workspace is — languages, version control, build
//! files and the commands that likely build, test and lint it.

use crate::git;
use crate::scope::{self, Visibility};
use ignore::WalkState;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Read as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use wrench_core::{
    Access, ActionPlan, Authorized, Context, Effect, Tool, ToolError, ToolOutput, ToolResult,
    ToolSpec,
};
use wrench_permissions::Workspace;

/// Files looked at at most when counting languages.
pub const PROJECT_INFO_MAX_FILES: usize = 50_000;
/// Languages listed at most.
pub const PROJECT_INFO_MAX_LANGUAGES: usize = 12;
/// Build files larger than this are not parsed for scripts or targets.
pub const PROJECT_INFO_MAX_BUILD_FILE_BYTES: u64 = 1024 * 1024;
/// Makefile targets listed at most.
const MAX_TARGETS: usize = 30;

/// `project_info` takes no arguments.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProjectInfoArgs {}

/// Files of one language.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LanguageCount {
    pub language: String,
    pub files: usize,
}

/// The version-control summary.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct VcsInfo {
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// Changed or untracked paths (from `git status`).
    pub dirty: usize,
}

/// Likely commands of one ecosystem.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Ecosystem {
    pub name: String,
    /// The build file it was found from.
    pub file: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lint: Option<String>,
    /// Scripts or targets defined in the build file.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub targets: Vec<String>,
}

/// Typed output of `project_info`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ProjectView {
    pub root: String,
    pub languages: Vec<LanguageCount>,
    pub files_counted: usize,
    pub files_capped: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vcs: Option<VcsInfo>,
    pub build_files: Vec<String>,
    pub ecosystems: Vec<Ecosystem>,
}

/// The `project_info` tool.
pub struct ProjectInfo;

const DESCRIPTION: &str = "Summarize the workspace: its root, the languages in it (files per language, gitignored files not counted), \
the git branch and number of changed files, the build files at the root (Cargo.toml, package.json, pyproject.toml, go.mod, Makefile, CMakeLists.txt, ...) \
and the likely build, test and lint commands of each ecosystem (package.json scripts and Makefile targets included). Call it first in an unfamiliar repository.";

const BUILD_FILES: &[&str] = &[
    "Cargo.toml",
    "package.json",
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "requirements.txt",
    "go.mod",
    "Makefile",
    "GNUmakefile",
    "CMakeLists.txt",
    "meson.build",
    "build.gradle",
    "build.gradle.kts",
    "pom.xml",
    "Gemfile",
    "composer.json",
    "deno.json",
    "tsconfig.json",
    "justfile",
    "Taskfile.yml",
    "flake.nix",
    "WORKSPACE",
    "MODULE.bazel",
];

#[wrench_core::async_trait]
impl Tool for ProjectInfo {
    type Args = ProjectInfoArgs;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new::<ProjectInfoArgs>("project_info", Effect::ReadOnly, DESCRIPTION)
            .limit(
                "PROJECT_INFO_MAX_FILES",
                PROJECT_INFO_MAX_FILES,
                "files looked at when counting languages",
            )
            .limit(
                "PROJECT_INFO_MAX_LANGUAGES",
                PROJECT_INFO_MAX_LANGUAGES,
                "languages listed",
            )
            .limit(
                "PROJECT_INFO_MAX_BUILD_FILE_BYTES",
                PROJECT_INFO_MAX_BUILD_FILE_BYTES,
                "largest build file parsed",
            )
    }

    fn access(&self, _args: &ProjectInfoArgs, ctx: &Context) -> Access {
        Access::read(&ctx.root, ".")
    }

    async fn plan(
        &self,
        _a: &ProjectInfoArgs,
        mut base: ActionPlan,
        ctx: &Context,
    ) -> ToolResult<ActionPlan> {
        scope::workspace(ctx)?.plan_read(&mut base, ".")?;
        Ok(base)
    }

    async fn run(
        &self,
        _a: ProjectInfoArgs,
        _auth: Authorized,
        ctx: &Context,
    ) -> ToolResult<ToolOutput> {
        let ws = scope::workspace(ctx)?;
        let root_start = scope::start(&ws, ".")?;
        let (languages, counted, capped) =
            tokio::task::spawn_blocking(move || count_languages(&root_start))
                .await
                .map_err(|e| ToolError::io(format!("project_info worker failed: {e}")))?;
        let vcs = vcs(&ws, ctx).await;
        let build_files: Vec<String> = BUILD_FILES
            .iter()
            .filter(|f| ws.metadata(f).map(|(m, _)| m.is_file()).unwrap_or(false))
            .map(|f| f.to_string())
            .collect();
        let ecosystems = ecosystems(&ws, &build_files);
        let view = ProjectView {
            root: ws.root().display().to_string(),
            languages,
            files_counted: counted,
            files_capped: capped,
            vcs,
            build_files,
            ecosystems,
        };
        Ok(ToolOutput::text(render(&view)).with_data(&view))
    }
}

fn language_of(ext: &str) -> Option<&'static str> {
    Some(match ext {
        "rs" => "Rust",
        "py" | "pyi" => "Python",
        "go" => "Go",
        "ts" | "tsx" | "mts" | "cts" => "TypeScript",
        "js" | "jsx" | "mjs" | "cjs" => "JavaScript",
        "c" | "h" => "C",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => "C++",
        "java" => "Java",
        "kt" | "kts" => "Kotlin",
        "scala" => "Scala",
        "rb" => "Ruby",
        "php" => "PHP",
        "cs" => "C#",
        "swift" => "Swift",
        "m" | "mm" => "Objective-C",
        "sh" | "bash" | "zsh" => "Shell",
        "lua" => "Lua",
        "zig" => "Zig",
        "ex" | "exs" => "Elixir",
        "erl" | "hrl" => "Erlang",
        "hs" => "Haskell",
        "ml" | "mli" => "OCaml",
        "dart" => "Dart",
        "r" | "R" => "R",
        "jl" => "Julia",
        "sql" => "SQL",
        "html" | "htm" => "HTML",
        "css" | "scss" | "sass" | "less" => "CSS",
        "vue" => "Vue",
        "svelte" => "Svelte",
        "md" | "markdown" | "rst" => "Markdown/docs",
        "proto" => "Protobuf",
        "nix" => "Nix",
        _ => return None,
    })
}

fn count_languages(start: &scope::Start) -> (Vec<LanguageCount>, usize, bool) {
    let counts: Mutex<BTreeMap<&'static str, usize>> = Mutex::new(BTreeMap::new());
    let seen = AtomicUsize::new(0);
    if let Some((b, _)) = scope::walker(std::slice::from_ref(start), Visibility::Standard) {
        b.build_parallel().run(|| {
            let counts = &counts;
            let seen = &seen;
            let mut flush = Flush {
                local: BTreeMap::new(),
                into: counts,
            };
            Box::new(move |ent| {
                let Ok(ent) = ent else {
                    return WalkState::Continue;
                };
                if !ent.file_type().is_some_and(|t| t.is_file()) {
                    return WalkState::Continue;
                }
                if seen.fetch_add(1, Ordering::Relaxed) >= PROJECT_INFO_MAX_FILES {
                    return WalkState::Quit;
                }
                let ext = ent
                    .path()
                    .extension()
                    .and_then(|e| e.to_str())
                    .unwrap_or("");
                if let Some(l) = language_of(ext) {
                    *flush.local.entry(l).or_default() += 1;
                }
                WalkState::Continue
            })
        });
    }
    let seen = seen.into_inner();
    let mut v: Vec<LanguageCount> = counts
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_iter()
        .map(|(l, n)| LanguageCount {
            language: l.to_string(),
            files: n,
        })
        .collect();
    v.sort_by(|a, b| {
        b.files
            .cmp(&a.files)
            .then_with(|| a.language.cmp(&b.language))
    });
    v.truncate(PROJECT_INFO_MAX_LANGUAGES);
    (
        v,
        seen.min(PROJECT_INFO_MAX_FILES),
        seen > PROJECT_INFO_MAX_FILES,
    )
}

/// Adds a worker's counts to the shared map when the worker ends.
struct Flush<'a> {
    local: BTreeMap<&'static str, usize>,
    into: &'a Mutex<BTreeMap<&'static str, usize>>,
}

impl Drop for Flush<'_> {
    fn drop(&mut self) {
        let mut g = self.into.lock().unwrap_or_else(|p| p.into_inner());
        for (k, v) in std::mem::take(&mut self.local) {
            *g.entry(k).or_default() += v;
        }
    }
}

async fn vcs(ws: &Workspace, ctx: &Context) -> Option<VcsInfo> {
    let args: Vec<String> = [
        "status",
        "--porcelain=v1",
        "--branch",
        "--untracked-files=normal",
        "--ignore-submodules=all",
        "--",
        ".",
    ]
    .map(String::from)
    .to_vec();
    let run = git::run_git(ws.root(), &args, ctx).await.ok()?;
    if !run.ok {
        return None;
    }
    let text = String::from_utf8_lossy(&run.stdout);
    let mut branch = None;
    let mut dirty = 0;
    for l in text.lines() {
        if let Some(b) = l.strip_prefix("## ") {
            let name = b.split("...").next().unwrap_or(b);
            let name = name.strip_prefix("No commits yet on ").unwrap_or(name);
            branch = Some(name.trim().to_string());
        } else if !l.is_empty() {
            dirty += 1;
        }
    }
    Some(VcsInfo {
        kind: "git".into(),
        branch,
        dirty,
    })
}

fn read_small(ws: &Workspace, p: &str) -> Option<String> {
    let (mut f, _) = ws.open_read(p).ok()?;
    let m = f.metadata().ok()?;
    if !m.is_file() || m.len() > PROJECT_INFO_MAX_BUILD_FILE_BYTES {
        return None;
    }
    let mut s = String::new();
    f.read_to_string(&mut s).ok()?;
    Some(s)
}

fn exists(ws: &Workspace, p: &str) -> bool {
    ws.metadata(p).is_ok()
}

fn ecosystems(ws: &Workspace, files: &[String]) -> Vec<Ecosystem> {
    let has = |f: &str| files.iter().any(|x| x == f);
    let mut out = Vec::new();
    if has("Cargo.toml") {
        out.push(Ecosystem {
            name: "rust".into(),
            file: "Cargo.toml".into(),
            build: Some("cargo build".into()),
            test: Some("cargo test".into()),
            lint: Some("cargo clippy --all-targets -- -D warnings".into()),
            targets: Vec::new(),
        });
    }
    if has("package.json") {
        let pm = if exists(ws, "pnpm-lock.yaml") {
            "pnpm"
        } else if exists(ws, "yarn.lock") {
            "yarn"
        } else if exists(ws, "bun.lockb") || exists(ws, "bun.lock") {
            "bun"
        } else {
            "npm"
        };
        let scripts: Vec<String> = read_small(ws, "package.json")
            .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
            .and_then(|v| {
                v.get("scripts")
                    .and_then(|s| s.as_object())
                    .map(|o| o.keys().cloned().collect())
            })
            .unwrap_or_default();
        let run = |s: &str| {
            scripts
                .iter()
                .any(|x| x == s)
                .then(|| format!("{pm} run {s}"))
        };
        out.push(Ecosystem {
            name: format!("node ({pm})"),
            file: "package.json".into(),
            build: run("build"),
            test: scripts
                .iter()
                .any(|x| x == "test")
                .then(|| format!("{pm} test")),
            lint: run("lint").or_else(|| run("typecheck")),
            targets: scripts,
        });
    }
    if has("pyproject.toml") || has("setup.py") || has("requirements.txt") {
        let file = ["pyproject.toml", "setup.py", "requirements.txt"]
            .into_iter()
            .find(|f| has(f))
            .unwrap_or("pyproject.toml");
        let py = read_small(ws, "pyproject.toml").unwrap_or_default();
        let lint = if py.contains("[tool.ruff") {
            Some("ruff check .".to_string())
        } else if py.contains("[tool.flake8") || exists(ws, ".flake8") {
            Some("flake8".to_string())
        } else if py.contains("[tool.mypy") {
            Some("mypy .".to_string())
        } else {
            None
        };
        out.push(Ecosystem {
            name: "python".into(),
            file: file.into(),
            build: has("pyproject.toml").then(|| "python -m build".to_string()),
            test: Some(if exists(ws, "tox.ini") {
                "tox".into()
            } else {
                "pytest".into()
            }),
            lint,
            targets: Vec::new(),
        });
    }
    if has("go.mod") {
        out.push(Ecosystem {
            name: "go".into(),
            file: "go.mod".into(),
            build: Some("go build ./...".into()),
            test: Some("go test ./...".into()),
            lint: Some("go vet ./...".into()),
            targets: Vec::new(),
        });
    }
    for mk in ["Makefile", "GNUmakefile"] {
        if has(mk) {
            let targets = make_targets(&read_small(ws, mk).unwrap_or_default());
            let t = |n: &str| targets.iter().any(|x| x == n).then(|| format!("make {n}"));
            out.push(Ecosystem {
                name: "make".into(),
                file: mk.into(),
                build: t("build")
                    .or_else(|| t("all"))
                    .or_else(|| Some("make".into())),
                test: t("test").or_else(|| t("check")),
                lint: t("lint").or_else(|| t("fmt")),
                targets,
            });
            break;
        }
    }
    if has("CMakeLists.txt") {
        out.push(Ecosystem {
            name: "cmake".into(),
            file: "CMakeLists.txt".into(),
            build: Some("cmake -S . -B build && cmake --build build".into()),
            test: Some("ctest --test-dir build".into()),
            lint: None,
            targets: Vec::new(),
        });
    }
    if has("pom.xml") {
        out.push(Ecosystem {
            name: "maven".into(),
            file: "pom.xml".into(),
            build: Some("mvn -q package -DskipTests".into()),
            test: Some("mvn -q test".into()),
            lint: None,
            targets: Vec::new(),
        });
    }
    if has("build.gradle") || has("build.gradle.kts") {
        let gw = if exists(ws, "gradlew") {
            "./gradlew"
        } else {
            "gradle"
        };
        out.push(Ecosystem {
            name: "gradle".into(),
            file: if has("build.gradle") {
                "build.gradle".into()
            } else {
                "build.gradle.kts".into()
            },
            build: Some(format!("{gw} build -x test")),
            test: Some(format!("{gw} test")),
            lint: Some(format!("{gw} check")),
            targets: Vec::new(),
        });
    }
    if has("justfile") {
        out.push(Ecosystem {
            name: "just".into(),
            file: "justfile".into(),
            build: Some("just --list".into()),
            ..Default::default()
        });
    }
    out
}

/// Explicit targets of a Makefile (no pattern rules, no special `.X` targets).
pub fn make_targets(text: &str) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for l in text.lines() {
        if l.starts_with(['\t', ' ', '#', '.']) {
            continue;
        }
        let Some((head, rest)) = l.split_once(':') else {
            continue;
        };
        if rest.starts_with('=') || head.contains('=') || head.contains('%') || head.contains('$') {
            continue;
        }
        for t in head.split_whitespace() {
            if !v.iter().any(|x| x == t) && v.len() < MAX_TARGETS {
                v.push(t.to_string());
            }
        }
    }
    v
}

fn render(v: &ProjectView) -> String {
    let mut t = format!("root: {}\n", v.root);
    if v.languages.is_empty() {
        t.push_str("languages: none recognized\n");
    } else {
        let langs: Vec<String> = v
            .languages
            .iter()
            .map(|l| format!("{} {}", l.language, l.files))
            .collect();
        t.push_str(&format!(
            "languages (files{}): {}\n",
            if v.files_capped {
                format!(", first {PROJECT_INFO_MAX_FILES} counted")
            } else {
                String::new()
            },
            langs.join(", ")
        ));
    }
    match &v.vcs {
        Some(g) => t.push_str(&format!(
            "vcs: git, branch {}, {} changed or untracked paths\n",
            g.branch.as_deref().unwrap_or("(detached)"),
            g.dirty
        )),
        None => t.push_str("vcs: none (not a git repository)\n"),
    }
    t.push_str(&format!(
        "build files: {}\n",
        if v.build_files.is_empty() {
            "none at the root".to_string()
        } else {
            v.build_files.join(", ")
        }
    ));
    if !v.ecosystems.is_empty() {
        t.push_str("likely commands:\n");
        for e in &v.ecosystems {
            let mut parts = Vec::new();
            for (k, c) in [("build", &e.build), ("test", &e.test), ("lint", &e.lint)] {
                if let Some(c) = c {
                    parts.push(format!("{k}: `{c}`"));
                }
            }
            t.push_str(&format!(
                "  {} ({}): {}\n",
                e.name,
                e.file,
                parts.join("; ")
            ));
            if !e.targets.is_empty() {
                t.push_str(&format!("    defined: {}\n", e.targets.join(", ")));
            }
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn make_targets_skips_variables_patterns_and_specials() {
        let mk = "CC := gcc\nall: build\nbuild test: x\n.PHONY: all\n%.o: %.c\n\techo hi\nlint:\nX = a:b\n";
        assert_eq!(make_targets(mk), vec!["all", "build", "test", "lint"]);
    }
}

//! Which language server handles a file: languages by extension, the built-in
//! server table, `[lsp.servers.NAME]` entries of the config, and a PATH lookup.
//! When nothing is found the error names the server to install and how.
//!
//! A server is never taken from the workspace: the PATH lookup skips relative
//! entries and directories inside the root (a cloned repository's
//! `node_modules/.bin`), and [`guard`] decides, before a server starts, what
//! of the workspace it would execute.

pub mod guard;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use wrench_core::{Context, ToolError, ToolResult};

/// A language family as the tools and the config name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    /// `.py`, `.pyi`.
    Python,
    /// `.ts`, `.tsx`, `.mts`, `.cts`.
    TypeScript,
    /// `.js`, `.jsx`, `.mjs`, `.cjs`.
    JavaScript,
    /// `.c`, and `.h` (taken as C).
    C,
    /// C++: `.cc`, `.cpp`, `.cxx`, `.c++`, `.hpp`, `.hh`, `.hxx`.
    Cpp,
    /// `.rs`.
    Rust,
    /// `.go`.
    Go,
}

impl Language {
    /// Every language wrench can route to a server.
    pub const ALL: [Language; 7] = [
        Language::Python,
        Language::TypeScript,
        Language::JavaScript,
        Language::C,
        Language::Cpp,
        Language::Rust,
        Language::Go,
    ];

    /// The name used in the config (`languages = ["python"]`).
    pub fn name(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::TypeScript => "typescript",
            Language::JavaScript => "javascript",
            Language::C => "c",
            Language::Cpp => "cpp",
            Language::Rust => "rust",
            Language::Go => "go",
        }
    }

    /// The language of a file, from its extension.
    pub fn of_path(path: &Path) -> Option<Language> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "py" | "pyi" => Language::Python,
            "ts" | "tsx" | "mts" | "cts" => Language::TypeScript,
            "js" | "jsx" | "mjs" | "cjs" => Language::JavaScript,
            "c" | "h" => Language::C,
            "cc" | "cpp" | "cxx" | "c++" | "hpp" | "hh" | "hxx" => Language::Cpp,
            "rs" => Language::Rust,
            "go" => Language::Go,
            _ => return None,
        })
    }

    /// The LSP `languageId` for a file of this language.
    pub fn language_id(self, path: &Path) -> &'static str {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or_default();
        match self {
            Language::TypeScript if ext.eq_ignore_ascii_case("tsx") => "typescriptreact",
            Language::JavaScript if ext.eq_ignore_ascii_case("jsx") => "javascriptreact",
            Language::Python => "python",
            Language::TypeScript => "typescript",
            Language::JavaScript => "javascript",
            Language::C => "c",
            Language::Cpp => "cpp",
            Language::Rust => "rust",
            Language::Go => "go",
        }
    }

    fn parse(s: &str) -> Option<Language> {
        Language::ALL
            .into_iter()
            .find(|l| l.name().eq_ignore_ascii_case(s))
            .or(match s.to_ascii_lowercase().as_str() {
                "c++" => Some(Language::Cpp),
                "ts" => Some(Language::TypeScript),
                "js" => Some(Language::JavaScript),
                "py" => Some(Language::Python),
                _ => None,
            })
    }
}

/// One server wrench knows how to start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServerSpec {
    /// Short name ("pyright", "clangd"); also the pool key and the diagnostics source suffix.
    pub name: String,
    /// argv; the first element is looked up on PATH unless it contains a `/`.
    pub command: Vec<String>,
    /// The languages it serves; the first server on PATH for a language wins.
    pub languages: Vec<Language>,
    /// `initializationOptions` sent in `initialize`.
    pub initialization_options: Option<serde_json::Value>,
    /// Answers to `workspace/configuration`, by section (`{"rust-analyzer": {...}}`);
    /// sections not here are answered with `null` (the server's defaults).
    pub settings: Option<serde_json::Value>,
    /// How to install it, for the `unsupported` error.
    pub install: String,
    /// Variables set for it on top of wrench's environment (what `prepare`
    /// chose for an untrusted workspace).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<(String, String)>,
}

struct Builtin {
    name: &'static str,
    command: &'static [&'static str],
    languages: &'static [Language],
    install: &'static str,
}

/// The built-in servers, in preference order per language.
const BUILTIN: &[Builtin] = &[
    Builtin {
        name: "pyright",
        command: &["pyright-langserver", "--stdio"],
        languages: &[Language::Python],
        install: "npm i -g pyright",
    },
    Builtin {
        name: "basedpyright",
        command: &["basedpyright-langserver", "--stdio"],
        languages: &[Language::Python],
        install: "pip install basedpyright",
    },
    Builtin {
        name: "typescript-language-server",
        command: &["typescript-language-server", "--stdio"],
        languages: &[Language::TypeScript, Language::JavaScript],
        install: "npm i -g typescript-language-server typescript@5 (TypeScript 7 ships no tsserver.js)",
    },
    Builtin {
        name: "clangd",
        command: &["clangd"],
        languages: &[Language::C, Language::Cpp],
        install: "apt-get install clangd",
    },
    Builtin {
        name: "rust-analyzer",
        command: &["rust-analyzer"],
        languages: &[Language::Rust],
        install: "rustup component add rust-analyzer",
    },
    Builtin {
        name: "gopls",
        command: &["gopls"],
        languages: &[Language::Go],
        install: "go install golang.org/x/tools/gopls@latest",
    },
];

/// `[lsp]` section of the config.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LspConfig {
    /// `[lsp.servers.NAME] command = [...], languages = [...]`; a configured
    /// server is preferred over the built-in ones for its languages. A
    /// configured name equal to a built-in one replaces it.
    #[serde(default)]
    pub servers: BTreeMap<String, ServerConfig>,
    /// Let language servers run the workspace's own code: rust-analyzer's
    /// build scripts and proc macros, its cargo config and toolchain file,
    /// the workspace's TypeScript. Off by default: a read-only call on a
    /// cloned repository runs nothing of it.
    #[serde(default)]
    pub trust_workspace: bool,
}

/// One `[lsp.servers.NAME]` table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// argv; the first element is looked up on PATH unless it contains a `/`.
    /// Empty: no server (a table named like a built-in with no command turns it off).
    #[serde(default)]
    pub command: Vec<String>,
    /// Language names it serves (`python`, `typescript`, `rust`...); an
    /// unknown name is an error naming the valid ones. Empty: the languages of
    /// the built-in server of the same name.
    #[serde(default)]
    pub languages: Vec<String>,
    /// `initializationOptions` sent in `initialize`, as given.
    #[serde(default)]
    pub initialization_options: Option<serde_json::Value>,
    /// `false` turns a built-in server off.
    #[serde(default = "yes")]
    pub enabled: bool,
}

fn yes() -> bool {
    true
}

/// Every candidate server for `lang`, configured ones first, then built-ins.
pub fn candidates(cfg: &LspConfig, lang: Language) -> ToolResult<Vec<ServerSpec>> {
    let mut out = Vec::new();
    for (name, sc) in &cfg.servers {
        if !sc.enabled || sc.command.is_empty() {
            continue;
        }
        let mut langs = Vec::new();
        for l in &sc.languages {
            langs.push(Language::parse(l).ok_or_else(|| {
                ToolError::invalid_args(format!(
                    "config [lsp.servers.{name}] names unknown language {l:?}; known: {}",
                    Language::ALL.map(Language::name).join(", ")
                ))
            })?);
        }
        if langs.is_empty() {
            // A configured server that names no language overrides the built-in of that name.
            if let Some(b) = BUILTIN.iter().find(|b| b.name == name) {
                langs = b.languages.to_vec();
            }
        }
        if langs.contains(&lang) {
            out.push(ServerSpec {
                name: name.clone(),
                command: sc.command.clone(),
                languages: langs,
                initialization_options: sc.initialization_options.clone(),
                settings: None,
                install: format!("the command configured in [lsp.servers.{name}]"),
                env: Vec::new(),
            });
        }
    }
    for b in BUILTIN {
        let disabled_or_replaced = cfg.servers.contains_key(b.name);
        if disabled_or_replaced || !b.languages.contains(&lang) {
            continue;
        }
        out.push(ServerSpec {
            name: b.name.to_string(),
            command: b.command.iter().map(|s| s.to_string()).collect(),
            languages: b.languages.to_vec(),
            initialization_options: None,
            settings: None,
            install: b.install.to_string(),
            env: Vec::new(),
        });
    }
    Ok(out)
}

/// The `initializationOptions` sent in `initialize`: the configured ones, or
/// those `prepare` chose (the global TypeScript, rust-analyzer's safe
/// settings). With `trust_workspace`, typescript-language-server finds the
/// workspace's TypeScript itself and falls back to the global one.
pub fn default_initialization_options(spec: &ServerSpec, root: &Path) -> Option<serde_json::Value> {
    if spec.initialization_options.is_some() || spec.name != "typescript-language-server" {
        return spec.initialization_options.clone();
    }
    if root
        .join("node_modules/typescript/lib/tsserver.js")
        .is_file()
    {
        return None;
    }
    global_tsserver(root)
        .map(|lib| serde_json::json!({ "tsserver": { "path": lib.display().to_string() } }))
}

/// The executable for `program`: as given when it contains a `/`, else the
/// first executable file of that name in an absolute `PATH` directory
/// (relative entries such as `.` or `node_modules/.bin` name whatever
/// directory wrench runs in, so they are skipped).
pub fn which(program: &str) -> Option<PathBuf> {
    wrench_process::which::which_where(program, |_| true)
}

/// [`which`], skipping `PATH` directories inside `root`: a server or checker
/// is never taken from the workspace by a PATH lookup (the one lookup of
/// [`wrench_process::which`]).
pub fn which_outside(program: &str, root: &Path) -> Option<PathBuf> {
    wrench_process::which::which_outside(program, root)
}

/// Make `spec` safe for this workspace (see [`guard`]): rust-analyzer gets
/// settings with build scripts and proc macros off and is refused when the
/// workspace could still make it run its own programs; the TypeScript server
/// gets the global TypeScript.
fn prepare(mut spec: ServerSpec, ctx: &Context, cfg: &LspConfig) -> ToolResult<ServerSpec> {
    if cfg.trust_workspace {
        return Ok(spec);
    }
    let program = spec.command.first().map(String::as_str).unwrap_or_default();
    guard::check_server_program(program, &ctx.root)?;
    let base = Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if spec.name == "rust-analyzer" || base == "rust-analyzer" {
        guard::check_rust_workspace(&ctx.root)?;
        let target = ctx.session.workspace_dir().join("rust-analyzer-target");
        let safe = guard::rust_analyzer_settings(&target);
        let merged = guard::overlay(spec.initialization_options.take(), safe);
        spec.settings = Some(serde_json::json!({ "rust-analyzer": merged }));
        spec.initialization_options = Some(merged);
    } else if spec.name == "gopls" || base == "gopls" {
        spec.env.extend(guard::go_env());
    } else if spec.name == "typescript-language-server" {
        if spec.initialization_options.is_none() {
            match global_tsserver(&ctx.root) {
                Some(lib) => {
                    spec.initialization_options = Some(
                        serde_json::json!({ "tsserver": { "path": lib.display().to_string() } }),
                    );
                }
                None if ctx.root.join("node_modules/typescript").exists() => {
                    return Err(ToolError::denied(
                        "typescript-language-server would load the workspace's own node_modules/typescript (its code would run for a read-only call) because no global TypeScript was found; install one (`npm i -g typescript@5`) or set `[lsp] trust_workspace = true` in your wrench config",
                    ));
                }
                None => {}
            }
        }
        // Automatic type acquisition runs npm to install the @types of the
        // names in the workspace's package.json (network, disk, a program).
        let safe = serde_json::json!({ "disableAutomaticTypingAcquisition": true });
        spec.initialization_options =
            Some(guard::overlay(spec.initialization_options.take(), safe));
    }
    Ok(spec)
}

/// `tsserver.js` of the TypeScript installed next to the `tsc` on PATH.
fn global_tsserver(root: &Path) -> Option<PathBuf> {
    let tsc = std::fs::canonicalize(which_outside("tsc", root)?).ok()?;
    let lib = tsc.parent()?.parent()?.join("lib/tsserver.js");
    lib.is_file().then_some(lib)
}

/// The server to use for `path`, or an error: `unsupported` naming the server
/// to install when none is on PATH, or when no server handles the extension.
pub fn server_for_path(ctx: &Context, path: &Path) -> ToolResult<ServerSpec> {
    let lang = Language::of_path(path).ok_or_else(|| {
        ToolError::unsupported(format!(
            "no language server handles {} (by its extension); LSP tools cover Python (.py), TypeScript/JavaScript (.ts .tsx .js .jsx), C/C++ (.c .h .cpp .hpp), Rust (.rs) and Go (.go); for other files use symbol_search or grep",
            path.display()
        ))
    })?;
    server_for_language(ctx, lang)
}

/// The first available server for `lang`.
pub fn server_for_language(ctx: &Context, lang: Language) -> ToolResult<ServerSpec> {
    let cfg: LspConfig = ctx.config.section("lsp")?;
    let all = candidates(&cfg, lang)?;
    if let Some(found) = all.iter().find(|s| {
        s.command
            .first()
            .is_some_and(|p| which_outside(p, &ctx.root).is_some())
    }) {
        return prepare(found.clone(), ctx, &cfg);
    }
    let tried: Vec<String> = all
        .iter()
        .map(|s| {
            format!(
                "{} (`{}`; install: {})",
                s.name,
                s.command.first().map(String::as_str).unwrap_or(""),
                s.install
            )
        })
        .collect();
    Err(ToolError::unsupported(format!(
        "no language server for {} was found on PATH (outside the workspace); install one of: {} — or configure one with [lsp.servers.NAME] command = [...], languages = [\"{}\"]",
        lang.name(),
        tried.join("; "),
        lang.name()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_map_to_languages() {
        assert_eq!(
            Language::of_path(Path::new("a/b.py")),
            Some(Language::Python)
        );
        assert_eq!(
            Language::of_path(Path::new("x.TSX")),
            Some(Language::TypeScript)
        );
        assert_eq!(Language::of_path(Path::new("m.h")), Some(Language::C));
        assert_eq!(Language::of_path(Path::new("m.hpp")), Some(Language::Cpp));
        assert_eq!(Language::of_path(Path::new("README")), None);
        assert_eq!(
            Language::TypeScript.language_id(Path::new("a.tsx")),
            "typescriptreact"
        );
    }

    #[test]
    fn configured_server_comes_before_builtins() {
        let cfg: LspConfig = toml_cfg(
            r#"
            [servers.jedi]
            command = ["jedi-language-server"]
            languages = ["python"]
            "#,
        );
        let c = candidates(&cfg, Language::Python).unwrap();
        assert_eq!(c[0].name, "jedi");
        assert_eq!(c[1].name, "pyright");
    }

    #[test]
    fn a_builtin_can_be_disabled_or_replaced() {
        let cfg: LspConfig = toml_cfg(
            r#"
            [servers.pyright]
            enabled = false
            [servers.clangd]
            command = ["/opt/llvm/bin/clangd", "--background-index"]
            "#,
        );
        let py = candidates(&cfg, Language::Python).unwrap();
        assert!(py.iter().all(|s| s.name != "pyright"));
        let c = candidates(&cfg, Language::C).unwrap();
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].command[0], "/opt/llvm/bin/clangd");
    }

    #[test]
    fn unknown_language_in_config_is_invalid_args() {
        let cfg: LspConfig = toml_cfg(
            r#"
            [servers.x]
            command = ["x"]
            languages = ["cobol"]
            "#,
        );
        let e = candidates(&cfg, Language::Python).unwrap_err();
        assert_eq!(e.kind, wrench_core::ErrorKind::InvalidArgs);
        assert!(e.message.contains("cobol"));
    }

    #[test]
    fn missing_server_error_names_what_to_install() {
        let d = tempfile::tempdir().unwrap();
        let mut ctx = wrench_core::context_for(
            d.path(),
            d.path(),
            std::sync::Arc::new(wrench_core::AllowAll),
        )
        .unwrap();
        let cfg = wrench_core::Config::from_str(
            "[lsp.servers.gopls]\ncommand = [\"/nonexistent/gopls\"]\n",
        )
        .unwrap();
        ctx.config = std::sync::Arc::new(cfg);
        let e = server_for_language(&ctx, Language::Go).unwrap_err();
        assert_eq!(e.kind, wrench_core::ErrorKind::Unsupported);
        assert!(e.message.contains("gopls"), "{}", e.message);
        let e = server_for_path(&ctx, Path::new("notes.txt")).unwrap_err();
        assert_eq!(e.kind, wrench_core::ErrorKind::Unsupported);
    }

    fn toml_cfg(s: &str) -> LspConfig {
        let c = wrench_core::Config::from_str(&s.replace("[servers.", "[lsp.servers.")).unwrap();
        c.section("lsp").unwrap()
    }
}

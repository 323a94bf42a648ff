//! The TOML configuration, as one table; each crate reads its own section.
//!
//! Every section and key a crate reads is listed in [`SECTIONS`], and a
//! config is checked against it when it is parsed: a typo (`[permisions]`,
//! `mdoe = "auto"`) is an error naming the key and the nearest valid one,
//! never a setting silently ignored. Tables whose keys the user names
//! (`[mcp.servers.NAME]`, `[lsp.servers.NAME]`) stay open here; their
//! contents are checked by the section's own struct (`deny_unknown_fields`).

use crate::error::{ToolError, ToolResult};
use serde::de::DeserializeOwned;
use std::path::{Path, PathBuf};

/// The parsed config file (empty when none).
#[derive(Debug, Clone, Default)]
pub struct Config {
    table: toml::Table,
    /// The file it was loaded from.
    source: Option<PathBuf>,
}

impl Config {
    /// A config with no sections: every reader gets its defaults.
    pub fn empty() -> Self {
        Self::default()
    }
    /// Parse TOML text and check every section and key against [`SECTIONS`].
    /// Invalid TOML, or an unknown section or key (the error names the nearest
    /// valid one), is `invalid_args`.
    #[allow(clippy::should_implement_trait)] // returns a ToolError, not FromStr::Err
    pub fn from_str(text: &str) -> ToolResult<Self> {
        let table: toml::Table = text
            .parse()
            .map_err(|e| ToolError::invalid_args(format!("config is not valid TOML: {e}")))?;
        check_known(&table)?;
        Ok(Config {
            table,
            source: None,
        })
    }
    /// Read and parse the file at `path`; a read failure is the I/O error's
    /// kind, a bad file `invalid_args` prefixed with the path.
    pub fn load(path: &Path) -> ToolResult<Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ToolError::from_io(format!("config {}", path.display()), &e))?;
        let mut c = Self::from_str(&text)
            .map_err(|e| ToolError::invalid_args(format!("{}: {}", path.display(), e.message)))?;
        c.source = Some(path.to_path_buf());
        Ok(c)
    }
    /// The file this config was loaded from (None for an empty or inline one).
    pub fn source(&self) -> Option<&Path> {
        self.source.as_deref()
    }
    /// The paths of wrench's own configuration and state, which no tool call
    /// may change without a person: the file this config came from,
    /// `$WRENCH_CONFIG`, the default config directory
    /// (`$XDG_CONFIG_HOME/wrench`, `~/.config/wrench`) and the state base.
    /// A change there would change what the next call is allowed to do.
    pub fn own_paths(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = self.source.iter().cloned().collect();
        if let Some(p) = std::env::var_os("WRENCH_CONFIG").filter(|p| !p.is_empty()) {
            v.push(PathBuf::from(p));
        }
        let base = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")));
        if let Some(b) = base {
            v.push(b.join("wrench"));
        }
        v.push(crate::session::state_base());
        // Both as given and real (a link to the config is the config).
        let real: Vec<PathBuf> = v
            .iter()
            .filter_map(|p| std::fs::canonicalize(p).ok())
            .collect();
        for r in real {
            if !v.contains(&r) {
                v.push(r);
            }
        }
        v.retain(|p| p.is_absolute());
        v
    }
    /// Deserialize section `name` (e.g. "webfetch"); missing → `T::default()`.
    pub fn section<T: DeserializeOwned + Default>(&self, name: &str) -> ToolResult<T> {
        match self.table.get(name) {
            None => Ok(T::default()),
            Some(v) => v.clone().try_into().map_err(|e| {
                ToolError::invalid_args(format!("config section [{name}] is invalid: {e}"))
            }),
        }
    }
    /// The whole table, for callers that read keys outside a section struct.
    pub fn raw(&self) -> &toml::Table {
        &self.table
    }
}

/// One config section: its name and the keys its readers take. A key whose
/// value is a table of user-chosen names (`servers`) is listed like any key;
/// what is inside it is the reading struct's to check.
#[derive(Debug, Clone, Copy)]
pub struct Section {
    /// The section's name (`permissions`, `mcp`...); dotted names are nested tables.
    pub name: &'static str,
    /// Every key its readers take; any other key in the section is an error.
    pub keys: &'static [&'static str],
}

/// Every section a wrench crate reads, with its keys. A crate that adds a
/// section or a key adds it here (and `deny_unknown_fields` on its struct).
pub const SECTIONS: &[Section] = &[
    Section {
        name: "permissions",
        keys: &["mode", "allow", "deny", "ask"],
    },
    Section {
        name: "hooks",
        keys: &["pre", "post"],
    },
    Section {
        name: "bash",
        // tools-shell's BashConfig and process's sandbox decision share it.
        keys: &["keep_env", "sandbox", "network"],
    },
    Section {
        name: "sandbox",
        keys: &["mode", "network"],
    },
    Section {
        name: "terminal",
        keys: &["holder"],
    },
    Section {
        name: "webfetch",
        keys: &[
            "allow_hosts",
            "proxy",
            "timeout_secs",
            "connect_timeout_secs",
        ],
    },
    Section {
        name: "websearch",
        keys: &[
            "provider",
            "searxng_url",
            "brave_url",
            "tavily_url",
            "allow_hosts",
        ],
    },
    Section {
        name: "lsp",
        keys: &["servers", "trust_workspace"],
    },
    Section {
        name: "mcp",
        keys: &["servers", "http"],
    },
    Section {
        name: "output",
        keys: &["ansi"],
    },
    Section {
        name: "checkpoints",
        keys: &[
            "enabled",
            "max_file_bytes",
            "max_total_bytes",
            "keep_checkpoints",
            "keep_days",
            "exclude",
        ],
    },
    Section {
        name: "diagnostics",
        keys: &["after_edit", "wait_ms"],
    },
    Section {
        name: "daemon",
        keys: &["enabled", "idle_timeout"],
    },
];

/// The nearest of `known` to `name`, when it is near enough to be a typo.
fn nearest<'a>(name: &str, known: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let lower = name.to_ascii_lowercase();
    known
        .map(|k| (crate::registry::edit_distance(&lower, k), k))
        .filter(|(d, k)| *d <= (k.chars().count() / 3).max(2))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

fn did_you_mean(found: Option<&str>, all: &[&str], wrap: fn(&str) -> String) -> String {
    match found {
        Some(k) => format!("did you mean {}?", wrap(k)),
        None => {
            let list: Vec<String> = all.iter().map(|k| wrap(k)).collect();
            format!("valid ones: {}", list.join(", "))
        }
    }
}

/// Refuse a section or key no crate reads, naming the nearest valid one.
fn check_known(table: &toml::Table) -> ToolResult<()> {
    let names: Vec<&str> = SECTIONS.iter().map(|s| s.name).collect();
    for (name, value) in table {
        let Some(section) = SECTIONS.iter().find(|s| s.name == name) else {
            let hint = did_you_mean(nearest(name, names.iter().copied()), &names, |k| {
                format!("[{k}]")
            });
            return Err(ToolError::invalid_args(format!(
                "config: unknown section [{}]; {hint}",
                crate::frame::echo(name)
            )));
        };
        let Some(keys) = value.as_table() else {
            return Err(ToolError::invalid_args(format!(
                "config: [{name}] must be a table of keys ([{name}] on a line of its own, then key = value lines)"
            )));
        };
        for key in keys.keys() {
            if !section.keys.contains(&key.as_str()) {
                let hint = did_you_mean(
                    nearest(key, section.keys.iter().copied()),
                    section.keys,
                    |k| format!("`{k}`"),
                );
                return Err(ToolError::invalid_args(format!(
                    "config: unknown key `{}` in [{name}]; {hint}",
                    crate::frame::echo(key)
                )));
            }
        }
    }
    Ok(())
}

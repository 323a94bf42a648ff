//! The tool registry: canonical names, aliases, profiles.

use crate::error::{ToolError, ToolResult};
use crate::spec::Effect;
use crate::tool::{DynTool, Tool, Typed};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

/// A named subset of the registry (SPEC §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Profile {
    /// Everything.
    #[default]
    Coding,
    /// Read-only tools plus todowrite.
    Planning,
    /// read, grep, glob, edit, write, bash.
    Smol,
    /// Read-only tools only (sub-agents, untrusted callers).
    Readonly,
}

impl Profile {
    /// Every profile, in the order help lists them.
    pub const ALL: [Profile; 4] = [
        Profile::Coding,
        Profile::Planning,
        Profile::Smol,
        Profile::Readonly,
    ];

    /// The profile's name, as [`Profile::parse`] accepts it.
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Coding => "coding",
            Profile::Planning => "planning",
            Profile::Smol => "smol",
            Profile::Readonly => "readonly",
        }
    }

    /// Parse a profile name (case and `-`/`_` ignored); an unknown one is
    /// `invalid_args` listing the valid ones.
    pub fn parse(s: &str) -> ToolResult<Profile> {
        match s.to_ascii_lowercase().replace('-', "_").as_str() {
            "coding" => Ok(Profile::Coding),
            "planning" => Ok(Profile::Planning),
            "smol" => Ok(Profile::Smol),
            "readonly" | "read_only" => Ok(Profile::Readonly),
            _ => Err(ToolError::invalid_args(format!(
                "unknown profile {s:?}; use one of: coding, planning, smol, readonly"
            ))),
        }
    }

    /// Whether a tool belongs to this profile.
    pub fn includes(self, tool: &dyn DynTool) -> bool {
        let spec = tool.spec();
        match self {
            Profile::Coding => true,
            Profile::Planning => spec.effect == Effect::ReadOnly || spec.name == "todowrite",
            Profile::Smol => matches!(
                spec.name.as_str(),
                "read" | "grep" | "glob" | "edit" | "write" | "bash"
            ),
            Profile::Readonly => spec.effect == Effect::ReadOnly,
        }
    }
}

/// Builds a tool on its first use.
type Make = Arc<dyn Fn() -> Arc<dyn DynTool> + Send + Sync>;

/// One tool of the registry: its names as registered, and the tool itself,
/// built when first needed. Clones of a registry share the built tools.
#[derive(Clone)]
struct Entry {
    /// The canonical name, then the aliases.
    names: Arc<[String]>,
    tool: Arc<OnceLock<Arc<dyn DynTool>>>,
    make: Make,
}

impl Entry {
    fn get(&self) -> &Arc<dyn DynTool> {
        self.tool.get_or_init(|| (self.make)())
    }
}

/// All tools a front door offers.
///
/// A tool registered with [`Registry::register_lazy`] is built (its spec and
/// schema made) when it is first resolved or listed, not at registration: a
/// one-shot call that runs one tool builds that one only.
#[derive(Clone, Default)]
pub struct Registry {
    entries: Vec<Entry>,
    index: HashMap<String, usize>,
}

/// How the registry compares names: surrounding blanks, ASCII letter case and
/// `-` vs `_` are ignored, so two names that fold alike are one name (a
/// registry of proxies checks its own names with this).
pub fn fold_name(name: &str) -> String {
    name.trim().to_ascii_lowercase().replace('-', "_")
}

use fold_name as fold;

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Register a typed tool.
    pub fn register<T: Tool>(&mut self, tool: T) -> ToolResult<()> {
        self.register_dyn(Arc::new(Typed::new(tool)))
    }

    /// Register an object-safe tool. A name or alias already taken is an error.
    pub fn register_dyn(&mut self, tool: Arc<dyn DynTool>) -> ToolResult<()> {
        let spec = tool.spec();
        let mut names = vec![spec.name.clone()];
        names.extend(spec.aliases.iter().cloned());
        let built = Arc::new(OnceLock::new());
        let _ = built.set(tool.clone());
        self.add(Entry {
            names: names.into(),
            tool: built,
            make: Arc::new(move || tool.clone()),
        })
    }

    /// Register a typed tool that `make` builds on its first use. `names`
    /// are the canonical name, then the aliases, exactly as the tool's spec
    /// declares them ([`Registry::check_names`] compares them; the CLI's
    /// tests run it over every built-in tool). A name or alias already taken
    /// is an error.
    pub fn register_lazy<T: Tool>(
        &mut self,
        names: &[&str],
        make: impl Fn() -> T + Send + Sync + 'static,
    ) -> ToolResult<()> {
        if names.is_empty() {
            return Err(ToolError::invalid_args(
                "internal: a tool registered without a name",
            ));
        }
        self.add(Entry {
            names: names.iter().map(|n| n.to_string()).collect(),
            tool: Arc::new(OnceLock::new()),
            make: Arc::new(move || Arc::new(Typed::new(make())) as Arc<dyn DynTool>),
        })
    }

    fn add(&mut self, entry: Entry) -> ToolResult<()> {
        let idx = self.entries.len();
        for n in entry.names.iter() {
            if let Some(&other) = self.index.get(&fold(n)) {
                return Err(ToolError::conflict(format!(
                    "tool name {n:?} of `{}` is already taken by `{}`",
                    entry.names[0], self.entries[other].names[0]
                )));
            }
        }
        for n in entry.names.iter() {
            self.index.insert(fold(n), idx);
        }
        self.entries.push(entry);
        Ok(())
    }

    /// Look a tool up by canonical name or alias. Unknown names are an error that
    /// lists near names; never a guess.
    pub fn resolve(&self, name: &str) -> ToolResult<Arc<dyn DynTool>> {
        if let Some(&i) = self.index.get(&fold(name)) {
            return Ok(self.entries[i].get().clone());
        }
        let f = fold(name);
        let mut near: Vec<&str> = self
            .names()
            .filter(|n| n.contains(&f) || f.contains(*n) || edit_distance(n, &f) <= 2)
            .collect();
        near.sort_unstable();
        let hint = if near.is_empty() {
            "run `wrench tools` for the list".to_string()
        } else {
            format!(
                "did you mean {}? (`wrench tools` lists all)",
                near.join(", ")
            )
        };
        Err(ToolError::invalid_args(format!(
            "unknown tool {name:?}; {hint}"
        )))
    }

    /// The canonical name of every tool, in registration order; builds nothing.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.names[0].as_str())
    }

    /// Every tool, in registration order (each built on first need).
    pub fn tools(&self) -> impl Iterator<Item = &Arc<dyn DynTool>> {
        self.entries.iter().map(Entry::get)
    }

    /// Number of tools registered.
    pub fn len(&self) -> usize {
        self.entries.len()
    }
    /// True when no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every tool built, and its spec's name and aliases compared with the
    /// names it was registered under: an error lists each tool whose
    /// registration and spec disagree.
    pub fn check_names(&self) -> ToolResult<()> {
        let wrong: Vec<String> = self
            .entries
            .iter()
            .filter_map(|e| {
                let spec = e.get().spec();
                let mut declared = vec![spec.name.clone()];
                declared.extend(spec.aliases.iter().cloned());
                (declared.as_slice() != &e.names[..]).then(|| {
                    format!(
                        "`{}` is registered as {:?} but its spec names {declared:?}",
                        e.names[0], e.names
                    )
                })
            })
            .collect();
        if wrong.is_empty() {
            Ok(())
        } else {
            Err(ToolError::conflict(wrong.join("; ")))
        }
    }

    /// The subset of this registry in `profile`. Every tool is in
    /// [`Profile::Coding`], so that subset builds nothing; the others look
    /// at each tool's spec.
    pub fn with_profile(&self, profile: Profile) -> Registry {
        if profile == Profile::Coding {
            return self.clone();
        }
        let mut r = Registry::new();
        for e in &self.entries {
            if profile.includes(e.get().as_ref()) {
                // Names were unique in self, so they stay unique in a subset.
                let _ = r.add(e.clone());
            }
        }
        r
    }
}

pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::access::Access;
    use crate::context::Context;
    use crate::gate::Authorized;
    use crate::output::{OutputKind, ToolOutput};
    use crate::spec::ToolSpec;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
    struct NoArgs {}

    /// A tool whose construction is counted.
    struct Counted {
        name: &'static str,
        aliases: &'static [&'static str],
        effect: Effect,
    }

    #[async_trait::async_trait]
    impl Tool for Counted {
        type Args = NoArgs;
        fn spec(&self) -> ToolSpec {
            ToolSpec::new::<NoArgs>(self.name, self.effect, "counted").aliases(self.aliases)
        }
        fn access(&self, _: &NoArgs, _: &Context) -> Access {
            Access::Independent
        }
        async fn run(&self, _: NoArgs, _: Authorized, _: &Context) -> ToolResult<ToolOutput> {
            Ok(ToolOutput::new(OutputKind::Text, self.name))
        }
    }

    /// A registry of `alpha` (eager), `beta` and `gamma` (lazy, counted in `built`).
    fn registry(built: &Arc<AtomicUsize>) -> Registry {
        let mut r = Registry::new();
        r.register(Counted {
            name: "alpha",
            aliases: &[],
            effect: Effect::ReadOnly,
        })
        .unwrap();
        for (name, aliases, effect) in [
            ("beta", &["b_tool", "Beta"][..], Effect::ReadOnly),
            ("gamma", &[][..], Effect::SelfAuthorized),
        ] {
            let built = built.clone();
            let mut names = vec![name];
            names.extend(aliases);
            r.register_lazy(&names, move || {
                built.fetch_add(1, Ordering::SeqCst);
                Counted {
                    name,
                    aliases,
                    effect,
                }
            })
            .unwrap();
        }
        r
    }

    #[test]
    fn a_lazy_tool_is_built_on_its_first_resolve_only() {
        let built = Arc::new(AtomicUsize::new(0));
        let r = registry(&built);
        assert_eq!(r.names().collect::<Vec<_>>(), ["alpha", "beta", "gamma"]);
        assert_eq!(r.len(), 3);
        assert_eq!(
            built.load(Ordering::SeqCst),
            0,
            "listing names builds nothing"
        );
        assert_eq!(r.resolve("b-tool").unwrap().spec().name, "beta");
        assert_eq!(r.resolve("BETA").unwrap().spec().name, "beta");
        assert_eq!(
            built.load(Ordering::SeqCst),
            1,
            "beta once, gamma not at all"
        );
        // A clone (a profile, another front door) shares what was built.
        let c = r.with_profile(Profile::Coding);
        c.resolve("beta").unwrap();
        assert_eq!(built.load(Ordering::SeqCst), 1);
        assert_eq!(c.tools().count(), 3);
        assert_eq!(built.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn an_unknown_name_lists_near_names_without_building_them() {
        let built = Arc::new(AtomicUsize::new(0));
        let Err(e) = registry(&built).resolve("gamm") else {
            panic!("gamm resolved");
        };
        assert_eq!(e.kind, crate::ErrorKind::InvalidArgs);
        assert!(e.message.contains("did you mean gamma?"), "{}", e.message);
        assert_eq!(built.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn a_name_taken_by_a_lazy_tool_or_its_alias_is_refused() {
        let built = Arc::new(AtomicUsize::new(0));
        let mut r = registry(&built);
        for (name, aliases) in [("b_tool", &[][..]), ("delta", &["Gamma"][..])] {
            let e = r
                .register(Counted {
                    name,
                    aliases,
                    effect: Effect::ReadOnly,
                })
                .unwrap_err();
            assert_eq!(e.kind, crate::ErrorKind::Conflict, "{name}");
        }
        let e = r.register_lazy(&["alpha"], || Counted {
            name: "alpha",
            aliases: &[],
            effect: Effect::ReadOnly,
        });
        assert_eq!(e.unwrap_err().kind, crate::ErrorKind::Conflict);
        assert_eq!(built.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn names_that_differ_from_the_spec_are_reported() {
        let built = Arc::new(AtomicUsize::new(0));
        let mut r = registry(&built);
        r.check_names().unwrap();
        r.register_lazy(&["delta", "d"], || Counted {
            name: "delta",
            aliases: &["dee"],
            effect: Effect::ReadOnly,
        })
        .unwrap();
        let e = r.check_names().unwrap_err();
        assert!(
            e.message.contains("`delta` is registered as"),
            "{}",
            e.message
        );
    }

    #[test]
    fn a_profile_other_than_coding_filters_by_spec() {
        let built = Arc::new(AtomicUsize::new(0));
        let r = registry(&built).with_profile(Profile::Readonly);
        assert_eq!(r.names().collect::<Vec<_>>(), ["alpha", "beta"]);
        assert!(r.resolve("gamma").is_err());
    }
}

//! The TOML configuration, as one table; each crate reads its own section.

use crate::error::{ToolError, ToolResult};
use serde::de::DeserializeOwned;
use std::path::Path;

/// The parsed config file (empty when none).
#[derive(Debug, Clone, Default)]
pub struct Config {
    table: toml::Table,
}

impl Config {
    pub fn empty() -> Self {
        Self::default()
    }
    #[allow(clippy::should_implement_trait)] // returns a ToolError, not FromStr::Err
    pub fn from_str(text: &str) -> ToolResult<Self> {
        let table: toml::Table = text
            .parse()
            .map_err(|e| ToolError::invalid_args(format!("config is not valid TOML: {e}")))?;
        Ok(Config { table })
    }
    pub fn load(path: &Path) -> ToolResult<Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ToolError::from_io(format!("config {}", path.display()), &e))?;
        Self::from_str(&text)
            .map_err(|e| ToolError::invalid_args(format!("{}: {}", path.display(), e.message)))
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
    pub fn raw(&self) -> &toml::Table {
        &self.table
    }
}

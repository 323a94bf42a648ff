//! wrench-tools-fs (being built).

use wrench_core::{Registry, ToolResult};

/// Register this crate's tools.
pub fn register(_reg: &mut Registry) -> ToolResult<()> {
    Ok(())
}

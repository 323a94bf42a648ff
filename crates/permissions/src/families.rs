//! Rule families: which tools a rule name covers, and which of a plan's
//! actions its path glob is matched against. One table, so the README's
//! rules table, the gate and the denial advice cannot disagree.
//!
//! - `read(GLOB)` covers every tool that reads files; its glob is matched
//!   against the plan's `Read` paths (and, at run time, every file a walk
//!   meets, through [`wrench_core::Authorized::may_read`]).
//! - `edit(GLOB)` and `write(GLOB)` are one family: every tool that
//!   creates, changes, moves or deletes files; the glob is matched against
//!   the plan's `Write` and `Delete` paths.
//! - Any other name is a tool name (`grep(src/**)`, `bash(git status:*)`,
//!   `mcp__github__*`), as before.

/// A family of tools one rule name stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// `read`: every reader.
    Read,
    /// `edit` / `write`: every file-changing tool.
    Change,
}

/// Tools that read workspace files (the `read(GLOB)` family).
pub const READ_TOOLS: &[&str] = &[
    "read",
    "read_region",
    "ls",
    "glob",
    "grep",
    "git",
    "project_info",
    "symbol_search",
    "read_symbol",
    "code_index",
    "definition",
    "references",
    "hover",
    "workspace_symbol",
    "checkpoints",
];

/// Tools that change workspace files (the `edit(GLOB)` / `write(GLOB)` family).
pub const CHANGE_TOOLS: &[&str] = &[
    "write",
    "edit",
    "multi_edit",
    "apply_patch",
    "move_file",
    "delete_range",
    "notebook_edit",
    "delete_symbol",
    "rename_symbol",
    "undo",
];

impl Family {
    /// The family a rule name stands for (`read`, `edit`, `write`), if any.
    pub fn of_rule_name(name: &str) -> Option<Family> {
        match name {
            "read" => Some(Family::Read),
            "edit" | "write" => Some(Family::Change),
            _ => None,
        }
    }

    /// The family a tool belongs to, if any.
    pub fn of_tool(tool: &str) -> Option<Family> {
        if READ_TOOLS.contains(&tool) {
            Some(Family::Read)
        } else if CHANGE_TOOLS.contains(&tool) {
            Some(Family::Change)
        } else {
            None
        }
    }

    /// The tools of the family.
    pub fn tools(self) -> &'static [&'static str] {
        match self {
            Family::Read => READ_TOOLS,
            Family::Change => CHANGE_TOOLS,
        }
    }

    /// The rule name that covers the family (what denial advice names).
    pub fn rule_name(self) -> &'static str {
        match self {
            Family::Read => "read",
            Family::Change => "edit",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_tool_is_in_both_families() {
        for t in READ_TOOLS {
            assert!(!CHANGE_TOOLS.contains(t), "{t}");
        }
    }

    #[test]
    fn rule_names_map_to_families() {
        assert_eq!(Family::of_rule_name("read"), Some(Family::Read));
        assert_eq!(Family::of_rule_name("write"), Some(Family::Change));
        assert_eq!(Family::of_rule_name("edit"), Some(Family::Change));
        assert_eq!(Family::of_rule_name("grep"), None);
        assert_eq!(Family::of_tool("rename_symbol"), Some(Family::Change));
        assert_eq!(Family::of_tool("workspace_symbol"), Some(Family::Read));
        assert_eq!(Family::of_tool("bash"), None);
    }
}

//! # wrench-tools-state
//!
//! Tools that change only wrench's own session state (Effect::LocalState).
//! Today that is `todowrite`: the session's todo list, kept in the session
//! store so a later process (a second one-shot CLI call) sees it.
//!
//! ```
//! let mut reg = wrench_core::Registry::new();
//! wrench_tools_state::register(&mut reg).unwrap();
//! assert!(reg.resolve("TodoWrite").is_ok());
//! ```

#![warn(missing_docs)]

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use wrench_core::{
    Access, AccessClass, Action, ActionPlan, Authorized, Context, Effect, OutputKind, Registry,
    Tool, ToolError, ToolOutput, ToolResult, ToolSpec,
};

/// Most items one list may hold.
pub const MAX_TODOS: usize = 100;
/// Longest text of one item, in characters.
pub const MAX_TODO_CHARS: usize = 500;
/// Where the list lives in the session dir.
pub const TODO_FILE: &str = "todos.json";

/// Register this crate's tools.
pub fn register(reg: &mut Registry) -> ToolResult<()> {
    reg.register_lazy(&["todowrite", "todo_write", "TodoWrite"], || TodoWrite)
}

/// Where an item stands: `pending`, `in_progress` or `completed`.
// Variants have no doc comments on purpose: schemars would turn the
// schema's `enum` of names into a `oneOf` of described constants.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pending,
    InProgress,
    Completed,
}

/// One item of the list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Todo {
    /// What to do, imperative ("Run the tests").
    pub content: String,
    /// pending, in_progress or completed.
    pub status: Status,
    /// Optional id; kept as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Accepted for compatibility with hosts that send it ("Running the tests").
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "activeForm")]
    pub active_form: Option<String>,
}

/// Arguments of `todowrite`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TodoWriteArgs {
    /// The whole new list; it replaces the old one. At most one item may be in_progress.
    pub todos: Vec<Todo>,
}

/// The `todowrite` tool: replace the session's todo list.
pub struct TodoWrite;

fn render(todos: &[Todo]) -> String {
    if todos.is_empty() {
        return "Todo list cleared.".to_string();
    }
    let done = todos
        .iter()
        .filter(|t| t.status == Status::Completed)
        .count();
    let mut s = format!("Todo list ({done}/{} done):\n", todos.len());
    for t in todos {
        let mark = match t.status {
            Status::Pending => "[ ]",
            Status::InProgress => "[~]",
            Status::Completed => "[x]",
        };
        s.push_str(&format!("{mark} {}\n", t.content));
    }
    s
}

#[async_trait::async_trait]
impl Tool for TodoWrite {
    type Args = TodoWriteArgs;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new::<TodoWriteArgs>(
            "todowrite",
            Effect::LocalState,
            "Replace the session's todo list. Use it to plan multi-step work and show progress: send the whole list each time, with each item pending, in_progress or completed, and at most one in_progress. The list is kept in wrench's session state, not in the workspace.",
        )
        .aliases(&["todo_write", "TodoWrite"])
        .access(AccessClass::Independent)
        .limit("MAX_TODOS", MAX_TODOS, "items in one list")
        .limit("MAX_TODO_CHARS", MAX_TODO_CHARS, "characters of one item's content")
        .idempotent(true)
    }

    fn access(&self, _args: &TodoWriteArgs, _ctx: &Context) -> Access {
        Access::Independent
    }

    async fn plan(
        &self,
        _args: &TodoWriteArgs,
        base: ActionPlan,
        _ctx: &Context,
    ) -> ToolResult<ActionPlan> {
        Ok(base.with(Action::SessionState))
    }

    async fn run(
        &self,
        args: TodoWriteArgs,
        _auth: Authorized,
        ctx: &Context,
    ) -> ToolResult<ToolOutput> {
        if args.todos.len() > MAX_TODOS {
            return Err(ToolError::too_large(format!(
                "{} todos given; a list holds at most {MAX_TODOS}: merge or drop finished items",
                args.todos.len()
            )));
        }
        for (i, t) in args.todos.iter().enumerate() {
            if t.content.trim().is_empty() {
                return Err(ToolError::invalid_args(format!(
                    "todo {} has empty content; say what is to be done",
                    i + 1
                )));
            }
            if t.content.chars().count() > MAX_TODO_CHARS {
                return Err(ToolError::too_large(format!(
                    "todo {} is over {MAX_TODO_CHARS} characters; keep items short",
                    i + 1
                )));
            }
        }
        let in_progress: Vec<usize> = args
            .todos
            .iter()
            .enumerate()
            .filter(|(_, t)| t.status == Status::InProgress)
            .map(|(i, _)| i + 1)
            .collect();
        if in_progress.len() > 1 {
            return Err(ToolError::invalid_args(format!(
                "items {} are all in_progress; at most one item may be in_progress: mark the others pending or completed",
                in_progress
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let old: Vec<Todo> = ctx.session.load_json(TODO_FILE)?.unwrap_or_default();
        ctx.session.store_json(TODO_FILE, &args.todos)?;
        let text = render(&args.todos);
        #[derive(Serialize)]
        struct Out<'a> {
            todos: &'a [Todo],
            previous_count: usize,
        }
        Ok(ToolOutput::new(OutputKind::Text, text).with_data(&Out {
            todos: &args.todos,
            previous_count: old.len(),
        }))
    }
}

/// The current list of a session (empty when none).
pub fn current(ctx: &Context) -> ToolResult<Vec<Todo>> {
    Ok(ctx.session.load_json(TODO_FILE)?.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;
    use wrench_core::{AllowAll, Call, ErrorKind, Executor, context_for};

    fn exec(root: &std::path::Path, state: &std::path::Path) -> Executor {
        let mut reg = Registry::new();
        register(&mut reg).unwrap();
        Executor::new(
            Arc::new(reg),
            context_for(root, state, Arc::new(AllowAll)).unwrap(),
        )
    }

    #[tokio::test]
    async fn the_list_outlives_the_executor_that_wrote_it() {
        let root = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        let r = exec(root.path(), state.path())
            .run_one(Call::new(
                "1",
                "TodoWrite",
                json!({"todos": [
                    {"content": "write tests", "status": "in_progress"},
                    {"content": "ship", "status": "pending"}
                ]}),
            ))
            .await;
        assert_eq!(
            r.result.unwrap().text,
            "Todo list (0/2 done):\n[~] write tests\n[ ] ship\n"
        );
        let e2 = exec(root.path(), state.path());
        let todos = current(e2.context()).unwrap();
        assert_eq!(todos.len(), 2);
        assert_eq!(todos[0].status, Status::InProgress);
    }

    #[tokio::test]
    async fn two_items_in_progress_are_refused() {
        let root = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        let r = exec(root.path(), state.path())
            .run_one(Call::new(
                "1",
                "todowrite",
                json!({"todos": [
                    {"content": "a", "status": "in_progress"},
                    {"content": "b", "status": "in_progress"}
                ]}),
            ))
            .await;
        let e = r.result.unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidArgs);
        assert!(
            e.message.contains("at most one item may be in_progress"),
            "{}",
            e.message
        );
    }

    #[tokio::test]
    async fn unknown_status_names_the_accepted_values() {
        let root = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        let r = exec(root.path(), state.path())
            .run_one(Call::new(
                "1",
                "todowrite",
                json!({"todos": [{"content": "a", "status": "doing"}]}),
            ))
            .await;
        let e = r.result.unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidArgs);
        assert!(e.message.contains("pending"), "{}", e.message);
    }

    #[tokio::test]
    async fn empty_list_clears() {
        let root = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        let r = exec(root.path(), state.path())
            .run_one(Call::new("1", "todowrite", json!({"todos": []})))
            .await;
        assert_eq!(r.result.unwrap().text, "Todo list cleared.");
    }
}

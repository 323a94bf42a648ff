//! The checkpoint seam: a [`Checkpointer`] the [`Context`] may carry is told
//! by the executor about every authorized plan just before the tool runs,
//! and about the result just after. A plan that writes or deletes files
//! records their before-state; one that spawns a process records the tree.
//! The store itself lives in the `wrench-checkpoints` crate; core only
//! calls it, so no tool has to remember to.

use crate::context::Context;
use crate::error::ToolResult;
use crate::gate::ActionPlan;
use crate::output::ToolOutput;

/// Takes checkpoints around authorized calls.
pub trait Checkpointer: Send + Sync {
    /// Called after the gate allowed `plan` and before the tool runs. None
    /// when the plan changes nothing a checkpoint covers. Never fails the
    /// call: a checkpoint that cannot be taken says so in its note.
    fn before(&self, ctx: &Context, plan: &ActionPlan) -> Option<Box<dyn PendingCheckpoint>>;
}

/// A checkpoint whose before-state is recorded, waiting for the call's end.
pub trait PendingCheckpoint: Send {
    /// Record the after-state; may add a note to a successful output (a
    /// partial checkpoint, one that could not be stored).
    fn after(self: Box<Self>, ctx: &Context, result: &mut ToolResult<ToolOutput>);
}

/// The executor's call before a tool runs.
pub(crate) fn before(ctx: &Context, plan: &ActionPlan) -> Option<Box<dyn PendingCheckpoint>> {
    ctx.checkpointer.as_ref()?.before(ctx, plan)
}

/// The executor's call after a tool ran.
pub(crate) fn after(
    pending: Option<Box<dyn PendingCheckpoint>>,
    ctx: &Context,
    result: &mut ToolResult<ToolOutput>,
) {
    if let Some(p) = pending {
        p.after(ctx, result);
    }
}

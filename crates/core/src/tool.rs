//! The `Tool` trait (typed, for tool authors) and `DynTool` (object-safe, for the
//! registry and for tools whose schema is only known at run time, like MCP proxies).

use crate::access::Access;
use crate::context::Context;
use crate::error::{ToolError, ToolResult};
use crate::gate::{ActionPlan, Authorized};
use crate::output::ToolOutput;
use crate::spec::ToolSpec;
use serde::{Serialize, de::DeserializeOwned};
use std::any::Any;

/// A tool with a typed argument struct. One struct serves JSON (serde), the
/// schema (schemars) and the CLI flags (derived from the schema), so they
/// cannot drift.
#[async_trait::async_trait]
pub trait Tool: Send + Sync + 'static {
    /// The argument struct: serde for JSON, schemars for the schema (and so
    /// the CLI flags).
    type Args: DeserializeOwned + Serialize + schemars::JsonSchema + Send + Sync + 'static;

    /// The declaration. Called once, at registration.
    fn spec(&self) -> ToolSpec;

    /// What the call touches, for the batching planner.
    fn access(&self, args: &Self::Args, ctx: &Context) -> Access;

    /// What the call will do, for the gate. `base` already names the tool,
    /// effect and args; add actions to it.
    async fn plan(
        &self,
        _args: &Self::Args,
        base: ActionPlan,
        _ctx: &Context,
    ) -> ToolResult<ActionPlan> {
        Ok(base)
    }

    /// Do it. `auth` proves the plan passed the gate.
    async fn run(
        &self,
        args: Self::Args,
        auth: Authorized,
        ctx: &Context,
    ) -> ToolResult<ToolOutput>;
}

/// Arguments after validation: the JSON as given (possibly repaired) and the
/// tool's own typed value.
pub struct ParsedArgs {
    /// The arguments as JSON (after any repair), for hooks and rule matching.
    pub json: serde_json::Value,
    /// The tool's own `Args` value, boxed.
    pub typed: Box<dyn Any + Send + Sync>,
}

/// The object-safe face of a tool, as the registry and executor use it.
#[async_trait::async_trait]
pub trait DynTool: Send + Sync {
    /// The declaration (with the `diagnostics` argument change tools get).
    fn spec(&self) -> &ToolSpec;
    /// Validate `args` against the tool's argument type.
    fn parse(&self, args: &serde_json::Value) -> ToolResult<ParsedArgs>;
    /// What the call touches, for the batching planner.
    fn access(&self, args: &ParsedArgs, ctx: &Context) -> Access;
    /// What the call will do, for the gate.
    async fn plan(&self, args: &ParsedArgs, ctx: &Context) -> ToolResult<ActionPlan>;
    /// Do it; `auth` proves the plan passed the gate.
    async fn run(
        &self,
        args: ParsedArgs,
        auth: Authorized,
        ctx: &Context,
    ) -> ToolResult<ToolOutput>;
}

/// Adapts a typed [`Tool`] to [`DynTool`], caching its spec.
pub struct Typed<T: Tool> {
    tool: T,
    spec: ToolSpec,
}

impl<T: Tool> Typed<T> {
    /// Wrap `tool`, building its spec once.
    pub fn new(tool: T) -> Self {
        let spec = crate::diag::with_diagnostics_arg(tool.spec());
        Typed { tool, spec }
    }
}

fn typed_ref<'a, A: 'static>(p: &'a ParsedArgs, tool: &str) -> ToolResult<&'a A> {
    p.typed.downcast_ref::<A>().ok_or_else(|| {
        ToolError::invalid_args(format!("internal: arguments were not parsed for `{tool}`"))
    })
}

/// Turn a serde error into a message that names the field and the fix.
pub fn describe_arg_error(tool: &str, e: &serde_json::Error) -> String {
    format!(
        "invalid arguments for `{tool}`: {e}. See `wrench schema {tool}` for the accepted arguments"
    )
}

#[async_trait::async_trait]
impl<T: Tool> DynTool for Typed<T> {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn parse(&self, args: &serde_json::Value) -> ToolResult<ParsedArgs> {
        let typed: T::Args = serde_json::from_value(args.clone())
            .map_err(|e| ToolError::invalid_args(describe_arg_error(&self.spec.name, &e)))?;
        Ok(ParsedArgs {
            json: args.clone(),
            typed: Box::new(typed),
        })
    }

    fn access(&self, args: &ParsedArgs, ctx: &Context) -> Access {
        match typed_ref::<T::Args>(args, &self.spec.name) {
            Ok(a) => self.tool.access(a, ctx),
            Err(_) => Access::GlobalWrite,
        }
    }

    async fn plan(&self, args: &ParsedArgs, ctx: &Context) -> ToolResult<ActionPlan> {
        let a = typed_ref::<T::Args>(args, &self.spec.name)?;
        let base = ActionPlan::new(&self.spec.name, self.spec.effect, args.json.clone());
        self.tool.plan(a, base, ctx).await
    }

    async fn run(
        &self,
        args: ParsedArgs,
        auth: Authorized,
        ctx: &Context,
    ) -> ToolResult<ToolOutput> {
        let name = self.spec.name.clone();
        let typed = args.typed.downcast::<T::Args>().map_err(|_| {
            ToolError::invalid_args(format!("internal: arguments were not parsed for `{name}`"))
        })?;
        self.tool.run(*typed, auth, ctx).await
    }
}

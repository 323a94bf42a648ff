//! `wrench mcp serve|list|call`: serve the tools over MCP, or use the
//! configured MCP servers.

use super::{Ctx, code, fail, print_result};
use clap::{Arg, ArgAction, ArgMatches, Command};
use std::process::ExitCode;
use wrench_cli::{exit, out};
use wrench_core::{Call, ToolError};

pub(super) fn command() -> Command {
    Command::new("mcp")
        .about("MCP: serve wrench's tools, or use configured MCP servers")
        .subcommand_required(true)
        .subcommand(Command::new("serve")
                .about("Serve the tools over MCP (stdio, or streamable HTTP with --http)")
                .arg(Arg::new("profile").long("profile").value_name("PROFILE").value_parser(super::profiles()).help("Tool profile: which tools are offered"))
                .arg(Arg::new("http").long("http").value_name("ADDR").help("Serve streamable HTTP on this loopback address; clients must send the bearer token printed at start"))
                .arg(Arg::new("token-file").long("token-file").value_name("FILE").requires("http").help("With --http: the bearer token clients must send, from this file (mode 0600); default: $WRENCH_MCP_TOKEN, else a fresh token written to the state dir"))
                .arg(Arg::new("structured-content").long("structured-content").action(ArgAction::SetTrue).help("Also send each result's typed data as structuredContent (for programmatic clients; Claude Code and VS Code show a model structuredContent instead of the text)")))
        .subcommand(Command::new("list").about("List configured MCP servers and their tools"))
        .subcommand(Command::new("call")
                .about("Call one tool of a configured MCP server, under the same rules as `wrench call mcp__SERVER__TOOL`")
                .arg(Arg::new("server").required(true))
                .arg(Arg::new("tool").required(true))
                .arg(Arg::new("args")))
}

pub(super) async fn run(cx: Ctx, sm: &ArgMatches) -> ExitCode {
    match sm.subcommand() {
        Some(("serve", mm)) => serve(cx, mm).await,
        Some(("list", _)) => list(&cx).await,
        Some(("call", mm)) => call(cx, mm).await,
        _ => code(exit::USAGE),
    }
}

async fn serve(mut cx: Ctx, mm: &ArgMatches) -> ExitCode {
    cx.opts.profile = mm.get_one::<String>("profile").cloned();
    let http = match mm
        .get_one::<String>("http")
        .map(|a| a.parse::<std::net::SocketAddr>())
        .transpose()
    {
        Ok(h) => h,
        Err(e) => {
            return fail(
                &ToolError::invalid_args(format!(
                    "--http takes ADDR:PORT, e.g. 127.0.0.1:8765 ({e})"
                )),
                cx.json,
            );
        }
    };
    let engine = match wrench_cli::engine(&cx.opts, None) {
        Ok(e) => e,
        Err(e) => return fail(&e, cx.json),
    };
    let so = wrench_mcp::ServeOptions {
        profile: engine.profile,
        http,
        structured_content: mm.get_flag("structured-content"),
        token_file: mm.get_one::<String>("token-file").map(Into::into),
    };
    match wrench_mcp::serve(engine.executor, so).await {
        Ok(()) => code(exit::OK),
        Err(e) => fail(&e, cx.json),
    }
}

async fn list(cx: &Ctx) -> ExitCode {
    let cfg = match wrench_cli::load_config(&cx.opts) {
        Ok(c) => c,
        Err(e) => return fail(&e, cx.json),
    };
    let root = match wrench_cli::root::choose(cx.opts.root.as_deref()) {
        Ok(c) => c.root,
        Err(e) => return fail(&e, cx.json),
    };
    match wrench_mcp::list_in(&cfg, &root).await {
        Ok(t) => {
            out::line(t);
            code(exit::OK)
        }
        Err(e) => fail(&e, cx.json),
    }
}

/// The same door as `wrench call mcp__SERVER__TOOL`: the executor, the
/// policy, the asker, the redactor, the frame.
async fn call(cx: Ctx, mm: &ArgMatches) -> ExitCode {
    let engine = match wrench_cli::engine(&cx.opts, cx.asker.clone()) {
        Ok(e) => e,
        Err(e) => return fail(&e, cx.json),
    };
    let server = mm.get_one::<String>("server").cloned().unwrap_or_default();
    let tool = mm.get_one::<String>("tool").cloned().unwrap_or_default();
    let name = match wrench_mcp::callable(&engine.config, &server, &tool) {
        Ok(n) => n,
        Err(e) => return fail(&e, cx.json),
    };
    let args = match mm.get_one::<String>("args") {
        None => serde_json::json!({}),
        Some(s) => match serde_json::from_str(s) {
            Ok(v) => v,
            Err(e) => {
                return fail(
                    &ToolError::invalid_args(format!("ARGS must be a JSON object: {e}")),
                    cx.json,
                );
            }
        },
    };
    let r = engine.executor.run_one(Call::new("1", name, args)).await;
    wrench_mcp::client::shutdown_all().await;
    print_result(&r, cx.json)
}

//! `wrench`: the command-line front doors. Thin glue over the wrench-cli library.

use clap::{Arg, ArgAction, ArgMatches, Command};
use std::io::{BufRead, IsTerminal, Read, Write};
use std::process::ExitCode;
use std::sync::Arc;
use wrench_cli::{Engine, Options, exit, exit_code_for, flags, render};
use wrench_core::{ActionPlan, Call, ToolError};

mod commands {
    pub mod daemon;
}

/// The permission mode flag. It is not a clap-global flag, because `grep`
/// has an argument of its own called `mode`: every subcommand gets it, except
/// a tool whose schema has a `mode` property, where it must come before the
/// subcommand (or be spelled `--permission-mode`, which works everywhere).
fn mode_arg() -> Arg {
    Arg::new("perm_mode")
        .long("mode")
        .visible_alias("permission-mode")
        .value_name("MODE")
        .value_parser(["read-only", "ask", "auto", "yolo"])
        .help("Permission mode (default: ask, or the config's)")
}

fn with_mode(cmd: Command) -> Command {
    if cmd
        .get_arguments()
        .any(|a| a.get_id() == "mode" || a.get_long() == Some("mode"))
    {
        cmd.arg(
            Arg::new("perm_mode")
                .long("permission-mode")
                .value_name("MODE")
                .value_parser(["read-only", "ask", "auto", "yolo"])
                .help("Permission mode (default: ask, or the config's)"),
        )
    } else {
        cmd.arg(mode_arg())
    }
}

fn global_args(cmd: Command) -> Command {
    cmd.arg(
        Arg::new("root")
            .long("root")
            .global(true)
            .value_name("DIR")
            .help("Workspace root (default: the current directory)"),
    )
    .arg(
        Arg::new("session")
            .long("session")
            .global(true)
            .value_name("NAME")
            .env("WRENCH_SESSION")
            .help("Session name: read evidence, shell state and jobs are kept per session"),
    )
    .arg(mode_arg())
    .arg(
        Arg::new("allow")
            .long("allow")
            .global(true)
            .action(ArgAction::Append)
            .value_name("RULE")
            .help("Allow rule, e.g. 'bash(git status:*)', 'write(src/**)'"),
    )
    .arg(
        Arg::new("deny")
            .long("deny")
            .global(true)
            .action(ArgAction::Append)
            .value_name("RULE")
            .help("Deny rule; deny wins"),
    )
    .arg(
        Arg::new("config")
            .long("config")
            .global(true)
            .value_name("FILE")
            .help("Config file (default: $WRENCH_CONFIG or ~/.config/wrench/config.toml)"),
    )
    .arg(
        Arg::new("json")
            .long("json")
            .global(true)
            .action(ArgAction::SetTrue)
            .help("Print the structured JSON result"),
    )
    .arg(
        Arg::new("no-daemon")
            .long("no-daemon")
            .global(true)
            .action(ArgAction::SetTrue)
            .help("Run in this process; do not use (or start) the workspace daemon"),
    )
    .arg(
        Arg::new("explain")
            .long("explain")
            .global(true)
            .action(ArgAction::SetTrue)
            .help("Do not run the call: print what the permission engine would decide and why (as `wrench policy check`)"),
    )
}

fn build_cli(reg: &wrench_core::Registry) -> Command {
    let mut cmd = Command::new("wrench")
        .version(env!("CARGO_PKG_VERSION"))
        .about("The tool layer of a coding agent: read, search, edit, run and fetch, under one permission engine, one read-before-write guard, one secret redactor.")
        .subcommand_required(true)
        .arg_required_else_help(true);
    cmd = global_args(cmd);
    cmd = cmd
        .subcommand(with_mode(
            Command::new("call")
                .about("Run one tool call from JSON args; prints the JSON result")
                .arg(Arg::new("tool").required(true))
                .arg(Arg::new("args").help("JSON object, or - for stdin (default: {})")),
        ))
        .subcommand(with_mode(
            Command::new("batch")
                .about("Run JSON Lines of calls ({\"id\",\"tool\",\"args\"}) with the batching planner; JSON Lines out, in input order")
                .arg(Arg::new("file").help("File of calls, or - for stdin (default: -)"))
                .arg(Arg::new("profile").long("profile").value_name("PROFILE")),
        ))
        .subcommand(
            Command::new("tools")
                .about("List the tools with effect, access class and read-only flag")
                .arg(Arg::new("profile").long("profile").value_name("PROFILE")),
        )
        .subcommand(Command::new("schema").about("Print a tool's JSON Schema").arg(Arg::new("tool").required(true)))
        .subcommand(
            Command::new("policy")
                .about("Explain what the permission engine decides for a call, without running it")
                .subcommand_required(true)
                .subcommand(with_mode(
                    Command::new("check")
                        .about("Plan TOOL with ARGS and print its effects, each rule considered, the decision and the rule that would change it; runs nothing (exit 0 allow, 3 ask or deny)")
                        .arg(Arg::new("tool").required(true))
                        .arg(Arg::new("args").help("JSON object, or - for stdin (default: {})")),
                )),
        )
        .subcommand(
            Command::new("mcp")
                .about("MCP: serve wrench's tools, or use configured MCP servers")
                .subcommand_required(true)
                .subcommand(with_mode(
                    Command::new("serve")
                        .about("Serve the tools over MCP (stdio, or streamable HTTP with --http)")
                        .arg(Arg::new("profile").long("profile").value_name("PROFILE"))
                        .arg(Arg::new("http").long("http").value_name("ADDR").help("Serve streamable HTTP on this loopback address; clients must send the bearer token printed at start"))
                        .arg(Arg::new("token-file").long("token-file").value_name("FILE").requires("http").help("With --http: the bearer token clients must send, from this file (mode 0600); default: $WRENCH_MCP_TOKEN, else a fresh token written to the state dir"))
                        .arg(Arg::new("structured-content").long("structured-content").action(ArgAction::SetTrue).help("Also send each result's typed data as structuredContent (for programmatic clients; Claude Code and VS Code show a model structuredContent instead of the text)")),
                ))
                .subcommand(Command::new("list").about("List configured MCP servers and their tools"))
                .subcommand(with_mode(
                    Command::new("call")
                        .about("Call one tool of a configured MCP server, under the same rules as `wrench call mcp__SERVER__TOOL`")
                        .arg(Arg::new("server").required(true))
                        .arg(Arg::new("tool").required(true))
                        .arg(Arg::new("args")),
                )),
        )
        .subcommand(
            Command::new("completions")
                .about("Print a shell completion script")
                .arg(Arg::new("shell").required(true).value_parser(clap::value_parser!(clap_complete::Shell))),
        )
        .subcommand(Command::new("man").about("Print the man page (roff)"))
        .subcommand(commands::daemon::command())
        .subcommand(Command::new("__pty-holder").hide(true).arg(Arg::new("args").num_args(0..).trailing_var_arg(true).allow_hyphen_values(true)));
    let mut tool_cmds: Vec<Command> = reg.tools().map(|t| flags::command_for(t.spec())).collect();
    tool_cmds.sort_by(|a, b| a.get_name().cmp(b.get_name()));
    for c in tool_cmds {
        cmd = cmd.subcommand(with_mode(c.next_help_heading("Tool arguments")));
    }
    cmd
}

/// The permission mode from the root or any subcommand level.
fn perm_mode(m: &ArgMatches) -> Option<String> {
    let mut cur = Some(m);
    while let Some(x) = cur {
        if let Ok(Some(v)) = x.try_get_one::<String>("perm_mode") {
            return Some(v.clone());
        }
        cur = x.subcommand().map(|(_, s)| s);
    }
    None
}

fn options(m: &ArgMatches) -> Options {
    Options {
        root: m.get_one::<String>("root").map(Into::into),
        session: m.get_one::<String>("session").cloned(),
        mode: perm_mode(m),
        allow: m
            .get_many::<String>("allow")
            .map(|v| v.cloned().collect())
            .unwrap_or_default(),
        deny: m
            .get_many::<String>("deny")
            .map(|v| v.cloned().collect())
            .unwrap_or_default(),
        config: m.get_one::<String>("config").map(Into::into),
        profile: None,
    }
}

/// Asks on the terminal when a person is there.
struct TtyAsker;

#[async_trait::async_trait]
impl wrench_core::Asker for TtyAsker {
    async fn ask(&self, _plan: &ActionPlan, prompt: &str) -> bool {
        let prompt = prompt.to_string();
        tokio::task::spawn_blocking(move || {
            let mut err = std::io::stderr();
            let _ = write!(err, "wrench: {prompt}. Allow? [y/N] ");
            let _ = err.flush();
            let mut line = String::new();
            match std::fs::File::open("/dev/tty") {
                Ok(f) => {
                    let _ = std::io::BufReader::new(f).read_line(&mut line);
                }
                Err(_) => return false,
            }
            matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes")
        })
        .await
        .unwrap_or(false)
    }
}

fn fail(e: &ToolError, json: bool) -> ExitCode {
    if json {
        let v = serde_json::json!({"ok": false, "error": {"kind": e.kind, "message": e.message}});
        println!("{v}");
    } else {
        eprintln!("error[{}]: {}", e.kind, e.message);
    }
    ExitCode::from(u8::try_from(exit_code_for(e)).unwrap_or(1))
}

fn code(c: i32) -> ExitCode {
    ExitCode::from(u8::try_from(c).unwrap_or(1))
}

fn read_input(arg: Option<&String>) -> Result<String, ToolError> {
    match arg.map(String::as_str) {
        None | Some("-") => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .map_err(|e| ToolError::from_io("standard input", &e))?;
            Ok(s)
        }
        Some(p) => std::fs::read_to_string(p).map_err(|e| ToolError::from_io(p, &e)),
    }
}

async fn run(m: ArgMatches, reg_for_cli: Arc<wrench_core::Registry>) -> ExitCode {
    let json = m.get_flag("json");
    let mut opts = options(&m);
    let Some((sub, sm)) = m.subcommand() else {
        return code(exit::USAGE);
    };
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    // `mcp serve` asks its client (elicitation), never this terminal.
    let serving = sub == "mcp" && sm.subcommand_name() == Some("serve");
    let asker: Option<Arc<dyn wrench_core::Asker>> = if interactive && sub != "batch" && !serving {
        Some(Arc::new(TtyAsker))
    } else {
        None
    };
    match sub {
        "tools" => {
            let profile = match sm
                .get_one::<String>("profile")
                .map(|p| wrench_core::Profile::parse(p))
                .transpose()
            {
                Ok(p) => p.unwrap_or_default(),
                Err(e) => return fail(&e, json),
            };
            let reg = reg_for_cli.with_profile(profile);
            if json {
                let list: Vec<serde_json::Value> = reg
                    .tools()
                    .map(|t| {
                        let s = t.spec();
                        serde_json::json!({
                            "name": s.name, "aliases": s.aliases, "description": s.description,
                            "effect": s.effect, "access": s.access, "read_only": s.read_only,
                            "open_world": s.open_world, "destructive": s.destructive,
                            "limits": s.limits, "input_schema": s.input_schema,
                        })
                    })
                    .collect();
                println!(
                    "{}",
                    serde_json::to_string_pretty(&list).unwrap_or_default()
                );
            } else {
                println!(
                    "{:<18} {:<16} {:<14} {:<9} aliases",
                    "tool", "effect", "access", "read-only"
                );
                for t in reg.tools() {
                    let s = t.spec();
                    let access = serde_json::to_value(s.access)
                        .ok()
                        .and_then(|v| v.as_str().map(String::from))
                        .unwrap_or_default();
                    println!(
                        "{:<18} {:<16} {:<14} {:<9} {}",
                        s.name,
                        s.effect.as_str(),
                        access,
                        if s.read_only { "yes" } else { "no" },
                        s.aliases.join(", ")
                    );
                }
            }
            code(exit::OK)
        }
        "schema" => {
            let name = sm.get_one::<String>("tool").cloned().unwrap_or_default();
            match reg_for_cli.resolve(&name) {
                Ok(t) => {
                    println!(
                        "{}",
                        serde_json::to_string_pretty(&t.spec().input_schema).unwrap_or_default()
                    );
                    code(exit::OK)
                }
                Err(e) => fail(&e, json),
            }
        }
        "completions" => {
            if let Some(shell) = sm.get_one::<clap_complete::Shell>("shell") {
                let mut cmd = build_cli(&reg_for_cli);
                clap_complete::generate(*shell, &mut cmd, "wrench", &mut std::io::stdout());
            }
            code(exit::OK)
        }
        "man" => {
            let cmd = build_cli(&reg_for_cli);
            let mut out = Vec::new();
            if let Err(e) = clap_mangen::Man::new(cmd).render(&mut out) {
                return fail(
                    &ToolError::io(format!("cannot render the man page: {e}")),
                    json,
                );
            }
            let _ = std::io::stdout().write_all(&out);
            code(exit::OK)
        }
        "__pty-holder" => {
            let args: Vec<String> = sm
                .get_many::<String>("args")
                .map(|v| v.cloned().collect())
                .unwrap_or_default();
            code(wrench_cli::pty_holder(&args))
        }
        "mcp" => {
            let Some((msub, mm)) = sm.subcommand() else {
                return code(exit::USAGE);
            };
            match msub {
                "serve" => {
                    opts.profile = mm.get_one::<String>("profile").cloned();
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
                                json,
                            );
                        }
                    };
                    let engine = match wrench_cli::engine(&opts, None) {
                        Ok(e) => e,
                        Err(e) => return fail(&e, json),
                    };
                    let so = wrench_mcp::ServeOptions {
                        profile: engine.profile,
                        http,
                        structured_content: mm.get_flag("structured-content"),
                        token_file: mm.get_one::<String>("token-file").map(Into::into),
                    };
                    match wrench_mcp::serve(engine.executor, so).await {
                        Ok(()) => code(exit::OK),
                        Err(e) => fail(&e, json),
                    }
                }
                "list" => {
                    let cfg = match wrench_cli::load_config(&opts) {
                        Ok(c) => c,
                        Err(e) => return fail(&e, json),
                    };
                    match wrench_mcp::list(&cfg).await {
                        Ok(t) => {
                            println!("{t}");
                            code(exit::OK)
                        }
                        Err(e) => fail(&e, json),
                    }
                }
                "call" => {
                    // The same door as `wrench call mcp__SERVER__TOOL`: the
                    // executor, the policy, the asker, the redactor, the frame.
                    let engine = match wrench_cli::engine(&opts, asker) {
                        Ok(e) => e,
                        Err(e) => return fail(&e, json),
                    };
                    let server = mm.get_one::<String>("server").cloned().unwrap_or_default();
                    let tool = mm.get_one::<String>("tool").cloned().unwrap_or_default();
                    let name = match wrench_mcp::callable(&engine.config, &server, &tool) {
                        Ok(n) => n,
                        Err(e) => return fail(&e, json),
                    };
                    let args = match mm.get_one::<String>("args") {
                        None => serde_json::json!({}),
                        Some(s) => match serde_json::from_str(s) {
                            Ok(v) => v,
                            Err(e) => {
                                return fail(
                                    &ToolError::invalid_args(format!(
                                        "ARGS must be a JSON object: {e}"
                                    )),
                                    json,
                                );
                            }
                        },
                    };
                    let r = engine.executor.run_one(Call::new("1", name, args)).await;
                    wrench_mcp::client::shutdown_all().await;
                    print_result(&r, json)
                }
                _ => code(exit::USAGE),
            }
        }
        "daemon" => commands::daemon::run(&opts, sm, json).await,
        "policy" => match sm.subcommand() {
            Some(("check", cm)) => policy_check(&opts, cm, json).await,
            _ => code(exit::USAGE),
        },
        "call" => {
            let engine = match wrench_cli::engine(&opts, asker) {
                Ok(e) => e,
                Err(e) => return fail(&e, true),
            };
            let tool = sm.get_one::<String>("tool").cloned().unwrap_or_default();
            let args = match json_args(sm.get_one::<String>("args")) {
                Ok(v) => v,
                Err(e) => return fail(&e, true),
            };
            if m.get_flag("explain") {
                return explain_call(&engine, Call::new("1", tool, args), true).await;
            }
            let call = Call::new("1", tool, args);
            let door = wrench_daemon::Door::Call;
            let no_daemon = m.get_flag("no-daemon");
            if let Some(p) = wrench_cli::daemon::forward(
                &opts,
                &engine,
                door,
                std::slice::from_ref(&call),
                no_daemon,
            )
            .await
            {
                return commands::daemon::emit(p);
            }
            let r = engine.executor.run_one(call).await;
            println!("{}", render::json_line(&r, false));
            match &r.result {
                Ok(_) => code(exit::OK),
                Err(e) => code(exit_code_for(e)),
            }
        }
        "batch" => {
            opts.profile = sm.get_one::<String>("profile").cloned();
            let engine = match wrench_cli::engine(&opts, None) {
                Ok(e) => e,
                Err(e) => return fail(&e, true),
            };
            batch(
                &opts,
                &engine,
                sm.get_one::<String>("file"),
                m.get_flag("no-daemon"),
            )
            .await
        }
        tool => {
            let engine = match wrench_cli::engine(&opts, asker) {
                Ok(e) => e,
                Err(e) => return fail(&e, json),
            };
            let spec = match engine.executor.registry().resolve(tool) {
                Ok(t) => t.spec().clone(),
                Err(e) => return fail(&e, json),
            };
            let args = match flags::args_from_matches(&spec, sm) {
                Ok(a) => a,
                Err(e) => return fail(&e, json),
            };
            let call = Call::new("1", spec.name.clone(), args);
            if m.get_flag("explain") {
                return explain_call(&engine, call, json).await;
            }
            let door = wrench_daemon::Door::Tool { json };
            let no_daemon = m.get_flag("no-daemon");
            if let Some(p) = wrench_cli::daemon::forward(
                &opts,
                &engine,
                door,
                std::slice::from_ref(&call),
                no_daemon,
            )
            .await
            {
                return commands::daemon::emit(p);
            }
            let r = engine.executor.run_one(call).await;
            print_result(&r, json)
        }
    }
}

/// Print one call's result (JSON line, or text on stdout and notes/errors
/// on stderr) and give its exit code.
fn print_result(r: &wrench_core::CallResult, json: bool) -> ExitCode {
    if json {
        println!("{}", render::json_line(r, false));
    } else {
        let (out, err) = render::human(r);
        let _ = std::io::stdout().write_all(out.as_bytes());
        let _ = std::io::stderr().write_all(err.as_bytes());
    }
    match &r.result {
        Ok(_) => code(exit::OK),
        Err(e) => code(exit_code_for(e)),
    }
}

async fn batch(
    opts: &Options,
    engine: &Engine,
    file: Option<&String>,
    no_daemon: bool,
) -> ExitCode {
    let input = match read_input(file) {
        Ok(s) => s,
        Err(e) => return fail(&e, true),
    };
    let mut calls = Vec::new();
    for (i, line) in input.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with("//") || t.starts_with('#') {
            continue;
        }
        match serde_json::from_str::<Call>(t) {
            Ok(mut c) => {
                if c.id.is_empty() {
                    c.id = (i + 1).to_string();
                }
                calls.push(c);
            }
            Err(e) => {
                return fail(
                    &ToolError::invalid_args(format!(
                        "batch line {}: not a call ({e}); each line is {{\"id\": \"...\", \"tool\": \"read\", \"args\": {{...}}}}",
                        i + 1
                    )),
                    true,
                );
            }
        }
    }
    let door = wrench_daemon::Door::Batch;
    if let Some(p) = wrench_cli::daemon::forward(opts, engine, door, &calls, no_daemon).await {
        return commands::daemon::emit(p);
    }
    let results = engine.executor.run_batch(calls).await;
    let mut stdout = std::io::stdout().lock();
    let mut all_ok = true;
    for r in &results {
        all_ok &= r.ok();
        let _ = writeln!(stdout, "{}", render::json_line(r, true));
    }
    code(if all_ok { exit::OK } else { exit::TOOL_ERROR })
}

fn main() -> ExitCode {
    let reg = match wrench_cli::builtin_registry() {
        Ok(r) => Arc::new(r),
        Err(e) => return fail(&e, false),
    };
    let cli = build_cli(&reg);
    let m = match cli.try_get_matches() {
        Ok(m) => m,
        Err(e) => {
            let _ = e.print();
            return code(if e.use_stderr() {
                exit::USAGE
            } else {
                exit::OK
            });
        }
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            return fail(
                &ToolError::io(format!("cannot start the runtime: {e}")),
                false,
            );
        }
    };
    rt.block_on(async move {
        let code = run(m, reg).await;
        wrench_lsp::shutdown_all().await;
        code
    })
}

/// `wrench policy check TOOL [ARGS]`: plan the call, explain the decision.
async fn policy_check(opts: &wrench_cli::Options, cm: &ArgMatches, json: bool) -> ExitCode {
    let engine = match wrench_cli::engine(opts, None) {
        Ok(e) => e,
        Err(e) => return fail(&e, json),
    };
    let tool = cm.get_one::<String>("tool").cloned().unwrap_or_default();
    let args = match json_args(cm.get_one::<String>("args")) {
        Ok(v) => v,
        Err(e) => return fail(&e, json),
    };
    explain_call(&engine, Call::new("1", tool, args), json).await
}

/// A call's ARGS: a JSON object given inline, `-` for standard input, or
/// nothing for `{}`.
fn json_args(arg: Option<&String>) -> Result<serde_json::Value, ToolError> {
    let raw = match arg.map(String::as_str) {
        None => "{}".to_string(),
        Some("-") => read_input(None)?,
        Some(s) => s.to_string(),
    };
    serde_json::from_str(&raw).map_err(|e| {
        ToolError::invalid_args(format!(
            "ARGS must be a JSON object (or - to read it from stdin): {e}"
        ))
    })
}

/// Plan `call` and print the permission engine's explanation of it; runs
/// nothing. Exit 0 when it would be allowed, 3 otherwise.
async fn explain_call(engine: &Engine, call: Call, json: bool) -> ExitCode {
    let plan = match engine.executor.plan_only(call).await {
        Ok(p) => p,
        Err(e) => return fail(&e, json),
    };
    let e = engine.policy.explain(&plan);
    if json {
        println!("{}", serde_json::to_string(&e).unwrap_or_default());
    } else {
        print!("{}", wrench_cli::explain::render(&e));
    }
    if e.decision == "allow" {
        code(exit::OK)
    } else {
        code(exit::DENIED)
    }
}

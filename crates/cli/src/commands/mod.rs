//! The subcommands, one file each, and what they share: the global flags,
//! the options they become, the terminal asker, and printing a result or an
//! error with its exit code.

mod batch;
mod call;
mod completions;
pub mod daemon;
mod man;
mod mcp;
mod policy;
mod pty_holder;
mod root;
mod schema;
mod tool;
mod tools;

use clap::{Arg, ArgAction, ArgMatches, Command};
use std::io::{BufRead, IsTerminal, Read, Write};
use std::process::ExitCode;
use std::sync::Arc;
use wrench_cli::{Engine, Options, exit, exit_code_for, flags, out, render};
use wrench_core::{ActionPlan, Call, Registry, ToolError};

/// The tool profiles `--profile` takes (with the spellings Profile::parse
/// also accepts).
pub(crate) fn profiles() -> clap::builder::PossibleValuesParser {
    use clap::builder::PossibleValue;
    clap::builder::PossibleValuesParser::new([
        PossibleValue::new("coding").help("every tool (the default)"),
        PossibleValue::new("planning").help("read-only tools plus todowrite"),
        PossibleValue::new("smol").help("read, grep, glob, edit, write, bash"),
        PossibleValue::new("readonly")
            .aliases(["read-only", "read_only"])
            .help("read-only tools only"),
    ])
}

const MODES: [&str; 4] = ["read-only", "ask", "auto", "yolo"];
const GLOBAL: &str = "Global options";

/// `--permission-mode`. On the top level it is also spelled `--mode`
/// (before the subcommand only); a subcommand takes only the long name, so
/// a tool argument called `mode` (`wrench grep fn --mode content`) never
/// clashes with it.
fn perm_mode_arg() -> Arg {
    Arg::new("perm_mode")
        .long("permission-mode")
        .value_name("MODE")
        .value_parser(MODES)
        .help_heading(GLOBAL)
        .help("Permission mode: read-only, ask (the default, or the config's), auto (sandboxed commands and edits run), yolo (everything not denied runs)")
}

/// Add `--permission-mode` to `cmd` and every subcommand below it.
fn with_perm_mode(cmd: Command) -> Command {
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    let mut cmd = cmd;
    for n in names {
        cmd = cmd.mut_subcommand(n, |c| with_perm_mode(c.arg(perm_mode_arg())));
    }
    cmd
}

fn global_args(cmd: Command) -> Command {
    cmd.next_help_heading(GLOBAL)
        .arg(
        Arg::new("root")
            .long("root")
            .global(true)
            .value_name("DIR")
            .help("Workspace root (default: the top of the git work tree holding the current directory, else the current directory; `wrench root` says which)"),
    )
    .arg(
        Arg::new("session")
            .long("session")
            .global(true)
            .value_name("NAME")
            .env("WRENCH_SESSION")
            .help("Session name: read evidence, shell state and jobs are kept per session"),
    )
    .arg(perm_mode_arg().visible_alias("mode"))
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
        Arg::new("color")
            .long("color")
            .global(true)
            .value_name("WHEN")
            .value_parser(["auto", "always", "never"])
            .default_value("auto")
            .help("Colour paths, line numbers, matches and diff hunks: auto (on a terminal, unless NO_COLOR is set), always, never"),
    )
    .arg(
        Arg::new("max-lines")
            .long("max-lines")
            .global(true)
            .value_name("N")
            .value_parser(clap::value_parser!(u64))
            .help("Print at most N lines of a command's text (default: all; a person's CLI is not held to the model's output budgets)"),
    )
    .arg(
        Arg::new("explain")
            .long("explain")
            .global(true)
            .action(ArgAction::SetTrue)
            .help("Do not run the call: print what the permission engine would decide and why (as `wrench policy check`)"),
    )
}

/// The whole command line: global flags, the fixed subcommands, one
/// subcommand per tool.
pub fn build_cli(reg: &Registry) -> Command {
    let (tools, one_tool) = tool::commands(reg);
    // A tool's own command line needs its subcommand and the global flags
    // only: the other doors appear in the top-level help alone.
    let doors = if one_tool {
        Vec::new()
    } else {
        vec![
            call::command(),
            batch::command(),
            tools::command(),
            schema::command(),
            policy::command(),
            mcp::command(),
            root::command(),
            completions::command(),
            man::command(),
            daemon::command(),
        ]
    };
    let mut cmd = Command::new("wrench")
        .version(env!("CARGO_PKG_VERSION"))
        .about("The tool layer of a coding agent: read, search, edit, run and fetch, under one permission engine, one read-before-write guard, one secret redactor.")
        .subcommand_required(true)
        .arg_required_else_help(true)
        .help_template(top_help(&doors, &tools))
        .after_help(EXIT_CODES);
    cmd = global_args(cmd);
    for c in doors {
        cmd = cmd.subcommand(c);
    }
    for c in tools {
        cmd = cmd.subcommand(c.after_help(EXIT_CODES));
    }
    with_perm_mode(cmd).subcommand(pty_holder::command())
}

/// The exit-code table, at the end of `--help`.
const EXIT_CODES: &str = "Exit codes of `wrench TOOL`: 0 ok; 1 tool error, or no match (grep, glob); 2 usage, invalid arguments or a missing path; 3 denied; bash exits with its command's code (124 on timeout). `call`, `batch` and `--json`: 0 ok, 1 tool error, 2 invalid arguments, 3 denied. When the reader of the output goes away (`| head`), wrench stops printing and exits 0.";

/// The top-level help: the front-door commands one per line, the tools as
/// a list of names, then the global options.
fn top_help(doors: &[Command], tools: &[Command]) -> String {
    let mut s = String::from("{about-with-newline}\n{usage-heading} {usage}\n\nCommands:\n");
    for c in doors {
        let about = c.get_about().map(ToString::to_string).unwrap_or_default();
        s.push_str(&format!(
            "  {:<12} {}\n",
            c.get_name(),
            flags::summary(&about)
        ));
    }
    s.push_str("\nTools (`wrench TOOL -h` for one; `wrench tools` for the table):\n");
    let mut line = String::from(" ");
    for c in tools {
        if line.len() + c.get_name().len() + 1 > 98 {
            s.push_str(&line);
            s.push('\n');
            line = String::from(" ");
        }
        line.push(' ');
        line.push_str(c.get_name());
    }
    s.push_str(&line);
    s.push_str("\n\nGlobal options:\n{options}{after-help}");
    s
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
        relative_to_cwd: false,
        no_daemon: std::iter::successors(Some(m), |x| x.subcommand().map(|(_, s)| s))
            .any(|x| matches!(x.try_get_one::<bool>("no-daemon"), Ok(Some(true)))),
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
            let prompt = wrench_core::frame::for_terminal(&prompt);
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

/// What every subcommand is run with.
pub(crate) struct Ctx {
    /// The whole command line's matches (global flags live here).
    pub m: ArgMatches,
    pub opts: Options,
    pub json: bool,
    /// The terminal asker, when a person is at the terminal.
    pub asker: Option<Arc<dyn wrench_core::Asker>>,
    pub reg: Arc<Registry>,
}

/// Run the parsed command line.
pub async fn run(m: ArgMatches, reg: Arc<Registry>) -> ExitCode {
    let json = m.get_flag("json");
    let opts = options(&m);
    let Some((sub, sm)) = m.subcommand() else {
        return code(exit::USAGE);
    };
    let (sub, sm) = (sub.to_string(), sm.clone());
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    // `mcp serve` asks its client (elicitation), never this terminal.
    let serving = sub == "mcp" && sm.subcommand_name() == Some("serve");
    let asker: Option<Arc<dyn wrench_core::Asker>> = if interactive && sub != "batch" && !serving {
        Some(Arc::new(TtyAsker))
    } else {
        None
    };
    let cx = Ctx {
        m,
        opts,
        json,
        asker,
        reg,
    };
    match sub.as_str() {
        "tools" => tools::run(&cx, &sm),
        "schema" => schema::run(&cx, &sm),
        "completions" => completions::run(&cx, &sm),
        "man" => man::run(&cx),
        "root" => root::run(&cx),
        "__pty-holder" => pty_holder::run(&sm),
        "mcp" => mcp::run(cx, &sm).await,
        "policy" => policy::run(&cx, &sm).await,
        "call" => call::run(cx, &sm).await,
        "batch" => batch::run(cx, &sm).await,
        "daemon" => daemon::run(&cx.opts, &sm, cx.json).await,
        name => tool::run(cx, name, &sm).await,
    }
}

/// Print an error (a JSON line with `json`, else `error[kind]: …` on stderr)
/// and give its exit code.
pub fn fail(e: &ToolError, json: bool) -> ExitCode {
    if json {
        let v = serde_json::json!({"ok": false, "error": {"kind": e.kind, "message": e.message}});
        out::json_line(v.to_string());
    } else {
        out::stderr(format!("error[{}]: {}\n", e.kind, e.message));
    }
    ExitCode::from(u8::try_from(exit_code_for(e)).unwrap_or(1))
}

/// An exit code as the process's status.
pub fn code(c: i32) -> ExitCode {
    ExitCode::from(u8::try_from(c).unwrap_or(1))
}

/// A file's text, or standard input for `None` or `-`.
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

/// Print one call's result (JSON line, or text on stdout and notes/errors
/// on stderr) and give its SPEC §1 exit code (0 ok, 1 tool error, 2
/// invalid args, 3 denied): the code of `--json` and the JSON-args doors.
fn print_result(r: &wrench_core::CallResult, json: bool) -> ExitCode {
    if json {
        out::json_line(render::json_line(r, false));
    } else {
        let (text, err) = render::human(r);
        out::stdout(text);
        out::stderr(err);
    }
    match &r.result {
        Ok(_) => code(exit::OK),
        Err(e) => code(exit_code_for(e)),
    }
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
        out::json_line(serde_json::to_string(&e).unwrap_or_default());
    } else {
        out::stdout(wrench_cli::explain::render(&e));
    }
    if e.decision == "allow" {
        code(exit::OK)
    } else {
        code(exit::DENIED)
    }
}

/// How `call` and `batch` print results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// Each result as a person reads it.
    Text,
    /// One pretty JSON document (an object for `call`, an array for `batch`).
    Json,
    /// One JSON object per line (SPEC §1's result shape).
    Jsonl,
}

/// `--format text|json|jsonl` of `call` and `batch`.
fn format_arg() -> Arg {
    Arg::new("format")
        .long("format")
        .value_name("FORMAT")
        .value_parser(["text", "json", "jsonl"])
        .help("text (readable; the default on a terminal), json (one pretty document) or jsonl (one result per line; the default when piped)")
}

/// The format asked for, else text on a terminal and JSON Lines otherwise.
fn format_of(sm: &ArgMatches) -> Format {
    match sm.get_one::<String>("format").map(String::as_str) {
        Some("text") => Format::Text,
        Some("json") => Format::Json,
        Some(_) => Format::Jsonl,
        None if std::io::stdout().is_terminal() => Format::Text,
        None => Format::Jsonl,
    }
}

/// The `--profile` value of a subcommand, parsed.
fn profile_of(sm: &ArgMatches) -> Result<wrench_core::Profile, ToolError> {
    Ok(sm
        .get_one::<String>("profile")
        .map(|p| wrench_core::Profile::parse(p))
        .transpose()?
        .unwrap_or_default())
}

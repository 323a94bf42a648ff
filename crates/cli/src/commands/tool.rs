//! `wrench <tool> [flags]`: one tool call with flags generated from the
//! tool's JSON Schema; text for a person out (`--json` for the result).
//!
//! A person is not held to a model's budgets: grep and glob get their
//! largest limits unless the flags set them, and `--max-lines N` is the one
//! cap. Relative paths start at the current directory when it is inside
//! the root. Colour on a terminal (`--color`).

use super::{Ctx, code, explain_call, fail, print_result};
use clap::{ArgMatches, Command};
use serde_json::{Value, json};
use std::io::IsTerminal;
use std::process::ExitCode;
use wrench_cli::{color, flags, human_exit_code, out, render};
use wrench_core::{Call, Executor, Registry};

/// The largest output grep may produce for a person (its own ceiling is 32 MiB).
const PERSON_GREP_MAX_CHARS: usize = 4 * 1024 * 1024;
/// The most grep entries for a person.
const PERSON_GREP_LIMIT: usize = 100_000;

/// One subcommand per tool, sorted by name; true when the command line
/// invokes a tool, which then has the only subcommand.
pub(super) fn commands(reg: &Registry) -> (Vec<Command>, bool) {
    // A one-shot tool call parses with its own subcommand only.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let invoked = wrench_cli::invoked_tool(reg, &args);
    let one = invoked.is_some();
    let mut cmds: Vec<Command> = match invoked {
        // Only that tool is built (see Registry::register_lazy).
        Some(name) => reg
            .resolve(&name)
            .map(|t| flags::command_for(t.spec()))
            .into_iter()
            .collect(),
        None => reg.tools().map(|t| flags::command_for(t.spec())).collect(),
    };
    cmds.sort_by(|a, b| a.get_name().cmp(b.get_name()));
    (cmds, one)
}

/// The model budgets a person's call does not inherit: set each to its
/// person-sized value when the flags left it out.
fn person_budgets(tool: &str, args: &mut Value) {
    let budgets: &[(&str, Value)] = match tool {
        "grep" => &[
            ("limit", json!(PERSON_GREP_LIMIT)),
            ("max_chars", json!(PERSON_GREP_MAX_CHARS)),
        ],
        "glob" => &[("limit", json!(wrench_tools_fs::glob::GLOB_MAX_LIMIT))],
        _ => &[],
    };
    if let Some(o) = args.as_object_mut() {
        for (k, v) in budgets {
            o.entry(k.to_string()).or_insert_with(|| v.clone());
        }
    }
}

/// `grep -C/-A/-B` without a mode shows the lines, as in rg: context only
/// exists in content mode.
fn context_means_content(tool: &str, args: &mut Value) {
    if tool != "grep" {
        return;
    }
    if let Some(o) = args.as_object_mut()
        && !o.contains_key("mode")
        && ["context_lines", "before_context", "after_context"]
            .iter()
            .any(|k| o.contains_key(*k))
    {
        o.insert("mode".into(), json!("content"));
    }
}

/// At most `max` lines of `text`, and a note of what was left out.
fn cap_lines(text: &str, max: u64) -> (String, Option<String>) {
    let total = text.lines().count() as u64;
    if total <= max {
        return (text.to_string(), None);
    }
    let keep: String = text
        .split_inclusive('\n')
        .take(usize::try_from(max).unwrap_or(usize::MAX))
        .collect();
    (
        keep,
        Some(format!(
            "note: {} more lines not shown (--max-lines {max}); drop --max-lines to see all\n",
            total - max
        )),
    )
}

pub(super) async fn run(mut cx: Ctx, tool: &str, sm: &ArgMatches) -> ExitCode {
    cx.opts.relative_to_cwd = true;
    let mut engine = match wrench_cli::engine_over(&cx.opts, cx.asker.clone(), Some(&cx.reg)) {
        Ok(e) => e,
        Err(e) => return fail(&e, cx.json),
    };
    if !cx.json {
        // A person reads the text; nobody sees the data's copy of a file's
        // content, so it is neither made nor scanned for secrets.
        let mut base = engine.executor.context().clone();
        base.content_in_data = false;
        engine.executor = Executor::new(engine.executor.registry().clone(), base);
    }
    let tool = match engine.executor.registry().resolve(tool) {
        Ok(t) => t,
        Err(e) => return fail(&e, cx.json),
    };
    let spec = tool.spec();
    let mut args = match flags::args_from_matches(spec, sm) {
        Ok(a) => a,
        Err(e) => return fail(&e, cx.json),
    };
    if !cx.json {
        person_budgets(&spec.name, &mut args);
    }
    context_means_content(&spec.name, &mut args);
    let call = Call::new("1", spec.name.clone(), args.clone());
    if cx.m.get_flag("explain") {
        return explain_call(&engine, call, cx.json).await;
    }
    let door = wrench_daemon::Door::Tool { json: cx.json };
    let no_daemon = cx.m.get_flag("no-daemon");
    if let Some(p) = wrench_cli::daemon::forward(
        &cx.opts,
        &engine,
        door,
        std::slice::from_ref(&call),
        no_daemon,
    )
    .await
    {
        if cx.json {
            return super::daemon::emit(p);
        }
        let code = ExitCode::from(u8::try_from(p.code).unwrap_or(1));
        let printed = Shown {
            text: p.stdout,
            notes: p.stderr,
            escaped: false,
        };
        return show(&cx, &spec.name, &args, printed, code);
    }
    let r = engine.executor.run_one(call).await;
    if cx.json {
        return print_result(&r, true);
    }
    let (text, notes) = render::human(&r);
    let printed = Shown {
        text,
        notes,
        escaped: true,
    };
    show(&cx, &spec.name, &args, printed, code(human_exit_code(&r)))
}

/// A person's result as [`show`] prints it.
struct Shown {
    text: String,
    notes: String,
    /// The text is [`render::human`]'s, made safe for a terminal in this
    /// process (a daemon's answer is escaped again here).
    escaped: bool,
}

/// Print a person's result: `--max-lines`, colour on a terminal.
fn show(cx: &Ctx, tool: &str, args: &Value, shown: Shown, exit: ExitCode) -> ExitCode {
    let Shown {
        mut text,
        mut notes,
        escaped,
    } = shown;
    if let Some(max) = cx.m.get_one::<u64>("max-lines") {
        let (kept, note) = cap_lines(&text, *max);
        text = kept;
        if let Some(n) = note {
            notes.push_str(&n);
        }
    }
    let when =
        cx.m.get_one::<String>("color")
            .and_then(|w| color::When::parse(w))
            .unwrap_or(color::When::Auto);
    if when.enabled(std::io::stdout().is_terminal()) {
        text = color::paint(tool, args, &text);
        out::styled_stdout(text);
    } else if escaped {
        // Escaping it again would change nothing (`frame::for_terminal`
        // is idempotent: tested in `out`); a large grep is not read twice.
        out::escaped_stdout(&text);
    } else {
        out::styled_stdout(text);
    }
    out::stderr(notes);
    exit
}

//! `wrench tools [--profile P]`: the tools with effect, access class and
//! read-only flag (`--json`: each tool's whole spec).

use super::{Ctx, code, fail, profile_of};
use clap::{Arg, ArgMatches, Command};
use std::process::ExitCode;
use wrench_cli::{exit, out};

pub(super) fn command() -> Command {
    Command::new("tools")
        .about("List the tools with effect, access class and read-only flag")
        .arg(
            Arg::new("profile")
                .long("profile")
                .value_name("PROFILE")
                .value_parser(super::profiles())
                .help("Tool profile: which tools are offered"),
        )
}

pub(super) fn run(cx: &Ctx, sm: &ArgMatches) -> ExitCode {
    let profile = match profile_of(sm) {
        Ok(p) => p,
        Err(e) => return fail(&e, cx.json),
    };
    let reg = cx.reg.with_profile(profile);
    if cx.json {
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
        out::json_line(serde_json::to_string_pretty(&list).unwrap_or_default());
    } else {
        out::line(format!(
            "{:<18} {:<16} {:<14} {:<9} aliases",
            "tool", "effect", "access", "read-only"
        ));
        for t in reg.tools() {
            let s = t.spec();
            let access = serde_json::to_value(s.access)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default();
            out::line(format!(
                "{:<18} {:<16} {:<14} {:<9} {}",
                s.name,
                s.effect.as_str(),
                access,
                if s.read_only { "yes" } else { "no" },
                s.aliases.join(", ")
            ));
        }
    }
    code(exit::OK)
}

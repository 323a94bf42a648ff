//! Per-tool CLI flags generated from the tool's JSON Schema, so the flags,
//! the JSON args and the schema are one thing and cannot drift.
//!
//! Each property becomes `--kebab-name`; booleans are switches, arrays repeat,
//! objects take JSON; the spec's `positional` list names the positional ones.

use clap::{Arg, ArgAction, ArgMatches, Command};
use serde_json::{Map, Value};
use wrench_core::{ToolError, ToolResult, ToolSpec};

pub use wrench_core::repair::{enum_values, types_of};

/// Text arguments too long for a command line: `--NAME -` reads the value
/// from standard input and `--NAME-file PATH` from a file (`git diff |
/// wrench apply_patch --patch -`, `wrench apply_patch --patch-file x.diff`).
pub const FILE_ARGS: &[&str] = &["patch"];

/// Spellings of a switch kept for peers: apply_patch's `--check` is git
/// apply's name for a dry run.
const SWITCH_ALIASES: &[(&str, &str, &str)] = &[("apply_patch", "dry_run", "check")];

fn kebab(name: &str) -> String {
    name.replace('_', "-")
}

/// A schema description as one paragraph: its lines joined with spaces.
pub fn joined(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The first sentence of a description, for one-line listings (at most
/// about 80 characters, cut at a word).
pub fn summary(s: &str) -> String {
    let j = joined(s);
    let first = match j.find(". ") {
        Some(i) => &j[..=i],
        None => j.as_str(),
    };
    if first.chars().count() <= 80 {
        return first.trim_end_matches('.').to_string();
    }
    let mut out = String::new();
    for w in first.split(' ') {
        if out.chars().count() + w.chars().count() > 76 {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    out.push('…');
    out
}

/// rg-style short flags of a tool's arguments: (tool, property, short).
const SHORTS: &[(&str, &str, char)] = &[
    ("grep", "case_insensitive", 'i'),
    ("grep", "word", 'w'),
    ("grep", "fixed_strings", 'F'),
    ("grep", "context_lines", 'C'),
    ("grep", "before_context", 'B'),
    ("grep", "after_context", 'A'),
    ("grep", "type", 't'),
    ("grep", "glob", 'g'),
];

/// Short switches that set an argument to one value, as rg's `-l` and `-c`:
/// (tool, short, long, property, value, help).
const VALUE_SWITCHES: &[(&str, char, &str, &str, &str, &str)] = &[
    (
        "grep",
        'l',
        "files-with-matches",
        "mode",
        "files_with_matches",
        "Print only the paths of matching files (mode files_with_matches)",
    ),
    (
        "grep",
        'c',
        "count",
        "mode",
        "count",
        "Print path:count per matching file (mode count)",
    ),
];

fn switch_id(long: &str) -> String {
    format!("{long}__switch")
}

/// The clap subcommand of one tool.
pub fn command_for(spec: &ToolSpec) -> Command {
    let name = spec.name.clone();
    let mut cmd = Command::new(name.clone())
        .about(summary(&spec.description))
        .long_about(joined(&spec.description))
        .next_help_heading("Tool arguments");
    let k = kebab(&name);
    if k != name {
        cmd = cmd.visible_alias(k);
    }
    let props = spec
        .input_schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let required: Vec<String> = spec
        .input_schema
        .get("required")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    for (prop, schema) in &props {
        let types = types_of(schema);
        let has = |t: &str| types.iter().any(|x| x == t);
        let help = schema
            .get("description")
            .and_then(Value::as_str)
            .map(joined)
            .unwrap_or_default();
        let pos_index = spec.positional.iter().position(|p| p == prop);
        let mut arg = Arg::new(prop.clone()).help(help);
        if let Some(i) = pos_index {
            arg = arg.index(i + 1).value_name(prop.to_uppercase());
            if has("array") {
                arg = arg.action(ArgAction::Append).num_args(1..);
            }
            // Positional args may also be given as flags, for scripts.
            cmd = cmd.arg(
                Arg::new(format!("{prop}__flag"))
                    .long(kebab(prop))
                    .value_name(prop.to_uppercase())
                    .hide(true)
                    .action(if has("array") {
                        ArgAction::Append
                    } else {
                        ArgAction::Set
                    })
                    .conflicts_with(prop.clone()),
            );
        } else {
            arg = arg.long(kebab(prop));
            if let Some((_, _, c)) = SHORTS.iter().find(|(t, p, _)| *t == name && p == prop) {
                arg = arg.short(*c);
            }
            if has("boolean") && !has("string") {
                arg = arg.action(ArgAction::SetTrue);
            } else if has("array") {
                arg = arg.action(ArgAction::Append).value_name("VALUE");
            } else {
                arg = arg.value_name(if has("integer") || has("number") {
                    "N"
                } else {
                    "VALUE"
                });
            }
            if prop.contains('_') {
                // Also accept the snake_case spelling.
                arg = arg.alias(prop.clone());
            }
            for (_, _, alias) in SWITCH_ALIASES
                .iter()
                .filter(|(t, p, _)| *t == name && p == prop)
            {
                arg = arg.visible_alias(*alias);
            }
            if FILE_ARGS.contains(&prop.as_str()) {
                cmd = cmd.arg(
                    Arg::new(format!("{prop}__file"))
                        .long(format!("{}-file", kebab(prop)))
                        .value_name("PATH")
                        .help(format!("Read --{} from this file", kebab(prop)))
                        .conflicts_with(prop.clone()),
                );
            }
        }
        let ev = enum_values(schema);
        if !ev.is_empty() {
            arg = arg.value_parser(clap::builder::PossibleValuesParser::new(ev));
        }
        if required.contains(prop) && pos_index.is_none() {
            arg = arg.help_heading("Required");
        }
        cmd = cmd.arg(arg);
    }
    for (_, short, long, prop, _, help) in VALUE_SWITCHES.iter().filter(|s| s.0 == name) {
        cmd = cmd.arg(
            Arg::new(switch_id(long))
                .short(*short)
                .long(*long)
                .action(ArgAction::SetTrue)
                .conflicts_with(*prop)
                .help(*help),
        );
    }
    cmd
}

fn convert(prop: &str, schema: &Value, raw: &str) -> ToolResult<Value> {
    let types = types_of(schema);
    let has = |t: &str| types.iter().any(|x| x == t);
    if has("integer") {
        if let Ok(n) = raw.trim().parse::<i64>() {
            return Ok(Value::from(n));
        }
        if !has("string") {
            return Err(ToolError::invalid_args(format!(
                "--{} takes a whole number, not {raw:?}",
                kebab(prop)
            )));
        }
    }
    if has("number")
        && let Ok(n) = raw.trim().parse::<f64>()
        && let Some(num) = serde_json::Number::from_f64(n)
    {
        return Ok(Value::Number(num));
    }
    if has("object") && !has("string") {
        return serde_json::from_str(raw)
            .map_err(|e| ToolError::invalid_args(format!("--{} takes JSON: {e}", kebab(prop))));
    }
    if has("boolean") && !has("string") {
        return match raw {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            _ => Err(ToolError::invalid_args(format!(
                "--{} takes true or false",
                kebab(prop)
            ))),
        };
    }
    Ok(Value::String(raw.to_string()))
}

/// The value of a [`FILE_ARGS`] argument: `-` is standard input, and
/// `--NAME-file PATH` a file read whole.
fn file_arg(prop: &str, raws: Vec<String>, m: &ArgMatches) -> ToolResult<Vec<String>> {
    use std::io::Read;
    if let Ok(Some(path)) = m.try_get_one::<String>(&format!("{prop}__file")) {
        return std::fs::read_to_string(path)
            .map(|s| vec![s])
            .map_err(|e| ToolError::from_io(path, &e));
    }
    if raws.last().map(String::as_str) == Some("-") {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| ToolError::from_io("standard input", &e))?;
        return Ok(vec![s]);
    }
    Ok(raws)
}

/// Turn the matches of a tool's subcommand back into JSON args.
pub fn args_from_matches(spec: &ToolSpec, m: &ArgMatches) -> ToolResult<Value> {
    let mut out = Map::new();
    let props = spec
        .input_schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for (prop, schema) in &props {
        let types = types_of(schema);
        let is_array = types.iter().any(|t| t == "array");
        let is_switch =
            types.iter().any(|t| t == "boolean") && !types.iter().any(|t| t == "string");
        let is_pos = spec.positional.iter().any(|p| p == prop);
        if is_switch && !is_pos {
            if m.get_flag(prop) {
                out.insert(prop.clone(), Value::Bool(true));
            }
            continue;
        }
        let mut raws: Vec<String> = m
            .get_many::<String>(prop)
            .map(|v| v.cloned().collect())
            .unwrap_or_default();
        if is_pos && let Some(v) = m.get_many::<String>(&format!("{prop}__flag")) {
            raws.extend(v.cloned());
        }
        if let Some((.., value, _)) = VALUE_SWITCHES.iter().find(|s| {
            s.0 == spec.name
                && s.3 == prop
                && m.try_get_one::<bool>(&switch_id(s.2)).ok().flatten() == Some(&true)
        }) {
            raws.push((*value).to_string());
        }
        if FILE_ARGS.contains(&prop.as_str()) {
            raws = file_arg(prop, raws, m)?;
        }
        if raws.is_empty() {
            continue;
        }
        if is_array {
            let item_schema = schema
                .get("items")
                .cloned()
                .or_else(|| {
                    schema
                        .get("anyOf")
                        .and_then(Value::as_array)
                        .and_then(|a| a.iter().find_map(|s| s.get("items").cloned()))
                })
                .unwrap_or(Value::Null);
            let items: ToolResult<Vec<Value>> = raws
                .iter()
                .map(|r| {
                    if item_schema.is_null() || types_of(&item_schema).iter().any(|t| t == "object")
                    {
                        serde_json::from_str(r).or_else(|_| Ok(Value::String(r.clone())))
                    } else {
                        convert(prop, &item_schema, r)
                    }
                })
                .collect();
            out.insert(prop.clone(), Value::Array(items?));
        } else if let Some(last) = raws.last() {
            out.insert(prop.clone(), convert(prop, schema, last)?);
        }
    }
    Ok(Value::Object(out))
}

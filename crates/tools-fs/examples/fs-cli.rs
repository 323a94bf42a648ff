//! A minimal front door over this crate's tools alone, for benchmarking the
//! engine path (registry → executor → tool → redactor) without the full CLI:
//! `fs-cli [--root DIR] <tool> [positional...] [--flag value | --bool-flag]...`.
//! Flags are the tool's snake_case args in kebab-case; it prints the model text.
//!
//! `cargo run --release -p wrench-tools-fs --example fs-cli -- grep TODO --mode count`

#![allow(clippy::print_stdout, clippy::print_stderr)]

use serde_json::{Map, Value};
use std::io::Write;
use std::sync::Arc;
use wrench_core::{AllowAll, Call, Executor, Registry, context_for};

fn main() {
    std::process::exit(match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("fs-cli: {e}");
            2
        }
    });
}

fn run() -> Result<i32, String> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut root = std::env::current_dir().map_err(|e| e.to_string())?;
    if args.first().map(String::as_str) == Some("--root") && args.len() > 1 {
        root = args[1].clone().into();
        args.drain(..2);
    }
    let Some(tool) = args.first().cloned() else {
        return Err("usage: fs-cli [--root DIR] <tool> [args...]".into());
    };
    let mut reg = Registry::new();
    wrench_tools_fs::register(&mut reg).map_err(|e| e.to_string())?;
    let t = reg.resolve(&tool).map_err(|e| e.to_string())?;
    let spec = t.spec().clone();
    let props = spec.input_schema["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let mut obj = Map::new();
    let mut positional = spec.positional.iter();
    let mut it = args[1..].iter().peekable();
    while let Some(a) = it.next() {
        if let Some(flag) = a.strip_prefix("--") {
            let key = flag.replace('-', "_");
            let schema = props.get(&key).cloned().unwrap_or(Value::Null);
            let is_bool = schema["type"] == "boolean";
            if is_bool {
                obj.insert(key, Value::Bool(true));
            } else {
                let v = it.next().ok_or_else(|| format!("--{flag} needs a value"))?;
                obj.insert(key, typed(v, &schema));
            }
        } else if let Some(p) = positional.next() {
            let schema = props.get(p).cloned().unwrap_or(Value::Null);
            obj.insert(p.clone(), typed(a, &schema));
        } else {
            return Err(format!("unexpected argument {a:?}"));
        }
    }
    let state = std::env::var_os("WRENCH_STATE_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("wrench-fs-cli-state"));
    let ctx = context_for(&root, &state, Arc::new(AllowAll)).map_err(|e| e.to_string())?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let exec = Executor::new(Arc::new(reg), ctx);
    let r = rt.block_on(exec.run_one(Call::new("1", tool, Value::Object(obj))));
    let mut out = std::io::stdout().lock();
    match r.result {
        Ok(o) => {
            let _ = out.write_all(o.text.as_bytes());
            Ok(0)
        }
        Err(e) => {
            eprintln!("{}: {}", e.kind, e.message);
            Ok(1)
        }
    }
}

fn typed(v: &str, schema: &Value) -> Value {
    let ty = &schema["type"];
    let is = |t: &str| ty == t || ty.as_array().is_some_and(|a| a.iter().any(|x| x == t));
    if is("integer")
        && let Ok(n) = v.parse::<i64>()
    {
        return Value::from(n);
    }
    Value::String(v.to_string())
}

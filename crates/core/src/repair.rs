//! Failure-gated argument repair (SPEC §6): only when the arguments fail to
//! parse, fix the usual model slips, say what was fixed, and try once more.
//! Arguments that conform are never touched.

use crate::spec::ToolSpec;
use serde_json::{Map, Value};

/// Try to repair `args` for `spec`. Returns the repaired value and one line per
/// repair, or None when nothing could be repaired.
pub fn repair_args(spec: &ToolSpec, args: &Value) -> Option<(Value, Vec<String>)> {
    let mut notes = Vec::new();
    let mut v = args.clone();

    // Double-encoded JSON: the whole object sent as a string.
    if let Value::String(s) = &v
        && let Ok(inner @ Value::Object(_)) = serde_json::from_str::<Value>(s)
    {
        notes.push("arguments were a JSON string; decoded it".to_string());
        v = inner;
    }
    if v.is_null() {
        notes.push("arguments were null; used {}".to_string());
        v = Value::Object(Map::new());
    }
    let Value::Object(obj) = &mut v else {
        return None;
    };
    let props = spec
        .input_schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();

    // Argument names: declared aliases, camelCase, kebab-case.
    let keys: Vec<String> = obj.keys().cloned().collect();
    for k in keys {
        if props.contains_key(&k) {
            continue;
        }
        let snake = to_snake(&k);
        let target = spec
            .arg_aliases
            .iter()
            .find(|(a, _)| *a == k || *a == snake)
            .map(|(_, c)| c.clone())
            .or_else(|| props.contains_key(&snake).then(|| snake.clone()));
        if let Some(t) = target
            && !obj.contains_key(&t)
            && let Some(val) = obj.remove(&k)
        {
            notes.push(format!("argument `{k}` renamed to `{t}`"));
            obj.insert(t, val);
        }
    }

    // Values: null for optional fields, quoted numbers and booleans, enum case,
    // a lone value where an array is expected, JSON-encoded arrays/objects.
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
    let keys: Vec<String> = obj.keys().cloned().collect();
    for k in keys {
        let Some(schema) = props.get(&k) else {
            continue;
        };
        let Some(val) = obj.get(&k).cloned() else {
            continue;
        };
        if val.is_null() && !required.contains(&k) && !type_allows(schema, "null") {
            obj.remove(&k);
            notes.push(format!("argument `{k}` was null; dropped it"));
            continue;
        }
        if let Some((fixed, what)) = repair_value(schema, &val) {
            notes.push(format!("argument `{k}`: {what}"));
            obj.insert(k, fixed);
        }
    }

    if notes.is_empty() {
        None
    } else {
        Some((v, notes))
    }
}

/// The JSON Schema types a property accepts (`Option<T>` gives `[T, null]`;
/// an enum or const alternative counts as a string).
pub fn types_of(schema: &Value) -> Vec<String> {
    match schema.get("type") {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|x| x.as_str().map(String::from))
            .collect(),
        _ => {
            // anyOf [{type: X}, {type: null}] from Option<T>
            let mut out = Vec::new();
            for key in ["anyOf", "oneOf"] {
                if let Some(Value::Array(a)) = schema.get(key) {
                    for s in a {
                        out.extend(types_of(s));
                        if s.get("const").is_some() || s.get("enum").is_some() {
                            out.push("string".into());
                        }
                    }
                }
            }
            if out.is_empty() && schema.get("enum").is_some() {
                out.push("string".into());
            }
            out
        }
    }
}

fn type_allows(schema: &Value, t: &str) -> bool {
    types_of(schema).iter().any(|x| x == t)
}

/// The string values an enum-like property accepts.
pub fn enum_values(schema: &Value) -> Vec<String> {
    let mut out: Vec<String> = schema
        .get("enum")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(a)) = schema.get(key) {
            for s in a {
                out.extend(enum_values(s));
                if let Some(Value::String(c)) = s.get("const") {
                    out.push(c.clone());
                }
            }
        }
    }
    out
}

fn repair_value(schema: &Value, val: &Value) -> Option<(Value, String)> {
    let types = types_of(schema);
    let has = |t: &str| types.iter().any(|x| x == t);
    if let Value::String(s) = val {
        let t = s.trim();
        if !has("string") || has("integer") || has("number") || has("boolean") {
            if has("integer")
                && let Ok(n) = t.parse::<i64>()
            {
                return Some((Value::from(n), format!("quoted number {s:?} read as {n}")));
            }
            if has("number")
                && let Ok(n) = t.parse::<f64>()
                && let Some(num) = serde_json::Number::from_f64(n)
            {
                return Some((
                    Value::Number(num),
                    format!("quoted number {s:?} read as {n}"),
                ));
            }
            if has("boolean") {
                match t.to_ascii_lowercase().as_str() {
                    "true" | "yes" | "1" => {
                        return Some((Value::Bool(true), format!("{s:?} read as true")));
                    }
                    "false" | "no" | "0" => {
                        return Some((Value::Bool(false), format!("{s:?} read as false")));
                    }
                    _ => {}
                }
            }
            if has("array") || has("object") {
                if let Ok(inner) = serde_json::from_str::<Value>(t)
                    && ((inner.is_array() && has("array")) || (inner.is_object() && has("object")))
                {
                    return Some((inner, "JSON-encoded value decoded".to_string()));
                }
                if has("array") {
                    return Some((
                        Value::Array(vec![val.clone()]),
                        "single value wrapped in a list".to_string(),
                    ));
                }
            }
        }
        let ev = enum_values(schema);
        if !ev.is_empty() && !ev.iter().any(|e| e == s) {
            let norm = |x: &str| x.to_ascii_lowercase().replace(['-', ' '], "_");
            let hits: Vec<&String> = ev.iter().filter(|e| norm(e) == norm(s)).collect();
            if let [one] = hits.as_slice() {
                return Some((
                    Value::String((*one).clone()),
                    format!("{s:?} read as {one:?}"),
                ));
            }
        }
    }
    if let (Value::Number(n), true) = (val, has("string") && !has("integer") && !has("number")) {
        return Some((
            Value::String(n.to_string()),
            format!("number {n} read as a string"),
        ));
    }
    None
}

fn to_snake(k: &str) -> String {
    let mut out = String::with_capacity(k.len() + 4);
    for (i, c) in k.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else if c == '-' {
            out.push('_');
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{Effect, ToolSpec};
    use serde_json::json;

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct A {
        path: String,
        limit: Option<u32>,
        replace_all: Option<bool>,
        mode: Option<Mode>,
        paths: Option<Vec<String>>,
    }
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[serde(rename_all = "snake_case")]
    enum Mode {
        FilesWithMatches,
        Content,
    }

    fn spec() -> ToolSpec {
        ToolSpec::new::<A>("t", Effect::ReadOnly, "test").arg_alias("file_path", "path")
    }

    #[test]
    fn declared_alias_is_renamed_and_reported() {
        let (v, n) = repair_args(&spec(), &json!({"file_path": "a"})).unwrap();
        assert_eq!(v, json!({"path": "a"}));
        assert_eq!(n, vec!["argument `file_path` renamed to `path`"]);
    }

    #[test]
    fn camel_case_names_are_folded() {
        let (v, _) = repair_args(&spec(), &json!({"path": "a", "replaceAll": true})).unwrap();
        assert_eq!(v, json!({"path": "a", "replace_all": true}));
    }

    #[test]
    fn quoted_numbers_and_booleans_are_read() {
        let (v, _) = repair_args(
            &spec(),
            &json!({"path": "a", "limit": "10", "replace_all": "true"}),
        )
        .unwrap();
        assert_eq!(v, json!({"path": "a", "limit": 10, "replace_all": true}));
    }

    #[test]
    fn double_encoded_arguments_are_decoded() {
        let (v, _) = repair_args(&spec(), &json!("{\"path\": \"a\"}")).unwrap();
        assert_eq!(v, json!({"path": "a"}));
    }

    #[test]
    fn enum_case_is_fixed_only_when_unambiguous() {
        let (v, _) = repair_args(&spec(), &json!({"path": "a", "mode": "Content"})).unwrap();
        assert_eq!(v["mode"], "content");
        let (v, _) =
            repair_args(&spec(), &json!({"path": "a", "mode": "files-with-matches"})).unwrap();
        assert_eq!(v["mode"], "files_with_matches");
    }

    #[test]
    fn a_lone_string_becomes_a_list() {
        let (v, _) = repair_args(&spec(), &json!({"path": "a", "paths": "x"})).unwrap();
        assert_eq!(v["paths"], json!(["x"]));
    }

    #[test]
    fn nothing_to_repair_gives_none() {
        assert!(repair_args(&spec(), &json!({"path": "a", "bogus": 1})).is_none());
    }
}

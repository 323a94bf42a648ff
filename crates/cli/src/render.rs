//! Rendering results: human text for one-shot commands, JSON for `--json`,
//! `call` and `batch`.

use serde_json::Value;
use wrench_core::{CallResult, OutputKind};

/// The text a person reads on stdout for a successful one-shot call, and the
/// notes that go to stderr.
pub fn human(r: &CallResult) -> (String, String) {
    match &r.result {
        Ok(out) => {
            let mut text = out.text.clone();
            if out.kind == OutputKind::Image {
                for img in &out.images {
                    let bytes = img.data.len() / 4 * 3;
                    text.push_str(&format!(
                        "\n[image: {}, about {bytes} bytes; use --json to get the data]",
                        img.mime_type
                    ));
                }
            }
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            let mut notes = String::new();
            for n in r.repaired.iter().chain(out.notes.iter()) {
                notes.push_str(&format!("note: {n}\n"));
            }
            (text, notes)
        }
        Err(e) => {
            let mut err = String::new();
            for n in &r.repaired {
                err.push_str(&format!("note: {n}\n"));
            }
            err.push_str(&format!("error[{}]: {}\n", e.kind, e.message));
            (String::new(), err)
        }
    }
}

/// One JSON line for a result.
pub fn json_line(r: &CallResult, with_group: bool) -> String {
    let v: Value = r.to_json(with_group);
    serde_json::to_string(&v).unwrap_or_else(|e| format!("{{\"ok\":false,\"error\":{{\"kind\":\"io\",\"message\":\"cannot encode result: {e}\"}}}}"))
}

/// One result as a person reads it among several (`call`/`batch` with
/// `--format text`): a header line with id, tool and outcome, then its text
/// and notes (or its error).
pub fn text_block(r: &CallResult) -> String {
    let outcome = match &r.result {
        Ok(_) => "ok".to_string(),
        Err(e) => format!("error[{}]", e.kind),
    };
    let mut s = format!("── {} {}: {outcome} ({} ms)\n", r.id, r.tool, r.elapsed_ms);
    let (text, notes) = human(r);
    s.push_str(&text);
    s.push_str(&notes);
    s
}

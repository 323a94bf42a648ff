//! The adversarial table of invisible and control text (tests/data/sanitize.json):
//! one row per case, with the function (`sanitize` for content, `echo` for a
//! name), the ANSI mode, the input and the exact expected output. Every failing
//! row is reported, not only the first.

use wrench_core::frame::{self, Ansi};

#[derive(serde::Deserialize)]
struct Row {
    name: String,
    #[serde(rename = "fn")]
    func: String,
    ansi: Ansi,
    input: String,
    expect: String,
}

#[test]
fn every_row_of_the_sanitize_table_gives_its_expected_text() {
    let rows: Vec<Row> =
        serde_json::from_str(include_str!("data/sanitize.json")).expect("table is valid JSON");
    assert!(rows.len() >= 60, "the table lost rows: {}", rows.len());
    let mut failures = Vec::new();
    for r in &rows {
        let got = match r.func.as_str() {
            "sanitize" => frame::sanitize(&r.input, r.ansi).into_owned(),
            "echo" => frame::echo(&r.input).into_owned(),
            other => {
                failures.push(format!("{}: unknown fn {other}", r.name));
                continue;
            }
        };
        if got != r.expect {
            failures.push(format!(
                "{}: input {:?}\n    want {:?}\n    got  {:?}",
                r.name, r.input, r.expect, got
            ));
        }
        // Inside a frame too: the same content, nothing hidden, one closer.
        let framed = frame::frame_with_nonce("table", &r.input, "n");
        if framed.matches("</untrusted nonce=\"n\">").count() != 1 {
            failures.push(format!("{}: the frame's closer is not unique", r.name));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} rows failed:\n{}",
        failures.len(),
        rows.len(),
        failures.join("\n")
    );
}

//! Checkpoint ids as a caller gives them: each row of `data/ids.jsonl`
//! says what an id must parse to, or that it is refused (null). An id is
//! only ever digits, so it can never name a path in the store.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use wrench_checkpoints::record::parse_id;

#[test]
fn every_row_of_the_id_table_parses_as_expected() {
    let table = include_str!("data/ids.jsonl");
    let mut failures = Vec::new();
    for (n, line) in table
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let row: Value = serde_json::from_str(line).unwrap();
        let given = row["given"].as_str().unwrap();
        let expect = row["expect"].as_u64();
        let got = parse_id(given);
        if got != expect {
            failures.push(format!(
                "row {}: {given:?} ({}): expected {expect:?}, got {got:?}",
                n + 1,
                row["why"].as_str().unwrap_or("")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

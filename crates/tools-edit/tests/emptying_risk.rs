//! Emptying a file, or deleting nearly all of it, is the same High risk
//! whichever change tool does it (write, edit, multi_edit, delete_range,
//! apply_patch Update or Delete): the plan the gate sees says so, so `auto`
//! mode refuses every route alike. Cases in `data/emptying_risk.jsonl`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use serde_json::Value;
use support::Fx;
use wrench_core::Risk;

#[test]
fn every_route_to_emptying_a_file_plans_the_same_risk() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    for line in include_str!("data/emptying_risk.jsonl").lines() {
        let row: Value = serde_json::from_str(line).unwrap();
        let f = Fx::new();
        f.put("f.txt", row["file"].as_str().unwrap());
        f.read("f.txt");
        let tool = f
            .exec
            .registry()
            .resolve(row["tool"].as_str().unwrap())
            .unwrap();
        let args = tool.parse(&row["args"]).unwrap();
        let plan = rt.block_on(tool.plan(&args, &f.ctx)).unwrap();
        let want = match row["risk"].as_str().unwrap() {
            "high" => Risk::High,
            _ => Risk::Low,
        };
        assert_eq!(plan.risk(), want, "class {}", row["class"]);
        // The planned change is the one the call makes.
        f.ok(row["tool"].as_str().unwrap(), row["args"].clone());
    }
}

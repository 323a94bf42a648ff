//! Proxy names `mcp__SERVER__TOOL` are one-to-one: no two (server, tool)
//! pairs give one registry name, once the registry ignores letter case and
//! `-` vs `_`. A data table of pairs with the proxy name or the refusal, a
//! property test over names made of the risky characters, and a registry
//! built from cached tool lists (a cache written before the checks).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use serde_json::json;
use wrench_core::registry::fold_name;
use wrench_core::{Config, Registry};
use wrench_mcp::config::{
    RemoteTool, ServerDef, check_server_name, check_server_names_distinct, check_tool_name,
    store_tools,
};
use wrench_mcp::proxy_name;

mod common;
use common::rows;

/// The proxy name of a pair, or why it is refused.
fn decide(server: &str, tool: &str) -> String {
    if check_server_name(server).is_err() {
        "refuse-server".to_string()
    } else if check_tool_name(tool).is_err() {
        "refuse-tool".to_string()
    } else {
        proxy_name(server, tool)
    }
}

#[test]
fn proxy_names_of_server_and_tool_pairs_follow_the_table() {
    let mut bad = Vec::new();
    let mut accepted: Vec<(usize, String, String, String)> = Vec::new();
    for (line, r) in rows("proxy_names.tsv") {
        let got = decide(&r[0], &r[1]);
        if got != r[2] {
            bad.push(format!(
                "line {line}: ({:?}, {:?}) gave {got}, want {} ({})",
                r[0],
                r[1],
                r[2],
                r.get(3).map_or("", String::as_str)
            ));
        }
        if !got.starts_with("refuse") {
            accepted.push((line, r[0].clone(), r[1].clone(), fold_name(&got)));
        }
    }
    // Every accepted pair of the table is told apart from every other one.
    for (i, a) in accepted.iter().enumerate() {
        for b in &accepted[i + 1..] {
            let same_pair =
                fold_name(&a.1) == fold_name(&b.1) && fold_name(&a.2) == fold_name(&b.2);
            if a.3 == b.3 && !same_pair {
                bad.push(format!(
                    "lines {} and {} fold to one name {}",
                    a.0, b.0, a.3
                ));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn servers_whose_names_fold_alike_are_refused_naming_both() {
    for (a, b) in [
        ("github", "GitHub"),
        ("my-server", "my_server"),
        ("A-b", "a_B"),
    ] {
        let e = check_server_names_distinct([a, b]).unwrap_err();
        assert!(
            e.message.contains(a) && e.message.contains(b),
            "{}",
            e.message
        );
    }
    check_server_names_distinct(["github", "gitlab", "my-server", "myserver"]).unwrap();
    // Through the config loader, as a user's config meets it.
    let cfg = Config::from_str(
        "[mcp.servers.my-fs]\ncommand = \"x\"\n[mcp.servers.MY_FS]\ncommand = \"y\"\n",
    )
    .unwrap();
    let e = wrench_mcp::config::load(&cfg).unwrap_err();
    assert!(e.message.contains("rename one"), "{}", e.message);
}

fn name_from(alphabet: &'static [char]) -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(alphabet), 1..7)
        .prop_map(|v| v.into_iter().collect())
}

const SERVER_CHARS: &[char] = &['a', 'A', 'b', '0', '_', '-'];
const TOOL_CHARS: &[char] = &['a', 'A', 'b', '_', '-', '.'];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]
    #[test]
    fn distinct_server_tool_pairs_never_fold_to_one_proxy_name(
        s1 in name_from(SERVER_CHARS), t1 in name_from(TOOL_CHARS),
        s2 in name_from(SERVER_CHARS), t2 in name_from(TOOL_CHARS),
    ) {
        // Refused names are not proxies (most draws of these alphabets are).
        let usable = [&s1, &s2].iter().all(|s| check_server_name(s).is_ok())
            && [&t1, &t2].iter().all(|t| check_tool_name(t).is_ok());
        if usable && fold_name(&proxy_name(&s1, &t1)) == fold_name(&proxy_name(&s2, &t2)) {
            // One registry name only for one server (servers folding alike
            // are refused together) and one tool (tools folding alike on
            // one server: the first kept, the rest refused).
            prop_assert_eq!(fold_name(&s1), fold_name(&s2));
            prop_assert_eq!(fold_name(&t1), fold_name(&t2));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]
    /// Read back: a proxy name splits into a usable (server, tool) pair at
    /// exactly one `__` of its folded form, so no other pair can give it.
    #[test]
    fn a_proxy_name_splits_into_one_usable_server_and_tool(
        s in name_from(SERVER_CHARS), t in name_from(TOOL_CHARS),
    ) {
        if check_server_name(&s).is_ok() && check_tool_name(&t).is_ok() {
            let name = proxy_name(&s, &t);
            let rest = &name["mcp__".len()..];
            let folded = fold_name(rest);
            let splits: Vec<(&str, &str)> = folded
                .match_indices("__")
                .map(|(i, _)| (&rest[..i], &rest[i + 2..]))
                .filter(|(s, t)| check_server_name(s).is_ok() && check_tool_name(t).is_ok())
                .collect();
            prop_assert_eq!(splits, vec![(s.as_str(), t.as_str())]);
        }
    }
}

fn tool(name: &str, description: &str) -> RemoteTool {
    RemoteTool::from_json(&json!({
        "name": name, "description": description, "inputSchema": {"type": "object"}
    }))
    .unwrap()
}

#[test]
fn a_cached_list_with_names_that_fold_alike_keeps_the_first_and_every_server_its_own() {
    let dir = tempfile::tempdir().unwrap();
    // SAFETY: the only test of this binary that reads the environment.
    unsafe { std::env::set_var("WRENCH_STATE_DIR", dir.path().join("state")) };
    let toml = "[mcp.servers.a]\ncommand = \"srv-a\"\n[mcp.servers.a-b]\ncommand = \"srv-ab\"\n";
    let config = Config::from_str(toml).unwrap();
    let cfg = wrench_mcp::config::load(&config).unwrap();
    let def_a: &ServerDef = &cfg.servers["a"];
    let def_ab: &ServerDef = &cfg.servers["a-b"];
    // A cache as an older wrench wrote it: `get-x` and `GET_X` fold alike.
    store_tools(
        "a",
        def_a,
        &[
            tool("get-x", "first"),
            tool("GET_X", "second"),
            tool("b__x", "a's"),
        ],
    )
    .unwrap();
    store_tools("a-b", def_ab, &[tool("x", "ab's")]).unwrap();
    let mut reg = Registry::new();
    wrench_mcp::register_proxies(&mut reg, &config).unwrap();
    let desc = |n: &str| reg.resolve(n).unwrap().spec().description.clone();
    assert!(desc("mcp__a__get_x").starts_with("first"));
    assert!(desc("mcp__a__GET-X").starts_with("first"));
    assert!(desc("mcp__a__b__x").starts_with("a's"));
    assert!(desc("mcp__a-b__x").starts_with("ab's"));
    assert!(desc("mcp__a_b__x").starts_with("ab's"));
    // `wrench mcp call a GET_X` is refused too: it is not a usable tool.
    let e = wrench_mcp::callable(&config, "a", "GET_X").unwrap_err();
    assert!(e.message.contains("get-x"), "{}", e.message);
}

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Fixture;
use serde_json::json;
use wrench_core::ErrorKind;

fn repo() -> Fixture {
    let f = Fixture::new();
    f.git_init();
    f
}

#[tokio::test]
async fn grep_lists_matching_files_sorted_by_path() {
    let f = repo();
    for p in ["z.rs", "a/b.rs", "m.rs", "a/a.rs", "c/d/e.rs"] {
        f.write(p, "let needle = 1;\n");
    }
    f.write("miss.rs", "nothing\n");
    let t = f.text("grep", json!({"pattern": "needle"})).await;
    assert_eq!(t, "a/a.rs\na/b.rs\nc/d/e.rs\nm.rs\nz.rs\n");
    for _ in 0..5 {
        assert_eq!(f.text("Grep", json!({"pattern": "needle"})).await, t);
    }
}

#[tokio::test]
async fn grep_respects_nested_gitignore() {
    let f = repo();
    f.write(".gitignore", "*.log\n");
    f.write("sub/.gitignore", "gen/\n!keep.log\n");
    f.write("a.txt", "needle\n");
    f.write("a.log", "needle\n");
    f.write("sub/gen/x.txt", "needle\n");
    f.write("sub/keep.log", "needle\n");
    f.write("sub/y.txt", "needle\n");
    let t = f.text("grep", json!({"pattern": "needle"})).await;
    assert_eq!(t, "a.txt\nsub/keep.log\nsub/y.txt\n");
}

#[tokio::test]
async fn grep_respects_dot_ignore_and_git_info_exclude() {
    let f = repo();
    f.write(".ignore", "vendor/\n");
    f.write(".git/info/exclude", "local-notes.txt\n");
    f.write("vendor/v.txt", "needle\n");
    f.write("local-notes.txt", "needle\n");
    f.write("kept.txt", "needle\n");
    let t = f.text("grep", json!({"pattern": "needle"})).await;
    assert_eq!(t, "kept.txt\n");
}

#[tokio::test]
async fn grep_dot_ignore_applies_outside_a_git_repo_too() {
    let f = Fixture::new();
    f.write(".ignore", "skip.txt\n");
    f.write(".gitignore", "also.txt\n");
    f.write("skip.txt", "needle\n");
    f.write("also.txt", "needle\n");
    // Like ripgrep: .gitignore only counts inside a git repository.
    assert_eq!(
        f.text("grep", json!({"pattern": "needle"})).await,
        "also.txt\n"
    );
}

#[tokio::test]
async fn grep_skips_hidden_files_and_dirs() {
    let f = repo();
    f.write(".env.example", "needle\n");
    f.write(".config/x.txt", "needle\n");
    f.write("shown.txt", "needle\n");
    assert_eq!(
        f.text("grep", json!({"pattern": "needle"})).await,
        "shown.txt\n"
    );
}

#[tokio::test]
async fn grep_type_ts_includes_tsx() {
    let f = repo();
    f.write("a.ts", "needle\n");
    f.write("b.tsx", "needle\n");
    f.write("c.js", "needle\n");
    f.write("d.mts", "needle\n");
    assert_eq!(
        f.text("grep", json!({"pattern": "needle", "type": "ts"}))
            .await,
        "a.ts\nb.tsx\nd.mts\n"
    );
    let e = f
        .error("grep", json!({"pattern": "needle", "type": "typescriptx"}))
        .await;
    assert_eq!(e.kind, ErrorKind::InvalidArgs);
}

#[tokio::test]
async fn grep_glob_filters_names_paths_and_negations() {
    let f = repo();
    f.write("src/a.rs", "needle\n");
    f.write("src/b.min.js", "needle\n");
    f.write("src/c.js", "needle\n");
    f.write("d.rs", "needle\n");
    let g = |glob: serde_json::Value| json!({"pattern": "needle", "glob": glob});
    assert_eq!(f.text("grep", g(json!("*.rs"))).await, "d.rs\nsrc/a.rs\n");
    assert_eq!(f.text("grep", g(json!("src/*.rs"))).await, "src/a.rs\n");
    assert_eq!(
        f.text("grep", g(json!(["*.js", "!*.min.js"]))).await,
        "src/c.js\n"
    );
}

#[tokio::test]
async fn grep_accepts_several_paths() {
    let f = repo();
    f.write("a/x.txt", "needle\n");
    f.write("b/y.txt", "needle\n");
    f.write("c/z.txt", "needle\n");
    let t = f
        .text(
            "grep",
            json!({"pattern": "needle", "path": ["c", "a/x.txt"]}),
        )
        .await;
    assert_eq!(t, "a/x.txt\nc/z.txt\n");
}

#[tokio::test]
async fn grep_content_mode_prints_rg_style_lines_with_context() {
    let f = repo();
    f.write(
        "a.txt",
        "one\ntwo\nneedle 1\nthree\nfour\nfive\nsix\nneedle 2\nseven\n",
    );
    f.write("b.txt", "x\nneedle b\n");
    let t = f
        .text(
            "grep",
            json!({"pattern": "needle", "mode": "content", "context_lines": 1}),
        )
        .await;
    insta::assert_snapshot!("grep_content_context", t);
    let plain = f
        .text(
            "grep",
            json!({"pattern": "needle", "output_mode": "content"}),
        )
        .await;
    assert_eq!(
        plain,
        "a.txt:3:needle 1\na.txt:8:needle 2\nb.txt:2:needle b\n"
    );
    let e = f
        .error("grep", json!({"pattern": "x", "context_lines": 21}))
        .await;
    assert_eq!(e.kind, ErrorKind::InvalidArgs);
}

#[tokio::test]
async fn grep_count_mode_counts_matching_lines() {
    let f = repo();
    f.write("a.txt", "needle needle\nneedle\nno\n");
    f.write("b.txt", "needle\n");
    let r = f
        .call("grep", json!({"pattern": "needle", "mode": "count"}))
        .await;
    let o = r.result.unwrap();
    assert_eq!(o.text, "a.txt:2\nb.txt:1\n");
    assert_eq!(o.data["total_matches"], 3);
}

#[tokio::test]
async fn grep_is_case_sensitive_unless_asked() {
    let f = repo();
    f.write("a.txt", "Needle\n");
    assert!(
        f.text("grep", json!({"pattern": "needle"}))
            .await
            .starts_with("No matches")
    );
    assert_eq!(
        f.text(
            "grep",
            json!({"pattern": "needle", "case_insensitive": true})
        )
        .await,
        "a.txt\n"
    );
    assert_eq!(
        f.text("grep", json!({"pattern": "needle", "-i": true}))
            .await,
        "a.txt\n"
    );
}

#[tokio::test]
async fn grep_multiline_matches_across_lines() {
    let f = repo();
    f.write("a.rs", "struct A {\n    x: u8,\n}\n");
    let t = f
        .text(
            "grep",
            json!({"pattern": "struct A \\{.*?x", "multiline": true, "mode": "content"}),
        )
        .await;
    assert_eq!(t, "a.rs:1:struct A {\na.rs:2:    x: u8,\n");
    let e = f
        .error("grep", json!({"pattern": "A \\{\\n", "mode": "content"}))
        .await;
    assert_eq!(e.kind, ErrorKind::InvalidArgs);
    assert!(e.message.contains("multiline: true"), "{}", e.message);
}

#[tokio::test]
async fn grep_skips_binary_files() {
    let f = repo();
    f.write("bin.dat", b"needle\0\x01\x02");
    f.write("text.txt", "needle\n");
    assert_eq!(
        f.text("grep", json!({"pattern": "needle"})).await,
        "text.txt\n"
    );
}

#[tokio::test]
async fn grep_output_budget_ends_with_a_trailer() {
    let f = repo();
    let body: String = (0..400)
        .map(|i| format!("needle line {i:04} with some padding text\n"))
        .collect();
    f.write("big.txt", &body);
    let t = f
        .text(
            "grep",
            json!({"pattern": "needle", "mode": "content", "max_chars": 500}),
        )
        .await;
    assert!(t.len() < 700);
    insta::assert_snapshot!("grep_budget_trailer", t);
    let t = f
        .text(
            "grep",
            json!({"pattern": "needle", "mode": "content", "limit": 2}),
        )
        .await;
    assert_eq!(t.lines().filter(|l| l.starts_with("big.txt:")).count(), 2);
    assert!(t.contains("[… shown 2 of 400 matching lines"), "{t}");
}

#[tokio::test]
async fn grep_files_limit_ends_with_a_trailer() {
    let f = repo();
    for i in 0..5 {
        f.write(&format!("f{i}.txt"), "needle\n");
    }
    let t = f
        .text("grep", json!({"pattern": "needle", "head_limit": 3}))
        .await;
    insta::assert_snapshot!("grep_files_limit", t);
}

#[tokio::test]
async fn grep_miss_offers_a_second_pass_over_ignored_files() {
    let f = repo();
    f.write(".gitignore", "node_modules/\n");
    f.write("node_modules/pkg/index.js", "needle\n");
    f.write(".cache/x.txt", "needle\n");
    f.write("src/a.js", "nothing\n");
    let t = f.text("grep", json!({"pattern": "needle"})).await;
    insta::assert_snapshot!("grep_miss_suggests_ignored", t);
    let t = f
        .text(
            "grep",
            json!({"pattern": "needle", "include_ignored": true}),
        )
        .await;
    assert_eq!(
        t,
        ".cache/x.txt\nnode_modules/pkg/index.js\n[searched ignored and hidden files too (include_ignored: true)]\n"
    );
}

#[tokio::test]
async fn grep_include_ignored_still_skips_dot_git() {
    let f = repo();
    f.write("a.txt", "refs\n");
    let t = f
        .text(
            "grep",
            json!({"pattern": "HEAD|refs", "include_ignored": true}),
        )
        .await;
    assert!(!t.contains(".git/"), "{t}");
}

#[tokio::test]
async fn grep_plain_miss_says_nothing_matched() {
    let f = repo();
    f.write("a.txt", "x\n");
    let t = f.text("grep", json!({"pattern": "needle"})).await;
    insta::assert_snapshot!("grep_no_match", t);
}

#[tokio::test]
async fn grep_invalid_regex_is_invalid_args() {
    let f = repo();
    let e = f.error("grep", json!({"pattern": "fn (a"})).await;
    assert_eq!(e.kind, ErrorKind::InvalidArgs);
    insta::assert_snapshot!("grep_bad_regex", e.message);
}

#[tokio::test]
async fn grep_content_of_one_file_records_partial_evidence() {
    let f = repo();
    let p = f.write("a.txt", "1\n2\nneedle\n4\n5\n6\n7\nneedle\n9\n");
    f.text(
        "grep",
        json!({"pattern": "needle", "path": "a.txt", "mode": "content", "context_lines": 1}),
    )
    .await;
    let ev = f.exec.context().session.evidence(&p).unwrap().unwrap();
    assert!(!ev.full);
    assert_eq!(ev.ranges, vec![(2, 4), (7, 9)]);
}

#[tokio::test]
async fn grep_files_mode_records_no_evidence() {
    let f = repo();
    let p = f.write("a.txt", "needle\n");
    f.text("grep", json!({"pattern": "needle", "path": "a.txt"}))
        .await;
    assert!(f.exec.context().session.evidence(&p).unwrap().is_none());
}

#[tokio::test]
async fn grep_typed_output_lists_files_and_matches() {
    let f = repo();
    f.write("a.txt", "x\nneedle here\n");
    let o = f
        .call("grep", json!({"pattern": "needle", "mode": "content"}))
        .await
        .result
        .unwrap();
    assert_eq!(o.data["matches"][0]["path"], "a.txt");
    assert_eq!(o.data["matches"][0]["line"], 2);
    assert_eq!(o.data["matches"][0]["text"], "needle here");
    assert_eq!(o.data["total_files"], 1);
}

/// A caller that reads only the text (a person's one-shot call,
/// `content_in_data` off) gets the same text, masks included, without the
/// typed copy of each matching line; the files stay in the view.
#[tokio::test]
async fn grep_content_for_text_only_callers_keeps_the_text_and_drops_the_line_copies() {
    let mut f = repo();
    let key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAnotarealkeybutlongenoughtolookreal0123456789abcdefghij\nneedle\n-----END RSA PRIVATE KEY-----\n";
    f.write("a.txt", "x\nneedle here\ny\n");
    f.write("key.pem", key);
    f.write("é.txt", "needle ünïcode\n");
    let args = json!({"pattern": "needle", "mode": "content", "context_lines": 1});
    let with_data = f.call("grep", args.clone()).await.result.unwrap();
    assert_eq!(with_data.data["matches"][0]["text"], "needle here");
    let mut ctx = f.exec.context().clone();
    ctx.content_in_data = false;
    f.exec = wrench_core::Executor::new(f.exec.registry().clone(), ctx);
    let text_only = f.call("grep", args).await.result.unwrap();
    assert_eq!(text_only.text, with_data.text);
    assert!(
        text_only.data.get("matches").is_none(),
        "{}",
        text_only.data
    );
    assert_eq!(text_only.data["files"].as_array().map(Vec::len), Some(3));
    assert!(!text_only.text.contains("MIIEow"), "{}", text_only.text);
    assert!(
        text_only.text.contains("key.pem-2-[REDACTED:"),
        "{}",
        text_only.text
    );
}

/// Each file's lines are a section of the output that the executor redacts
/// on its own, the sections split among threads when the output is large:
/// a key block ending one file's lines, a key in the first line of the next
/// file, a key in a file's name and a key in a file that is not UTF-8 (no
/// source to vet it: only the whole-text pass sees it) are all masked among
/// hundreds of other files' lines, and nothing else changes.
#[tokio::test]
async fn grep_content_masks_secrets_at_every_file_edge_of_a_large_output() {
    let f = repo();
    let aws = format!("AKIA{}", "QYLPMN5HHHFPZAM2");
    let filler = "needle and some filler text to make the output large enough\n".repeat(30);
    for i in 0..200 {
        f.write(&format!("f{i:03}.txt"), &filler);
    }
    let pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAnotarealkeybutlongenoughtolookreal0123456789abcdefghij\n-----END RSA PRIVATE KEY-----\n";
    f.write("k1.txt", format!("needle\n{pem}"));
    f.write("k2.txt", format!("aws = {aws} needle\nafter\n"));
    f.write(&format!("{aws}.txt"), "needle\n");
    f.write(
        "k3.bin.txt",
        [
            b"\xff\xfe needle\n".as_slice(),
            format!("key = {aws}\n").as_bytes(),
        ]
        .concat(),
    );
    let t = f
        .text(
            "grep",
            json!({"pattern": "needle", "mode": "content", "context_lines": 3, "max_chars": 10_000_000, "limit": 100_000}),
        )
        .await;
    assert!(t.len() > 256 * 1024, "{}", t.len());
    assert!(!t.contains(&aws[4..]), "a key is shown");
    assert!(!t.contains("MIIEowIBAAKCAQEA"), "the key block is shown");
    assert!(
        t.contains("k1.txt-3-[REDACTED:"),
        "{}",
        &t[t.find("k1.txt").unwrap()..]
    );
    assert!(t.contains("k2.txt:1:aws = [REDACTED:"));
    assert_eq!(t.matches("f000.txt:").count(), 30);
    f.assert_no_leak(&t);
}

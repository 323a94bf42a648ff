//! Secrets in command output stay hidden across every cut a model sees: the
//! head/tail boundary of a preview, two `bash_output` reads of one token, the
//! chunk boundary of `bash_output`, a PEM block spread over two reads, and the
//! same for `terminal` reads. Real processes; fake secrets generated here.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use wrench_core::{AllowAll, Call, Config, Executor, Registry, context_for};

const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

fn rnd(seed: u64, len: usize, alphabet: &[u8]) -> String {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            alphabet[(x % alphabet.len() as u64) as usize] as char
        })
        .collect()
}

fn token(seed: u64) -> String {
    format!("{}{}", concat!("gh", "p_"), rnd(seed, 36, ALNUM))
}

/// A private key's header, body lines and END line.
fn key(seed: u64) -> (String, Vec<String>, String) {
    let label = concat!("RSA PRIV", "ATE KEY");
    let b64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let body = (0..8).map(|i| rnd(seed + i, 64, b64)).collect();
    (
        format!("-----BEGIN {label}-----"),
        body,
        format!("-----END {label}-----"),
    )
}

struct Env {
    root: tempfile::TempDir,
    state: tempfile::TempDir,
    ex: Executor,
}

impl Env {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        let mut reg = Registry::new();
        wrench_tools_shell::register(&mut reg).unwrap();
        let mut ctx = context_for(root.path(), state.path(), Arc::new(AllowAll)).unwrap();
        ctx.config = Arc::new(
            Config::from_str(&format!(
                "[terminal]\nholder = {:?}\n",
                env!("CARGO_BIN_EXE_wrench-pty-holder")
            ))
            .unwrap(),
        );
        let ex = Executor::new(Arc::new(reg), ctx);
        Env { root, state, ex }
    }
    fn write(&self, name: &str, text: &str) {
        std::fs::write(self.root.path().join(name), text).unwrap();
    }
    /// Text and data of a call, as one string to search for leaks.
    async fn seen(&self, tool: &str, args: Value) -> (String, Value) {
        let r = self.ex.run_one(Call::new("t", tool, args.clone())).await;
        let o = r.result.unwrap_or_else(|e| panic!("{tool} {args}: {e}"));
        (format!("{}\n{}", o.text, o.data), o.data)
    }
}

fn assert_no_piece(seen: &str, secret: &str) {
    assert!(
        !seen.contains(&secret[..8]),
        "a secret's start was shown in:\n{seen}"
    );
    // Any 8 consecutive characters of the secret's random part.
    let tail = &secret[4..];
    for i in 0..tail.len().saturating_sub(8) {
        assert!(
            !seen.contains(&tail[i..i + 8]),
            "a piece of a secret was shown: {:?}\nin:\n{seen}",
            &tail[i..i + 8]
        );
    }
}

/// Filler lines of exactly `n` bytes.
fn filler(n: usize) -> String {
    let mut s = String::new();
    while s.len() + 40 <= n {
        s.push_str(&format!("build step {:06} finished ..........\n", s.len()));
    }
    let rest = n - s.len();
    if rest > 0 {
        s.push_str(&".".repeat(rest - 1));
        s.push('\n');
    }
    assert_eq!(s.len(), n);
    s
}

#[tokio::test(flavor = "multi_thread")]
async fn a_preview_cut_at_head_and_tail_shows_no_piece_of_a_token_or_key() {
    let e = Env::new();
    let tok = token(1);
    let (hdr, body, end) = key(10);
    // The head ends (byte 12,000) 10 bytes into the token; the tail starts
    // after the key's header and two body lines.
    let mut out = filler(11_990 - 5);
    out.push_str("tok: ");
    out.push_str(&tok);
    out.push('\n');
    out.push_str(&filler(40_000 - out.len()));
    let key_at = out.len();
    out.push_str(&format!("{hdr}\n{}\n{end}\n", body.join("\n")));
    let tail_from = key_at + hdr.len() + 1 + 2 * 65;
    let total = tail_from + 18_000;
    out.push_str(&filler(total - out.len()));
    e.write("out.txt", &out);
    let (seen, data) = e.seen("bash", json!({"command": "cat out.txt"})).await;
    assert_eq!(data["truncated"], true);
    assert_no_piece(&seen, &tok);
    for line in &body {
        assert_no_piece(&seen, line);
    }
    assert!(!seen.contains(&end), "END line shown: {seen}");
    assert!(seen.contains("[REDACTED:github_pat]"), "{seen}");
    assert!(seen.contains("[REDACTED:private_key]"), "{seen}");
    // What is not secret stays: the filler right after the key.
    assert!(seen.contains("build step"), "{seen}");
}

/// Read a job with `bash_output` until it has ended and nothing is unread.
async fn read_job_to_end(e: &Env, id: &str) -> Vec<String> {
    let mut reads = Vec::new();
    let end = Instant::now() + Duration::from_secs(30);
    loop {
        let (seen, d) = e.seen("bash_output", json!({"id": id})).await;
        reads.push(seen);
        if d["status"] != "running" && d["more"] == false {
            return reads;
        }
        assert!(Instant::now() < end, "job did not end: {d}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_token_written_in_two_parts_is_never_shown_in_part() {
    let e = Env::new();
    let tok = token(2);
    e.write("a.txt", &format!("login ok\ngot {}", &tok[..20]));
    e.write("b.txt", &format!("{}\ndone\n", &tok[20..]));
    e.seen(
        "bash",
        json!({"command": "cat a.txt; sleep 1.5; cat b.txt", "run_in_background": true}),
    )
    .await;
    let reads = read_job_to_end(&e, "bg-1").await;
    assert!(reads.len() >= 2, "{reads:?}");
    for r in &reads {
        assert_no_piece(r, &tok);
    }
    let all = reads.concat();
    assert!(all.contains("login ok") && all.contains("done"), "{all}");
    assert!(all.contains("[REDACTED:github_pat]"), "{all}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_spread_over_two_reads_is_hidden_in_both() {
    let e = Env::new();
    let (hdr, body, end) = key(20);
    e.write("a.txt", &format!("{hdr}\n{}\n", body[..3].join("\n")));
    e.write(
        "b.txt",
        &format!("{}\n{end}\nafter\n", body[3..].join("\n")),
    );
    e.seen(
        "bash",
        json!({"command": "cat a.txt; sleep 1.5; cat b.txt", "run_in_background": true}),
    )
    .await;
    let reads = read_job_to_end(&e, "bg-1").await;
    for r in &reads {
        for line in &body {
            assert_no_piece(r, line);
        }
        assert!(!r.contains(&end), "{r}");
    }
    assert!(reads.concat().contains("after"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_token_across_the_chunk_boundary_is_shown_whole_or_not_at_all() {
    let e = Env::new();
    let tok = token(3);
    // bash_output returns 30,000 bytes a call; the token starts 10 before.
    let text = format!("{}{tok}\nend\n", filler(29_990));
    e.write("big.txt", &text);
    e.seen(
        "bash",
        json!({"command": "cat big.txt", "run_in_background": true}),
    )
    .await;
    // Let the job finish so both reads see the same bytes.
    let t0 = Instant::now();
    loop {
        let (_, d) = e.seen("tasks", json!({"action": "list"})).await;
        if !d.to_string().contains("\"running\"") || t0.elapsed() > Duration::from_secs(20) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let reads = read_job_to_end(&e, "bg-1").await;
    assert!(reads.len() >= 2, "{}", reads.len());
    for r in &reads {
        assert_no_piece(r, &tok);
    }
    assert!(reads.concat().contains("[REDACTED:github_pat]"));
}

#[tokio::test(flavor = "multi_thread")]
async fn terminal_reads_hide_a_token_in_two_writes_and_a_key_over_two_reads() {
    let e = Env::new();
    let tok = token(4);
    let (hdr, body, end) = key(30);
    e.write(
        "a.txt",
        &format!("{hdr}\n{}\ngot {}", body[..4].join("\n"), &tok[..20]),
    );
    e.write(
        "b.txt",
        &format!("{}\n{}\n{end}\nafter\n", &tok[20..], body[4..].join("\n")),
    );
    let (first, _) = e
        .seen(
            "bash",
            json!({"command": "cat a.txt; sleep 3; cat b.txt; sleep 30", "interactive": true}),
        )
        .await;
    let mut reads = vec![first];
    let t0 = Instant::now();
    while !reads.concat().contains("after") && t0.elapsed() < Duration::from_secs(20) {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let (seen, _) = e
            .seen(
                "terminal",
                json!({"action": "read", "terminal_id": "pty-1"}),
            )
            .await;
        reads.push(seen);
    }
    e.seen(
        "terminal",
        json!({"action": "stop", "terminal_id": "pty-1"}),
    )
    .await;
    assert!(reads.concat().contains("after"), "{reads:?}");
    for r in &reads {
        assert_no_piece(r, &tok);
        for line in &body {
            assert_no_piece(r, line);
        }
        assert!(!r.contains(&end), "{r}");
    }
    let _ = (&e.state, PathBuf::new());
}

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Fixture;
use serde_json::json;
use wrench_core::{ErrorKind, OutputKind};

#[tokio::test]
async fn read_numbers_lines_cat_n_style() {
    let f = Fixture::new();
    f.write("src/a.rs", "fn main() {\n\tprintln!(\"hi\");\n}\n");
    let t = f.text("read", json!({"path": "src/a.rs"})).await;
    insta::assert_snapshot!("read_numbered", t);
}

#[tokio::test]
async fn read_accepts_claude_code_names() {
    let f = Fixture::new();
    f.write("a.txt", "x\n");
    let t = f.text("Read", json!({"file_path": "a.txt"})).await;
    assert_eq!(t, "     1\tx\n");
    let t = f.text("read_file", json!({"path": "a.txt"})).await;
    assert_eq!(t, "     1\tx\n");
}

#[tokio::test]
async fn read_offset_and_limit_end_with_a_continuation_trailer() {
    let f = Fixture::new();
    let body: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    f.write("ten.txt", &body);
    let t = f
        .text("read", json!({"path": "ten.txt", "offset": 3, "limit": 4}))
        .await;
    insta::assert_snapshot!("read_window_trailer", t);
    let r = f
        .call("read", json!({"path": "ten.txt", "offset": 3, "limit": 4}))
        .await;
    let o = r.result.unwrap();
    assert_eq!(o.kind, OutputKind::Read);
    assert_eq!(o.data["next_offset"], 7);
    assert_eq!(o.data["total_lines"], 10);
}

#[tokio::test]
async fn read_defaults_to_two_thousand_lines() {
    let f = Fixture::new();
    let body: String = (1..=2500).map(|i| format!("{i}\n")).collect();
    f.write("big.txt", &body);
    let t = f.text("read", json!({"path": "big.txt"})).await;
    assert!(t.contains("  2000\t2000\n"));
    assert!(!t.contains("  2001\t"));
    assert!(
        t.ends_with("… 500 more lines; offset=2001\n"),
        "{}",
        &t[t.len() - 60..]
    );
    let e = f
        .error("read", json!({"path": "big.txt", "limit": 2001}))
        .await;
    assert_eq!(e.kind, ErrorKind::InvalidArgs);
}

#[tokio::test]
async fn read_cuts_long_lines_with_a_marker() {
    let f = Fixture::new();
    f.write("long.txt", format!("{}\nshort\n", "x".repeat(2500)));
    let t = f.text("read", json!({"path": "long.txt"})).await;
    let first = t.lines().next().unwrap();
    assert!(first.ends_with("… [line cut: 500 more chars]"), "{first}");
    assert_eq!(first.matches('x').count(), 2000);
    assert!(t.contains("     2\tshort"));
}

#[tokio::test]
async fn read_offset_past_the_end_is_invalid() {
    let f = Fixture::new();
    f.write("a.txt", "1\n2\n");
    let e = f.error("read", json!({"path": "a.txt", "offset": 9})).await;
    assert_eq!(e.kind, ErrorKind::InvalidArgs);
    insta::assert_snapshot!("read_offset_past_end", e.message);
}

#[tokio::test]
async fn read_empty_file_says_so() {
    let f = Fixture::new();
    f.write("empty.txt", "");
    assert_eq!(
        f.text("read", json!({"path": "empty.txt"})).await,
        "empty.txt: empty file (0 lines)"
    );
}

#[tokio::test]
async fn read_missing_file_is_not_found() {
    let f = Fixture::new();
    let e = f.error("read", json!({"path": "nope.rs"})).await;
    assert_eq!(e.kind, ErrorKind::NotFound);
}

#[tokio::test]
async fn read_directory_shows_an_ignore_aware_tree() {
    let f = Fixture::new();
    f.git_init();
    f.write(".gitignore", "target/\n");
    f.write("src/main.rs", "fn main() {}\n");
    f.write("src/util/mod.rs", "\n");
    f.write("target/debug/x", "bin");
    f.write("README.md", "# hi\n");
    let t = f.text("read", json!({"path": ".", "depth": 3})).await;
    insta::assert_snapshot!("read_dir_tree", t);
    assert!(!t.contains("target"));
    let t1 = f.text("read", json!({"path": "src"})).await;
    assert!(t1.contains("util/") && !t1.contains("mod.rs"), "{t1}");
    let e = f.error("read", json!({"path": ".", "depth": 7})).await;
    assert_eq!(e.kind, ErrorKind::InvalidArgs);
}

#[tokio::test]
async fn read_png_comes_back_as_an_image() {
    let f = Fixture::new();
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89";
    f.write("dot.png", png);
    let o = f
        .call("read", json!({"path": "dot.png"}))
        .await
        .result
        .unwrap();
    assert_eq!(o.kind, OutputKind::Image);
    assert_eq!(o.images.len(), 1);
    assert_eq!(o.images[0].mime_type, "image/png");
    use base64::Engine;
    let back = base64::engine::general_purpose::STANDARD
        .decode(&o.images[0].data)
        .unwrap();
    assert_eq!(back, png);
    insta::assert_snapshot!("read_image", o.text);
}

#[tokio::test]
async fn read_recognizes_jpeg_gif_and_webp() {
    let f = Fixture::new();
    f.write("a.jpg", b"\xff\xd8\xff\xe0\0\x10JFIF\0");
    f.write("a.gif", b"GIF89a\x01\0\x01\0\0\0\0;");
    f.write("a.webp", b"RIFF\x1a\0\0\0WEBPVP8 \0\0\0\0");
    for (p, m) in [
        ("a.jpg", "image/jpeg"),
        ("a.gif", "image/gif"),
        ("a.webp", "image/webp"),
    ] {
        let o = f.call("read", json!({"path": p})).await.result.unwrap();
        assert_eq!(o.images[0].mime_type, m);
    }
}

#[tokio::test]
async fn read_refuses_binary_and_names_what_it_is() {
    let f = Fixture::new();
    f.write("prog", b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0");
    f.write("blob.bin", b"ab\0cd");
    let e = f.error("read", json!({"path": "prog"})).await;
    assert_eq!(e.kind, ErrorKind::Binary);
    insta::assert_snapshot!("read_binary_elf", e.message);
    let e = f.error("read", json!({"path": "blob.bin"})).await;
    assert_eq!(e.kind, ErrorKind::Binary);
    assert!(e.message.contains("NUL"), "{}", e.message);
}

#[tokio::test]
async fn read_shows_a_confident_legacy_encoding_and_names_it() {
    let f = Fixture::new();
    f.write("latin1.txt", b"caf\xe9\n");
    let t = f.text("read", json!({"path": "latin1.txt"})).await;
    assert!(t.starts_with("     1\tcaf\u{e9}\n"), "{t}");
    assert!(t.contains("windows-1252"), "{t}");
}

#[tokio::test]
async fn read_shows_utf16_and_utf8_bom_files() {
    let f = Fixture::new();
    let mut le = vec![0xFF, 0xFE];
    "héllo\nwörld\n"
        .encode_utf16()
        .for_each(|u| le.extend_from_slice(&u.to_le_bytes()));
    f.write("le.txt", &le);
    let mut be = vec![0xFE, 0xFF];
    "big\n"
        .encode_utf16()
        .for_each(|u| be.extend_from_slice(&u.to_be_bytes()));
    f.write("be.txt", &be);
    f.write("bom.txt", b"\xEF\xBB\xBFfirst\n");
    let t = f.text("read", json!({"path": "le.txt"})).await;
    insta::assert_snapshot!("read_utf16le", t);
    assert!(
        f.text("read", json!({"path": "be.txt"}))
            .await
            .starts_with("     1\tbig\n")
    );
    let bom = f
        .call("read", json!({"path": "bom.txt"}))
        .await
        .result
        .unwrap();
    assert!(bom.text.starts_with("     1\tfirst\n"));
    assert_eq!(bom.data["encoding"], "utf8-bom");
}

#[tokio::test]
async fn read_records_full_evidence_for_a_whole_file() {
    let f = Fixture::new();
    let p = f.write("a.txt", "1\n2\n3\n");
    f.text("read", json!({"path": "a.txt"})).await;
    let ev = f.exec.context().session.evidence(&p).unwrap().unwrap();
    assert!(ev.full);
    let m = std::fs::metadata(&p).unwrap();
    assert!(ev.matches(b"1\n2\n3\n", &m));
}

#[tokio::test]
async fn read_records_the_covered_range_of_a_partial_read() {
    let f = Fixture::new();
    let p = f.write("a.txt", "1\n2\n3\n4\n5\n");
    f.text("read", json!({"path": "a.txt", "offset": 2, "limit": 2}))
        .await;
    let ev = f.exec.context().session.evidence(&p).unwrap().unwrap();
    assert!(!ev.full);
    assert_eq!(ev.ranges, vec![(2, 3)]);
    f.text(
        "read_region",
        json!({"path": "a.txt", "start_line": 4, "end_line": 5}),
    )
    .await;
    let ev = f.exec.context().session.evidence(&p).unwrap().unwrap();
    assert_eq!(ev.ranges, vec![(2, 5)]);
}

#[tokio::test]
async fn read_of_a_huge_file_without_a_range_is_too_large() {
    let f = Fixture::new();
    let line = "0123456789abcdef\n";
    let body =
        line.repeat((wrench_tools_fs::read::READ_WHOLE_FILE_MAX_BYTES as usize / line.len()) + 10);
    f.write("huge.log", &body);
    let e = f.error("read", json!({"path": "huge.log"})).await;
    assert_eq!(e.kind, ErrorKind::TooLarge);
    assert!(
        e.message.contains("offset") && e.message.contains("grep"),
        "{}",
        e.message
    );
    let t = f
        .text(
            "read",
            json!({"path": "huge.log", "offset": 100, "limit": 2}),
        )
        .await;
    assert!(t.starts_with("   100\t0123456789abcdef\n"), "{t}");
}

#[tokio::test]
async fn read_region_shows_exactly_the_range() {
    let f = Fixture::new();
    let body: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    f.write("ten.txt", &body);
    let t = f
        .text(
            "read_region",
            json!({"path": "ten.txt", "start_line": 4, "end_line": 6}),
        )
        .await;
    insta::assert_snapshot!("read_region_range", t);
}

#[tokio::test]
async fn read_region_says_when_the_end_is_past_the_file() {
    let f = Fixture::new();
    f.write("a.txt", "1\n2\n3\n");
    let t = f
        .text(
            "read_region",
            json!({"path": "a.txt", "start_line": 2, "end_line": 9}),
        )
        .await;
    assert_eq!(
        t,
        "     2\t2\n     3\t3\n[end_line 9 is past the end: the file has 3 lines]\n"
    );
}

#[tokio::test]
async fn read_region_refuses_bad_ranges() {
    let f = Fixture::new();
    f.write("a.txt", "1\n2\n3\n");
    for (s, e) in [(0, 1), (3, 2)] {
        let err = f
            .error(
                "read_region",
                json!({"path": "a.txt", "start_line": s, "end_line": e}),
            )
            .await;
        assert_eq!(err.kind, ErrorKind::InvalidArgs);
    }
    let err = f
        .error(
            "read_region",
            json!({"path": "a.txt", "start_line": 5, "end_line": 6}),
        )
        .await;
    insta::assert_snapshot!("read_region_past_end", err.message);
    let err = f
        .error(
            "read_region",
            json!({"path": "a.txt", "start_line": 1, "end_line": 5000}),
        )
        .await;
    assert_eq!(err.kind, ErrorKind::TooLarge);
}

#[tokio::test]
async fn read_refuses_a_fifo_without_waiting_for_a_writer() {
    let f = Fixture::new();
    let p = f.write("placeholder", "");
    let fifo = p.with_file_name("pipe");
    let ok = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success();
    assert!(ok, "mkfifo failed");
    // Should a read wait for a writer, this one comes after five seconds
    // (and says so) so that the test fails instead of hanging.
    let unblocked = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (flag, path) = (unblocked.clone(), fifo.clone());
    std::thread::spawn(move || {
        use std::os::unix::fs::OpenOptionsExt;
        for _ in 0..50 {
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let w = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&path);
        if w.is_ok() {
            flag.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    });
    for (tool, args) in [
        ("read", json!({"path": "pipe"})),
        (
            "read_region",
            json!({"path": "pipe", "start_line": 1, "end_line": 2}),
        ),
    ] {
        let e = f.error(tool, args).await;
        let waited = unblocked.load(std::sync::atomic::Ordering::SeqCst);
        assert!(!waited, "{tool} waited for a writer on the FIFO");
        assert_eq!(e.kind, ErrorKind::Unsupported, "{tool}: {}", e.message);
        assert!(e.message.contains("not a regular file"), "{}", e.message);
    }
}

#[tokio::test]
async fn read_region_of_a_directory_says_to_list_it() {
    let f = Fixture::new();
    f.write("src/a.rs", "\n");
    let e = f
        .error(
            "read_region",
            json!({"path": "src", "start_line": 1, "end_line": 2}),
        )
        .await;
    assert_eq!(e.kind, ErrorKind::InvalidArgs);
    assert!(e.message.starts_with("src is a directory"), "{}", e.message);
}

//! The server loop over a real socket with a recording handler: one
//! instance per socket, the hello checked on every request (another root
//! refused; another protocol, build or environment makes it exit), a
//! request line that is not JSON answered, idle exit.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use wrench_daemon::protocol::{Hello, Op, Request};
use wrench_daemon::{
    Door, Exit, Handler, Reply, RunOptions, RunRequest, ServerConfig, Status, serve,
};

#[derive(Default)]
struct Recorder {
    runs: AtomicUsize,
    shutdowns: AtomicUsize,
}

#[async_trait::async_trait]
impl Handler for Recorder {
    async fn run(&self, req: RunRequest) -> Reply {
        self.runs.fetch_add(1, Ordering::SeqCst);
        Reply {
            ok: true,
            stdout: format!("{} calls", req.calls.len()),
            ..Default::default()
        }
    }
    fn status(&self, s: &mut Status) {
        s.servers = vec!["probe".into()];
    }
    async fn shutdown(&self) {
        self.shutdowns.fetch_add(1, Ordering::SeqCst);
    }
}

fn hello(root: &std::path::Path) -> Hello {
    Hello {
        protocol: wrench_daemon::PROTOCOL_VERSION,
        build: "b1".into(),
        env: "e1".into(),
        root: root.to_path_buf(),
    }
}

fn ask(sock: &PathBuf, line: &str) -> Reply {
    let mut s = UnixStream::connect(sock).unwrap();
    s.write_all(line.as_bytes()).unwrap();
    s.write_all(b"\n").unwrap();
    let mut out = String::new();
    BufReader::new(s).read_line(&mut out).unwrap();
    serde_json::from_str(&out).unwrap()
}

fn request(h: Hello, op: Op) -> String {
    serde_json::to_string(&Request { hello: h, op }).unwrap()
}

fn run_op() -> Op {
    Op::Run(RunRequest {
        options: RunOptions::default(),
        door: Door::Call,
        calls: vec![serde_json::json!({"id": "1", "tool": "hover", "args": {}})],
    })
}

async fn wait_for(sock: &PathBuf) {
    for _ in 0..200 {
        if UnixStream::connect(sock).is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the server did not come up");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hello_is_checked_on_every_request() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let sock = t.path().join("d.sock");
    let rec = Arc::new(Recorder::default());
    let cfg = ServerConfig {
        hello: hello(&root),
        socket: sock.clone(),
        idle: Duration::from_secs(60),
    };
    let server = tokio::spawn(serve(cfg.clone(), rec.clone()));
    wait_for(&sock).await;
    let s2 = sock.clone();
    let replies = tokio::task::spawn_blocking(move || {
        let ok = ask(&s2, &request(hello(&root), run_op()));
        let status = ask(&s2, &request(hello(&root), Op::Status));
        let mut other = hello(&root);
        other.root = PathBuf::from("/somewhere/else");
        let wrong_root = ask(&s2, &request(other, run_op()));
        let garbage = ask(&s2, "not json");
        let mut newer = hello(&root);
        newer.build = "b2".into();
        let mismatch = ask(&s2, &request(newer, run_op()));
        (ok, status, wrong_root, garbage, mismatch)
    })
    .await
    .unwrap();
    let (ok, status, wrong_root, garbage, mismatch) = replies;
    assert!(ok.ok && ok.stdout == "1 calls", "{ok:?}");
    let st = status.status.unwrap();
    assert_eq!(
        (st.served, st.servers.clone()),
        (1, vec!["probe".to_string()])
    );
    assert!(!wrong_root.ok && wrong_root.error.unwrap().contains("serves"));
    assert!(!garbage.ok && garbage.error.unwrap().contains("bad request"));
    assert!(mismatch.mismatch, "{mismatch:?}");
    // A mismatch makes it exit, remove its socket and shut the handler down.
    let exit = tokio::time::timeout(Duration::from_secs(5), server)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(exit.unwrap(), Exit::Done);
    assert!(!sock.exists());
    assert_eq!(
        rec.runs.load(Ordering::SeqCst),
        1,
        "only the matching run ran"
    );
    assert_eq!(rec.shutdowns.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_server_per_socket_and_idle_exit() {
    let t = tempfile::tempdir().unwrap();
    let sock = t.path().join("d.sock");
    let cfg = ServerConfig {
        hello: hello(t.path()),
        socket: sock.clone(),
        idle: Duration::from_millis(300),
    };
    let first = tokio::spawn(serve(cfg.clone(), Arc::new(Recorder::default())));
    wait_for(&sock).await;
    let second = serve(cfg, Arc::new(Recorder::default())).await.unwrap();
    assert_eq!(second, Exit::AlreadyRunning);
    assert!(
        UnixStream::connect(&sock).is_ok(),
        "the second left the first's socket alone"
    );
    let exit = tokio::time::timeout(Duration::from_secs(5), first)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(exit.unwrap(), Exit::Done, "idle exit");
    assert!(!sock.exists());
}

//! Test helpers: a real HTTP/1.1 server on 127.0.0.1 (std threads), a
//! resolver with fixed answers, and contexts with a config.
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use wrench_core::{AllowAll, Call, CallResult, Config, Context, Executor, Gate, Registry};
use wrench_tools_web::HostResolver;

/// One request as the server read it.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// What the server sends back.
pub enum Reply {
    /// Raw response bytes; the connection is closed after them.
    Raw(Vec<u8>),
    /// Send these bytes, then hold the connection open until the client leaves.
    Stall(Vec<u8>),
}

pub fn response(status: &str, headers: &[(&str, &str)], body: &[u8]) -> Reply {
    let mut r = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        r.push_str(&format!("{k}: {v}\r\n"));
    }
    r.push_str("\r\n");
    let mut bytes = r.into_bytes();
    bytes.extend_from_slice(body);
    Reply::Raw(bytes)
}

pub fn ok(content_type: &str, body: impl AsRef<[u8]>) -> Reply {
    response("200 OK", &[("Content-Type", content_type)], body.as_ref())
}

pub fn redirect(location: &str) -> Reply {
    response("302 Found", &[("Location", location)], b"")
}

type Handler = dyn Fn(&Request) -> Reply + Send + Sync;

/// A server on 127.0.0.1 that counts connections and keeps every request.
pub struct Server {
    pub addr: SocketAddr,
    connections: Arc<AtomicUsize>,
    requests: Arc<Mutex<Vec<Request>>>,
}

impl Server {
    pub fn start(handler: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let connections = Arc::new(AtomicUsize::new(0));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Handler> = Arc::new(handler);
        let (c, r) = (connections.clone(), requests.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { break };
                c.fetch_add(1, Ordering::SeqCst);
                let (h, r) = (handler.clone(), r.clone());
                std::thread::spawn(move || serve(stream, &*h, &r));
            }
        });
        Server {
            addr,
            connections,
            requests,
        }
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port())
    }
    /// The same server under the name `localhost` (tests resolve it to 127.0.0.1).
    pub fn localhost(&self, path: &str) -> String {
        format!("http://localhost:{}{path}", self.port())
    }
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }
}

fn serve(mut s: TcpStream, h: &Handler, log: &Mutex<Vec<Request>>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or("").split(' ');
    let method = first.next().unwrap_or("").to_string();
    let target = first.next().unwrap_or("").to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < len {
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => body.extend_from_slice(&chunk[..n]),
        }
    }
    let req = Request {
        method,
        target,
        headers,
        body,
    };
    log.lock().unwrap().push(req.clone());
    match h(&req) {
        Reply::Raw(bytes) => {
            let _ = s.write_all(&bytes);
        }
        Reply::Stall(bytes) => {
            let _ = s.write_all(&bytes);
            let _ = s.flush();
            // Until the client gives up and closes.
            while matches!(s.read(&mut chunk), Ok(n) if n > 0) {}
        }
    }
}

/// A resolver with fixed answers per name, counting lookups and keeping the
/// names asked for.
#[derive(Default)]
pub struct Fixed {
    answers: HashMap<String, Vec<IpAddr>>,
    pub lookups: AtomicUsize,
    names: Mutex<Vec<String>>,
}

impl Fixed {
    pub fn new(pairs: &[(&str, &[&str])]) -> Arc<Fixed> {
        let answers = pairs
            .iter()
            .map(|(n, ips)| {
                (
                    n.to_string(),
                    ips.iter().map(|i| i.parse().unwrap()).collect(),
                )
            })
            .collect();
        Arc::new(Fixed {
            answers,
            lookups: AtomicUsize::new(0),
            names: Mutex::new(Vec::new()),
        })
    }

    /// Every name looked up so far, in order.
    pub fn names(&self) -> Vec<String> {
        self.names.lock().unwrap().clone()
    }
}

#[async_trait::async_trait]
impl HostResolver for Fixed {
    async fn lookup(&self, host: &str) -> std::io::Result<Vec<IpAddr>> {
        self.lookups.fetch_add(1, Ordering::SeqCst);
        self.names.lock().unwrap().push(host.to_string());
        self.answers.get(host).cloned().ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("no test answer for {host}"),
            )
        })
    }
}

/// A context over a temp workspace with `config` (TOML) and `gate`.
pub fn context(config: &str, gate: Arc<dyn Gate>) -> (tempfile::TempDir, Context) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let mut ctx = wrench_core::context_for(&ws, &dir.path().join("state"), gate).unwrap();
    ctx.config = Arc::new(Config::from_str(config).unwrap());
    (dir, ctx)
}

/// An executor with `reg` over a context with `config`, allowing everything.
pub fn executor(reg: Registry, config: &str) -> (tempfile::TempDir, Executor) {
    let (dir, ctx) = context(config, Arc::new(AllowAll));
    (dir, Executor::new(Arc::new(reg), ctx))
}

pub async fn call(ex: &Executor, tool: &str, args: serde_json::Value) -> CallResult {
    ex.run_one(Call::new("1", tool, args)).await
}

pub fn err_kind(r: &CallResult) -> String {
    match &r.result {
        Ok(o) => panic!("expected an error, got: {}", o.text),
        Err(e) => e.kind.as_str().to_string(),
    }
}

pub fn err_msg(r: &CallResult) -> String {
    match &r.result {
        Ok(o) => panic!("expected an error, got: {}", o.text),
        Err(e) => e.message.clone(),
    }
}

pub fn text(r: &CallResult) -> String {
    match &r.result {
        Ok(o) => o.text.clone(),
        Err(e) => panic!("expected success, got {e}"),
    }
}

pub fn data(r: &CallResult) -> serde_json::Value {
    match &r.result {
        Ok(o) => o.data.clone(),
        Err(e) => panic!("expected success, got {e}"),
    }
}

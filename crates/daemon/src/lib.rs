//! # wrench-daemon
//!
//! One detached process per (workspace root, user) that keeps language
//! servers, the watched symbol index and the read caches warm for one-shot
//! `wrench` calls and `batch`. This crate is the transport: the wire
//! [`protocol`], the [`server`] loop (lock, socket, peer check, hello
//! check, idle exit) and the [`client`] (socket path, explicit environment,
//! detached start, one request). What the daemon runs is the CLI's
//! (`wrench_cli::daemon`), through the same engine and policy as in-process.
//!
//! The socket is `d-HASH.sock` in the private socket dir
//! (`wrench_process::sockdir`), HASH of the canonical root and the protocol
//! version; the daemon's stderr goes to `d-HASH.log` beside it.
//!
//! A [`Handler`] is what a daemon serves with; [`bind`] claims the socket
//! (one daemon per socket), [`run`] serves until idle or stopped, and an
//! [`Endpoint`] is the client's side:
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use wrench_daemon::protocol::Hello;
//! use wrench_daemon::{
//!     Door, Endpoint, Exit, Handler, Op, PROTOCOL_VERSION, Reply, RunOptions, RunRequest,
//!     ServerConfig, Status, bind, run,
//! };
//!
//! struct Echo;
//! #[async_trait::async_trait]
//! impl Handler for Echo {
//!     async fn run(&self, req: RunRequest) -> Reply {
//!         Reply { ok: true, stdout: format!("{} call(s)", req.calls.len()), ..Default::default() }
//!     }
//!     fn status(&self, _: &mut Status) {}
//!     async fn shutdown(&self) {}
//! }
//!
//! # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
//! # async fn main() {
//! let dir = tempfile::tempdir().unwrap();
//! let hello = Hello {
//!     protocol: PROTOCOL_VERSION,
//!     build: "b1".into(),
//!     env: "e1".into(),
//!     root: dir.path().to_path_buf(),
//! };
//! let socket = dir.path().join("d.sock");
//! let cfg = ServerConfig { hello: hello.clone(), socket: socket.clone(), idle: Duration::from_secs(30) };
//! let bound = bind(cfg.clone()).unwrap().expect("nobody else holds the lock");
//! // A second daemon for the same socket stands back.
//! assert!(bind(cfg).unwrap().is_none());
//! let server = tokio::spawn(run(bound, Arc::new(Echo)));
//!
//! let ep = Endpoint { socket, hello, env: Vec::new() };
//! let reply = tokio::task::spawn_blocking(move || {
//!     let op = Op::Run(RunRequest {
//!         options: RunOptions::default(),
//!         door: Door::Call,
//!         calls: vec![serde_json::json!({"id": "1", "tool": "read", "args": {}})],
//!     });
//!     let reply = ep.request(op, Some(Duration::from_secs(10))).unwrap();
//!     assert!(ep.stop().unwrap(), "a daemon was running");
//!     reply
//! })
//! .await
//! .unwrap();
//! assert_eq!(reply.stdout, "1 call(s)");
//! assert_eq!(server.await.unwrap(), Ok(Exit::Done));
//! # }
//! ```

#![warn(missing_docs)]

pub mod client;
pub mod protocol;
pub mod server;

pub use client::{ClientError, Endpoint};
pub use protocol::{
    Door, Op, PROTOCOL_VERSION, Reply, RunOptions, RunRequest, Status, TreeChanges, TreeToken,
};
pub use server::{Bound, Exit, Handler, ServerConfig, bind, run, serve};

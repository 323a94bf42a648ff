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

pub mod client;
pub mod protocol;
pub mod server;

pub use client::{ClientError, Endpoint};
pub use protocol::{
    Door, Op, PROTOCOL_VERSION, Reply, RunOptions, RunRequest, Status, TreeChanges, TreeToken,
};
pub use server::{Bound, Exit, Handler, ServerConfig, bind, run, serve};

//! One running language server: the process (in its own process group), the
//! async-lsp main loop, what the server published (diagnostics, progress), and
//! the documents wrench opened in it, kept in sync with the disk.

use crate::discovery::{Language, ServerSpec, which_outside};
use async_lsp::router::Router;
use async_lsp::{MainLoop, ServerSocket};
use lsp_types::notification::{
    DidChangeTextDocument, DidChangeWatchedFiles, DidCloseTextDocument, DidOpenTextDocument, Exit,
    Initialized, LogMessage, Notification, Progress, PublishDiagnostics, ShowMessage,
};
use lsp_types::request::{
    ApplyWorkspaceEdit, Initialize, RegisterCapability, Request, ShowMessageRequest, Shutdown,
    UnregisterCapability, WorkDoneProgressCreate, WorkspaceConfiguration, WorkspaceFoldersRequest,
};
use lsp_types::{
    ClientCapabilities, ClientInfo, InitializeParams, InitializedParams, NumberOrString,
    ProgressParamsValue, ServerCapabilities, Url, WorkDoneProgress, WorkspaceFolder,
};
use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::sync::Notify;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};
use wrench_core::{ToolError, ToolResult};

/// How long `initialize` may take (a cold pyright or clangd start is seconds).
pub const INITIALIZE_TIMEOUT: Duration = Duration::from_secs(60);
/// How long one request (definition, references, rename...) may take.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// After *opening* a document (a server's first look at it), how long a
/// navigation call waits for its first `publishDiagnostics` (the sign the
/// server has analyzed the file). A changed document is never waited for:
/// the request follows the `didChange` at once.
pub const DIAGNOSTICS_WAIT: Duration = Duration::from_secs(20);
/// How long `diagnostics` and the report after a change wait, for all the
/// files of one call at once, for the servers to publish diagnostics of the
/// current text; a server that did not is reported as not ready.
pub const DIAGNOSTICS_BATCH_WAIT: Duration = Duration::from_secs(3);
/// Diagnostics count as settled when no newer publish came for this long
/// (servers publish syntax, then semantic results).
pub const DIAGNOSTICS_SETTLE: Duration = Duration::from_millis(300);
/// How long to wait for running work-done progress (indexing) to end.
pub const PROGRESS_WAIT: Duration = Duration::from_secs(30);
/// A quiet window with no progress running that counts as "ready".
pub const PROGRESS_SETTLE: Duration = Duration::from_millis(300);
/// How long `shutdown` may take before the process group is killed.
pub const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(3);
/// How long the server may take to exit after `exit` before it is killed.
pub const EXIT_GRACE: Duration = Duration::from_secs(2);
/// How many times a request answered with ContentModified (-32801) or
/// ServerCancelled (-32802) is retried.
pub const CONTENT_MODIFIED_RETRIES: u32 = 6;
/// The first pause before such a retry; it doubles each time (50 ms … 1.6 s).
pub const CONTENT_MODIFIED_BACKOFF: Duration = Duration::from_millis(50);
/// How much of the server's stderr is kept for error messages.
pub const STDERR_TAIL_BYTES: usize = 4096;

/// Why a request failed: the server died (the pool restarts it once) or an
/// ordinary tool error.
#[derive(Debug)]
pub enum LspError {
    /// The server process exited or its connection closed; the message says
    /// how (exit status, stderr tail as a quote).
    Died(ToolError),
    /// Any other failure (timeout, refused request, bad answer), already in
    /// the tool's error shape.
    Tool(ToolError),
}

impl From<ToolError> for LspError {
    fn from(e: ToolError) -> Self {
        LspError::Tool(e)
    }
}

impl LspError {
    /// The error for the tool result; `Died` becomes an `io` error naming
    /// `server` and saying what to check.
    pub fn into_tool(self, server: &str) -> ToolError {
        match self {
            LspError::Tool(e) => e,
            LspError::Died(mut e) => {
                // Wrapped around the message, its quote stays whole.
                e.message = format!(
                    "language server {server} stopped: {}; it was restarted once and stopped again — check that it works on this project (run it by hand) or configure another one in [lsp.servers.NAME]",
                    e.message
                );
                e
            }
        }
    }
}

/// What a request to a server returns.
pub type LspResult<T> = Result<T, LspError>;

/// What the server told us, shared with the router.
#[derive(Default)]
struct Published {
    /// Latest diagnostics per document, with the sequence number of the publish.
    diagnostics: HashMap<Url, (u64, Option<i32>, Vec<lsp_types::Diagnostic>)>,
    /// When the latest publishDiagnostics (of any document) arrived.
    last_publish: Option<std::time::Instant>,
    /// Sequence number of the latest publishDiagnostics.
    seq: u64,
    /// Work-done progress tokens that began and have not ended.
    active: HashSet<String>,
    /// Bumped on every progress begin or end.
    progress_events: u64,
}

struct Shared {
    state: Mutex<Published>,
    changed: Notify,
    folders: Vec<WorkspaceFolder>,
    /// Answers to `workspace/configuration` by section ([`ServerSpec::settings`]).
    settings: Option<serde_json::Value>,
}

impl Shared {
    fn with<R>(&self, f: impl FnOnce(&mut Published) -> R) -> R {
        let mut g = match self.state.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        f(&mut g)
    }

    /// The configuration for `section` (`"rust-analyzer"`, `"python.analysis"`):
    /// the entry of that name, else the dotted path through the entries;
    /// `null` (the server's defaults) when none.
    fn setting(&self, section: Option<&str>) -> serde_json::Value {
        let (Some(all), Some(section)) = (&self.settings, section) else {
            return serde_json::Value::Null;
        };
        if let Some(v) = all.get(section) {
            return v.clone();
        }
        let mut v = all;
        for part in section.split('.') {
            match v.get(part) {
                Some(next) => v = next,
                None => return serde_json::Value::Null,
            }
        }
        v.clone()
    }
}

/// A document as the server has it.
struct OpenDoc {
    version: i32,
    text: String,
    /// The publish sequence number when this version was sent: a publish
    /// with a higher number (and, when versioned, this version or later)
    /// describes this text.
    sent_at_seq: u64,
    /// A navigation call has waited for the server's first analysis of it.
    looked: bool,
}

/// What [`LspClient::sync_doc`] had to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Synced {
    /// The server already had this text.
    Unchanged,
    /// didChange sent (a new version).
    Changed,
    /// didOpen sent (the server had not seen the file).
    Opened,
}

/// Whether a server has published diagnostics for the text it was last given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Freshness {
    /// Published for the current version: these are the diagnostics.
    Current(Vec<lsp_types::Diagnostic>),
    /// Not (yet) published for the current version.
    Pending,
    /// The document is not open in the server.
    NotOpen,
}

/// A started, initialized language server.
pub struct LspClient {
    /// The server this client runs.
    pub spec: ServerSpec,
    /// The workspace root sent as `rootUri` and the single workspace folder.
    pub root: PathBuf,
    socket: ServerSocket,
    shared: Arc<Shared>,
    docs: tokio::sync::Mutex<HashMap<Url, OpenDoc>>,
    /// What the server announced in its `initialize` answer.
    pub capabilities: ServerCapabilities,
    pgid: i32,
    child: tokio::sync::Mutex<Option<std::process::Child>>,
    /// The server's process tree (cgroup leaf or tagged group); killed whole.
    group: Mutex<Option<wrench_process::Group>>,
    mainloop: tokio::task::JoinHandle<()>,
    stderr_tail: Arc<Mutex<Vec<u8>>>,
}

impl std::fmt::Debug for LspClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LspClient")
            .field("server", &self.spec.name)
            .field("root", &self.root)
            .field("pgid", &self.pgid)
            .finish()
    }
}

fn lock_vec(m: &Mutex<Vec<u8>>) -> std::sync::MutexGuard<'_, Vec<u8>> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// The `file://` URL of an absolute path.
pub fn url_of(abs: &Path) -> ToolResult<Url> {
    Url::from_file_path(abs)
        .map_err(|_| ToolError::invalid_args(format!("{} is not an absolute path", abs.display())))
}

fn token_key(t: &NumberOrString) -> String {
    match t {
        NumberOrString::Number(n) => format!("#{n}"),
        NumberOrString::String(s) => s.clone(),
    }
}

/// `WRENCH_LSP_TRACE=1` prints what the servers publish to stderr.
fn trace() -> bool {
    static T: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *T.get_or_init(|| std::env::var_os("WRENCH_LSP_TRACE").is_some_and(|v| v == "1"))
}

fn build_router(shared: Arc<Shared>) -> Router<Arc<Shared>> {
    let mut router = Router::new(shared);
    router
        .notification::<PublishDiagnostics>(|s, p| {
            if trace() {
                eprintln!(
                    "wrench-lsp: publishDiagnostics {} v{:?}: {} item(s)",
                    p.uri,
                    p.version,
                    p.diagnostics.len()
                );
            }
            s.with(|st| {
                st.seq += 1;
                let seq = st.seq;
                st.diagnostics
                    .insert(p.uri, (seq, p.version, p.diagnostics));
                st.last_publish = Some(std::time::Instant::now());
            });
            s.changed.notify_waiters();
            ControlFlow::Continue(())
        })
        .notification::<Progress>(|s, p| {
            let key = token_key(&p.token);
            let ProgressParamsValue::WorkDone(w) = p.value;
            if trace() {
                eprintln!("wrench-lsp: progress {key}: {w:?}");
            }
            s.with(|st| match w {
                WorkDoneProgress::Begin(_) => {
                    st.active.insert(key);
                    st.progress_events += 1;
                }
                WorkDoneProgress::End(_) => {
                    st.active.remove(&key);
                    st.progress_events += 1;
                }
                WorkDoneProgress::Report(_) => {}
            });
            s.changed.notify_waiters();
            ControlFlow::Continue(())
        })
        .notification::<ShowMessage>(|_, _| ControlFlow::Continue(()))
        .notification::<LogMessage>(|_, _| ControlFlow::Continue(()))
        .unhandled_notification(|_, _| ControlFlow::Continue(()))
        .request::<WorkDoneProgressCreate, _>(|_, _| async { Ok(()) })
        .request::<RegisterCapability, _>(|_, _| async { Ok(()) })
        .request::<UnregisterCapability, _>(|_, _| async { Ok(()) })
        .request::<ShowMessageRequest, _>(|_, _| async { Ok(None) })
        .request::<WorkspaceConfiguration, _>(|s, p| {
            let answers: Vec<serde_json::Value> = p
                .items
                .iter()
                .map(|item| s.setting(item.section.as_deref()))
                .collect();
            async move { Ok(answers) }
        })
        .request::<WorkspaceFoldersRequest, _>(|s, _| {
            let f = s.folders.clone();
            async move { Ok(Some(f)) }
        })
        // Servers never edit files behind the mutation guard: rename_symbol
        // applies edits itself.
        .request::<ApplyWorkspaceEdit, _>(|_, _| async {
            Ok(lsp_types::ApplyWorkspaceEditResponse {
                applied: false,
                failure_reason: Some(
                    "wrench applies edits only through its own tools (rename_symbol)".into(),
                ),
                failed_change: None,
            })
        });
    router
}

fn client_capabilities() -> ClientCapabilities {
    serde_json::from_value(serde_json::json!({
        "general": { "positionEncodings": ["utf-16"] },
        "window": { "workDoneProgress": true, "showMessage": {} },
        "workspace": {
            "workspaceFolders": true,
            "configuration": true,
            "symbol": { "dynamicRegistration": false },
            "workspaceEdit": { "documentChanges": true },
            "didChangeWatchedFiles": { "dynamicRegistration": false }
        },
        "textDocument": {
            "synchronization": { "didSave": false, "dynamicRegistration": false },
            "hover": { "contentFormat": ["markdown", "plaintext"] },
            "definition": { "linkSupport": true },
            "references": {},
            "rename": { "prepareSupport": true },
            "publishDiagnostics": { "relatedInformation": false, "versionSupport": true },
            "diagnostic": { "dynamicRegistration": false, "relatedDocumentSupport": false },
            "documentSymbol": { "hierarchicalDocumentSymbolSupport": true }
        }
    }))
    .unwrap_or_default()
}

impl LspClient {
    /// Start `spec` for the workspace `root` (under `sandbox`, when given)
    /// and initialize it.
    pub async fn start(
        spec: &ServerSpec,
        root: &Path,
        sandbox: Option<wrench_process::sandbox::Prepared>,
    ) -> ToolResult<LspClient> {
        let program = spec.command.first().ok_or_else(|| {
            ToolError::invalid_args(format!("server {} has an empty command", spec.name))
        })?;
        let exe = which_outside(program, root).ok_or_else(|| {
            ToolError::unsupported(format!(
                "language server {} (`{program}`) is not on PATH; install it: {}",
                spec.name, spec.install
            ))
        })?;
        let (mut child, group) = spawn_server(&exe, &spec.command[1..], &spec.env, root, sandbox)
            .map_err(|e| {
            ToolError::unsupported(format!(
                "cannot start language server {} ({}): {e}; install it: {}",
                spec.name,
                exe.display(),
                spec.install
            ))
        })?;
        let pid = i32::try_from(child.id()).unwrap_or(0);
        crate::pool::track_group(pid);
        let pipes = match (child.stdin.take(), child.stdout.take(), child.stderr.take()) {
            (Some(i), Some(o), Some(e)) => (
                tokio::process::ChildStdin::from_std(i),
                tokio::process::ChildStdout::from_std(o),
                tokio::process::ChildStderr::from_std(e),
            ),
            _ => {
                kill_group(pid);
                reap(child).await;
                return Err(ToolError::io(format!(
                    "language server {} started without pipes",
                    spec.name
                )));
            }
        };
        let (stdin, stdout, stderr) = match pipes {
            (Ok(i), Ok(o), Ok(e)) => (i, o, e),
            _ => {
                kill_group(pid);
                reap(child).await;
                return Err(ToolError::io(format!(
                    "cannot attach to the pipes of language server {}",
                    spec.name
                )));
            }
        };
        let stderr_tail = Arc::new(Mutex::new(Vec::new()));
        tokio::spawn(collect_tail(stderr, stderr_tail.clone()));

        let root_url = url_of(root)?;
        let folders = vec![WorkspaceFolder {
            uri: root_url.clone(),
            name: root
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "root".into()),
        }];
        let shared = Arc::new(Shared {
            state: Mutex::new(Published::default()),
            changed: Notify::new(),
            folders: folders.clone(),
            settings: spec.settings.clone(),
        });
        let router_state = shared.clone();
        let (mainloop, socket) = MainLoop::new_client(move |_| build_router(router_state));
        let name = spec.name.clone();
        let mainloop = tokio::spawn(async move {
            let r = mainloop
                .run_buffered(stdout.compat(), stdin.compat_write())
                .await;
            if trace() {
                eprintln!("wrench-lsp: main loop of {name} ended: {r:?}");
            }
        });
        if trace() {
            eprintln!(
                "wrench-lsp: started {} (pid {pid}) for {}",
                spec.name,
                root.display()
            );
        }

        #[allow(deprecated)]
        let params = InitializeParams {
            process_id: Some(std::process::id()),
            root_uri: Some(root_url),
            root_path: Some(root.display().to_string()),
            workspace_folders: Some(folders),
            capabilities: client_capabilities(),
            initialization_options: crate::discovery::default_initialization_options(spec, root),
            client_info: Some(ClientInfo {
                name: "wrench".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            ..InitializeParams::default()
        };
        let mut client = LspClient {
            spec: spec.clone(),
            root: root.to_path_buf(),
            socket,
            shared,
            docs: tokio::sync::Mutex::new(HashMap::new()),
            capabilities: ServerCapabilities::default(),
            pgid: pid,
            child: tokio::sync::Mutex::new(Some(child)),
            group: Mutex::new(Some(group)),
            mainloop,
            stderr_tail,
        };
        let init = tokio::time::timeout(
            INITIALIZE_TIMEOUT,
            client.socket.request::<Initialize>(params),
        )
        .await;
        let init = match init {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => {
                // The server's words are quotes: framed, and framed anew by the executor.
                let err = client.with_stderr(
                    ToolError::unsupported(format!(
                        "language server {} ({}) failed to initialize; check the install ({}). It said:\n",
                        spec.name,
                        exe.display(),
                        spec.install,
                    ))
                    .quoting("lsp:initialize", &e.to_string()),
                );
                client.kill().await;
                return Err(err);
            }
            Err(_) => {
                client.kill().await;
                return Err(ToolError::timeout(format!(
                    "language server {} did not answer `initialize` within {} s",
                    spec.name,
                    INITIALIZE_TIMEOUT.as_secs()
                )));
            }
        };
        client.capabilities = init.capabilities;
        if client
            .socket
            .notify::<Initialized>(InitializedParams {})
            .is_err()
        {
            let err = client.with_stderr(ToolError::io(format!(
                "language server {} stopped right after initialize",
                spec.name
            )));
            client.kill().await;
            return Err(err);
        }
        Ok(client)
    }

    /// `err` with the last lines the server wrote to stderr (if any)
    /// appended as a quote: a server quotes the workspace there (a
    /// manifest's bad line, a config's value), so they are framed, and the
    /// executor keeps the frame (see [`ToolError::quoting`]).
    pub fn with_stderr(&self, mut err: ToolError) -> ToolError {
        let t = lock_vec(&self.stderr_tail);
        let s = String::from_utf8_lossy(&t);
        let s = s.trim();
        if s.is_empty() {
            return err;
        }
        let last: Vec<&str> = s.lines().rev().take(5).collect();
        let last: Vec<&str> = last.into_iter().rev().collect();
        err.message.push_str(" (the server's last stderr lines:\n");
        let mut err = err.quoting("lsp:stderr", &last.join("\n"));
        err.message.push(')');
        err
    }

    /// The server's process group id.
    pub fn pgid(&self) -> i32 {
        self.pgid
    }

    /// SIGKILL the server's whole tree (also processes that left its group).
    fn kill_tree(&self) {
        let g = match self.group.lock() {
            Ok(mut g) => g.take(),
            Err(p) => p.into_inner().take(),
        };
        if let Some(g) = g {
            g.kill_now();
            drop(g);
        }
    }

    /// True when the main loop stopped (the server exited or its pipes broke).
    pub fn is_dead(&self) -> bool {
        self.mainloop.is_finished()
    }

    fn died(&self, what: &str) -> LspError {
        LspError::Died(self.with_stderr(ToolError::io(what)))
    }

    /// Send a request, with the request timeout and ContentModified retries.
    pub async fn request<R: Request>(&self, params: R::Params) -> LspResult<R::Result>
    where
        R::Params: Clone,
    {
        let mut attempt = 0;
        loop {
            let r = tokio::time::timeout(REQUEST_TIMEOUT, self.socket.request::<R>(params.clone()))
                .await;
            match r {
                Err(_) => {
                    return Err(LspError::Tool(ToolError::timeout(format!(
                        "language server {} did not answer {} within {} s; the project may still be indexing — try again shortly",
                        self.spec.name,
                        R::METHOD,
                        REQUEST_TIMEOUT.as_secs()
                    ))));
                }
                Ok(Ok(v)) => return Ok(v),
                Ok(Err(async_lsp::Error::Response(resp)))
                    if is_retryable(resp.code) && attempt < CONTENT_MODIFIED_RETRIES =>
                {
                    // The server's view moved under the request (an edit,
                    // indexing): ask again, backing off.
                    tokio::time::sleep(CONTENT_MODIFIED_BACKOFF * 2u32.pow(attempt)).await;
                    attempt += 1;
                }
                Ok(Err(async_lsp::Error::Response(resp))) => {
                    return Err(LspError::Tool(ToolError::io(format!(
                        "language server {} refused {}: {} (code {})",
                        self.spec.name,
                        R::METHOD,
                        resp.message,
                        resp.code.0
                    ))));
                }
                Ok(Err(async_lsp::Error::Deserialize(e))) => {
                    return Err(LspError::Tool(ToolError::io(format!(
                        "language server {} sent an answer to {} that does not parse: {e}",
                        self.spec.name,
                        R::METHOD
                    ))));
                }
                Ok(Err(e)) => return Err(self.died(&format!("{} failed: {e}", R::METHOD))),
            }
        }
    }

    fn notify<N: Notification>(&self, params: N::Params) -> LspResult<()> {
        if trace() {
            eprintln!("wrench-lsp: -> {} ({})", N::METHOD, self.spec.name);
        }
        self.socket
            .notify::<N>(params)
            .map_err(|e| self.died(&format!("{} failed: {e}", N::METHOD)))
    }

    /// Make the server's copy of `abs` equal `text` (didOpen or didChange)
    /// and return at once; says what it sent.
    pub async fn sync_doc(&self, abs: &Path, text: &str) -> LspResult<(Url, Synced)> {
        let url = url_of(abs)?;
        let seq = self.shared.with(|s| s.seq);
        let mut docs = self.docs.lock().await;
        match docs.get_mut(&url) {
            Some(d) if d.text == text => Ok((url, Synced::Unchanged)),
            Some(d) => {
                d.version += 1;
                d.text = text.to_string();
                d.sent_at_seq = seq;
                self.notify::<DidChangeTextDocument>(lsp_types::DidChangeTextDocumentParams {
                    text_document: lsp_types::VersionedTextDocumentIdentifier {
                        uri: url.clone(),
                        version: d.version,
                    },
                    content_changes: vec![lsp_types::TextDocumentContentChangeEvent {
                        range: None,
                        range_length: None,
                        text: text.to_string(),
                    }],
                })?;
                Ok((url, Synced::Changed))
            }
            None => {
                let lang = Language::of_path(abs).unwrap_or(Language::C);
                self.notify::<DidOpenTextDocument>(lsp_types::DidOpenTextDocumentParams {
                    text_document: lsp_types::TextDocumentItem {
                        uri: url.clone(),
                        language_id: lang.language_id(abs).to_string(),
                        version: 1,
                        text: text.to_string(),
                    },
                })?;
                docs.insert(
                    url.clone(),
                    OpenDoc {
                        version: 1,
                        text: text.to_string(),
                        sent_at_seq: seq,
                        looked: false,
                    },
                );
                Ok((url, Synced::Opened))
            }
        }
    }

    /// Make the server's copy of `abs` equal `text`. A changed document is
    /// not waited for (the next request follows the didChange at once; a
    /// server that answers ContentModified is asked again). A document the
    /// server had not seen is waited for, bounded by [`DIAGNOSTICS_WAIT`]:
    /// its first analysis is what answers about it. Returns the URL.
    pub async fn sync_text(&self, abs: &Path, text: &str) -> LspResult<Url> {
        let (url, synced) = self.sync_doc(abs, text).await?;
        // A first look is waited for also when another call opened the
        // document a moment ago and its analysis is still running.
        let first_look = match synced {
            Synced::Opened => true,
            Synced::Changed => false,
            Synced::Unchanged => self.docs.lock().await.get(&url).is_some_and(|d| !d.looked),
        };
        if first_look {
            // A server that answers diagnostics on request analyzes the file
            // for that answer (and, asked to, no longer publishes them).
            if self.pulled_diagnostics(&url).await.is_none() {
                let deadline = tokio::time::Instant::now() + DIAGNOSTICS_WAIT;
                self.wait_fresh(std::slice::from_ref(&url), deadline).await;
            }
            self.wait_for_quiet().await;
            // Waited for once (a server that publishes nothing for this file
            // costs one bounded wait, not one per call).
            if let Some(d) = self.docs.lock().await.get_mut(&url) {
                d.looked = true;
            }
        }
        Ok(url)
    }

    /// Whether the latest publish for `url` describes the text last sent.
    pub async fn freshness(&self, url: &Url) -> Freshness {
        let Some((version, sent_at)) = self
            .docs
            .lock()
            .await
            .get(url)
            .map(|d| (d.version, d.sent_at_seq))
        else {
            return Freshness::NotOpen;
        };
        self.shared.with(|s| match s.diagnostics.get(url) {
            Some((seq, v, d)) if *seq > sent_at && v.is_none_or(|v| v >= version) => {
                Freshness::Current(d.clone())
            }
            _ => Freshness::Pending,
        })
    }

    /// The diagnostics of `url` as last sent, asked synchronously, from a
    /// server that can answer that: typescript-language-server, through its
    /// `typescript.tsserverRequest` command (tsserver's syntactic, semantic
    /// and suggestion checks, in the order and shape it publishes them). It
    /// does not publish a file whose diagnostics were empty and stay empty,
    /// and publishes syntax and semantic results apart, so waiting for a
    /// publish could neither tell clean from busy nor know when it is whole.
    /// `None` for other servers or when the answer is not understood.
    pub async fn diagnostics_now(&self, url: &Url) -> Option<Vec<lsp_types::Diagnostic>> {
        if self.spec.name != "typescript-language-server" {
            return self.pulled_diagnostics(url).await;
        }
        let mut all = Vec::new();
        for kind in [
            "syntacticDiagnosticsSync",
            "semanticDiagnosticsSync",
            "suggestionDiagnosticsSync",
        ] {
            let params = lsp_types::ExecuteCommandParams {
                command: "typescript.tsserverRequest".into(),
                arguments: vec![
                    serde_json::json!(kind),
                    serde_json::json!({"file": url.as_str(), "includeLinePosition": false}),
                ],
                work_done_progress_params: Default::default(),
            };
            let v = self
                .request::<lsp_types::request::ExecuteCommand>(params)
                .await
                .ok()??;
            if v["success"] != true {
                return None;
            }
            for d in v["body"].as_array()? {
                all.push(from_tsserver(d)?);
            }
        }
        Some(all)
    }

    /// LSP 3.17 pull diagnostics (`textDocument/diagnostic`) from a server
    /// that offers them (rust-analyzer): the answer is for the text last
    /// sent, so no publish has to be waited for (rust-analyzer does not
    /// re-publish unchanged diagnostics). `None` when not offered or not a
    /// full report.
    async fn pulled_diagnostics(&self, url: &Url) -> Option<Vec<lsp_types::Diagnostic>> {
        self.capabilities.diagnostic_provider.as_ref()?;
        let params = lsp_types::DocumentDiagnosticParams {
            text_document: lsp_types::TextDocumentIdentifier { uri: url.clone() },
            identifier: None,
            previous_result_id: None,
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
        };
        match self
            .request::<lsp_types::request::DocumentDiagnosticRequest>(params)
            .await
            .ok()?
        {
            lsp_types::DocumentDiagnosticReportResult::Report(
                lsp_types::DocumentDiagnosticReport::Full(r),
            ) => Some(r.full_document_diagnostic_report.items),
            _ => None,
        }
    }

    /// Wait until every url of `urls` has diagnostics for its current text
    /// and no publish came for [`DIAGNOSTICS_SETTLE`], or until `deadline`.
    /// Returns the urls that are still pending.
    pub async fn wait_fresh(&self, urls: &[Url], deadline: tokio::time::Instant) -> Vec<Url> {
        loop {
            let notified = self.shared.changed.notified();
            let mut pending = Vec::new();
            for u in urls {
                if self.freshness(u).await == Freshness::Pending {
                    pending.push(u.clone());
                }
            }
            let now = tokio::time::Instant::now();
            if pending.is_empty() {
                // All current: let a late second publish (semantic after
                // syntax) arrive, bounded.
                let quiet_since = self
                    .shared
                    .with(|s| s.last_publish)
                    .map(|t| t.elapsed())
                    .unwrap_or(DIAGNOSTICS_SETTLE);
                if quiet_since >= DIAGNOSTICS_SETTLE || now >= deadline {
                    return pending;
                }
                let until = (now + (DIAGNOSTICS_SETTLE - quiet_since)).min(deadline);
                let _ = tokio::time::timeout_at(until, notified).await;
                continue;
            }
            if now >= deadline || self.is_dead() {
                return pending;
            }
            let _ = tokio::time::timeout_at(deadline, notified).await;
        }
    }

    /// The version and text of an open document.
    pub async fn open_doc(&self, url: &Url) -> Option<(i32, String)> {
        self.docs
            .lock()
            .await
            .get(url)
            .map(|d| (d.version, d.text.clone()))
    }

    /// URLs of the documents open in the server.
    pub async fn open_urls(&self) -> Vec<Url> {
        self.docs.lock().await.keys().cloned().collect()
    }

    /// Close a document (it was deleted or is unreadable).
    pub async fn close(&self, url: &Url) -> LspResult<()> {
        if self.docs.lock().await.remove(url).is_some() {
            self.notify::<DidCloseTextDocument>(lsp_types::DidCloseTextDocumentParams {
                text_document: lsp_types::TextDocumentIdentifier { uri: url.clone() },
            })?;
        }
        Ok(())
    }

    /// Tell the server that wrench changed these files on disk.
    pub fn files_changed(&self, urls: &[Url]) -> LspResult<()> {
        self.notify::<DidChangeWatchedFiles>(lsp_types::DidChangeWatchedFilesParams {
            changes: urls
                .iter()
                .map(|u| lsp_types::FileEvent {
                    uri: u.clone(),
                    typ: lsp_types::FileChangeType::CHANGED,
                })
                .collect(),
        })
    }

    /// Wait (bounded by [`PROGRESS_WAIT`]) until no work-done progress runs
    /// and none began or ended during [`PROGRESS_SETTLE`].
    pub async fn wait_for_quiet(&self) {
        let deadline = tokio::time::Instant::now() + PROGRESS_WAIT;
        loop {
            let (busy, events) = self
                .shared
                .with(|s| (!s.active.is_empty(), s.progress_events));
            if !busy {
                tokio::time::sleep(PROGRESS_SETTLE).await;
                let (busy2, events2) = self
                    .shared
                    .with(|s| (!s.active.is_empty(), s.progress_events));
                if !busy2 && events2 == events {
                    return;
                }
            } else {
                let notified = self.shared.changed.notified();
                let _ = tokio::time::timeout(PROGRESS_SETTLE, notified).await;
            }
            if tokio::time::Instant::now() >= deadline || self.is_dead() {
                return;
            }
        }
    }

    /// The latest diagnostics the server published for `url`, if any.
    pub fn published(&self, url: &Url) -> Option<Vec<lsp_types::Diagnostic>> {
        self.shared
            .with(|s| s.diagnostics.get(url).map(|(_, _, d)| d.clone()))
    }

    /// Sequence number of the latest publishDiagnostics.
    pub fn publish_seq(&self) -> u64 {
        self.shared.with(|s| s.seq)
    }

    /// Graceful stop: `shutdown`, `exit`, a grace period, then kill the group.
    pub async fn shutdown(&self) {
        if !self.is_dead() {
            let _ =
                tokio::time::timeout(SHUTDOWN_TIMEOUT, self.socket.request::<Shutdown>(())).await;
            let _ = self.socket.notify::<Exit>(());
            let deadline = tokio::time::Instant::now() + EXIT_GRACE;
            while tokio::time::Instant::now() < deadline && !leader_exited(self.pgid) {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        self.kill().await;
    }

    /// Kill the whole process group and reap the server.
    pub async fn kill(&self) {
        // Kill the group while the leader is unreaped, so the id cannot be reused.
        kill_group(self.pgid);
        self.kill_tree();
        if let Some(c) = self.child.lock().await.take() {
            reap(c).await;
        }
        crate::pool::untrack_group(self.pgid);
        self.mainloop.abort();
    }
}

impl Drop for LspClient {
    fn drop(&mut self) {
        kill_group(self.pgid);
        self.kill_tree();
        if let Ok(mut g) = self.child.try_lock()
            && let Some(mut c) = g.take()
        {
            let _ = c.kill();
            // Reap off-thread so no zombie is left behind.
            let _ = std::thread::Builder::new()
                .name("wrench-lsp-reaper".into())
                .spawn(move || c.wait());
        }
        crate::pool::untrack_group(self.pgid);
        self.mainloop.abort();
    }
}

/// One tsserver diagnostic (`{start: {line, offset}, end, text, code,
/// category}`, 1-based, UTF-16 offsets) as typescript-language-server
/// publishes it.
fn from_tsserver(d: &serde_json::Value) -> Option<lsp_types::Diagnostic> {
    let pos = |p: &serde_json::Value| -> Option<lsp_types::Position> {
        Some(lsp_types::Position {
            line: u32::try_from(p["line"].as_u64()?.saturating_sub(1)).ok()?,
            character: u32::try_from(p["offset"].as_u64()?.saturating_sub(1)).ok()?,
        })
    };
    let severity = match d["category"].as_str()? {
        "error" => lsp_types::DiagnosticSeverity::ERROR,
        "warning" => lsp_types::DiagnosticSeverity::WARNING,
        "suggestion" => lsp_types::DiagnosticSeverity::HINT,
        _ => lsp_types::DiagnosticSeverity::INFORMATION,
    };
    Some(lsp_types::Diagnostic {
        range: lsp_types::Range {
            start: pos(&d["start"])?,
            end: pos(&d["end"])?,
        },
        severity: Some(severity),
        code: d["code"]
            .as_i64()
            .and_then(|c| i32::try_from(c).ok())
            .map(NumberOrString::Number),
        message: d["text"].as_str()?.to_string(),
        source: Some("typescript".into()),
        ..lsp_types::Diagnostic::default()
    })
}

/// ContentModified (-32801) and ServerCancelled (-32802): the answer was
/// dropped because the server's state moved; asking again is correct.
fn is_retryable(code: async_lsp::ErrorCode) -> bool {
    code == async_lsp::ErrorCode::CONTENT_MODIFIED || code.0 == -32802
}

/// Reap a server whose group was killed (blocking wait on a blocking thread).
async fn reap(mut c: std::process::Child) {
    let _ = c.kill();
    let _ = tokio::task::spawn_blocking(move || c.wait()).await;
}

/// Start a server through the one process spawner: its own group, a
/// cgroup leaf, `PR_SET_PDEATHSIG` from the spawner's long-lived thread (so
/// it dies with wrench), the sandbox when given.
fn spawn_server(
    exe: &Path,
    args: &[String],
    env: &[(String, String)],
    cwd: &Path,
    sandbox: Option<wrench_process::sandbox::Prepared>,
) -> std::io::Result<(std::process::Child, wrench_process::Group)> {
    let mut cmd = std::process::Command::new(exe);
    // What the server looks up itself (`env node`, pyright's `python3`) is
    // never a program of the workspace (discovery/guard.rs).
    if let Some(path) = wrench_process::which::path_var_outside(cwd) {
        cmd.env("PATH", path);
    }
    cmd.envs(env.iter().map(|(k, v)| (k, v)))
        .args(args)
        .current_dir(cwd)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    wrench_process::spawn_blocking(cmd, wrench_process::Options::call(sandbox))
}

/// SIGKILL to process group `pgid` (nothing for 0 or an already empty group).
pub fn kill_group(pgid: i32) {
    if pgid > 1 {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pgid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

/// True when process `pid` has exited (it is not reaped by this check).
fn leader_exited(pid: i32) -> bool {
    use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
    if pid <= 1 {
        return true;
    }
    let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT | WaitPidFlag::WNOHANG;
    match waitid(Id::Pid(nix::unistd::Pid::from_raw(pid)), flags) {
        Ok(WaitStatus::StillAlive) => false,
        Ok(_) => true,
        Err(_) => true,
    }
}

async fn collect_tail(mut r: tokio::process::ChildStderr, tail: Arc<Mutex<Vec<u8>>>) {
    let mut buf = [0u8; 4096];
    loop {
        match r.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                let mut t = lock_vec(&tail);
                t.extend_from_slice(&buf[..n]);
                if t.len() > STDERR_TAIL_BYTES {
                    let cut = t.len() - STDERR_TAIL_BYTES;
                    t.drain(..cut);
                }
            }
        }
    }
}

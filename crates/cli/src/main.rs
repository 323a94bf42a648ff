//! `wrench`: the command-line front doors. Thin glue over the wrench-cli
//! library: the clap definition and one file per subcommand in `commands/`.

mod commands;

use std::process::ExitCode;
use std::sync::Arc;
use wrench_core::ToolError;

fn main() -> ExitCode {
    // `wrench --version` answers before anything is built.
    if let [_, v] = std::env::args().collect::<Vec<_>>().as_slice()
        && (v == "--version" || v == "-V")
    {
        wrench_cli::out::stdout(format!("wrench {}\n", env!("CARGO_PKG_VERSION")));
        return commands::code(wrench_cli::exit::OK);
    }
    let reg = match wrench_cli::builtin_registry() {
        Ok(r) => Arc::new(r),
        Err(e) => return commands::fail(&e, false),
    };
    let cli = commands::build_cli(&reg);
    let m = match cli.try_get_matches() {
        Ok(m) => m,
        Err(e) => {
            // Rendered into a string first: clap's own printing of help
            // must not be what meets a closed pipe.
            use std::io::IsTerminal;
            let tty = if e.use_stderr() {
                std::io::stderr().is_terminal()
            } else {
                std::io::stdout().is_terminal()
            };
            let styled = e.render();
            let text = if tty {
                styled.ansi().to_string()
            } else {
                styled.to_string()
            };
            if e.use_stderr() {
                wrench_cli::out::styled_stderr(text);
            } else {
                wrench_cli::out::styled_stdout(text);
            }
            return commands::code(if e.use_stderr() {
                wrench_cli::exit::USAGE
            } else {
                wrench_cli::exit::OK
            });
        }
    };
    // The long-lived doors serve many calls at once on every core; a
    // one-shot call runs on this thread (blocking work still goes to
    // tokio's blocking pool), which saves starting a worker per core.
    let mut builder = match m.subcommand_name() {
        Some("mcp" | "batch" | "daemon") => tokio::runtime::Builder::new_multi_thread(),
        _ => tokio::runtime::Builder::new_current_thread(),
    };
    let rt = match builder.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            return commands::fail(
                &ToolError::io(format!("cannot start the runtime: {e}")),
                false,
            );
        }
    };
    let code = rt.block_on(async move {
        let code = commands::run(m, reg).await;
        wrench_lsp::shutdown_all().await;
        code
    });
    // The reader went away (`| head`): what it read was what it wanted.
    if wrench_cli::out::stdout_closed() {
        return ExitCode::SUCCESS;
    }
    code
}

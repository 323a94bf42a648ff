//! `wrench`: the command-line front doors. Thin glue over the wrench-cli
//! library: the clap definition and one file per subcommand in `commands/`.

mod commands;

use std::process::ExitCode;
use std::sync::Arc;
use wrench_core::ToolError;

fn main() -> ExitCode {
    let reg = match wrench_cli::builtin_registry() {
        Ok(r) => Arc::new(r),
        Err(e) => return commands::fail(&e, false),
    };
    let cli = commands::build_cli(&reg);
    let m = match cli.try_get_matches() {
        Ok(m) => m,
        Err(e) => {
            let _ = e.print();
            return commands::code(if e.use_stderr() {
                wrench_cli::exit::USAGE
            } else {
                wrench_cli::exit::OK
            });
        }
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            return commands::fail(
                &ToolError::io(format!("cannot start the runtime: {e}")),
                false,
            );
        }
    };
    rt.block_on(async move {
        let code = commands::run(m, reg).await;
        wrench_lsp::shutdown_all().await;
        code
    })
}

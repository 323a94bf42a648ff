//! Measure what a one-shot CLI call pays for starting a language server:
//! `cargo run -p wrench-lsp --example cold_start -- DIR FILE LINE CHARACTER`
//! prints the time of a cold `definition` (start + initialize + open +
//! answer), of a warm one on the same server, and of the shutdown.

use std::sync::Arc;
use std::time::Instant;
use wrench_core::{AllowAll, Call, Executor, Registry};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let [dir, file, line, character] = a.as_slice() else {
        return Err("usage: cold_start DIR FILE LINE CHARACTER".into());
    };
    let state = tempfile::tempdir()?;
    let ctx =
        wrench_core::context_for(std::path::Path::new(dir), state.path(), Arc::new(AllowAll))?;
    let mut reg = Registry::new();
    wrench_lsp::register(&mut reg)?;
    let exec = Executor::new(Arc::new(reg), ctx);
    let rt = tokio::runtime::Runtime::new()?;
    let args = serde_json::json!({"path": file, "line": line.parse::<u32>()?, "character": character.parse::<u32>()?});
    rt.block_on(async {
        for label in ["cold", "warm"] {
            let t = Instant::now();
            let r = exec
                .run_one(Call::new("1", "definition", args.clone()))
                .await;
            let first = match &r.result {
                Ok(o) => o.text.lines().next().unwrap_or_default().to_string(),
                Err(e) => format!("error: {}", e.message),
            };
            println!("{label}: {} ms  {first}", t.elapsed().as_millis());
        }
        let t = Instant::now();
        wrench_lsp::shutdown_all().await;
        println!("shutdown: {} ms", t.elapsed().as_millis());
    });
    Ok(())
}

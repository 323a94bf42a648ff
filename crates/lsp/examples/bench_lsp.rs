//! `cargo run -p wrench-lsp --example bench_lsp -- RUNS [SERVER]`: language-server
//! latency through the real Executor on small real projects (three files each,
//! generated in a temp dir), per installed server: a cold `definition`
//! (server start included), a warm one, the first `definition` after the file
//! changed on disk, a `rename_symbol` across three files end to end, and a
//! `write` with its diagnostics report (introduced, then resolved). Medians of
//! RUNS; JSON on stdout (for `cargo xtask bench --only lsp`).

use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Instant;
use wrench_core::{AllowAll, Call, Executor, ReadEvidence, Registry};

struct Project {
    server: &'static str,
    program: &'static str,
    files: &'static [(&'static str, &'static str)],
    /// The file with a use of `greet`, and that line (1-based).
    user: (&'static str, u32),
    /// The file and line (1-based) where `greet` is defined (renamed there).
    def: (&'static str, u32),
    /// A clean and a broken version of `user` (one type error).
    broken: &'static str,
    comment: &'static str,
}

const PROJECTS: &[Project] = &[
    Project {
        server: "pyright",
        program: "pyright-langserver",
        files: &[
            (
                "util.py",
                "def greet(name: str) -> str:\n    return \"hello \" + name\n",
            ),
            ("a.py", "from util import greet\nprint(greet(\"a\"))\n"),
            ("b.py", "from util import greet\nprint(greet(\"b\"))\n"),
        ],
        user: ("a.py", 2),
        def: ("util.py", 1),
        broken: "from util import greet\nprint(greet(\"a\"))\nx: int = \"one\"\n",
        comment: "#",
    },
    Project {
        server: "typescript-language-server",
        program: "typescript-language-server",
        files: &[
            (
                "tsconfig.json",
                "{\"compilerOptions\":{\"strict\":true,\"noEmit\":true},\"include\":[\"*.ts\"]}\n",
            ),
            (
                "util.ts",
                "export function greet(name: string): string {\n  return \"hello \" + name;\n}\n",
            ),
            (
                "a.ts",
                "import { greet } from \"./util\";\nconsole.log(greet(\"a\"));\n",
            ),
            (
                "b.ts",
                "import { greet } from \"./util\";\nconsole.log(greet(\"b\"));\n",
            ),
        ],
        user: ("a.ts", 2),
        def: ("util.ts", 1),
        broken: "import { greet } from \"./util\";\nconsole.log(greet(\"a\"));\nconst x: number = \"one\";\n",
        comment: "//",
    },
    Project {
        server: "rust-analyzer",
        program: "rust-analyzer",
        files: &[
            (
                "Cargo.toml",
                "[package]\nname = \"w\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
            ),
            (
                "Cargo.lock",
                "version = 3\n\n[[package]]\nname = \"w\"\nversion = \"0.1.0\"\n",
            ),
            (
                "src/main.rs",
                "mod a;\nmod b;\npub fn greet(name: &str) -> String {\n    format!(\"hello {name}\")\n}\nfn main() {\n    println!(\"{}{}\", a::run(), b::run());\n}\n",
            ),
            (
                "src/a.rs",
                "pub fn run() -> String {\n    crate::greet(\"a\")\n}\n",
            ),
            (
                "src/b.rs",
                "pub fn run() -> String {\n    crate::greet(\"b\")\n}\n",
            ),
        ],
        user: ("src/a.rs", 2),
        def: ("src/main.rs", 3),
        broken: "pub fn run() -> String {\n    crate::greet(\"a\")\n}\nconst X: u32 = \"one\";\n",
        comment: "//",
    },
    Project {
        server: "clangd",
        program: "clangd",
        files: &[
            ("util.h", "int greet(int x);\n"),
            (
                "util.c",
                "#include \"util.h\"\nint greet(int x) { return x + 1; }\n",
            ),
            (
                "a.c",
                "#include \"util.h\"\nint a(void) { return greet(1); }\n",
            ),
            (
                "b.c",
                "#include \"util.h\"\nint b(void) { return greet(2); }\n",
            ),
        ],
        user: ("a.c", 2),
        def: ("util.h", 1),
        broken: "#include \"util.h\"\nint a(void) { return greet(1); }\nint c(void) { return nope; }\n",
        comment: "//",
    },
];

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

fn col_of(text: &str, line: u32, needle: &str) -> u32 {
    let l = text.lines().nth(line as usize - 1).unwrap_or("");
    let byte = l.find(needle).unwrap_or(0);
    u32::try_from(l[..byte].chars().count() + 1).unwrap_or(1)
}

struct Env {
    exec: Executor,
    ctx: wrench_core::Context,
    root: std::path::PathBuf,
}

impl Env {
    async fn call(&self, tool: &str, args: Value) -> Result<wrench_core::ToolOutput, String> {
        self.exec
            .run_one(Call::new("b", tool, args))
            .await
            .result
            .map_err(|e| format!("{tool}: {}", e.message))
    }

    fn record_read(&self, rel: &str) -> Result<(), Box<dyn std::error::Error>> {
        let p = self.root.join(rel);
        let bytes = std::fs::read(&p)?;
        let meta = std::fs::metadata(&p)?;
        self.ctx
            .session
            .record_read(ReadEvidence::of(&p, &bytes, &meta, true, None))?;
        Ok(())
    }
}

async fn bench(p: &Project, runs: usize) -> Result<Value, Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let root = dir.path().join("project");
    for (rel, text) in p.files {
        let f = root.join(rel);
        if let Some(parent) = f.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(f, text)?;
    }
    let root = std::fs::canonicalize(&root)?;
    if p.server == "clangd" {
        let db: Vec<Value> = ["util.c", "a.c", "b.c"]
            .iter()
            .map(|f| json!({"directory": root.display().to_string(), "file": f, "arguments": ["cc", "-c", f]}))
            .collect();
        std::fs::write(
            root.join("compile_commands.json"),
            serde_json::to_string(&db)?,
        )?;
    }
    let state = dir.path().join("state");
    std::fs::create_dir_all(&state)?;
    let ctx = wrench_core::context_for(&root, &state, Arc::new(AllowAll))?
        .with_change_diagnostics(Some(wrench_lsp::change_hook()));
    let mut reg = Registry::new();
    wrench_lsp::register(&mut reg)?;
    wrench_tools_edit::register(&mut reg)?;
    let env = Env {
        exec: Executor::new(Arc::new(reg), ctx.clone()),
        ctx,
        root: root.clone(),
    };
    let (user, line) = p.user;
    let text = std::fs::read_to_string(root.join(user))?;
    let character = col_of(&text, line, "greet");
    let at = json!({"path": user, "line": line, "character": character});

    let t = Instant::now();
    let first = env.call("definition", at.clone()).await?;
    let cold = ms(t);
    let mut warm = Vec::new();
    let mut after_edit = Vec::new();
    let mut rename = Vec::new();
    let mut write_report = Vec::new();
    let mut reported = (0, 0);
    for i in 0..runs {
        let t = Instant::now();
        env.call("definition", at.clone()).await?;
        warm.push(ms(t));
        // The file changes on disk (a line appended), then the first call.
        let mut changed = text.clone();
        for _ in 0..=i {
            changed.push_str(&format!("{} edit\n", p.comment));
        }
        std::fs::write(root.join(user), &changed)?;
        let t = Instant::now();
        env.call("definition", at.clone()).await?;
        after_edit.push(ms(t));
    }
    std::fs::write(root.join(user), &text)?;
    let names = ["welcome", "greet"];
    for i in 0..runs {
        // Untimed: let the server re-index what the previous rename changed
        // on disk (clangd's background index), as between an agent's turns.
        if i > 0 {
            tokio::time::sleep(std::time::Duration::from_secs(2)).await;
        }
        for (rel, _) in p.files {
            env.record_read(rel)?;
        }
        let cur = std::fs::read_to_string(root.join(p.def.0))?;
        let from = names[(i + 1) % 2];
        let args = json!({"path": p.def.0, "line": p.def.1, "character": col_of(&cur, p.def.1, from), "new_name": names[i % 2]});
        let t = Instant::now();
        let out = env.call("rename_symbol", args).await?;
        rename.push(ms(t));
        let files = out.text.matches("+++ b/").count();
        if files < 3 {
            return Err(
                format!("{}: rename changed {files} files:\n{}", p.server, out.text).into(),
            );
        }
    }
    if runs % 2 == 1 {
        // Leave the project as it was (greet), for the write cases.
        for (rel, _) in p.files {
            env.record_read(rel)?;
        }
        let cur = std::fs::read_to_string(root.join(p.def.0))?;
        let args = json!({"path": p.def.0, "line": p.def.1, "character": col_of(&cur, p.def.1, "welcome"), "new_name": "greet"});
        env.call("rename_symbol", args).await?;
    }
    let clean = std::fs::read_to_string(root.join(user))?;
    for i in 0..runs {
        env.record_read(user)?;
        let content = if i % 2 == 0 { p.broken } else { clean.as_str() };
        let t = Instant::now();
        let out = env
            .call("write", json!({"path": user, "content": content}))
            .await?;
        write_report.push(ms(t));
        let d = &out.data["diagnostics"];
        let errs = |k: &str| {
            d[k].as_array()
                .map(|v| v.iter().filter(|x| x["severity"] == "error").count())
                .unwrap_or(0)
        };
        if i % 2 == 0 && errs("introduced") > 0 {
            reported.0 += 1;
        }
        if i % 2 == 1 && errs("resolved") > 0 {
            reported.1 += 1;
        }
    }
    wrench_lsp::shutdown_root(&root).await;
    Ok(json!({
        "server": p.server,
        "first_answer": first.text.lines().next().unwrap_or_default(),
        "cold_definition_ms": cold,
        "warm_definition_ms": median(warm),
        "first_definition_after_edit_ms": median(after_edit),
        "rename_3_files_ms": median(rename),
        "write_with_report_ms": median(write_report),
        "introduced_reported": format!("{}/{}", reported.0, runs.div_ceil(2)),
        "resolved_reported": format!("{}/{}", reported.1, runs / 2),
    }))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let runs: usize = std::env::args()
        .nth(1)
        .map(|r| r.parse())
        .transpose()?
        .unwrap_or(5)
        .max(1);
    let rt = tokio::runtime::Runtime::new()?;
    let mut out = Vec::new();
    // An optional second argument picks the servers whose name contains it.
    let only = std::env::args().nth(2);
    for p in PROJECTS
        .iter()
        .filter(|p| only.as_deref().is_none_or(|o| p.server.contains(o)))
    {
        // rustup installs a `rust-analyzer` proxy that fails until the
        // component is added: ask it for its version.
        let proxy_without_component = p.server == "rust-analyzer"
            && !std::process::Command::new(p.program)
                .arg("--version")
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
        if wrench_lsp::discovery::which(p.program).is_none() || proxy_without_component {
            out.push(
                json!({"server": p.server, "missing": format!("{} is not installed", p.program)}),
            );
            continue;
        }
        eprintln!("bench_lsp: {}", p.server);
        match rt.block_on(bench(p, runs)) {
            Ok(v) => out.push(v),
            Err(e) => out.push(json!({"server": p.server, "error": e.to_string()})),
        }
    }
    rt.block_on(wrench_lsp::shutdown_all());
    println!(
        "{}",
        serde_json::to_string_pretty(&json!({"runs": runs, "servers": out}))?
    );
    Ok(())
}

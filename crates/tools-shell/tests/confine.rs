//! `escape_sandbox` and the default sandbox at the tool level: the plan the
//! gate sees, the refusals, and the process tree of a cancelled call.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use wrench_core::{
    ActionPlan, AllowAll, Call, Decision, Executor, Gate, Registry, Risk, context_for,
};

struct Recorder(Mutex<Vec<ActionPlan>>);
impl Gate for Recorder {
    fn authorize(&self, plan: &ActionPlan) -> Decision {
        self.0.lock().unwrap().push(plan.clone());
        Decision::Deny("recorded".into())
    }
}

fn dirs() -> (tempfile::TempDir, tempfile::TempDir, tempfile::TempDir) {
    let base = wrench_process::sandbox::dir_outside_temp(std::path::Path::new(env!(
        "CARGO_TARGET_TMPDIR"
    )));
    let base = base.as_path();
    (
        tempfile::tempdir_in(base).unwrap(),
        tempfile::tempdir_in(base).unwrap(),
        tempfile::tempdir_in(base).unwrap(),
    )
}

fn executor(
    root: &std::path::Path,
    state: &std::path::Path,
    gate: Arc<dyn Gate>,
    sandbox_default: bool,
) -> Executor {
    let mut reg = Registry::new();
    wrench_tools_shell::register(&mut reg).unwrap();
    let ctx = context_for(root, state, gate)
        .unwrap()
        .with_sandbox_by_default(sandbox_default);
    Executor::new(Arc::new(reg), ctx)
}

fn spawn_risk(plan: &ActionPlan) -> (Risk, String) {
    let v: Value = serde_json::to_value(&plan.actions).unwrap();
    let a = v
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["action"] == "spawn")
        .unwrap()
        .clone();
    let risk = if a["risk"] == "high" {
        Risk::High
    } else {
        Risk::Low
    };
    (risk, a["reason"].as_str().unwrap_or("").to_string())
}

#[tokio::test(flavor = "multi_thread")]
async fn escape_sandbox_is_planned_high_risk_whatever_the_command() {
    let (root, state, _) = dirs();
    let rec = Arc::new(Recorder(Default::default()));
    let ex = executor(root.path(), state.path(), rec.clone(), true);
    let _ = ex
        .run_one(Call::new(
            "t",
            "bash",
            json!({"command": "ls", "escape_sandbox": true}),
        ))
        .await;
    let _ = ex
        .run_one(Call::new("t", "bash", json!({"command": "ls"})))
        .await;
    let plans = rec.0.lock().unwrap().clone();
    let (risk, reason) = spawn_risk(&plans[0]);
    assert_eq!(risk, Risk::High);
    assert!(reason.contains("escape_sandbox"), "{reason}");
    let (risk, _) = spawn_risk(&plans[1]);
    if wrench_process::sandbox::unavailable(false).is_none() {
        assert_eq!(
            risk,
            Risk::Low,
            "plain `ls` stays low risk when the sandbox can run"
        );
    } else {
        assert_eq!(
            risk,
            Risk::High,
            "no sandbox here: the default-sandboxed call must ask"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn escape_sandbox_is_refused_for_background_and_interactive_runs() {
    let (root, state, _) = dirs();
    let ex = executor(root.path(), state.path(), Arc::new(AllowAll), true);
    for extra in ["run_in_background", "interactive"] {
        let mut args = json!({"command": "true", "escape_sandbox": true});
        args[extra] = json!(true);
        let r = ex.run_one(Call::new("t", "bash", args)).await;
        let e = r.result.unwrap_err();
        assert_eq!(e.kind, wrench_core::ErrorKind::InvalidArgs, "{extra}: {e}");
        assert!(e.message.contains("foreground"), "{e}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn escape_sandbox_runs_unconfined_once_and_the_next_call_is_confined_again() {
    if let Some(why) = wrench_process::sandbox::unavailable(false) {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let (root, state, outside) = dirs();
    let ex = executor(root.path(), state.path(), Arc::new(AllowAll), true);
    let target = outside.path().join("x");
    let cmd = format!("(echo x > {}) 2>/dev/null; echo rc=$?", target.display());
    let r = ex
        .run_one(Call::new(
            "t",
            "bash",
            json!({"command": cmd, "escape_sandbox": true}),
        ))
        .await;
    assert!(r.result.unwrap().text.contains("rc=0"));
    std::fs::remove_file(&target).unwrap();
    let r = ex
        .run_one(Call::new("t", "bash", json!({"command": cmd})))
        .await;
    assert!(r.result.unwrap().text.contains("rc=1"));
    assert!(!target.exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn cancelling_a_call_ends_its_setsid_and_double_fork_escapees() {
    let (root, state, _) = dirs();
    let ex = executor(root.path(), state.path(), Arc::new(AllowAll), false);
    let cmd = "setsid sleep 1000 & echo $! > p1; ( sleep 1000 & echo $! > p2 ); sleep 1000";
    let ct = tokio_util::sync::CancellationToken::new();
    let call = ex.run_one_cancellable(
        Call::new("t", "bash", json!({"command": cmd, "timeout": 600})),
        ct.clone(),
    );
    let r = root.path().to_path_buf();
    let watcher = async move {
        let end = Instant::now() + Duration::from_secs(20);
        let pids = loop {
            let p: Vec<i32> = ["p1", "p2"]
                .iter()
                .filter_map(|f| std::fs::read_to_string(r.join(f)).ok())
                .filter_map(|s| s.trim().parse().ok())
                .collect();
            if p.len() == 2 {
                break p;
            }
            assert!(Instant::now() < end);
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        ct.cancel();
        pids
    };
    let (_, pids) = tokio::join!(call, watcher);
    let alive = |p: i32| {
        wrench_process::proc::proc_stat(p).is_some_and(|s| s.state != 'Z' && s.state != 'X')
    };
    let end = Instant::now() + Duration::from_secs(1);
    while pids.iter().any(|p| alive(*p)) && Instant::now() < end {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        !pids.iter().any(|p| alive(*p)),
        "survived the cancel: {pids:?}"
    );
}

//! Unix sockets by path from a sandboxed command, through the real binary:
//! with network off (auto mode's default) a listener outside the workspace
//! is refused and `SSH_AUTH_SOCK` is gone, a socket the command binds works;
//! with `[sandbox] network = true` a container engine's socket is still
//! refused and a plain local service is reached. Needs Landlock ABI 4+ and
//! a mount namespace (says SKIPPED otherwise) and python3.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Env, wrench_cmd};
use std::os::unix::net::UnixListener;

/// A python3 line that connects to each path and prints `NAME=ok|refused|…`.
fn connect_script(paths: &[(&str, &std::path::Path)]) -> String {
    let mut s = String::from(
        "python3 - <<'EOF'\nimport socket\ndef c(n, p):\n    s = socket.socket(socket.AF_UNIX)\n    try:\n        s.connect(p); print(n + '=ok')\n    except OSError as e:\n        print(n + '=' + type(e).__name__)\n",
    );
    for (n, p) in paths {
        s.push_str(&format!("c({n:?}, {:?})\n", p.display().to_string()));
    }
    // In a directory of the workspace (nothing new goes directly in its root).
    s.push_str("import os\nif os.path.exists('run/mine.sock'): os.unlink('run/mine.sock')\ns = socket.socket(socket.AF_UNIX); s.bind('run/mine.sock'); s.listen()\nc('mine', 'run/mine.sock')\nEOF\necho \"agent=${SSH_AUTH_SOCK-unset}\"");
    s
}

fn skip() -> Option<String> {
    if std::process::Command::new("python3")
        .arg("-c")
        .arg("pass")
        .status()
        .map_or(true, |s| !s.success())
    {
        return Some("no python3".into());
    }
    wrench_process::sandbox::unavailable(false)
}

#[test]
fn a_sandboxed_bash_reaches_no_unix_socket_outside_with_network_off_and_only_plain_ones_with_it_on()
{
    if let Some(why) = skip() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let e = Env::new();
    std::fs::create_dir_all(e.root.join("run")).unwrap();
    let outside = e.state.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let (plain, docker, agent) = (
        outside.join("db.sock"),
        outside.join("docker.sock"),
        outside.join("agent.1"),
    );
    let _l = [&plain, &docker, &agent].map(|p| UnixListener::bind(p).unwrap());
    let script = connect_script(&[("plain", &plain), ("docker", &docker), ("agent", &agent)]);
    let run = |extra: &[&str]| {
        let mut args = vec!["--mode", "auto", "--allow", "bash"];
        args.extend_from_slice(extra);
        args.extend(["bash", script.as_str()]);
        let o = wrench_cmd(&e, &args)
            .env("SSH_AUTH_SOCK", &agent)
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).to_string()
    };
    // The bash tool withholds SSH_AUTH_SOCK unless kept; kept, the sandbox
    // still removes it with network off.
    let keep = e.state.join("keep.toml");
    std::fs::write(&keep, "[bash]\nkeep_env = [\"SSH_AUTH_SOCK\"]\n").unwrap();
    let off = run(&["--config", keep.to_str().unwrap()]);
    for want in [
        "plain=ConnectionRefusedError",
        "docker=ConnectionRefusedError",
        "agent=ConnectionRefusedError",
        "mine=ok",
        "agent=unset",
    ] {
        assert!(off.contains(want), "network off: no {want}:\n{off}");
    }
    let cfg = e.state.join("net.toml");
    std::fs::write(
        &cfg,
        "[sandbox]\nnetwork = true\n[bash]\nkeep_env = [\"SSH_AUTH_SOCK\"]\n",
    )
    .unwrap();
    // Another session: the shell's state (its environment) is per session.
    let on = run(&["--config", cfg.to_str().unwrap(), "--session", "on"]);
    let agent_kept = format!("agent={}", agent.display());
    for want in [
        "plain=ok",
        "docker=ConnectionRefusedError",
        "agent=ok",
        "mine=ok",
        agent_kept.as_str(),
    ] {
        assert!(on.contains(want), "network on: no {want}:\n{on}");
    }
    // Unsandboxed (yolo), every one is reached: the probe tells them apart.
    let o = wrench_cmd(&e, &["--mode", "yolo", "bash", &script])
        .output()
        .unwrap();
    let yolo = String::from_utf8_lossy(&o.stdout);
    assert!(
        yolo.contains("docker=ok") && yolo.contains("plain=ok"),
        "{yolo}"
    );
}

//! Unix sockets by path under the sandbox (`wrench_process::sockmask`):
//! the decision table `tests/data/unix_sockets.tsv`, the `/proc/net/unix`
//! parser, and real listeners that a sandboxed `bash` must not reach with
//! network off (covered in a private mount namespace) while a socket of
//! its own works. Real processes; needs Landlock (skips with a printed
//! reason otherwise).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use proptest::prelude::*;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use wrench_process::sandbox::{self, Spec};
use wrench_process::sockmask::{self, NsMode, Verdict};
use wrench_process::{Options, spawn};

const PROBE_VAR: &str = "WRENCH_SOCK_PROBE";

/// This test binary re-run as a probe: `connect PATH` or `own PATH` (bind,
/// listen and connect to its own socket); prints one `PROBE\t` line.
#[test]
fn probe_child() {
    let Ok(line) = std::env::var(PROBE_VAR) else {
        return;
    };
    let (op, path) = line.split_once(' ').unwrap();
    let r = match op {
        "connect" => UnixStream::connect(path).map(|_| ()),
        "own" => UnixListener::bind(path).and_then(|_l| UnixStream::connect(path).map(|_| ())),
        "abstract" => {
            use std::os::linux::net::SocketAddrExt;
            std::os::unix::net::SocketAddr::from_abstract_name(path.as_bytes())
                .and_then(|a| UnixStream::connect_addr(&a).map(|_| ()))
        }
        _ => panic!("unknown probe {op}"),
    };
    let out = match r {
        Ok(()) => "ok".to_string(),
        Err(e) => match e.raw_os_error() {
            Some(libc::ECONNREFUSED) => "refused".into(),
            Some(libc::ENOENT) => "missing".into(),
            Some(libc::EACCES) | Some(libc::EPERM) => "denied".into(),
            _ => format!("error {e}"),
        },
    };
    println!("PROBE\t{out}");
}

fn row_failures(rows: &str, check: impl Fn(&[&str]) -> Option<String>) -> (usize, Vec<String>) {
    let mut n = 0;
    let mut fails = Vec::new();
    for (i, line) in rows.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        n += 1;
        let cols: Vec<&str> = line.split('\t').collect();
        if let Some(f) = check(&cols) {
            fails.push(format!("line {}: {line}\n    {f}", i + 1));
        }
    }
    (n, fails)
}

#[test]
fn every_row_of_the_socket_table_gets_its_decision() {
    let table = include_str!("data/unix_sockets.tsv");
    let own = PathBuf::from("/state/ws/sessions/default/tmp");
    let rt = PathBuf::from("/run/user/1000");
    let (n, fails) = row_failures(table, |c| {
        let [kind, net, input, want] = c else {
            return Some(format!("expected 4 columns, got {}", c.len()));
        };
        let network = *net == "on";
        let got = match *kind {
            "path" => {
                let p = PathBuf::from(input.replace("$OWN", own.to_str().unwrap()));
                match sockmask::verdict(&p, network, std::slice::from_ref(&own), &[]) {
                    Verdict::Cover => "cover".to_string(),
                    Verdict::Own => "own".into(),
                    Verdict::Keep => "keep".into(),
                }
            }
            "env" => {
                let (name, value) = input.split_once('=').unwrap();
                let paths = sockmask::env_socket_paths(name, value, Some(&rt));
                let paths: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
                let scrub = if sockmask::scrubbed(name, network) {
                    "scrub"
                } else {
                    "keep"
                };
                let list = if paths.is_empty() {
                    "-".to_string()
                } else {
                    paths.join(",")
                };
                format!("{scrub} {list}")
            }
            other => return Some(format!("unknown kind {other}")),
        };
        let want = want.replace("$RT", rt.to_str().unwrap());
        (got != want).then(|| format!("got {got:?}, expected {want:?}"))
    });
    assert!(n > 90, "the table lost rows: {n}");
    assert!(
        fails.is_empty(),
        "{} of {n} rows failed:\n{}",
        fails.len(),
        fails.join("\n")
    );
}

#[test]
fn every_socket_variable_is_in_the_table() {
    let table = include_str!("data/unix_sockets.tsv");
    let missing: Vec<_> = sockmask::socket_env_names()
        .filter(|n| !table.contains(&format!("\t{n}=")))
        .collect();
    // Variables that only name a session (their socket is in a walked dir).
    let untested: Vec<_> = missing
        .into_iter()
        .filter(|n| {
            ![
                "VSCODE_IPC_HOOK",
                "VSCODE_GIT_IPC_HANDLE",
                "I3SOCK",
                "NIRI_SOCKET",
                "WEZTERM_UNIX_SOCKET",
                "ALACRITTY_SOCKET",
                "GNOME_KEYRING_CONTROL",
                "HYPRLAND_INSTANCE_SIGNATURE",
                "ZELLIJ",
                "DBUS_STARTER_ADDRESS",
                "P11_KIT_SERVER_ADDRESS",
            ]
            .contains(n)
        })
        .collect();
    assert!(untested.is_empty(), "no table row for {untested:?}");
}

#[test]
fn a_socket_name_that_is_not_utf8_hides_no_other_socket() {
    use std::os::unix::ffi::OsStrExt;
    let mut text = b"Num       RefCount Protocol Flags    Type St Inode Path\n".to_vec();
    text.extend_from_slice(
        b"0000000000000000: 00000002 00000000 00010000 0001 01 1 /tmp/\xff\xfe.sock\n",
    );
    text.extend_from_slice(
        b"0000000000000000: 00000002 00000000 00010000 0001 01 2 /run/docker.sock\n",
    );
    let got = sockmask::proc_net_unix_paths(&text);
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[0].as_os_str().as_bytes(), b"/tmp/\xff\xfe.sock");
    assert_eq!(got[1], PathBuf::from("/run/docker.sock"));
}

#[test]
fn proc_net_unix_lines_give_their_pathname_sockets() {
    let text = "Num       RefCount Protocol Flags    Type St Inode Path
0000000000000000: 00000002 00000000 00010000 0001 01 20001 /run/docker.sock
0000000000000000: 00000002 00000000 00010000 0001 01 20002 @/tmp/.X11-unix/X0
0000000000000000: 00000003 00000000 00000000 0001 03 20003
0000000000000000: 00000002 00000000 00000000 0002 01 20004 /run/with space/s p.sock
0000000000000000: 00000002 00000000 00010000 0001 01 20005 relative.sock
";
    assert_eq!(
        sockmask::proc_net_unix_paths(text.as_bytes()),
        vec![
            PathBuf::from("/run/docker.sock"),
            PathBuf::from("/run/with space/s p.sock")
        ]
    );
}

proptest! {
    #[test]
    fn any_listed_path_is_found_and_nothing_else_is(
        paths in proptest::collection::vec("/[a-z .@_-]{1,30}", 0..8),
        noise in "[ -~]{0,80}",
    ) {
        let mut text = String::from("Num       RefCount Protocol Flags    Type St Inode Path\n");
        for (i, p) in paths.iter().enumerate() {
            text.push_str(&format!("00000000{i:08x}: 00000002 00000000 00010000 0001 01 {i} {p}\n"));
        }
        let got = sockmask::proc_net_unix_paths(text.as_bytes());
        let want: Vec<PathBuf> = paths.iter().map(|p| PathBuf::from(p.trim_end())).collect();
        // A path's trailing spaces are not told apart from the line's end.
        prop_assert_eq!(got.len(), want.len());
        // Arbitrary text never panics and yields only absolute paths.
        for p in sockmask::proc_net_unix_paths(format!("header\n{noise}\n{noise} {noise}").as_bytes()) {
            prop_assert!(p.is_absolute());
        }
    }
}

proptest! {
    #[test]
    fn any_variable_value_gives_only_absolute_paths_and_never_panics(
        idx in 0usize..64,
        value in "(unix:|unix://|unix:path=|:|/|%|,|;|\\{|\\}| |[a-z0-9.@_-]){0,40}",
    ) {
        let names: Vec<&str> = sockmask::socket_env_names().collect();
        let name = names[idx % names.len()];
        for p in sockmask::env_socket_paths(name, &value, Some(Path::new("/run/user/1"))) {
            prop_assert!(p.is_absolute(), "{name}={value:?} gave {p:?}");
        }
    }
}

fn skip_reason() -> Option<String> {
    sandbox::unavailable(false)
}

/// A workspace outside the temp dirs (so the walk does not meet it), its
/// session temp dir, and the sandbox spec.
struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
    tmp: PathBuf,
}

fn fixture() -> Fixture {
    let base = sandbox::dir_outside_temp(&PathBuf::from(env!("CARGO_TARGET_TMPDIR")));
    let dir = tempfile::tempdir_in(base).unwrap();
    let top = std::fs::canonicalize(dir.path()).unwrap();
    let (root, outside, tmp) = (top.join("ws"), top.join("outside"), top.join("state/tmp"));
    for d in [&root, &outside, &tmp] {
        std::fs::create_dir_all(d).unwrap();
    }
    Fixture {
        _dir: dir,
        root,
        outside,
        tmp,
    }
}

impl Fixture {
    fn spec(&self, network: bool) -> Spec {
        Spec::workspace_write(
            &self.root,
            &[".git"],
            &self.tmp.join(".."),
            &self.tmp,
            network,
        )
    }
}

/// Run `script` in a sandboxed (or plain) `bash`; `$PROBE` runs this
/// binary as a probe: `probe connect PATH`. Returns the probe lines.
fn run_bash(script: &str, spec: Option<&Spec>, root: &Path) -> Vec<String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut c = tokio::process::Command::new("bash");
    let full = format!(
        "probe() {{ {PROBE_VAR}=\"$1 $2\" \"$EXE\" --exact probe_child --nocapture --test-threads=1 | sed -n 's/.*PROBE\t//p'; }}\n{script}"
    );
    c.args(["--noprofile", "--norc", "-c", &full])
        .current_dir(root)
        .env("EXE", &exe)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let sb = spec.map(|s| sandbox::prepare(s).unwrap());
    let out = rt.block_on(async {
        let gc = spawn(c, Options::call(sb)).await.unwrap();
        gc.child.wait_with_output().await.unwrap()
    });
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

fn listen(p: &Path) -> UnixListener {
    UnixListener::bind(p).unwrap()
}

#[test]
fn a_listener_outside_the_workspace_is_unreachable_with_network_off_and_the_commands_own_socket_works()
 {
    if let Some(why) = skip_reason() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let f = fixture();
    let tmpdir = tempfile::tempdir_in("/tmp").unwrap();
    let outside = f.outside.join("plain.sock");
    let in_tmp = std::fs::canonicalize(tmpdir.path())
        .unwrap()
        .join("agent.sock");
    let own = f.tmp.join("job.sock");
    let _l = (listen(&outside), listen(&in_tmp), listen(&own));
    // A directory of the workspace: nothing new goes directly in its root.
    std::fs::create_dir_all(f.root.join("run")).unwrap();
    let me = std::process::id();
    let script = format!(
        "probe connect '{o}'\nprobe connect '{t}'\nprobe connect '{own}'\nprobe own \"$PWD/run/mine.sock\"\nprobe own '{tmp}/mine2.sock'\numount '{o}' 2>/dev/null; probe connect '{o}'\nprobe connect '/proc/{me}/root{o}'\n",
        o = outside.display(),
        t = in_tmp.display(),
        own = own.display(),
        tmp = f.tmp.display(),
    );
    // Unsandboxed, every one is reachable: the fixture is sound.
    let plain = run_bash(&script, None, &f.root);
    assert_eq!(
        plain,
        ["ok", "ok", "ok", "ok", "ok", "ok", "ok"],
        "unsandboxed"
    );
    let spec = f.spec(false);
    let covered = sandbox::prepare(&spec).unwrap().covered_sockets();
    assert!(covered.contains(&outside), "{covered:?}");
    assert!(covered.contains(&in_tmp), "{covered:?}");
    assert!(!covered.contains(&own), "{covered:?}");
    let _ = std::fs::remove_file(f.root.join("run/mine.sock"));
    let _ = std::fs::remove_file(f.tmp.join("mine2.sock"));
    let got = run_bash(&script, Some(&spec), &f.root);
    let want = [
        "refused", // outside the workspace, found in /proc/net/unix
        "refused", // under /tmp
        "ok",      // under the session temp dir: the command's own
        "ok",      // bound by the command in a directory of the workspace
        "ok",      // bound by the command in its temp dir
        "refused", // umount is refused inside the sandbox
        "denied",  // not through another process's root
    ];
    assert_eq!(got, want, "sandboxed, network off");
    // The host still reaches it: nothing leaked out of the namespace.
    UnixStream::connect(&outside).unwrap();
}

#[test]
fn with_network_on_a_container_engine_socket_is_covered_and_a_plain_one_is_not() {
    if let Some(why) = sandbox::unavailable(true) {
        eprintln!("SKIPPED: {why}");
        return;
    }
    if let Err(why) = sockmask::namespaces() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let f = fixture();
    let plain = f.outside.join("db.sock");
    let docker = f.outside.join("docker.sock");
    let tmux_dir = f.outside.join("tmux-0");
    std::fs::create_dir_all(&tmux_dir).unwrap();
    let tmux = tmux_dir.join("default");
    let _l = (listen(&plain), listen(&docker), listen(&tmux));
    let script = format!(
        "probe connect '{p}'\nprobe connect '{d}'\nprobe connect '{t}'\numount '{d}' 2>/dev/null; probe connect '{d}'\nprobe connect '/proc/1/root{d}'\nawk '/^CapEff/ {{print $2}}' /proc/self/status\n",
        p = plain.display(),
        d = docker.display(),
        t = tmux.display()
    );
    let mut got = run_bash(&script, Some(&f.spec(true)), &f.root);
    // The capabilities: no CAP_DAC_READ_SEARCH (open_by_handle_at).
    let caps = u64::from_str_radix(&got.pop().unwrap_or_default(), 16).unwrap();
    assert_eq!(caps & (1 << 2), 0, "CAP_DAC_READ_SEARCH kept: {caps:x}");
    // The cover stays even for a root command that keeps CAP_SYS_ADMIN
    // (network on drops no network capability): Landlock refuses the
    // umount, and another process's mount namespace is out of reach.
    let want = ["ok", "refused", "refused", "refused", "denied"];
    assert_eq!(got, want);
}

#[test]
fn a_socket_of_another_network_namespace_in_a_walked_dir_is_covered() {
    if let Some(why) = skip_reason() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    // A listener in its own network namespace: not in our /proc/net/unix,
    // found by the walk of /tmp's socket dirs (an agent's `ssh-XXXX`).
    let dir = tempfile::Builder::new()
        .prefix("ssh-")
        .tempdir_in("/tmp")
        .unwrap();
    let sock = std::fs::canonicalize(dir.path())
        .unwrap()
        .join("netns.sock");
    let exe = std::env::current_exe().unwrap();
    let mut server = match std::process::Command::new("unshare")
        .args(["-n", "--"])
        .arg(&exe)
        .args(["--exact", "serve_child", "--nocapture", "--test-threads=1"])
        .env("WRENCH_SOCK_SERVE", &sock)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            eprintln!("SKIPPED: no unshare: {e}");
            return;
        }
    };
    let end = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !sock.exists() && std::time::Instant::now() < end {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    if !sock.exists() {
        let _ = server.kill();
        eprintln!("SKIPPED: no listener in a new network namespace (unshare -n refused)");
        return;
    }
    let listed = std::fs::read_to_string("/proc/net/unix").unwrap();
    assert!(
        !listed.contains(sock.to_str().unwrap()),
        "the fixture is in our namespace"
    );
    let f = fixture();
    let script = format!("probe connect '{}'\n", sock.display());
    let plain = run_bash(&script, None, &f.root);
    let got = run_bash(&script, Some(&f.spec(false)), &f.root);
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(plain, ["ok"]);
    assert_eq!(got, ["refused"]);
}

/// The listener of [`a_socket_of_another_network_namespace_in_a_walked_dir_is_covered`].
#[test]
fn serve_child() {
    let Some(p) = std::env::var_os("WRENCH_SOCK_SERVE") else {
        return;
    };
    let l = UnixListener::bind(&p).unwrap();
    for c in l.incoming() {
        drop(c);
    }
}

#[test]
fn a_user_namespace_mask_covers_too() {
    // The mode an unprivileged user gets, tried here whoever runs it.
    let dir = tempfile::tempdir_in("/tmp").unwrap();
    let sock = std::fs::canonicalize(dir.path()).unwrap().join("u.sock");
    let _l = listen(&sock);
    let mask = sockmask::Mask::new(vec![sock.clone()], NsMode::User, vec!["SSH_AUTH_SOCK"]);
    let exe = std::env::current_exe().unwrap();
    let mut c = std::process::Command::new(&exe);
    c.args(["--exact", "probe_child", "--nocapture", "--test-threads=1"])
        .env(PROBE_VAR, format!("connect {}", sock.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    mask.scrub_env(&mut c);
    // SAFETY: Mask::apply only makes system calls on prepared buffers.
    unsafe {
        use std::os::unix::process::CommandExt;
        let m = mask.clone();
        c.pre_exec(move || m.apply());
    }
    let out = match c.output() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("SKIPPED: no user namespace here: {e}");
            return;
        }
    };
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("PROBE\trefused"), "{text}");
    UnixStream::connect(&sock).unwrap();
}

#[test]
fn a_new_network_namespace_hides_the_hosts_abstract_sockets() {
    // What a network-off command gets where Landlock cannot scope abstract
    // sockets (ABI < 6); tried here on any kernel.
    use std::os::linux::net::SocketAddrExt;
    let name = format!("wrench-test-{}", std::process::id());
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let _l = UnixListener::bind_addr(&addr).unwrap();
    let mode = match sockmask::namespaces() {
        Ok(m) => m,
        Err(why) => {
            eprintln!("SKIPPED: {why}");
            return;
        }
    };
    let run = |new_net: bool| {
        let mask = sockmask::Mask::new(vec![], mode, vec![]).with_new_network(new_net);
        let mut c = std::process::Command::new(std::env::current_exe().unwrap());
        c.args(["--exact", "probe_child", "--nocapture", "--test-threads=1"])
            .env(PROBE_VAR, format!("abstract {name}"))
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        // SAFETY: Mask::apply only makes system calls on prepared buffers.
        unsafe {
            use std::os::unix::process::CommandExt;
            c.pre_exec(move || mask.apply());
        }
        String::from_utf8_lossy(&c.output().unwrap().stdout).to_string()
    };
    assert!(run(false).contains("PROBE\tok"));
    assert!(run(true).contains("PROBE\trefused"));
}

/// `cargo test -p wrench-process --test sockmask -- --ignored --nocapture`:
/// what finding the sockets costs per sandboxed command, and a spawn with
/// and without the namespace.
#[test]
#[ignore]
fn measure_the_cost_of_the_mask() {
    let t = std::time::Instant::now();
    let n = 20;
    let mut found = 0;
    for _ in 0..n {
        found = sockmask::plan(false, &[]).cover.len();
    }
    eprintln!("plan: {:?} per call ({found} sockets)", t.elapsed() / n);
    let mode = sockmask::namespaces().unwrap();
    for targets in [vec![], sockmask::plan(false, &[]).cover] {
        let k = targets.len();
        let mask = sockmask::Mask::new(targets, mode, vec![]);
        let t = std::time::Instant::now();
        for _ in 0..n {
            let m = mask.clone();
            let mut c = std::process::Command::new("true");
            // SAFETY: Mask::apply only makes system calls on prepared buffers.
            unsafe {
                use std::os::unix::process::CommandExt;
                c.pre_exec(move || m.apply());
            }
            assert!(c.status().unwrap().success());
        }
        eprintln!("spawn `true` covering {k}: {:?} per call", t.elapsed() / n);
    }
}

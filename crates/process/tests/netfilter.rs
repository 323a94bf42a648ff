//! "Network off" under the sandbox means every socket that can leave the
//! host, not TCP only: the rows of `tests/data/net_sockets.tsv` run in a
//! real sandboxed child (this test binary, re-run as a probe), and real
//! programs (bash's /dev/udp, python3, git) run in the sandbox against
//! real loopback listeners. Needs Landlock ABI 4+ and seccomp (skips with
//! a printed reason otherwise).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;
use wrench_process::sandbox::{self, Spec};
use wrench_process::{Options, spawn};

const PROBE_VAR: &str = "WRENCH_NET_PROBE";

fn skip_reason() -> Option<String> {
    sandbox::unavailable(false).or_else(wrench_process::netfilter::unavailable)
}

/// A workspace outside the temp dirs, and the network-off spec for it.
fn workspace() -> (tempfile::TempDir, Spec) {
    let base = sandbox::dir_outside_temp(&PathBuf::from(env!("CARGO_TARGET_TMPDIR")));
    let dir = tempfile::tempdir_in(base).unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let spec = Spec {
        root,
        read_only_names: vec![".git".into()],
        writable: vec![],
        read_only: vec![],
        network: false,
        own_tmp: vec![],
        covers: Default::default(),
    };
    (dir, spec)
}

fn parse_num(s: &str) -> Option<u64> {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

fn family(s: &str) -> Option<u64> {
    let v = match s {
        "AF_UNIX" => libc::AF_UNIX,
        "AF_INET" => libc::AF_INET,
        "AF_INET6" => libc::AF_INET6,
        "AF_NETLINK" => libc::AF_NETLINK,
        "AF_PACKET" => libc::AF_PACKET,
        "AF_VSOCK" => libc::AF_VSOCK,
        "AF_TIPC" => libc::AF_TIPC,
        "AF_RDS" => libc::AF_RDS,
        "AF_CAN" => libc::AF_CAN,
        "AF_XDP" => libc::AF_XDP,
        "AF_ALG" => libc::AF_ALG,
        "AF_KEY" => libc::AF_KEY,
        "AF_BLUETOOTH" => libc::AF_BLUETOOTH,
        "-" => 0,
        other => return parse_num(other),
    };
    Some(v as u64)
}

fn sock_type(s: &str) -> Option<u64> {
    let mut t = 0u64;
    for part in s.split('|') {
        t |= match part {
            "SOCK_STREAM" => libc::SOCK_STREAM as u64,
            "SOCK_DGRAM" => libc::SOCK_DGRAM as u64,
            "SOCK_RAW" => libc::SOCK_RAW as u64,
            "SOCK_RDM" => libc::SOCK_RDM as u64,
            "SOCK_SEQPACKET" => libc::SOCK_SEQPACKET as u64,
            // The obsolete packet type (deprecated in libc, still in the kernel).
            "SOCK_PACKET" => 10,
            "SOCK_CLOEXEC" => libc::SOCK_CLOEXEC as u64,
            "SOCK_NONBLOCK" => libc::SOCK_NONBLOCK as u64,
            "-" => 0,
            other => parse_num(other)?,
        };
    }
    Some(t)
}

fn protocol(s: &str) -> Option<u64> {
    let v = match s {
        "IPPROTO_TCP" => libc::IPPROTO_TCP,
        "IPPROTO_UDP" => libc::IPPROTO_UDP,
        "IPPROTO_UDPLITE" => libc::IPPROTO_UDPLITE,
        "IPPROTO_ICMP" => libc::IPPROTO_ICMP,
        "IPPROTO_ICMPV6" => libc::IPPROTO_ICMPV6,
        "IPPROTO_RAW" => libc::IPPROTO_RAW,
        "IPPROTO_SCTP" => libc::IPPROTO_SCTP,
        "IPPROTO_MPTCP" => libc::IPPROTO_MPTCP,
        other => return parse_num(other),
    };
    Some(v as u64)
}

/// `int 0x80` from a 64-bit process: the kernel's i386 ABI (the filter
/// sees `AUDIT_ARCH_I386`). Returns the raw result (negative errno).
#[cfg(target_arch = "x86_64")]
fn int80(nr: u64, a: u64, b: u64, c: u64) -> i64 {
    let ret: u64;
    // SAFETY: a system call with integer arguments (or a pointer into a
    // mapping below 4 GiB); rbx is saved and restored around it.
    unsafe {
        std::arch::asm!(
            "xchg {a}, rbx",
            "int 0x80",
            "xchg {a}, rbx",
            a = inout(reg) a => _,
            inlateout("rax") nr => ret,
            in("rcx") b,
            in("rdx") c,
            out("r8") _, out("r9") _, out("r10") _, out("r11") _,
        );
    }
    // The i386 result is a 32-bit signed value in eax.
    (ret as u32 as i32) as i64
}

fn result_of(r: i64, errno_from_libc: bool) -> String {
    if r >= 0 {
        // SAFETY: closing the descriptor the call returned.
        unsafe { libc::close(r as i32) };
        "ok".into()
    } else if errno_from_libc {
        format!(
            "errno {}",
            std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
        )
    } else {
        format!("errno {}", -r)
    }
}

/// Run one probe (`how family type protocol`) in this process; "ok" or "errno N".
fn probe(line: &str) -> String {
    let cols: Vec<&str> = line.split(' ').collect();
    let [how, f, t, p] = cols[..] else {
        return format!("bad probe {line:?}");
    };
    let (Some(f), Some(t), Some(p)) = (family(f), sock_type(t), protocol(p)) else {
        return format!("bad probe {line:?}");
    };
    match how {
        // SAFETY (all arms): raw system calls with integer arguments or
        // pointers to live locals.
        "native" => result_of(
            unsafe { libc::syscall(libc::SYS_socket, f, t, p) } as i64,
            true,
        ),
        "pair" => {
            let mut sv = [-1i32; 2];
            let r = unsafe { libc::syscall(libc::SYS_socketpair, f, t, p, sv.as_mut_ptr()) };
            if r == 0 {
                unsafe { libc::close(sv[1]) };
                result_of(sv[0] as i64, true)
            } else {
                result_of(-1, true)
            }
        }
        "x32" => result_of(
            unsafe { libc::syscall(0x4000_0000 | libc::SYS_socket, f, t, p) } as i64,
            true,
        ),
        "io_uring" => {
            let mut params = [0u8; 120];
            result_of(
                unsafe { libc::syscall(libc::SYS_io_uring_setup, 4, params.as_mut_ptr()) } as i64,
                true,
            )
        }
        "fastopen" => {
            let port: u16 = std::env::var("PROBE_PORT")
                .ok()
                .and_then(|p| p.parse().ok())
                .unwrap_or(0);
            let fd = unsafe { libc::socket(f as i32, t as i32, p as i32) };
            if fd < 0 {
                return result_of(-1, true);
            }
            let mut sa: libc::sockaddr_in = unsafe { std::mem::zeroed() };
            sa.sin_family = libc::AF_INET as u16;
            sa.sin_port = port.to_be();
            sa.sin_addr.s_addr = u32::from_ne_bytes([127, 0, 0, 1]);
            let r = unsafe {
                libc::sendto(
                    fd,
                    b"x".as_ptr().cast(),
                    1,
                    libc::MSG_FASTOPEN,
                    (&sa as *const libc::sockaddr_in).cast(),
                    std::mem::size_of::<libc::sockaddr_in>() as u32,
                )
            };
            let out = if r >= 0 {
                "ok".to_string()
            } else {
                result_of(-1, true)
            };
            unsafe { libc::close(fd) };
            out
        }
        #[cfg(target_arch = "x86_64")]
        "i386" => result_of(int80(359, f, t, p), false),
        #[cfg(target_arch = "x86_64")]
        "socketcall" => {
            // socketcall(SYS_SOCKET, args): args must be below 4 GiB.
            let m = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    4096,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_32BIT,
                    -1,
                    0,
                )
            };
            if m == libc::MAP_FAILED {
                return "no low mapping".into();
            }
            let args = m.cast::<u32>();
            unsafe {
                *args = f as u32;
                *args.add(1) = t as u32;
                *args.add(2) = p as u32;
            }
            result_of(int80(102, 1, m as u64, 0), false)
        }
        other => format!("unknown probe {other:?} on {}", std::env::consts::ARCH),
    }
}

/// The probe's entry point: does nothing unless this binary was re-run as
/// a probe (then it prints one result line).
#[test]
fn probe_child() {
    if let Ok(line) = std::env::var(PROBE_VAR) {
        println!("PROBE\t{}", probe(&line));
    }
}

/// Run this test binary as a probe, sandboxed or not; the result line, or
/// how the child died.
async fn run_probe(line: &str, sandboxed: Option<&Spec>, port: u16) -> String {
    let exe = std::env::current_exe().unwrap();
    let mut c = tokio::process::Command::new(exe);
    c.args(["--exact", "probe_child", "--nocapture", "--test-threads=1"])
        .env(PROBE_VAR, line)
        .env("PROBE_PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let sb = sandboxed.map(|s| sandbox::prepare(s).unwrap());
    let gc = spawn(c, Options::call(sb)).await.unwrap();
    let out = gc.child.wait_with_output().await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    // libtest prints "test probe_child ... " before the line.
    match stdout.lines().find_map(|l| l.split_once("PROBE\t")) {
        Some((_, r)) => r.to_string(),
        None => format!(
            "no result ({:?}; stderr: {})",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_row_of_the_socket_table_is_allowed_or_refused_as_expected() {
    if let Some(why) = skip_reason() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let (_dir, spec) = workspace();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut failures = Vec::new();
    let (mut checked, mut skipped) = (0, Vec::new());
    for row in include_str!("data/net_sockets.tsv")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let cols: Vec<&str> = row.split('\t').collect();
        let [expect, how, f, t, p, why] = cols[..] else {
            panic!("bad row: {row}");
        };
        let line = format!("{how} {f} {t} {p}");
        let inside = run_probe(&line, Some(&spec), port).await;
        match expect {
            "allowed" if inside != "ok" => {
                failures.push(format!("{why} ({line}): refused in the sandbox: {inside}"))
            }
            "refused" if inside == "ok" => {
                let outside = run_probe(&line, None, port).await;
                failures.push(format!(
                    "{why} ({line}): created in the sandbox (unsandboxed: {outside})"
                ))
            }
            "refused" => {
                // Counts only where the kernel allows it unsandboxed.
                let outside = run_probe(&line, None, port).await;
                if outside != "ok" {
                    skipped.push(format!("{why} ({line}): unsandboxed too: {outside}"));
                    continue;
                }
            }
            "allowed" => {}
            other => panic!("bad expectation {other:?} in {row}"),
        }
        checked += 1;
    }
    for s in &skipped {
        eprintln!("row skipped, the kernel refuses it anyway: {s}");
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} rows failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(checked >= 25, "only {checked} rows ran: {skipped:?}");
}

/// Run `script` in sandboxed (or plain) bash in `root`; (success, stdout+stderr).
async fn bash(
    spec: &Spec,
    sandboxed: bool,
    script: &str,
    env: &[(&str, String)],
) -> (bool, String) {
    let mut c = tokio::process::Command::new("bash");
    c.args(["--noprofile", "--norc", "-c", script])
        .current_dir(&spec.root)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let sb = sandboxed.then(|| sandbox::prepare(spec).unwrap());
    let gc = spawn(c, Options::call(sb)).await.unwrap();
    let out = gc.child.wait_with_output().await.unwrap();
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

fn has_python() -> bool {
    std::process::Command::new("python3")
        .arg("-c")
        .arg("pass")
        .status()
        .is_ok_and(|s| s.success())
}

/// What a UDP listener receives within a short wait.
fn received(sock: &std::net::UdpSocket) -> Vec<String> {
    sock.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 256];
    while let Ok(n) = sock.recv(&mut buf) {
        got.push(String::from_utf8_lossy(&buf[..n]).into_owned());
    }
    got
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn udp_to_a_loopback_listener_receives_nothing_from_a_sandboxed_command() {
    if let Some(why) = skip_reason() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let (_dir, spec) = workspace();
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = udp.local_addr().unwrap().port().to_string();
    let mut script = String::from("echo bash-udp > /dev/udp/127.0.0.1/$PORT; ");
    if has_python() {
        script.push_str(
            "python3 -c 'import socket,os; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b\"py-udp\", (\"127.0.0.1\", int(os.environ[\"PORT\"])))'; ",
        );
    }
    script.push_str("true");
    let env = [("PORT", port)];
    // Unsandboxed, the same script is heard (the test can fail).
    let (ok, out) = bash(&spec, false, &script, &env).await;
    assert!(ok, "{out}");
    assert!(received(&udp).iter().any(|m| m.contains("bash-udp")));
    let (_, out) = bash(&spec, true, &script, &env).await;
    let got = received(&udp);
    assert!(got.is_empty(), "the sandboxed command sent {got:?} ({out})");
    assert!(out.contains("ermission denied"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tcp_stays_refused_and_unix_sockets_git_and_cargo_still_work_in_the_sandbox() {
    if let Some(why) = skip_reason() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let (_dir, mut spec) = workspace();
    // The session temp dir, where the command's jobs meet: its sockets stay
    // reachable (every other socket file is covered, see `sockmask`).
    let own = spec.root.join("own");
    std::fs::create_dir(&own).unwrap();
    spec.own_tmp = vec![own.clone()];
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = tcp.local_addr().unwrap().port().to_string();
    let (ok, out) = bash(
        &spec,
        true,
        "exec 3<>/dev/tcp/127.0.0.1/$PORT",
        &[("PORT", port)],
    )
    .await;
    assert!(!ok, "a TCP connect succeeded: {out}");

    // A unix socket bound outside the sandbox in the session temp dir,
    // connected to from inside.
    let sock_path: PathBuf = own.join("s.sock");
    let ul = std::os::unix::net::UnixListener::bind(&sock_path).unwrap();
    let server = std::thread::spawn(move || {
        use std::io::Read;
        let (mut s, _) = ul.accept().unwrap();
        let mut got = String::new();
        s.read_to_string(&mut got).unwrap();
        got
    });
    if has_python() {
        let script = r#"python3 -c '
import socket
a, b = socket.socketpair(); a.send(b"pair"); assert b.recv(9) == b"pair"
u = socket.socket(socket.AF_UNIX); u.connect("own/s.sock"); u.sendall(b"hello unix"); u.close()
print("unix ok")'"#;
        let (ok, out) = bash(&spec, true, script, &[]).await;
        assert!(ok && out.contains("unix ok"), "{out}");
        assert_eq!(server.join().unwrap(), "hello unix");
    } else {
        eprintln!("python3 missing: unix socket rows only in the table test");
        drop(std::os::unix::net::UnixStream::connect(&sock_path));
        let _ = server.join();
    }

    // git (a real repository) and cargo run as usual.
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(&spec.root)
            .output()
            .unwrap()
    };
    assert!(git(&["init", "-q"]).status.success());
    std::fs::write(spec.root.join("a.txt"), "a\n").unwrap();
    let (ok, out) = bash(&spec, true, "git status --porcelain", &[]).await;
    assert!(ok && out.contains("?? a.txt"), "{out}");
    let has_cargo = std::process::Command::new("cargo")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if has_cargo {
        let (ok, out) = bash(&spec, true, "cargo --version", &[]).await;
        assert!(ok && out.starts_with("cargo "), "{out}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_root_command_loses_the_capabilities_that_rewrite_other_traffic() {
    if let Some(why) = skip_reason() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("SKIPPED: only a root process has these capabilities to lose");
        return;
    }
    let (_dir, spec) = workspace();
    let caps = "grep -E '^Cap(Bnd|Eff|Inh|Amb)' /proc/self/status";
    let bits = |out: &str| -> Vec<(String, u64)> {
        out.lines()
            .filter_map(|l| l.split_once(":\t"))
            .map(|(k, v)| (k.to_string(), u64::from_str_radix(v.trim(), 16).unwrap()))
            .collect()
    };
    let net = [12u64, 13, 16, 21, 39]
        .iter()
        .fold(0u64, |m, c| m | (1 << c));
    let (ok, out) = bash(&spec, false, caps, &[]).await;
    assert!(ok, "{out}");
    assert!(
        bits(&out)
            .iter()
            .any(|(k, v)| k == "CapBnd" && v & net == net),
        "unsandboxed root has them: {out}"
    );
    let (ok, out) = bash(&spec, true, caps, &[]).await;
    assert!(ok, "{out}");
    let got = bits(&out);
    assert_eq!(got.len(), 4, "{out}");
    for (k, v) in &got {
        assert_eq!(v & net, 0, "{k} still has network capabilities: {out}");
    }
    // And a real use of one, that changes nothing either way: deleting a
    // traffic-control rule loopback does not have is refused for lack of
    // CAP_NET_ADMIN before the kernel looks for it.
    let has_tc = std::process::Command::new("tc")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if has_tc {
        let del = "tc qdisc del dev lo root handle 7777:";
        let (_, out) = bash(&spec, false, del, &[]).await;
        assert!(!out.contains("Operation not permitted"), "{out}");
        let (ok, out) = bash(&spec, true, del, &[]).await;
        assert!(!ok && out.contains("Operation not permitted"), "{out}");
    }
}

#[test]
fn the_note_says_what_network_off_covers() {
    if sandbox::unavailable(false).is_some() {
        eprintln!("SKIPPED: no Landlock network rules here");
        return;
    }
    let (_dir, spec) = workspace();
    let p = sandbox::prepare(&spec).unwrap();
    if wrench_process::netfilter::unavailable().is_none() {
        assert!(p.filters_sockets());
        assert!(p.description.contains("network off"), "{}", p.description);
        assert!(p.description.contains("UDP"), "{}", p.description);
    } else {
        assert!(!p.filters_sockets());
        assert!(p.description.contains("NOT blocked"), "{}", p.description);
    }
    let mut open = spec;
    open.network = true;
    let p = sandbox::prepare(&open).unwrap();
    assert!(!p.filters_sockets());
    assert!(p.description.contains("network allowed"));
}

/// Measurement, not a check (`cargo test -p wrench-process --test netfilter
/// -- --ignored --nocapture`): what the filter adds to a spawn (building the
/// program in the parent, installing it in the child) and to each system
/// call afterwards.
#[test]
#[ignore]
fn measure_the_filter_cost() {
    use std::time::Instant;
    let Ok(f) = wrench_process::netfilter::Filter::network_off() else {
        eprintln!("SKIPPED: no seccomp here");
        return;
    };
    let n = 2000;
    let t = Instant::now();
    for _ in 0..n {
        std::hint::black_box(wrench_process::netfilter::Filter::network_off().unwrap());
    }
    let build = t.elapsed() / n;
    // Fork children that exit at once, with and without the install; and
    // children that make 200k getppid calls, with and without the filter.
    let fork_run = |install: bool, calls: u32| -> Duration {
        let t = Instant::now();
        // SAFETY: the child makes only async-signal-safe calls, then _exit.
        unsafe {
            let pid = libc::fork();
            if pid == 0 {
                if install && f.install().is_err() {
                    libc::_exit(1);
                }
                for _ in 0..calls {
                    libc::getppid();
                }
                libc::_exit(0);
            }
            let mut st = 0;
            libc::waitpid(pid, &mut st, 0);
            assert_eq!(st, 0);
        }
        t.elapsed()
    };
    let avg = |install: bool, calls: u32| {
        let reps = if calls == 0 { 201 } else { 21 };
        let mut v: Vec<Duration> = (0..reps).map(|_| fork_run(install, calls)).collect();
        v.sort();
        v[reps / 2]
    };
    let (plain, filtered) = (avg(false, 0), avg(true, 0));
    let (plain_calls, filtered_calls) = (avg(false, 200_000), avg(true, 200_000));
    eprintln!(
        "filter: {} instructions; build {build:?} (parent); fork+exit median {plain:?} without, {filtered:?} with the install; 200k getppid median {plain_calls:?} without, {filtered_calls:?} with ({:.1} ns per call added)",
        f.len(),
        (filtered_calls.as_nanos() as f64
            - plain_calls.as_nanos() as f64
            - (filtered.as_nanos() as f64 - plain.as_nanos() as f64))
            / 200_000.0
    );
}

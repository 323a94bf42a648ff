//! The seccomp half of "network off": Landlock (ABI 4+) governs TCP
//! connect and bind only, so a sandboxed command could still send UDP
//! (DNS tunnelling to any resolver), SCTP, raw or packet frames, vsock...
//! This classic-BPF filter, installed after Landlock (under
//! `no_new_privs`), makes every socket that can leave the host impossible
//! to create:
//!
//! - `socket(2)` / `socketpair(2)` fail with `EACCES` for every address
//!   family except `AF_UNIX` and `AF_NETLINK` (both local), and
//!   `AF_INET`/`AF_INET6` with type `SOCK_STREAM` (`SOCK_NONBLOCK` and
//!   `SOCK_CLOEXEC` masked off) and protocol 0 or `IPPROTO_TCP` — plain TCP,
//!   whose connect and bind Landlock refuses;
//! - `sendto`/`sendmsg`/`sendmmsg` (and arm's `send`) with `MSG_FASTOPEN`
//!   fail with `EACCES`: TCP Fast Open connects inside `sendmsg`, so the
//!   filter does not rely on every kernel's Landlock seeing that connect;
//! - `io_uring_setup(2)` fails with `ENOSYS` (io_uring creates sockets and
//!   sends without those system calls; programs fall back as on a kernel
//!   without it);
//! - the architecture is checked first. The program covers the native ABI
//!   and the 32-bit one the same kernel runs: on x86_64 the i386 ABI
//!   (`int 0x80`; its multiplexed `socketcall(2)` hides the family in
//!   memory the filter cannot read, so it is refused whole) and the x32
//!   ABI (system call numbers with bit 30 set: all refused with `ENOSYS`);
//!   on aarch64 the arm ABI. Any other architecture value kills the process.
//!
//! A process that runs as root could still reach the network without a
//! socket of its own — rewrite other processes' packets with a tc `pedit`
//! action or an nftables/NFQUEUE rule (netlink), attach a BPF program, load
//! a module — so [`Filter::install`] also drops `CAP_NET_ADMIN`,
//! `CAP_NET_RAW`, `CAP_SYS_ADMIN`, `CAP_SYS_MODULE` and `CAP_BPF` from the
//! bounding, inheritable and ambient sets (a root program exec'd afterwards
//! gets only what the bounding set allows).
//!
//! What it does not cover: unix sockets reached by path (an ssh agent, a
//! container engine, a D-Bus bus, a local DNS service) are local sockets
//! this filter lets through, and a program behind one may reach the
//! network (or run anything) for the command. Those are
//! [`crate::sockmask`]'s: with network off every socket file outside the
//! command's own temp dir is covered in a private mount namespace, and a
//! sandbox that cannot make one refuses to run. Left open: a socket another
//! process binds after the command started, and a socket file in a
//! directory neither `/proc/net/unix` (other network namespaces) nor the
//! bounded walk of the usual socket directories reaches.
//!
//! The program is built before the fork ([`Filter::network_off`]); the child
//! only points a `sock_fprog` at it and calls `seccomp(2)`
//! ([`Filter::install`], async-signal-safe, no allocation).

use std::io;

/// `AUDIT_ARCH_*` values (linux/audit.h; not in the libc crate).
const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;
const AUDIT_ARCH_I386: u32 = 0x4000_0003;
const AUDIT_ARCH_AARCH64: u32 = 0xC000_00B7;
const AUDIT_ARCH_ARM: u32 = 0x4000_0028;
/// x32 system calls run as x86_64 with this bit set in the number.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;
/// `io_uring_setup` has the same number on every architecture.
const NR_IO_URING_SETUP: u32 = 425;

const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;

/// The system call numbers the filter looks at, for one ABI.
#[derive(Debug, Clone, Copy)]
struct Abi {
    /// `AUDIT_ARCH_*` as the kernel reports it in `seccomp_data.arch`.
    arch: u32,
    /// Refuse every system call number with bit 30 set (x32).
    refuse_x32: bool,
    socket: u32,
    socketpair: u32,
    /// The multiplexer whose arguments the filter cannot see (i386, arm OABI).
    socketcall: Option<u32>,
    /// Send calls whose flags are the 4th argument (`sendto`, `sendmmsg`, `send`).
    send_flags_arg3: &'static [u32],
    /// Send calls whose flags are the 3rd argument (`sendmsg`).
    send_flags_arg2: &'static [u32],
}

const X86_64: Abi = Abi {
    arch: AUDIT_ARCH_X86_64,
    refuse_x32: true,
    socket: 41,
    socketpair: 53,
    socketcall: None,
    send_flags_arg3: &[44, 307],
    send_flags_arg2: &[46],
};

const I386: Abi = Abi {
    arch: AUDIT_ARCH_I386,
    refuse_x32: false,
    socket: 359,
    socketpair: 360,
    socketcall: Some(102),
    send_flags_arg3: &[369, 345],
    send_flags_arg2: &[370],
};

const AARCH64: Abi = Abi {
    arch: AUDIT_ARCH_AARCH64,
    refuse_x32: false,
    socket: 198,
    socketpair: 199,
    socketcall: None,
    send_flags_arg3: &[206, 269],
    send_flags_arg2: &[211],
};

const ARM: Abi = Abi {
    arch: AUDIT_ARCH_ARM,
    refuse_x32: false,
    socket: 281,
    socketpair: 288,
    socketcall: Some(102),
    send_flags_arg3: &[289, 290, 374],
    send_flags_arg2: &[296],
};

/// The ABIs a process on this build's architecture can use.
fn host_abis() -> Option<&'static [Abi]> {
    if cfg!(target_arch = "x86_64") {
        Some(&[X86_64, I386])
    } else if cfg!(target_arch = "aarch64") {
        Some(&[AARCH64, ARM])
    } else {
        None
    }
}

/// Offsets into `struct seccomp_data`.
const OFF_NR: u32 = 0;
const OFF_ARCH: u32 = 4;
/// The low 32 bits of argument `i` (every argument the filter reads is an
/// `int` the kernel truncates to 32 bits).
const fn off_arg(i: u32) -> u32 {
    let base = 16 + 8 * i;
    if cfg!(target_endian = "big") {
        base + 4
    } else {
        base
    }
}

/// Where a jump goes: the next instruction or a label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum To {
    Next,
    L(Label),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Label {
    Abi(usize),
    CheckSocket,
    Inet,
    Flags3,
    Flags2,
    Allow,
    Eacces,
    Enosys,
}

/// A tiny assembler: instructions with symbolic forward jumps, resolved
/// (and checked to fit classic BPF's 8-bit forward offsets) at the end.
#[derive(Default)]
struct Asm {
    ins: Vec<(u16, u32, To, To)>,
    labels: Vec<(Label, usize)>,
}

impl Asm {
    fn label(&mut self, l: Label) {
        self.labels.push((l, self.ins.len()));
    }
    fn stmt(&mut self, code: u32, k: u32) {
        self.ins.push((code as u16, k, To::Next, To::Next));
    }
    fn load(&mut self, off: u32) {
        self.stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, off);
    }
    fn ret(&mut self, k: u32) {
        self.stmt(libc::BPF_RET | libc::BPF_K, k);
    }
    fn jump(&mut self, op: u32, k: u32, t: To, f: To) {
        self.ins
            .push(((libc::BPF_JMP | op | libc::BPF_K) as u16, k, t, f));
    }
    /// `if A == k goto t`.
    fn jeq(&mut self, k: u32, t: Label) {
        self.jump(libc::BPF_JEQ, k, To::L(t), To::Next);
    }

    fn finish(self) -> Result<Vec<libc::sock_filter>, String> {
        let at = |l: Label| {
            self.labels
                .iter()
                .find(|(x, _)| *x == l)
                .map(|(_, i)| *i)
                .ok_or_else(|| format!("seccomp filter: label {l:?} is not placed"))
        };
        let mut out = Vec::with_capacity(self.ins.len());
        for (i, (code, k, t, f)) in self.ins.iter().enumerate() {
            let off = |to: &To| -> Result<u8, String> {
                match to {
                    To::Next => Ok(0),
                    To::L(l) => {
                        let target = at(*l)?;
                        let d = target.checked_sub(i + 1).ok_or_else(|| {
                            format!("seccomp filter: backward jump to {l:?} at {i}")
                        })?;
                        u8::try_from(d).map_err(|_| format!("seccomp filter: jump too far at {i}"))
                    }
                }
            };
            out.push(libc::sock_filter {
                code: *code,
                jt: off(t)?,
                jf: off(f)?,
                k: *k,
            });
        }
        Ok(out)
    }
}

/// Build the program for `abis` (see the module doc for what it decides).
fn program(abis: &[Abi]) -> Result<Vec<libc::sock_filter>, String> {
    let errno = |e: i32| libc::SECCOMP_RET_ERRNO | (e as u32 & libc::SECCOMP_RET_DATA);
    let mut a = Asm::default();
    // Dispatch on the architecture; an unknown one is killed.
    a.load(OFF_ARCH);
    for (i, abi) in abis.iter().enumerate() {
        a.jeq(abi.arch, Label::Abi(i));
    }
    a.ret(libc::SECCOMP_RET_KILL_PROCESS);
    for (i, abi) in abis.iter().enumerate() {
        a.label(Label::Abi(i));
        a.load(OFF_NR);
        if abi.refuse_x32 {
            a.jump(
                libc::BPF_JGE,
                X32_SYSCALL_BIT,
                To::L(Label::Enosys),
                To::Next,
            );
        }
        a.jeq(abi.socket, Label::CheckSocket);
        a.jeq(abi.socketpair, Label::CheckSocket);
        a.jeq(NR_IO_URING_SETUP, Label::Enosys);
        if let Some(n) = abi.socketcall {
            a.jeq(n, Label::Eacces);
        }
        for n in abi.send_flags_arg3 {
            a.jeq(*n, Label::Flags3);
        }
        for n in abi.send_flags_arg2 {
            a.jeq(*n, Label::Flags2);
        }
        a.ret(SECCOMP_RET_ALLOW);
    }
    // socket(domain, type, protocol) and socketpair(domain, type, protocol, sv).
    a.label(Label::CheckSocket);
    a.load(off_arg(0));
    a.jeq(libc::AF_UNIX as u32, Label::Allow);
    a.jeq(libc::AF_NETLINK as u32, Label::Allow);
    a.jeq(libc::AF_INET as u32, Label::Inet);
    a.jeq(libc::AF_INET6 as u32, Label::Inet);
    a.ret(errno(libc::EACCES));
    a.label(Label::Inet);
    a.load(off_arg(1));
    a.stmt(
        libc::BPF_ALU | libc::BPF_AND | libc::BPF_K,
        !((libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC) as u32),
    );
    a.jump(
        libc::BPF_JEQ,
        libc::SOCK_STREAM as u32,
        To::Next,
        To::L(Label::Eacces),
    );
    a.load(off_arg(2));
    a.jeq(0, Label::Allow);
    a.jeq(libc::IPPROTO_TCP as u32, Label::Allow);
    a.ret(errno(libc::EACCES));
    // A send's flags: MSG_FASTOPEN connects.
    for (label, arg) in [(Label::Flags3, 3), (Label::Flags2, 2)] {
        a.label(label);
        a.load(off_arg(arg));
        a.jump(
            libc::BPF_JSET,
            libc::MSG_FASTOPEN as u32,
            To::L(Label::Eacces),
            To::Next,
        );
        a.ret(SECCOMP_RET_ALLOW);
    }
    a.label(Label::Allow);
    a.ret(SECCOMP_RET_ALLOW);
    a.label(Label::Eacces);
    a.ret(errno(libc::EACCES));
    a.label(Label::Enosys);
    a.ret(errno(libc::ENOSYS));
    a.finish()
}

/// Why the filter cannot be installed here, or None when it can: the
/// architecture is one the program knows and the kernel has seccomp
/// filters with the `ERRNO` action.
pub fn unavailable() -> Option<String> {
    if host_abis().is_none() {
        return Some(format!(
            "wrench has no seccomp socket filter for {}",
            std::env::consts::ARCH
        ));
    }
    let action: u32 = libc::SECCOMP_RET_ERRNO;
    // SAFETY: SECCOMP_GET_ACTION_AVAIL reads one u32 from a valid pointer.
    let r = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_GET_ACTION_AVAIL,
            0,
            &action as *const u32,
        )
    };
    if r != 0 {
        return Some(format!(
            "this kernel has no seccomp filters ({})",
            io::Error::last_os_error()
        ));
    }
    None
}

/// The network-off filter, built in the parent.
#[derive(Clone)]
pub struct Filter {
    prog: Vec<libc::sock_filter>,
}

impl std::fmt::Debug for Filter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "seccomp network-off filter ({} instructions)",
            self.prog.len()
        )
    }
}

impl Filter {
    /// The filter for this architecture; an error names why there is none.
    pub fn network_off() -> Result<Filter, String> {
        if let Some(why) = unavailable() {
            return Err(why);
        }
        let abis = host_abis().ok_or("no seccomp filter for this architecture")?;
        Ok(Filter {
            prog: program(abis)?,
        })
    }

    /// Number of BPF instructions (for tests and notes).
    pub fn len(&self) -> usize {
        self.prog.len()
    }

    /// Never true: a built filter has instructions.
    pub fn is_empty(&self) -> bool {
        self.prog.is_empty()
    }

    /// Install on the calling thread (the forked child, in `pre_exec`):
    /// drops the network-admin capabilities ([`drop_network_caps`]), sets
    /// `no_new_privs` (Landlock already has), then `seccomp(2)`. Only
    /// async-signal-safe system calls; no allocation.
    pub fn install(&self) -> io::Result<()> {
        drop_network_caps()?;
        let fprog = libc::sock_fprog {
            len: u16::try_from(self.prog.len())
                .map_err(|_| io::Error::from_raw_os_error(libc::E2BIG))?,
            filter: self.prog.as_ptr().cast_mut(),
        };
        // SAFETY: prctl with integer arguments only.
        if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fprog` points at `self.prog`, alive for the call; the
        // kernel copies the program.
        let r = unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                0,
                &fprog as *const libc::sock_fprog,
            )
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

/// Capabilities that reach the network without a socket of one's own
/// (see the module doc), by number (linux/capability.h).
const NETWORK_CAPS: [u32; 5] = [
    12, // CAP_NET_ADMIN: tc, nftables, routes, interfaces
    13, // CAP_NET_RAW
    16, // CAP_SYS_MODULE
    21, // CAP_SYS_ADMIN: bpf() before CAP_BPF, namespaces, mounts
    39, // CAP_BPF
];

/// Drop the capabilities that reach the network without a socket of
/// their own (`CAP_NET_ADMIN`, `CAP_NET_RAW`, `CAP_SYS_MODULE`,
/// `CAP_SYS_ADMIN`, `CAP_BPF`; see [`drop_caps`]).
pub fn drop_network_caps() -> io::Result<()> {
    drop_caps(&NETWORK_CAPS)
}

/// Drop `caps` (capability numbers, linux/capability.h) from the calling
/// thread's bounding, inheritable, permitted and effective sets and clear
/// its ambient set. A process without `CAP_SETPCAP` (any non-root user)
/// has none of them to drop: the bounding-set drop is then skipped.
/// Async-signal-safe.
pub fn drop_caps(caps: &[u32]) -> io::Result<()> {
    const PR_CAPBSET_DROP: libc::c_int = 24;
    const PR_CAP_AMBIENT: libc::c_int = 47;
    const PR_CAP_AMBIENT_CLEAR_ALL: libc::c_ulong = 4;
    const CAP_SETPCAP: u32 = 8;
    const VERSION_3: u32 = 0x2008_0522;
    #[repr(C)]
    struct Header {
        version: u32,
        pid: libc::c_int,
    }
    #[repr(C)]
    #[derive(Clone, Copy, Default)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    let mut hdr = Header {
        version: VERSION_3,
        pid: 0,
    };
    let mut data = [Data::default(); 2];
    // SAFETY: capget(2) into a valid header and two data structs.
    if unsafe { libc::syscall(libc::SYS_capget, &mut hdr as *mut Header, data.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let has = |d: &[Data; 2], cap: u32| d[(cap / 32) as usize].effective & (1 << (cap % 32)) != 0;
    if has(&data, CAP_SETPCAP) {
        for &cap in caps {
            // SAFETY: prctl with integer arguments. EINVAL: a capability this
            // kernel does not know (CAP_BPF before 5.8): nothing to drop.
            let r = unsafe { libc::prctl(PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) };
            if r != 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINVAL) {
                return Err(io::Error::last_os_error());
            }
        }
    }
    // SAFETY: prctl with integer arguments; fails only on kernels before
    // 4.3, which have no ambient set.
    unsafe { libc::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) };
    let mut changed = false;
    for &cap in caps {
        let d = &mut data[(cap / 32) as usize];
        let bit = 1u32 << (cap % 32);
        if (d.effective | d.permitted | d.inheritable) & bit != 0 {
            d.effective &= !bit;
            d.permitted &= !bit;
            d.inheritable &= !bit;
            changed = true;
        }
    }
    if changed {
        hdr.version = VERSION_3;
        hdr.pid = 0;
        // SAFETY: capset(2) from a valid header and two data structs.
        if unsafe { libc::syscall(libc::SYS_capset, &mut hdr as *mut Header, data.as_ptr()) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_jump_lands_inside_the_program_and_it_ends_in_a_return() {
        for abis in [&[X86_64, I386][..], &[AARCH64, ARM][..]] {
            let p = program(abis).unwrap();
            for (i, ins) in p.iter().enumerate() {
                if ins.code as u32 & 0x07 == libc::BPF_JMP {
                    assert!(i + 1 + (ins.jt as usize) < p.len(), "{i}");
                    assert!(i + 1 + (ins.jf as usize) < p.len(), "{i}");
                }
            }
            let last = p.last().unwrap();
            assert_eq!(last.code as u32, libc::BPF_RET | libc::BPF_K);
            assert!(p.len() < 100, "{}", p.len());
        }
    }

    #[test]
    fn an_unplaced_label_is_an_error_not_a_wrong_program() {
        let mut a = Asm::default();
        a.jeq(1, Label::Inet);
        a.ret(0);
        assert!(a.finish().unwrap_err().contains("not placed"));
    }
}

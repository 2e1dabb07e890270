//! The seccomp filter: what a confined command may not reach through system
//! calls the tiers do not look at: sockets, the kernel's keyrings, other
//! processes' resource limits and setuid or setgid files.
//!
//! Neither tier's own rules cover every way out through a socket. A Unix
//! socket is reached by its path, and neither a network namespace nor
//! Landlock (up to ABI 7) stands between a command and `/run/docker.sock`,
//! the session's D-Bus (`systemd-run --user` starts a process outside the
//! run), an `ssh-agent` or an X server: each is a service outside that acts
//! for the command. Landlock's network rules cover TCP only, so UDP, raw and
//! SCTP sockets reach the network under it; and `AF_VSOCK` reaches a virtual
//! machine's host from any network namespace. Nor does either tier keep a
//! command from the user's kernel keyrings (`keyctl`), where Kerberos
//! tickets and other credentials may be kept.
//!
//! Nor does Landlock keep a command from another process of the same user
//! through `prlimit64`: a `RLIMIT_CPU` of one second set on the harness kills
//! it, and a `RLIMIT_NOFILE` or `RLIMIT_FSIZE` of zero breaks it (its
//! scoping covers signals and ptrace, not resource limits).
//!
//! Nor does Landlock cover the mode of a file (up to ABI 7): a command may
//! `chmod` any file its user owns, outside the workspace too. Most of that a
//! filter cannot tell from legitimate work, since it sees no path; but no
//! build needs to make a program setuid or setgid, and such a program, made
//! by a command of a harness running as root (or as you), runs as root (or
//! as you) for every other user of the machine who starts it.
//!
//! So a seccomp filter, installed in the child before `exec` (and inherited
//! by everything it starts, however it is started), refuses `add_key`,
//! `request_key` and `keyctl`, `prlimit64` on any process but the caller
//! (pid 0: what `getrlimit` and `setrlimit` send), a mode with the setuid or
//! setgid bit given to `chmod`, `fchmod`, `fchmodat` and `fchmodat2`, or to
//! `open`, `openat`, `creat`, `mknod` and `mknodat` when they create a file,
//! and `openat2` (`ENOSYS`: its mode is in memory the filter cannot read,
//! and its callers fall back to `openat`), and, when commands may
//! not use the network, refuses to create any socket but:
//!
//! - netlink, which asks the kernel about this process's own network (and
//!   which bubblewrap needs to bring up the namespace's loopback);
//! - under bwrap, IPv4 and IPv6 of every kind: the command's network
//!   namespace holds only its own loopback;
//! - under Landlock, IPv4 and IPv6 TCP, whose `connect` and `bind`
//!   Landlock's network rules refuse (ABI 4 and later; below it, none).
//!
//! `socketpair` stays allowed: a pair of connected sockets reaches nothing
//! outside. `io_uring_setup` is refused whatever the network (`ENOSYS`, which
//! every user of it takes as "fall back to plain system calls"): an
//! `io_uring` opens sockets and creates files, with any mode, without a
//! system call the filter sees.
//!
//! A 32-bit program on a 64-bit kernel calls through another table: its
//! keyring calls, its `prlimit64` on another process and its setuid and
//! setgid modes are refused, and
//! without the network its `socket`, and `socketcall`'s `SYS_SOCKET` (whose
//! arguments are in memory the filter cannot read), whatever the family. A system call of any other
//! architecture kills the process.

use std::sync::Arc;

use libc::sock_filter;

use crate::tier::Tier;

/// The network a tier gives a command without `--network`, which decides
/// which sockets it may open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Network {
    /// A network namespace of its own (bwrap): IPv4 and IPv6 reach only its
    /// own loopback.
    Namespace,
    /// Landlock's TCP rules (ABI 4 and later) refuse `connect` and `bind`.
    LandlockTcp,
    /// Nothing else refuses a network socket: none is allowed.
    Unguarded,
}

impl Network {
    /// What `tier` confines network sockets with, on a kernel of Landlock
    /// ABI `abi`.
    pub(crate) fn of(tier: Tier, abi: u32) -> Network {
        match tier {
            Tier::Bwrap => Network::Namespace,
            Tier::Landlock if abi >= 4 => Network::LandlockTcp,
            Tier::Landlock | Tier::None => Network::Unguarded,
        }
    }
}

/// A compiled filter, shared with the child that installs it.
pub(crate) type Program = Arc<[sock_filter]>;

/// The filter for a command whose other sockets `network` confines (`None`:
/// it may use the network, and every socket), or `None` on an architecture
/// this crate has no system call numbers for.
pub(crate) fn program(network: Option<Network>) -> Option<Program> {
    let arch = Arch::this()?;
    let compat = arch.compat_checks(network.is_some());
    let mut program = vec![
        load(ARCH),
        // Native: on to its checks, past the next two and the compat checks.
        jump_if(arch.native, as_offset(compat.len() + 2), 0),
        jump_if(arch.compat, 1, 0),
        ret(KILL),
    ];
    program.extend(compat);
    program.extend(arch.native_checks(network));
    Some(program.into())
}

/// Offsets in `struct seccomp_data`.
const NR: u32 = 0;
const ARCH: u32 = 4;
/// The low 32 bits of argument `n`, on a little-endian machine.
const fn arg(n: u32) -> u32 {
    16 + 8 * n
}

/// The architectures' audit numbers (`linux/audit.h`).
const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;
const AUDIT_ARCH_I386: u32 = 0x4000_0003;
const AUDIT_ARCH_AARCH64: u32 = 0xC000_00B7;
const AUDIT_ARCH_ARM: u32 = 0x4000_0028;

/// The system call numbers that concern the filter on one kind of machine.
struct Arch {
    native: u32,
    compat: u32,
    /// The native `socket`.
    socket: u32,
    /// The native `add_key`, `request_key` and `keyctl`.
    keyrings: [u32; 3],
    /// The native `prlimit64`.
    prlimit: u32,
    /// The native calls whose mode always counts (they set one, or always
    /// create a file), each with the argument that holds it.
    set_mode: &'static [(u32, u32)],
    /// The native calls that create a file only with some flags, with the
    /// arguments that hold their flags and mode.
    open: &'static [(u32, u32, u32)],
    /// Set in every x32 system call number (x86-64 only), which otherwise
    /// shares the native numbers this filter looks at.
    x32_bit: u32,
    /// The 32-bit table's `socket`.
    compat_socket: u32,
    /// The 32-bit table's `add_key`, `request_key` and `keyctl`.
    compat_keyrings: [u32; 3],
    /// The 32-bit table's `prlimit64`.
    compat_prlimit: u32,
    /// The 32-bit table's calls whose mode always counts, as `set_mode`.
    compat_set_mode: &'static [(u32, u32)],
    /// The 32-bit table's calls that create a file with some flags, as `open`.
    compat_open: &'static [(u32, u32, u32)],
    /// The 32-bit table's `socketcall`, where it has one.
    compat_socketcall: Option<u32>,
}

/// `io_uring_setup`, the same in every table this filter knows.
const IO_URING_SETUP: u32 = 425;
/// `openat2`, the same in every table this filter knows.
const OPENAT2: u32 = 437;
/// The calls whose work the filter cannot judge, refused as unknown in every
/// table (callers fall back to calls it can): `io_uring_setup`, whose ring
/// opens sockets and creates files past the filter, and `openat2`, whose mode
/// is in memory the filter cannot read.
const UNJUDGED: [u32; 2] = [IO_URING_SETUP, OPENAT2];
/// `fchmodat2`, the same in every table this filter knows.
const FCHMODAT2: u32 = 452;
/// The setuid and setgid bits of a mode.
const SET_ID_BITS: u32 = 0o6000;
/// The flags with which `open` and `openat` create a file: `O_CREAT`
/// (`0o100`), and `__O_TMPFILE` alone (`0o2000_0000`; `O_TMPFILE` also holds
/// `O_DIRECTORY`, which opening a directory sets). The same in every table
/// this filter knows.
const CREATING_FLAGS: u32 = 0o2000_0100;
/// `socketcall`'s first argument for `socket`.
const SYS_SOCKET: u32 = 1;

impl Arch {
    fn this() -> Option<Arch> {
        if cfg!(all(target_arch = "x86_64", target_endian = "little")) {
            Some(Arch {
                native: AUDIT_ARCH_X86_64,
                compat: AUDIT_ARCH_I386,
                socket: 41,
                keyrings: [248, 249, 250],
                prlimit: 302,
                // chmod, fchmod, fchmodat, fchmodat2, creat, mknod, mknodat.
                set_mode: &[
                    (90, 1),
                    (91, 1),
                    (268, 2),
                    (FCHMODAT2, 2),
                    (85, 1),
                    (133, 1),
                    (259, 2),
                ],
                // open, openat.
                open: &[(2, 1, 2), (257, 2, 3)],
                x32_bit: 0x4000_0000,
                compat_socket: 359,
                compat_keyrings: [286, 287, 288],
                compat_prlimit: 340,
                compat_set_mode: &[
                    (15, 1),
                    (94, 1),
                    (306, 2),
                    (FCHMODAT2, 2),
                    (8, 1),
                    (14, 1),
                    (297, 2),
                ],
                compat_open: &[(5, 1, 2), (295, 2, 3)],
                compat_socketcall: Some(102),
            })
        } else if cfg!(all(target_arch = "aarch64", target_endian = "little")) {
            Some(Arch {
                native: AUDIT_ARCH_AARCH64,
                compat: AUDIT_ARCH_ARM,
                socket: 198,
                keyrings: [217, 218, 219],
                prlimit: 261,
                // fchmod, fchmodat, fchmodat2, mknodat: no chmod, creat or mknod
                // in this table.
                set_mode: &[(52, 1), (53, 2), (FCHMODAT2, 2), (33, 2)],
                // openat: no open.
                open: &[(56, 2, 3)],
                x32_bit: 0,
                compat_socket: 281,
                compat_keyrings: [309, 310, 311],
                compat_prlimit: 369,
                compat_set_mode: &[
                    (15, 1),
                    (94, 1),
                    (333, 2),
                    (FCHMODAT2, 2),
                    (8, 1),
                    (14, 1),
                    (324, 2),
                ],
                compat_open: &[(5, 1, 2), (322, 2, 3)],
                compat_socketcall: None,
            })
        } else {
            None
        }
    }

    /// The native table: the unjudged calls, the keyring calls, `prlimit64` on
    /// another process and setuid or setgid modes refused and, without the
    /// network, `socket`
    /// judged by its family (and, for TCP under Landlock, its type and
    /// protocol). Ends in a return.
    fn native_checks(&self, network: Option<Network>) -> Vec<sock_filter> {
        let mut checks = vec![load(NR)];
        if self.x32_bit != 0 {
            checks.push(and(!self.x32_bit));
        }
        checks.extend(refusals(&UNJUDGED, NO_SUCH_CALL));
        checks.extend(refusals(&self.keyrings, REFUSE));
        checks.extend(only_on_itself(self.prlimit));
        checks.extend(set_id_refusals(self.set_mode, self.open));
        let Some(network) = network else {
            checks.push(ret(ALLOW));
            return checks;
        };
        checks.extend([
            jump_if(self.socket, 1, 0),
            ret(ALLOW),
            load(arg(0)),
            jump_if(libc::AF_NETLINK.unsigned_abs(), 0, 1),
            ret(ALLOW),
        ]);
        match network {
            Network::Namespace => checks.extend([
                jump_if(libc::AF_INET.unsigned_abs(), 0, 1),
                ret(ALLOW),
                jump_if(libc::AF_INET6.unsigned_abs(), 0, 1),
                ret(ALLOW),
            ]),
            Network::LandlockTcp => checks.extend([
                // IPv4 or IPv6 go on to the TCP check; anything else is refused.
                jump_if(libc::AF_INET.unsigned_abs(), 2, 0),
                jump_if(libc::AF_INET6.unsigned_abs(), 1, 0),
                ret(REFUSE),
                // The type without SOCK_NONBLOCK and SOCK_CLOEXEC.
                load(arg(1)),
                and(0xF),
                jump_if(libc::SOCK_STREAM.unsigned_abs(), 1, 0),
                ret(REFUSE),
                // The protocol: TCP by default or by name, not SCTP or MPTCP.
                load(arg(2)),
                jump_if(0, 1, 0),
                jump_if(libc::IPPROTO_TCP.unsigned_abs(), 0, 1),
                ret(ALLOW),
            ]),
            Network::Unguarded => {}
        }
        checks.push(ret(REFUSE));
        checks
    }

    /// The 32-bit table: the unjudged calls, the keyring calls, `prlimit64` on
    /// another process and setuid or setgid modes refused and, without the
    /// network, every `socket` (through `socketcall` too). Ends in a return.
    fn compat_checks(&self, sockets_filtered: bool) -> Vec<sock_filter> {
        let mut checks = vec![load(NR)];
        checks.extend(refusals(&UNJUDGED, NO_SUCH_CALL));
        checks.extend(refusals(&self.compat_keyrings, REFUSE));
        checks.extend(only_on_itself(self.compat_prlimit));
        checks.extend(set_id_refusals(self.compat_set_mode, self.compat_open));
        if sockets_filtered {
            checks.extend([jump_if(self.compat_socket, 0, 1), ret(REFUSE)]);
            if let Some(socketcall) = self.compat_socketcall {
                checks.extend([
                    jump_if(socketcall, 1, 0),
                    ret(ALLOW),
                    load(arg(0)),
                    jump_if(SYS_SOCKET, 0, 1),
                    ret(REFUSE),
                ]);
            }
        }
        checks.push(ret(ALLOW));
        checks
    }
}

/// For each system call of `calls` (the number loaded), `return answer`.
fn refusals(calls: &[u32], answer: u32) -> Vec<sock_filter> {
    calls
        .iter()
        .flat_map(|&call| [jump_if(call, 0, 1), ret(answer)])
        .collect()
}

/// For the system call `call` (the number loaded), whose first argument is a
/// pid: `return` allowed for pid 0 (the caller itself), refused for any other.
/// Other calls go on with their number still loaded.
fn only_on_itself(call: u32) -> [sock_filter; 5] {
    [
        jump_if(call, 0, 4),
        load(arg(0)),
        jump_if(0, 0, 1),
        ret(ALLOW),
        ret(REFUSE),
    ]
}

/// The checks that keep a command from making a setuid or setgid file
/// through the calls of one table (the number loaded): each of `set_mode`
/// answered by its mode, and each of `open` by its mode when its flags create
/// a file (`openat2` and an `io_uring` are [`UNJUDGED`]). Other calls go on
/// with their number still loaded.
fn set_id_refusals(set_mode: &[(u32, u32)], open: &[(u32, u32, u32)]) -> Vec<sock_filter> {
    let mut checks = Vec::new();
    for &(call, mode) in set_mode {
        checks.push(jump_if(call, 0, 5));
        checks.extend(by_mode(mode));
    }
    for &(call, flags, mode) in open {
        checks.extend([
            jump_if(call, 0, 8),
            load(arg(flags)),
            and(CREATING_FLAGS),
            // Not creating: the mode is not read, whatever it holds.
            jump_if(0, 3, 0),
        ]);
        checks.extend(by_mode(mode));
    }
    checks
}

/// Returns allowed when argument `mode` holds neither the setuid nor the
/// setgid bit, refused when it holds either.
fn by_mode(mode: u32) -> [sock_filter; 5] {
    [
        load(arg(mode)),
        and(SET_ID_BITS),
        jump_if(0, 0, 1),
        ret(ALLOW),
        ret(REFUSE),
    ]
}

/// The classic BPF instructions the filter is made of (`linux/filter.h`),
/// written out: most of their parts are zero, so an expression of them
/// would read the same with any operator (the tests check each one).
/// `BPF_LD | BPF_W | BPF_ABS`: `A = data[k]`.
const LOAD_WORD: u16 = 0x20;
/// `BPF_ALU | BPF_AND | BPF_K`: `A &= k`.
const AND_CONSTANT: u16 = 0x54;
/// `BPF_RET | BPF_K`: return `k`.
const RETURN: u16 = 0x06;
/// `BPF_JMP | BPF_JEQ | BPF_K`: `A == k`, then skip `jt`, else `jf`.
const JUMP_IF_EQUAL: u16 = 0x15;

/// What the filter answers a system call with.
const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
const KILL: u32 = libc::SECCOMP_RET_KILL_PROCESS;
/// `SECCOMP_RET_ERRNO | EACCES`: fails it as the tiers' own refusals do.
const REFUSE: u32 = 0x0005_000D;
/// `SECCOMP_RET_ERRNO | ENOSYS`: fails it as a kernel without the call would.
const NO_SUCH_CALL: u32 = 0x0005_0026;

fn as_offset(length: usize) -> u8 {
    u8::try_from(length).expect("the compat checks fit a jump")
}

/// `A = data[offset]` (32 bits).
fn load(offset: u32) -> sock_filter {
    statement(LOAD_WORD, offset)
}

/// `A &= mask`.
fn and(mask: u32) -> sock_filter {
    statement(AND_CONSTANT, mask)
}

/// `return value`.
fn ret(value: u32) -> sock_filter {
    statement(RETURN, value)
}

/// Skips `if_equal` instructions when `A == value`, else `if_not`.
fn jump_if(value: u32, if_equal: u8, if_not: u8) -> sock_filter {
    sock_filter {
        code: JUMP_IF_EQUAL,
        jt: if_equal,
        jf: if_not,
        k: value,
    }
}

fn statement(code: u16, k: u32) -> sock_filter {
    sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_written_out_instructions_and_answers_are_the_kernels() {
        let code = |bits: u32| u16::try_from(bits).expect("16 bits");
        assert_eq!(LOAD_WORD, code(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS));
        assert_eq!(
            AND_CONSTANT,
            code(libc::BPF_ALU | libc::BPF_AND | libc::BPF_K)
        );
        assert_eq!(RETURN, code(libc::BPF_RET | libc::BPF_K));
        assert_eq!(
            JUMP_IF_EQUAL,
            code(libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K)
        );
        assert_eq!(
            REFUSE,
            libc::SECCOMP_RET_ERRNO | libc::EACCES.unsigned_abs()
        );
        assert_eq!(
            NO_SUCH_CALL,
            libc::SECCOMP_RET_ERRNO | libc::ENOSYS.unsigned_abs()
        );
        let creating = libc::O_CREAT | (libc::O_TMPFILE & !libc::O_DIRECTORY);
        assert_eq!(CREATING_FLAGS, creating.unsigned_abs());
        assert_eq!(SET_ID_BITS, libc::S_ISUID | libc::S_ISGID);
    }

    #[test]
    fn landlock_confines_tcp_from_abi_4_and_bwrap_by_its_namespace() {
        assert_eq!(Network::of(Tier::Landlock, 3), Network::Unguarded);
        assert_eq!(Network::of(Tier::Landlock, 4), Network::LandlockTcp);
        assert_eq!(Network::of(Tier::Landlock, 7), Network::LandlockTcp);
        assert_eq!(Network::of(Tier::Bwrap, 0), Network::Namespace);
        assert_eq!(Network::of(Tier::None, 7), Network::Unguarded);
    }

    #[test]
    fn every_jump_lands_inside_the_program_and_every_path_returns() {
        let networks = [
            Some(Network::Namespace),
            Some(Network::LandlockTcp),
            Some(Network::Unguarded),
            None,
        ];
        for network in networks {
            let program = program(network).expect("a filter on the architectures tested");
            let last = program.last().expect("an instruction");
            assert_eq!(last.code, RETURN, "{network:?}");
            for (at, instruction) in program.iter().enumerate() {
                if instruction.code == JUMP_IF_EQUAL {
                    let furthest = at + 1 + usize::from(instruction.jt.max(instruction.jf));
                    assert!(furthest < program.len(), "{network:?}: jump at {at}");
                }
            }
        }
    }
}

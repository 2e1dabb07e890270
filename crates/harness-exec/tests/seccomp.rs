//! The seccomp filter seen from inside a confined command: every way this
//! machine has of making a socket, reaching a kernel keyring, setting another
//! process's limits or making a setuid or setgid file, through the
//! native system call table, the x32 one and the 32-bit one, under each real
//! tier, with and without `--network`.
//!
//! The command is this test binary itself, run again with `SOCKET_PROBE=1`:
//! its `probe` test then makes each system call and prints the result
//! (`name=ok` or `name=ERRNO`), which the outer test reads. A tier this
//! machine cannot run is skipped with the reason, unless
//! `HARNESS_CI_ALL_TIERS=1` says every tier must run.

#![allow(unsafe_code)] // raw system calls, some through the 32-bit gate
#![allow(clippy::print_stdout)] // the probe reports on stdout

use std::collections::BTreeMap;

mod support;

use support::real_tiers;

use harness_exec::{Confinement, EnvPolicy, Isolation, Policy, RunOptions, Runner, Tier};

const EACCES: &str = "13";
const ENOSYS: &str = "38";
const EFAULT: &str = "14";

#[test]
fn sockets_and_keyrings_are_refused_through_every_system_call_table() {
    for tier in real_tiers() {
        let found = probe_under(tier, false);
        let get = |name: &str| found.get(name).map_or("missing", String::as_str);
        // Refused under both tiers, whatever reaches the kernel's `socket`.
        for name in ["unix", "vsock", "packet", "x32_unix"] {
            assert_eq!(get(name), EACCES, "{tier}: {name}: {found:?}");
        }
        // What the filter keeps working.
        for name in [
            "netlink",
            "inet_stream",
            "inet_tcp",
            "inet_stream_flags",
            "inet6_stream",
        ] {
            assert_eq!(get(name), "ok", "{tier}: {name}: {found:?}");
        }
        assert_eq!(get("socketpair"), "ok", "{tier}: {found:?}");
        // An io_uring would make sockets past the filter.
        assert_eq!(get("io_uring_setup"), ENOSYS, "{tier}: {found:?}");
        for name in KEYRING_CALLS {
            assert_eq!(get(name), EACCES, "{tier}: {name}: {found:?}");
        }
        // Resource limits: its own (pid 0), not another process's, even by its own pid.
        assert_eq!(get("prlimit_self"), "ok", "{tier}: {found:?}");
        assert_eq!(get("prlimit_pid"), EACCES, "{tier}: {found:?}");
        assert_eq!(get("x32_prlimit_pid"), EACCES, "{tier}: {found:?}");
        // Under bwrap the namespace holds the rest of IP; Landlock's rules
        // cover TCP alone, so the filter refuses the rest.
        let rest_of_ip = ["inet_dgram", "inet6_dgram", "inet_sctp"];
        for name in rest_of_ip {
            match tier {
                Tier::Landlock => assert_eq!(get(name), EACCES, "{tier}: {name}: {found:?}"),
                _ => assert_ne!(get(name), EACCES, "{tier}: {name}: {found:?}"),
            }
        }
        if cfg!(target_arch = "x86_64") && get("i386") != "unavailable" {
            // The 32-bit table: every socket refused, socketcall's
            // SYS_SOCKET before the kernel reads its (here unmapped)
            // arguments; its other calls, and every other system call,
            // left to the kernel.
            for name in ["i386_unix", "i386_inet", "i386_socketcall_socket"] {
                assert_eq!(get(name), EACCES, "{tier}: {name}: {found:?}");
            }
            assert_eq!(get("i386_socketcall_pair"), EFAULT, "{tier}: {found:?}");
            assert_eq!(get("i386_io_uring_setup"), ENOSYS, "{tier}: {found:?}");
            assert_eq!(get("i386_getpid"), "ok", "{tier}: {found:?}");
            assert_eq!(get("i386_keyctl"), EACCES, "{tier}: {found:?}");
            assert_eq!(get("i386_prlimit_self"), "ok", "{tier}: {found:?}");
            assert_eq!(get("i386_prlimit_pid"), EACCES, "{tier}: {found:?}");
        }
    }
}

/// Every way to make a setuid or setgid file is refused, whatever the network,
/// and the same calls with plain modes work.
fn assert_no_set_id_file(tier: Tier, found: &BTreeMap<String, String>) {
    let get = |name: &str| found.get(name).map_or("missing", String::as_str);
    for name in [
        "chmod_setuid",
        "chmod_setgid",
        "fchmod_setuid",
        "fchmodat_setuid",
        "fchmodat2_setuid",
        "open_create_setuid",
        "openat_create_setgid",
        "open_tmpfile_setuid",
        "creat_setuid",
        "mknod_setuid",
        "mknodat_setuid",
    ] {
        assert_eq!(get(name), EACCES, "{tier}: {name}: {found:?}");
    }
    for name in [
        "chmod_plain",
        "fchmod_plain",
        "fchmodat_plain",
        "open_create_plain",
        "openat_create_plain",
        "open_existing_any_mode",
        "creat_plain",
        "mknod_plain",
    ] {
        assert_eq!(get(name), "ok", "{tier}: {name}: {found:?}");
    }
    // Its mode is in memory the filter cannot read: unknown, and callers fall back.
    assert_eq!(get("openat2"), ENOSYS, "{tier}: {found:?}");
    if cfg!(target_arch = "x86_64") {
        assert_eq!(get("x32_chmod_setuid"), EACCES, "{tier}: {found:?}");
        if get("i386") != "unavailable" {
            for name in [
                "i386_chmod_setuid",
                "i386_fchmod_setgid",
                "i386_open_create_setuid",
                "i386_creat_setuid",
                "i386_mknod_setuid",
            ] {
                assert_eq!(get(name), EACCES, "{tier}: {name}: {found:?}");
            }
            // Plain modes reach the kernel, which then reads the (unmapped) path.
            assert_eq!(get("i386_chmod_plain"), EFAULT, "{tier}: {found:?}");
            assert_eq!(get("i386_open_plain"), EFAULT, "{tier}: {found:?}");
            assert_eq!(get("i386_openat2"), ENOSYS, "{tier}: {found:?}");
        }
    }
}

#[test]
fn no_setuid_or_setgid_file_can_be_made_through_any_system_call_table() {
    for tier in real_tiers() {
        assert_no_set_id_file(tier, &probe_under(tier, false));
        assert_no_set_id_file(tier, &probe_under(tier, true));
    }
}

/// The probe's names for `add_key`, `request_key` and `keyctl` on the user's
/// keyring, each refused whatever the network (not `add_key=13`, which the
/// runner's redaction takes for a secret).
const KEYRING_CALLS: [&str; 3] = ["keyctl_add", "keyctl_request", "keyctl"];

#[test]
fn with_the_network_allowed_sockets_are_left_alone_and_keyrings_still_refused() {
    for tier in real_tiers() {
        let found = probe_under(tier, true);
        let get = |name: &str| found.get(name).map_or("missing", String::as_str);
        for name in ["unix", "inet_dgram"] {
            assert_eq!(get(name), "ok", "{tier}: {name}: {found:?}");
        }
        // An io_uring creates files, with any mode, past the filter: refused
        // whatever the network.
        assert_eq!(get("io_uring_setup"), ENOSYS, "{tier}: {found:?}");
        // The network does not open the keyrings, nor other processes' limits.
        for name in KEYRING_CALLS {
            assert_eq!(get(name), EACCES, "{tier}: {name}: {found:?}");
        }
        assert_eq!(get("prlimit_self"), "ok", "{tier}: {found:?}");
        assert_eq!(get("prlimit_pid"), EACCES, "{tier}: {found:?}");
        if cfg!(target_arch = "x86_64") && get("i386") != "unavailable" {
            assert_eq!(get("i386_keyctl"), EACCES, "{tier}: {found:?}");
            assert_eq!(get("i386_unix"), "ok", "{tier}: {found:?}");
            assert_eq!(get("i386_io_uring_setup"), ENOSYS, "{tier}: {found:?}");
        }
    }
}

/// Not a test of its own: the probe the tests above run under a tier.
#[test]
fn probe() {
    if std::env::var_os("SOCKET_PROBE").is_none() {
        return;
    }
    // After the test runner's own `test probe ... `.
    println!();
    use libc::{
        AF_INET, AF_INET6, AF_NETLINK, AF_PACKET, AF_UNIX, AF_VSOCK, IPPROTO_TCP, NETLINK_ROUTE,
        SOCK_CLOEXEC, SOCK_DGRAM, SOCK_NONBLOCK, SOCK_RAW, SOCK_STREAM,
    };
    let sockets = [
        ("unix", AF_UNIX, SOCK_STREAM, 0),
        ("vsock", AF_VSOCK, SOCK_STREAM, 0),
        ("packet", AF_PACKET, SOCK_RAW, 0),
        ("netlink", AF_NETLINK, SOCK_RAW, NETLINK_ROUTE),
        ("inet_stream", AF_INET, SOCK_STREAM, 0),
        ("inet_tcp", AF_INET, SOCK_STREAM, IPPROTO_TCP),
        (
            "inet_stream_flags",
            AF_INET,
            SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
            0,
        ),
        ("inet6_stream", AF_INET6, SOCK_STREAM, 0),
        ("inet_dgram", AF_INET, SOCK_DGRAM, 0),
        ("inet6_dgram", AF_INET6, SOCK_DGRAM, 0),
        ("inet_sctp", AF_INET, SOCK_STREAM, 132),
    ];
    for (name, family, kind, protocol) in sockets {
        // SAFETY: socket(2) reads no memory; the descriptor leaks until exit.
        report(name, unsafe { libc::socket(family, kind, protocol) });
    }
    let mut pair = [0; 2];
    // SAFETY: `pair` has room for the two descriptors.
    let made = unsafe { libc::socketpair(AF_UNIX, SOCK_STREAM, 0, pair.as_mut_ptr()) };
    report("socketpair", made);
    // io_uring_setup(1, NULL): without the filter the kernel reads the null
    // parameters and fails with EFAULT.
    // SAFETY: the kernel checks the null pointer and writes nothing.
    let setup = unsafe { libc::syscall(libc::SYS_io_uring_setup, 1, std::ptr::null::<u8>()) };
    report("io_uring_setup", i32::try_from(setup).unwrap_or(-1));
    // The user's keyring (KEY_SPEC_USER_KEYRING): without the filter each
    // call gets at least as far as the kernel's own checks of its arguments.
    const USER_KEYRING: libc::c_long = -4;
    // SAFETY: the strings are NUL-terminated and live through the calls; the
    // kernel reads only them.
    let added = unsafe {
        libc::syscall(
            libc::SYS_add_key,
            c"user".as_ptr(),
            c"harness-probe".as_ptr(),
            c"x".as_ptr(),
            1usize,
            USER_KEYRING,
        )
    };
    report("keyctl_add", i32::try_from(added).unwrap_or(-1));
    // SAFETY: as above; a null callout is allowed.
    let requested = unsafe {
        libc::syscall(
            libc::SYS_request_key,
            c"user".as_ptr(),
            c"harness-probe".as_ptr(),
            std::ptr::null::<libc::c_char>(),
            0,
        )
    };
    // Not found is the kernel's answer, not the filter's.
    let requested = if requested == -1 && errno() == libc::ENOKEY {
        0
    } else {
        i32::try_from(requested).unwrap_or(-1)
    };
    report("keyctl_request", requested);
    // SAFETY: KEYCTL_GET_KEYRING_ID reads no memory.
    let keyring = unsafe { libc::syscall(libc::SYS_keyctl, 0, USER_KEYRING, 0) };
    report("keyctl", i32::try_from(keyring).unwrap_or(-1));
    // prlimit64(pid, RLIMIT_CORE, NULL, NULL) reads and writes nothing; without
    // the filter it succeeds for the caller named either way.
    let (own, null) = (libc::c_long::from(std::process::id().cast_signed()), 0usize);
    let prlimit = |pid: libc::c_long| {
        // SAFETY: null limits are allowed, and no memory is passed.
        unsafe { libc::syscall(libc::SYS_prlimit64, pid, libc::RLIMIT_CORE, null, null) }
    };
    report("prlimit_self", i32::try_from(prlimit(0)).unwrap_or(-1));
    report("prlimit_pid", i32::try_from(prlimit(own)).unwrap_or(-1));
    probe_set_id_files();
    #[cfg(target_arch = "x86_64")]
    {
        const X32: libc::c_long = 0x4000_0000;
        // SAFETY: as above, through the x32 table.
        let x32_prlimit = unsafe {
            libc::syscall(
                X32 | libc::SYS_prlimit64,
                own,
                libc::RLIMIT_CORE,
                null,
                null,
            )
        };
        report("x32_prlimit_pid", i32::try_from(x32_prlimit).unwrap_or(-1));
        // SAFETY: socket(2) in the x32 table reads no memory.
        let x32 = unsafe { libc::syscall(X32 | libc::SYS_socket, AF_UNIX, SOCK_STREAM, 0) };
        report("x32_unix", i32::try_from(x32).unwrap_or(-1));
        if !has_32_bit_gate() {
            // A kernel without IA-32 emulation: no 32-bit table to go through.
            println!("i386=unavailable");
            return;
        }
        let unix = u32::try_from(AF_UNIX).expect("small");
        let inet = u32::try_from(AF_INET).expect("small");
        let stream = u32::try_from(SOCK_STREAM).expect("small");
        report("i386_unix", int80(359, unix, stream, 0));
        report("i386_inet", int80(359, inet, stream, 0));
        // socketcall(SYS_SOCKET or SYS_SOCKETPAIR, args at address 4096).
        report("i386_socketcall_socket", int80(102, 1, 4096, 0));
        report("i386_socketcall_pair", int80(102, 8, 4096, 0));
        report("i386_io_uring_setup", int80(425, 1, 0, 0));
        report("i386_getpid", int80(20, 0, 0, 0));
        // keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING).
        report("i386_keyctl", int80(288, 0, (-4i32).cast_unsigned(), 0));
        // prlimit64(pid, RLIMIT_CORE, NULL, NULL), for itself as 0 and by its pid.
        let own = std::process::id();
        report("i386_prlimit_self", int80(340, 0, 4, 0));
        report("i386_prlimit_pid", int80(340, own, 4, 0));
        // The path at the unmapped address 4096: the filter answers before the
        // kernel reads it, and a call it lets through fails with EFAULT.
        report("i386_chmod_setuid", int80(15, 4096, 0o4755, 0));
        report("i386_chmod_plain", int80(15, 4096, 0o755, 0));
        report("i386_fchmod_setgid", int80(94, u32::MAX, 0o2755, 0));
        report("i386_open_create_setuid", int80(5, 4096, 0o101, 0o4755));
        report("i386_open_plain", int80(5, 4096, 0o101, 0o644));
        report("i386_creat_setuid", int80(8, 4096, 0o4755, 0));
        report("i386_mknod_setuid", int80(14, 4096, 0o100_000 | 0o4755, 0));
        report("i386_openat2", int80(437, 0, 4096, 4096));
    }
}

/// Each way of making a setuid or setgid file, in the working directory (the
/// workspace), and the same calls with plain modes.
fn probe_set_id_files() {
    use std::ffi::CString;
    let path = |name: &str| CString::new(name).expect("no NUL");
    let existing = path("probe-existing");
    std::fs::write("probe-existing", "x").expect("a file in the workspace");
    // SAFETY: every path is NUL-terminated and lives through its call; the
    // calls read only it, and the descriptors leak until exit.
    unsafe {
        report("chmod_setuid", libc::chmod(existing.as_ptr(), 0o4755));
        report("chmod_setgid", libc::chmod(existing.as_ptr(), 0o2755));
        report("chmod_plain", libc::chmod(existing.as_ptr(), 0o755));
        let fd = libc::open(existing.as_ptr(), libc::O_RDONLY);
        report("fchmod_setuid", libc::fchmod(fd, 0o4755));
        report("fchmod_plain", libc::fchmod(fd, 0o644));
        let at = |mode| libc::fchmodat(libc::AT_FDCWD, existing.as_ptr(), mode, 0);
        report("fchmodat_setuid", at(0o4755));
        report("fchmodat_plain", at(0o755));
        let fchmodat2 = libc::syscall(452, libc::AT_FDCWD, existing.as_ptr(), 0o4755, 0);
        report("fchmodat2_setuid", i32::try_from(fchmodat2).unwrap_or(-1));
        let create = libc::O_CREAT | libc::O_WRONLY;
        let new = path("probe-new-1");
        report(
            "open_create_setuid",
            libc::open(new.as_ptr(), create, 0o4755),
        );
        let new = path("probe-new-2");
        report("open_create_plain", libc::open(new.as_ptr(), create, 0o644));
        let new = path("probe-new-3");
        report(
            "openat_create_setgid",
            libc::openat(libc::AT_FDCWD, new.as_ptr(), create, 0o2755),
        );
        let new = path("probe-new-4");
        report(
            "openat_create_plain",
            libc::openat(libc::AT_FDCWD, new.as_ptr(), create, 0o644),
        );
        // Not creating: whatever the mode argument holds is not looked at.
        let any = libc::syscall(
            libc::SYS_openat,
            libc::AT_FDCWD,
            existing.as_ptr(),
            libc::O_RDONLY,
            0o6777,
        );
        report("open_existing_any_mode", i32::try_from(any).unwrap_or(-1));
        let here = path(".");
        report(
            "open_tmpfile_setuid",
            libc::open(here.as_ptr(), libc::O_TMPFILE | libc::O_WRONLY, 0o4755),
        );
        let new = path("probe-new-5");
        report("creat_setuid", libc::creat(new.as_ptr(), 0o4755));
        let new = path("probe-new-6");
        report("creat_plain", libc::creat(new.as_ptr(), 0o644));
        let new = path("probe-new-7");
        report(
            "mknod_setuid",
            libc::mknod(new.as_ptr(), libc::S_IFREG | 0o4755, 0),
        );
        let new = path("probe-new-8");
        report(
            "mknod_plain",
            libc::mknod(new.as_ptr(), libc::S_IFREG | 0o644, 0),
        );
        let new = path("probe-new-9");
        report(
            "mknodat_setuid",
            libc::mknodat(libc::AT_FDCWD, new.as_ptr(), libc::S_IFREG | 0o4755, 0),
        );
        // openat2(AT_FDCWD, path, NULL, 0): the kernel would refuse the size.
        let openat2 = libc::syscall(437, libc::AT_FDCWD, existing.as_ptr(), 0usize, 0usize);
        report("openat2", i32::try_from(openat2).unwrap_or(-1));
        #[cfg(target_arch = "x86_64")]
        {
            const X32: libc::c_long = 0x4000_0000;
            let x32 = libc::syscall(X32 | libc::SYS_chmod, existing.as_ptr(), 0o4755);
            report("x32_chmod_setuid", i32::try_from(x32).unwrap_or(-1));
        }
    }
}

/// True if and only if this kernel answers `int 0x80` (IA-32 emulation; a
/// kernel without it kills the caller with SIGSEGV), asked in a child.
#[cfg(target_arch = "x86_64")]
fn has_32_bit_gate() -> bool {
    // SAFETY: the child makes one system call through the gate and exits
    // without returning into the test runner; the parent waits for it.
    unsafe {
        match libc::fork() {
            0 => {
                int80(20, 0, 0, 0);
                libc::_exit(0)
            }
            -1 => false,
            child => {
                let mut status = 0;
                libc::waitpid(child, &raw mut status, 0) == child
                    && libc::WIFEXITED(status)
                    && libc::WEXITSTATUS(status) == 0
            }
        }
    }
}

/// A system call through the 32-bit gate (`int 0x80`), as a 32-bit program
/// makes it, with its fourth and fifth arguments zero: a negative errno on
/// failure, like the kernel's own return.
#[cfg(target_arch = "x86_64")]
fn int80(number: u32, first: u32, second: u32, third: u32) -> i32 {
    let result: i32;
    // SAFETY: the 32-bit calls made here read at most the unmapped address
    // 4096 (EFAULT) and write nothing; rbx, which LLVM reserves, is saved
    // and restored around the call.
    unsafe {
        std::arch::asm!(
            "xchg {first:e}, ebx",
            "int 0x80",
            "xchg {first:e}, ebx",
            first = inout(reg) first => _,
            inlateout("eax") number => result,
            in("ecx") second,
            in("edx") third,
            in("esi") 0,
            in("edi") 0,
        );
    }
    if result < 0 {
        // As libc would: -1 and errno.
        set_errno(-result);
        -1
    } else {
        result
    }
}

#[cfg(target_arch = "x86_64")]
fn set_errno(code: i32) {
    // SAFETY: errno is this thread's own.
    unsafe { *libc::__errno_location() = code };
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

fn report(name: &str, result: i32) {
    if result >= 0 {
        println!("{name}=ok");
    } else {
        println!("{name}={}", errno());
    }
}

/// Runs the probe under `tier` and returns what it found, by name.
fn probe_under(tier: Tier, network: bool) -> BTreeMap<String, String> {
    // Outside /tmp, so that bwrap's private /tmp does not hide it.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let workspace = dir.path().canonicalize().expect("canonical");
    // A copy in the workspace: the test binary may be under /tmp (a mutation
    // run's copy of the tree), which bwrap's private /tmp hides.
    let this = workspace.join("probe");
    std::fs::copy(std::env::current_exe().expect("this test binary"), &this).expect("copy");
    let confinement = Confinement::new(&workspace)
        .home(workspace.join("home"))
        .network(network);
    let runner = Runner::new()
        .env(EnvPolicy::scrubbed().set("SOCKET_PROBE", "1"))
        .policy(Policy::allowlist([this.to_string_lossy().into_owned()]))
        .isolation(Isolation::new(tier, confinement));
    let argv = [
        this.to_string_lossy().into_owned(),
        "--exact".to_owned(),
        "probe".to_owned(),
        "--nocapture".to_owned(),
        "--test-threads=1".to_owned(),
    ];
    let outcome = runner
        .run(&argv, &RunOptions::new(&workspace))
        .expect("the probe runs");
    assert!(outcome.is_success(), "{tier}: {}", outcome.to_model_text());
    outcome
        .output()
        .lines()
        .filter_map(|line| line.split_once('='))
        .map(|(name, result)| (name.to_owned(), result.to_owned()))
        .collect()
}

//! A one-node Slurm cluster on this machine, for the tests that submit to a real one:
//! `munged` (unless one already answers), `slurmctld` and `slurmd`, each in the
//! foreground as a child of the test, with a `slurm.conf`, state, spool and logs of the
//! test's own in a temporary directory and ports that were free. Dropping [`Slurm`] stops
//! the daemons it started, a panicking test's too.
//!
//! What it takes, found on Debian 12 (`slurm-wlm` 22.05, `munge` 0.5.15) as root without
//! systemd: `/run/munge` made and owned by `munge`, with `munged` run as that user (it
//! refuses root) on the key the package made; `ProctrackType=proctrack/linuxproc` and
//! `TaskPlugin=task/none`, so nothing needs cgroups; `SlurmUser=root`; this host's short
//! name as controller and node, both at 127.0.0.1 so no name lookup is needed.

use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

/// The socket `munge` clients (Slurm's daemons and commands) use by default.
const MUNGE_SOCKET: &str = "/run/munge/munge.socket.2";
/// The key Debian's `munge` package makes at installation.
const MUNGE_KEY: &str = "/etc/munge/munge.key";
/// How long the daemons have to come up, or to stop when asked.
const PATIENCE: Duration = Duration::from_secs(30);

/// A running one-node cluster; dropped, its daemons stop.
pub(crate) struct Slurm {
    /// Holds the configuration, state, spool and logs.
    dir: TempDir,
    /// `slurm.conf`, for `-f` and `SLURM_CONF`.
    conf: PathBuf,
    /// The daemons started here, in the order they stop: `slurmd`, `slurmctld`, `munged`.
    daemons: Vec<(&'static str, Child)>,
}

impl Slurm {
    /// Why this machine cannot run the cluster, if it cannot: not root, or a program
    /// missing.
    pub(crate) fn missing() -> Option<String> {
        let uid = Command::new("id").arg("-u").output().expect("id runs");
        if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
            return Some("Slurm's daemons are started as root here, and this is not root".into());
        }
        for program in [
            "munged",
            "slurmctld",
            "slurmd",
            "sbatch",
            "sinfo",
            "setpriv",
        ] {
            let found = Command::new("sh")
                .args(["-c", &format!("command -v {program}")])
                .stdout(Stdio::null())
                .status()
                .is_ok_and(|status| status.success());
            if !found {
                return Some(format!(
                    "{program} is not installed (apt-get install slurm-wlm munge)"
                ));
            }
        }
        None
    }

    /// Starts the cluster and waits until its node is idle.
    pub(crate) fn start() -> Slurm {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let mut slurm = Slurm {
            conf: dir.path().join("slurm.conf"),
            dir,
            daemons: Vec::new(),
        };
        if !munge_answers() {
            slurm.start_munged();
        }
        let host = short_hostname();
        fs::write(&slurm.conf, config(slurm.dir.path(), &host)).expect("write slurm.conf");
        for sub in ["state", "spool"] {
            fs::create_dir(slurm.dir.path().join(sub)).expect("a Slurm directory");
        }
        let conf = slurm.conf.clone();
        slurm.spawn(
            "slurmctld",
            Command::new("slurmctld")
                .args(["-D", "-i", "-f"])
                .arg(&conf),
        );
        slurm.spawn(
            "slurmd",
            Command::new("slurmd").args(["-D", "-f"]).arg(&conf),
        );
        slurm.wait_for("the node to be idle", |slurm| {
            let state = slurm
                .command("sinfo")
                .args(["-h", "-N", "-o", "%T"])
                .output();
            state.is_ok_and(|output| String::from_utf8_lossy(&output.stdout).trim() == "idle")
        });
        slurm
    }

    /// `program` (a Slurm command) run against this cluster.
    pub(crate) fn command(&self, program: &str) -> Command {
        let mut command = Command::new(program);
        command.env("SLURM_CONF", &self.conf);
        command
    }

    /// `slurm.conf`.
    pub(crate) fn conf(&self) -> &Path {
        &self.conf
    }

    /// The daemons' logs, for a failure's message.
    pub(crate) fn logs(&self) -> String {
        let mut text = String::new();
        for name in ["munged.out", "slurmctld.out", "slurmd.out"] {
            if let Ok(log) = fs::read_to_string(self.dir.path().join(name)) {
                let tail: Vec<&str> = log.lines().rev().take(30).collect();
                text.push_str(&format!("--- {name}\n"));
                for line in tail.into_iter().rev() {
                    text.push_str(line);
                    text.push('\n');
                }
            }
        }
        text
    }

    /// `munged` in the foreground as the `munge` user, with its socket directory made.
    fn start_munged(&mut self) {
        let run = Path::new(MUNGE_SOCKET)
            .parent()
            .expect("the socket has a directory");
        fs::create_dir_all(run).expect("make /run/munge");
        chown_to_munge(run);
        if !Path::new(MUNGE_KEY).exists() {
            let made = Command::new("mungekey")
                .args(["--create", "--keyfile", MUNGE_KEY])
                .status()
                .expect("mungekey runs");
            assert!(made.success(), "mungekey --create failed");
            chown_to_munge(Path::new(MUNGE_KEY));
        }
        // setpriv execs munged, so the child's pid is the daemon's (runuser would fork).
        self.spawn(
            "munged",
            Command::new("setpriv")
                .args(["--reuid=munge", "--regid=munge", "--init-groups"])
                .args(["munged", "--foreground"]),
        );
        self.wait_for("munged to answer", |_| munge_answers());
    }

    /// Starts `command` as the daemon `name`, its output in `NAME.out`.
    fn spawn(&mut self, name: &'static str, command: &mut Command) {
        let log = fs::File::create(self.dir.path().join(format!("{name}.out"))).expect("a log");
        let child = command
            .env("SLURM_CONF", &self.conf)
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("the log again"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start {name}: {error}"));
        self.daemons.insert(0, (name, child));
    }

    /// Waits for `ready`, at most [`PATIENCE`]; panics with the logs after, or when a
    /// daemon has died.
    fn wait_for(&mut self, what: &str, ready: impl Fn(&Slurm) -> bool) {
        let deadline = Instant::now() + PATIENCE;
        while !ready(self) {
            let ended = self.daemons.iter_mut().find_map(|(name, child)| {
                child
                    .try_wait()
                    .ok()
                    .flatten()
                    .map(|status| (*name, status))
            });
            if let Some((name, status)) = ended {
                panic!(
                    "{name} ended ({status}) while waiting for {what}\n{}",
                    self.logs()
                );
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}\n{}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Slurm {
    fn drop(&mut self) {
        for (_, child) in &mut self.daemons {
            // A daemon that already ended has nothing to stop.
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
        }
        let deadline = Instant::now() + PATIENCE;
        for (_, child) in &mut self.daemons {
            while matches!(child.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// `slurm.conf` for one node, `host`, with the controller on it, everything Slurm keeps
/// under `dir`, and two ports that were free.
fn config(dir: &Path, host: &str) -> String {
    let dir = dir.display();
    let (controller, node) = (free_port(), free_port());
    format!(
        "\
ClusterName=harness-test
SlurmctldHost={host}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort={controller}
SlurmdPort={node}
AuthType=auth/munge
StateSaveLocation={dir}/state
SlurmdSpoolDir={dir}/spool
SlurmctldPidFile={dir}/slurmctld.pid
SlurmdPidFile={dir}/slurmd.pid
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
MailProg=/bin/true
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
NodeName={host} NodeAddr=127.0.0.1 CPUs=2 RealMemory=500 State=UNKNOWN
PartitionName=test Nodes={host} Default=YES MaxTime=INFINITE State=UP
"
    )
}

/// True if and only if a `munged` answers on the default socket.
fn munge_answers() -> bool {
    Command::new("munge")
        .arg("-n")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

fn chown_to_munge(path: &Path) {
    let changed = Command::new("chown")
        .arg("munge:munge")
        .arg(path)
        .status()
        .expect("chown runs");
    assert!(changed.success(), "chown munge {}", path.display());
}

/// This host's short name, as slurmd finds its node by.
fn short_hostname() -> String {
    let output = Command::new("hostname")
        .arg("-s")
        .output()
        .expect("hostname runs");
    let name = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    assert!(!name.is_empty(), "hostname -s printed nothing");
    name
}

/// A TCP port nothing listened on a moment ago.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}

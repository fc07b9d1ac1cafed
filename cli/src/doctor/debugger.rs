//! A repro's run by hand: `cargo probtest repro --print` writes it as one shell line to paste
//! (its directory, environment, preload library, binary and libtest arguments), and
//! `--debugger gdb|lldb|rr` starts it under that debugger, the preload library given to the
//! test process alone.

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use clap::ValueEnum;

use crate::doctor::axes::Cpus;
use crate::doctor::repro::Repro;
use crate::doctor::runner::{first_cpu, pin_to_one_cpu, Runner};
use crate::error::Error;

/// A debugger `--debugger` starts the run under.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Debugger {
    /// `rust-gdb`, gdb with Rust's pretty printers.
    Gdb,
    /// `rust-lldb`, lldb with Rust's pretty printers.
    Lldb,
    /// `rr record`, for a replay with `rr replay`.
    Rr,
}

impl Debugger {
    /// The debugger's program in `search` (a `PATH`), or why it cannot start the run here.
    pub fn find(self, search: &OsStr) -> Result<PathBuf, String> {
        let (program, needs) = match self {
            Debugger::Gdb => ("rust-gdb", Some("gdb")),
            Debugger::Lldb => ("rust-lldb", Some("lldb")),
            Debugger::Rr => ("rr", None),
        };
        let path = find_on_path(program, search).ok_or(format!("{program} not found on PATH"))?;
        if let Some(needs) = needs {
            find_on_path(needs, search)
                .ok_or(format!("{program} needs {needs}, which is not on PATH"))?;
        }
        if self == Debugger::Rr {
            rr_can_record()?;
        }
        Ok(path)
    }

    /// [`Debugger::find`] in this process's `PATH`.
    pub fn check(self) -> Result<PathBuf, String> {
        self.find(&std::env::var_os("PATH").unwrap_or_default())
    }
}

/// One run of a test binary as a user makes it: what [`crate::doctor::runner::Runner`] would
/// run, read off its command.
#[derive(Clone, Debug, PartialEq)]
pub struct Invocation {
    /// Where it runs.
    pub dir: PathBuf,
    /// Whether the environment is cleared before `env` is set (a scrubbed environment).
    pub clear: bool,
    /// Variables set (`Some`) or removed (`None`), `LD_PRELOAD` among them.
    pub env: Vec<(OsString, Option<OsString>)>,
    /// The CPU it is pinned to, if any.
    pub cpu: Option<usize>,
    /// The test binary.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
}

impl Invocation {
    /// The invocation of `command`, pinned to the first CPU when `one_cpu`. A variable the
    /// command removes is kept only where this process has it: elsewhere, removing it changes
    /// nothing and would only lengthen the line.
    pub fn of(command: &Command, clear: bool, one_cpu: bool) -> Invocation {
        let env = command
            .get_envs()
            .filter(|(name, value)| value.is_some() || std::env::var_os(name).is_some())
            .map(|(name, value)| (name.to_os_string(), value.map(OsStr::to_os_string)))
            .collect();
        Invocation {
            dir: command
                .get_current_dir()
                .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
            clear,
            env,
            cpu: one_cpu.then(first_cpu).flatten(),
            program: PathBuf::from(command.get_program()),
            args: command.get_args().map(OsStr::to_os_string).collect(),
        }
    }

    /// The run as one line for a POSIX shell: `cd DIR && [taskset -c N] env [-i] [-u NAME]...
    /// [NAME=VALUE]... BINARY ARGS...`, every word quoted where the shell would read it
    /// otherwise. An error names a word that is not UTF-8, which no shell line can carry here.
    pub fn shell_line(&self) -> Result<String, String> {
        let mut words = vec!["cd".to_string(), quote(self.dir.as_os_str())?, "&&".into()];
        if let Some(cpu) = self.cpu {
            words.extend(["taskset".into(), "-c".into(), cpu.to_string()]);
        }
        words.push("env".into());
        if self.clear {
            words.push("-i".into());
        }
        for (name, value) in &self.env {
            if value.is_none() {
                words.extend(["-u".to_string(), quote(name)?]);
            }
        }
        for (name, value) in &self.env {
            if let Some(value) = value {
                let mut pair = name.clone();
                pair.push("=");
                pair.push(value);
                words.push(quote(&pair)?);
            }
        }
        words.push(quote(self.program.as_os_str())?);
        for arg in &self.args {
            words.push(quote(arg)?);
        }
        Ok(words.join(" "))
    }

    /// The preload library the run loads, if any.
    pub fn preload(&self) -> Option<&OsStr> {
        self.env
            .iter()
            .find(|(name, _)| name == "LD_PRELOAD")
            .and_then(|(_, value)| value.as_deref())
    }

    /// The command that starts the run under `debugger`, with `extra` arguments for the
    /// debugger before the test's; an error when the debugger is not here to start.
    ///
    /// The debugger is given the test's environment but for `LD_PRELOAD`, which goes to the
    /// test process alone (gdb's `set environment`, lldb's `target.env-vars`, rr's `--env`),
    /// so that the debugger's own clocks, entropy and network are real.
    pub fn under(&self, debugger: Debugger, extra: &[OsString]) -> Result<Command, String> {
        self.under_path(
            debugger,
            extra,
            &std::env::var_os("PATH").unwrap_or_default(),
        )
    }

    /// [`Invocation::under`], the debugger looked for in `search` (a `PATH`).
    fn under_path(
        &self,
        debugger: Debugger,
        extra: &[OsString],
        search: &OsStr,
    ) -> Result<Command, String> {
        let path = debugger.find(search)?;
        let mut command = Command::new(path);
        command.current_dir(&self.dir);
        if self.clear {
            command.env_clear();
        }
        for (name, value) in &self.env {
            match value {
                _ if name == "LD_PRELOAD" => {}
                Some(value) => {
                    command.env(name, value);
                }
                None => {
                    command.env_remove(name);
                }
            }
        }
        // The debugger's own preload, if this process has one, is not the test's.
        command.env_remove("LD_PRELOAD");
        if self.cpu.is_some() {
            // Inherited by the test process: the debugger shares its one CPU.
            pin_to_one_cpu(&mut command);
        }
        let preload = self.preload();
        match debugger {
            Debugger::Gdb => {
                command.args(["-q", "-ex", "set confirm off"]);
                // Started through no shell, which would load the library too.
                command.args(["-ex", "set startup-with-shell off"]);
                if let Some(library) = preload {
                    let mut set = OsString::from("set environment LD_PRELOAD=");
                    set.push(library);
                    command.arg("-ex").arg(set);
                }
                command.args(extra).arg("--args");
            }
            Debugger::Lldb => {
                if let Some(library) = preload {
                    let mut set = OsString::from("settings set target.env-vars LD_PRELOAD=");
                    set.push(library);
                    command.arg("-o").arg(set);
                }
                command.args(extra).arg("--");
            }
            Debugger::Rr => {
                command.arg("record");
                if let Some(library) = preload {
                    // rr adds its own library to the tracee's LD_PRELOAD, beside this one.
                    let mut set = OsString::from("--env=LD_PRELOAD=");
                    set.push(library);
                    command.arg(set);
                }
                command.args(extra);
            }
        }
        command.arg(&self.program).args(&self.args);
        Ok(command)
    }
}

/// `cargo probtest repro --print` or `--debugger`: the run of `repro` by `runner`, its files
/// in `<target>/probtest/repro/`, printed (exit 0) or run under the debugger (its exit code),
/// with notes on stderr of what the line does not do as `cargo probtest repro` would.
pub fn by_hand(
    repro: &Repro,
    runner: &Runner,
    debugger: Option<(Debugger, &[OsString])>,
) -> Result<i32, Error> {
    let dir = runner.binary.target_dir.join("probtest").join("repro");
    std::fs::create_dir_all(&dir)
        .map_err(|error| Error::about(dir.display(), format!("cannot create ({error})")))?;
    let plan = &repro.plan;
    let command = runner.user_command(plan, &dir);
    let invocation = Invocation::of(
        &command,
        plan.perturbation.scrubbed_env,
        plan.perturbation.cpus == Some(Cpus::One),
    );
    let mut notes = Vec::new();
    if let Some(library) = invocation.preload() {
        notes.push(format!(
            "the preload library is {} (written by cargo-probtest; `cargo clean` removes it)",
            Path::new(library).display()
        ));
    }
    notes.push(format!(
        "the run's session, report and temporary files go to {}",
        dir.display()
    ));
    if let Some(attempts) = repro.attempts.filter(|attempts| *attempts > 1) {
        notes.push(format!(
            "a race fails in some runs only: this runs the test once per invocation, where              `cargo probtest repro` runs it up to {attempts} times until it fails"
        ));
    }
    if plan.perturbation.stress {
        notes.push(
            "the busy threads beside the run are cargo probtest's own: this runs without them"
                .into(),
        );
    }
    if runner.row.is_some() {
        notes.push(format!(
            "a probtest run records its outcome in {}: a gated case's failing run still passes              its test item",
            dir.join("report.json").display()
        ));
    }
    let mut stderr = std::io::stderr().lock();
    let Some((debugger, extra)) = debugger else {
        let line = invocation
            .shell_line()
            .map_err(|problem| Error::about("--print", problem))?;
        println!("{line}");
        for note in notes {
            let _ = writeln!(stderr, "note: {note}");
        }
        return Ok(0);
    };
    let mut command = invocation
        .under(debugger, extra)
        .map_err(|problem| Error::about("--debugger", problem))?;
    for note in notes {
        let _ = writeln!(stderr, "note: {note}");
    }
    drop(stderr);
    let status = command.status().map_err(|error| {
        Error::about(
            "--debugger",
            format!(
                "cannot start {}: {error}",
                command.get_program().to_string_lossy()
            ),
        )
    })?;
    Ok(status.code().unwrap_or(1))
}

/// `word` as a POSIX shell reads it back: as it is when every character is one no shell
/// treats specially, else in single quotes (a quote inside as `'\''`).
pub fn quote(word: &OsStr) -> Result<String, String> {
    let text = word
        .to_str()
        .ok_or_else(|| format!("{} is not UTF-8", word.to_string_lossy()))?;
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-+=:,./@%".contains(c));
    Ok(if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    })
}

/// The first executable file named `name` in a directory of `search` (a `PATH`).
fn find_on_path(name: &str, search: &OsStr) -> Option<PathBuf> {
    std::env::split_paths(search)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

/// Where Linux says whether this user may read the CPU's performance counters.
const PERF_PARANOID: &str = "/proc/sys/kernel/perf_event_paranoid";

/// Whether rr can record here: it counts retired branches with the CPU's performance counters,
/// which Linux refuses to users above level 1 (and a VM without a virtual PMU has none, which
/// rr itself reports).
fn rr_can_record() -> Result<(), String> {
    let Ok(text) = std::fs::read_to_string(PERF_PARANOID) else {
        return Ok(());
    };
    match text.trim().parse::<i32>() {
        Ok(level) if level > 1 => Err(format!(
            "rr cannot record here: {PERF_PARANOID} is {level}, and rr needs 1 or less for the \
             CPU's performance counters (`sudo sysctl kernel.perf_event_paranoid=1`)"
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn invocation() -> Invocation {
        Invocation {
            dir: PathBuf::from("/work/my crate"),
            clear: false,
            env: vec![
                ("NEXTEST".into(), None),
                ("PROBTEST_DOCTOR_TIME".into(), Some("1773146099.990".into())),
                ("TZ".into(), Some("America/New_York".into())),
                ("LD_PRELOAD".into(), Some("/t/probtest/doctor/p.so".into())),
            ],
            cpu: None,
            program: PathBuf::from("/t/debug/deps/clock-0a1b"),
            args: vec![
                "--exact".into(),
                "it's::a test".into(),
                "--test-threads=1".into(),
                "--nocapture".into(),
            ],
        }
    }

    #[test]
    fn words_the_shell_would_read_otherwise_are_single_quoted() {
        let cases = [
            ("plain/path-1.0_x", "plain/path-1.0_x"),
            ("", "''"),
            ("two words", "'two words'"),
            ("it's", r"'it'\''s'"),
            ("$HOME", "'$HOME'"),
            ("`id`", "'`id`'"),
            ("a;b", "'a;b'"),
            ("*", "'*'"),
            ("~user", "'~user'"),
            ("line\nbreak", "'line\nbreak'"),
            ("NAME=va lue", "'NAME=va lue'"),
        ];
        for (word, quoted) in cases {
            assert_eq!(quote(OsStr::new(word)).as_deref(), Ok(quoted), "{word:?}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_word_that_is_not_utf8_is_refused_by_name() {
        use std::os::unix::ffi::OsStrExt;
        let error = quote(OsStr::from_bytes(b"bad\xff")).expect_err("not UTF-8");
        assert!(error.ends_with("is not UTF-8"), "{error}");
    }

    #[test]
    fn the_line_changes_directory_then_runs_the_binary_under_env() {
        assert_eq!(
            invocation().shell_line().as_deref(),
            Ok(
                "cd '/work/my crate' && env -u NEXTEST PROBTEST_DOCTOR_TIME=1773146099.990 \
                TZ=America/New_York LD_PRELOAD=/t/probtest/doctor/p.so /t/debug/deps/clock-0a1b \
                --exact 'it'\\''s::a test' --test-threads=1 --nocapture"
            )
        );
        let pinned = Invocation {
            clear: true,
            cpu: Some(3),
            ..invocation()
        };
        let line = pinned.shell_line().expect("a line");
        assert!(
            line.starts_with("cd '/work/my crate' && taskset -c 3 env -i -u NEXTEST "),
            "{line}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn the_line_reads_back_as_the_same_words_in_a_shell() {
        let invocation = Invocation {
            dir: std::env::temp_dir(),
            env: vec![("ODD".into(), Some("a b'c$x".into()))],
            program: PathBuf::from("sh"),
            args: vec![
                "-c".into(),
                r#"printf '[%s]' "$ODD" "$@""#.into(),
                "sh".into(),
                "it's $x".into(),
                "a\"b\\c".into(),
                "".into(),
            ],
            ..invocation()
        };
        let line = invocation.shell_line().expect("a line");
        let output = Command::new("sh")
            .args(["-c", &line])
            .output()
            .expect("sh runs");
        assert_eq!(
            String::from_utf8_lossy(&output.stdout),
            "[a b'c$x][it's $x][a\"b\\c][]",
            "{line}"
        );
    }

    /// A directory of its own holding executable files named `names`, for a `PATH`.
    #[cfg(unix)]
    fn bin_dir(test: &str, names: &[&str]) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("probtest-bin-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a bin directory");
        for name in names {
            let path = dir.join(name);
            std::fs::write(&path, "#!/bin/sh\n").expect("a script");
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                .expect("executable");
        }
        dir
    }

    #[cfg(unix)]
    #[test]
    fn a_debugger_that_is_not_on_path_is_named() {
        let none = bin_dir("none", &[]);
        let proxy = bin_dir("proxy", &["rust-gdb", "rust-lldb"]);
        for (debugger, search, error) in [
            (Debugger::Gdb, &none, "rust-gdb not found on PATH"),
            (Debugger::Lldb, &none, "rust-lldb not found on PATH"),
            (Debugger::Rr, &none, "rr not found on PATH"),
            (
                Debugger::Gdb,
                &proxy,
                "rust-gdb needs gdb, which is not on PATH",
            ),
            (
                Debugger::Lldb,
                &proxy,
                "rust-lldb needs lldb, which is not on PATH",
            ),
        ] {
            let under = invocation().under_path(debugger, &[], search.as_os_str());
            assert_eq!(under.err().as_deref(), Some(error));
        }
        for dir in [none, proxy] {
            let _ = std::fs::remove_dir_all(dir);
        }
    }

    #[cfg(unix)]
    #[test]
    fn gdb_gives_the_preload_library_to_the_test_process_alone() {
        let bin = bin_dir("gdb", &["rust-gdb", "gdb"]);
        let extra = ["-batch".into(), "-ex".into(), "run".into()];
        let command = invocation()
            .under_path(Debugger::Gdb, &extra, bin.as_os_str())
            .expect("gdb is there");
        let args: Vec<&OsStr> = command.get_args().collect();
        assert_eq!(
            args,
            [
                "-q",
                "-ex",
                "set confirm off",
                "-ex",
                "set startup-with-shell off",
                "-ex",
                "set environment LD_PRELOAD=/t/probtest/doctor/p.so",
                "-batch",
                "-ex",
                "run",
                "--args",
                "/t/debug/deps/clock-0a1b",
                "--exact",
                "it's::a test",
                "--test-threads=1",
                "--nocapture",
            ]
            .map(OsStr::new)
        );
        let env: Vec<(&OsStr, Option<&OsStr>)> = command.get_envs().collect();
        assert!(env.contains(&(OsStr::new("TZ"), Some(OsStr::new("America/New_York")))));
        assert!(env.contains(&(OsStr::new("LD_PRELOAD"), None)), "{env:?}");
        assert!(env.contains(&(OsStr::new("NEXTEST"), None)), "{env:?}");
        assert_eq!(command.get_current_dir(), Some(Path::new("/work/my crate")));
        let _ = std::fs::remove_dir_all(bin);
    }
}

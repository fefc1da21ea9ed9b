//! `scripts/prerequisites.sh`, the install step of the README's two commands (and of `.ci/run`),
//! on machines that lack a package: stand-ins for `id`, `dpkg-query`, `apt-get` and `rustup` on
//! PATH play the machine and record every call. Without root nothing is installed: one message
//! names the exact `apt-get` command and the script exits 2, before any build (`demo.sh` and
//! `test.sh` stop there too); as root the missing packages, and only those, are installed.
//! Where this test runs as root, the no-root path also runs as the real user `nobody` (setpriv).

#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// A directory of stand-in programs; `log` receives one line per apt-get or rustup call.
struct FakeSystem {
    dir: PathBuf,
    log: PathBuf,
}

impl FakeSystem {
    fn new(tag: &str, fake_id: bool) -> FakeSystem {
        let dir = std::env::temp_dir().join(format!("plenum-prereq-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("calls.log");
        let write = |name: &str, body: &str| {
            let p = dir.join(name);
            std::fs::write(&p, format!("#!/bin/bash\n{body}\n")).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        };
        if fake_id {
            write("id", r#"[ "$1" = -u ] && echo "${FAKE_UID:-1000}""#);
        }
        // dpkg-query -W -f='${Status}' PKG: installed unless PKG is in FAKE_MISSING.
        write(
            "dpkg-query",
            r#"pkg="${@: -1}"; for m in $FAKE_MISSING; do [ "$m" = "$pkg" ] && exit 1; done
printf 'install ok installed'"#,
        );
        write("apt-get", r#"echo "apt-get $*" >> "$FAKE_LOG""#);
        write(
            "rustup",
            r#"if [ "$1 $2" = "target list" ]; then echo x86_64-pc-windows-gnu; else echo "rustup $*" >> "$FAKE_LOG"; fi"#,
        );
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        FakeSystem { dir, log }
    }

    fn run(&self, script: &str, args: &[&str], uid: &str, missing: &str) -> (Output, f64) {
        let mut cmd = Command::new("bash");
        cmd.arg(workspace().join(script))
            .args(args)
            .env("PATH", format!("{}:/usr/bin:/bin", self.dir.display()))
            .env("FAKE_UID", uid)
            .env("FAKE_MISSING", missing)
            .env("FAKE_LOG", &self.log);
        run(cmd)
    }

    fn calls(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for FakeSystem {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn run(mut cmd: Command) -> (Output, f64) {
    let clock = Instant::now();
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    let secs = clock.elapsed().as_secs_f64();
    println!(
        "$ {:?} {:?} → {} in {secs:.2} s\n{}{}",
        cmd.get_program(),
        cmd.get_args().collect::<Vec<_>>(),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out, secs)
}

#[test]
fn without_root_a_missing_package_stops_at_once_with_the_apt_command() {
    let sys = FakeSystem::new("noroot", true);
    for (script, args, missing) in [
        ("scripts/prerequisites.sh", &["demo"][..], "libclang-dev"),
        (
            "scripts/prerequisites.sh",
            &["test"][..],
            "libclang-dev wine valgrind",
        ),
        ("scripts/demo.sh", &[][..], "libclang-dev"),
        ("scripts/test.sh", &[][..], "gcc-mingw-w64-x86-64 libtbb12"),
    ] {
        let (out, secs) = sys.run(script, args, "1000", missing);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{script}: {err}");
        // Debian's order of the script's own list, each missing package named once.
        let mut want: Vec<&str> = missing.split(' ').collect();
        let order = [
            "libclang-dev",
            "python3-venv",
            "gcc-mingw-w64-x86-64",
            "valgrind",
            "libtbb12",
            "wine",
            "wine64",
        ];
        want.sort_by_key(|p| order.iter().position(|o| o == p));
        let command = format!("apt-get install -y {}", want.join(" "));
        assert!(
            err.contains(&command),
            "{script}: expected `{command}` in {err}"
        );
        assert_eq!(sys.calls(), "", "{script}: nothing may be installed");
        assert!(
            secs < 10.0,
            "{script}: {secs} s: it must stop before any build"
        );
        // test.sh names its first stage (scripts/stage-times.sh) and must start no other.
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout
                .lines()
                .all(|l| l.is_empty() || l.starts_with("== prerequisites")),
            "{script}: nothing else ran, but stdout is {stdout:?}"
        );
    }
}

#[test]
fn as_root_only_the_missing_packages_are_installed() {
    let sys = FakeSystem::new("root", true);
    let (out, _) = sys.run(
        "scripts/prerequisites.sh",
        &["test"],
        "0",
        "valgrind wine64",
    );
    assert!(out.status.success());
    let calls = sys.calls();
    assert_eq!(
        calls, "apt-get update -qq\napt-get install -y -qq valgrind wine64\n",
        "{calls}"
    );
    // Nothing missing: nothing run, as root or not.
    for uid in ["0", "1000"] {
        let sys = FakeSystem::new(&format!("complete-{uid}"), true);
        for mode in ["demo", "test"] {
            let (out, _) = sys.run("scripts/prerequisites.sh", &[mode], uid, "");
            assert!(out.status.success());
        }
        assert_eq!(sys.calls(), "");
    }
    // A mode it does not know.
    let (out, _) = sys.run("scripts/prerequisites.sh", &["deploy"], "0", "");
    assert_eq!(out.status.code(), Some(2));
}

/// The same as a real user without root (no stand-in for `id`), where this test can switch to
/// one (it runs as root and has setpriv).
#[test]
fn as_the_user_nobody_nothing_is_installed() {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    let setpriv = Command::new("setpriv").arg("--version").output().is_ok();
    if !root || !setpriv {
        println!(
            "SKIPPED: needs root and setpriv to become nobody (root {root}, setpriv {setpriv})"
        );
        return;
    }
    let sys = FakeSystem::new("nobody", false);
    let log = sys.log.clone();
    std::fs::write(&log, "").unwrap();
    std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o666)).unwrap();
    // The script is copied where nobody can read it.
    let script = sys.dir.join("prerequisites.sh");
    std::fs::copy(workspace().join("scripts/prerequisites.sh"), &script).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut cmd = Command::new("setpriv");
    cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups", "bash"])
        .arg(&script)
        .arg("demo")
        .env("PATH", format!("{}:/usr/bin:/bin", sys.dir.display()))
        .env("FAKE_MISSING", "libclang-dev")
        .env("FAKE_LOG", &log)
        .env("HOME", &sys.dir);
    let (out, _) = run(cmd);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("apt-get install -y libclang-dev"), "{err}");
    assert_eq!(sys.calls(), "");
}

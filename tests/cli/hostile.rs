//! Hostile inputs through the command line (issue 27): each ends in bounded time with a clear
//! error and the exit status docs/checks.md gives, or with results that follow their definition.
//! Classes: 1 the output grid, 5 a time axis that cannot resolve the step, 7 the number of
//! output rows, 17 exit statuses, the summary's rc after a stop and the position of a key nested
//! too deep. The size and kind of a model file (and of every other input): `inputs.rs`.

use crate::common::{Csv, plenum_command as plenum, repo_path};

fn temp_dir(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("plenum-hostile-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn model(name: &str) -> String {
    repo_path(&format!("models/{name}.toml"))
        .display()
        .to_string()
}

/// `plenum run blowdown --csv` with overrides: (exit status, CSV times, stdout, stderr).
fn run_times(tag: &str, set: &[&str]) -> (Option<i32>, Vec<f64>, String, String) {
    let dir = temp_dir(tag);
    let csv = dir.join("out.csv");
    let mut cmd = plenum();
    cmd.args(["run", &model("blowdown"), "--quiet", "--csv"])
        .arg(&csv);
    for s in set {
        cmd.args(["--set", s]);
    }
    let out = cmd.output().unwrap();
    let times = if csv.exists() {
        Csv::read(&csv).column("time")
    } else {
        Vec::new()
    };
    std::fs::remove_dir_all(&dir).ok();
    (
        out.status.code(),
        times,
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The grid by its definition, written out: t0 + k·dt for every k ≥ 1 with t0 + k·dt below
/// t_end (by more than round-off), then t_end.
fn expected_grid(t0: f64, t_end: f64, dt: f64) -> Vec<f64> {
    let mut v = vec![t0];
    let mut k = 1.0;
    while t_end - (t0 + k * dt) > 1e-9 * dt {
        v.push(t0 + k * dt);
        k += 1.0;
    }
    v.push(t_end);
    v
}

/// Class 1. An interval that does not divide the span gives every multiple below t_end plus
/// t_end (0.7 over 3 s: 2.8 was lost; 0.03 over 0.1 s: 0.09 was lost); one longer than the
/// span gives the start and the end (7 s over 3 s: the run ended at 0 after 0 steps, exit 0).
#[test]
fn output_times_are_every_multiple_below_the_end_then_the_end() {
    for (tag, t_end, dt) in [("g07", 3.0, 0.7), ("g003", 0.1, 0.03), ("g7", 3.0, 7.0)] {
        let set = [
            format!("solver.output_interval={dt}"),
            format!("solver.t_end={t_end}"),
        ];
        let set: Vec<&str> = set.iter().map(String::as_str).collect();
        let (code, times, stdout, stderr) = run_times(tag, &set);
        let want = expected_grid(0.0, t_end, dt);
        println!("interval {dt} over {t_end} s: {times:?} (definition: {want:?})");
        assert_eq!(code, Some(0), "{stderr}");
        assert_eq!(times, want);
        let final_time = stdout
            .lines()
            .find(|l| l.starts_with("time "))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|x| x.parse::<f64>().ok());
        assert_eq!(final_time, Some(t_end), "{stdout}");
    }
}

/// Class 1, the sensitivity driver: its samples are the CLI's rows (one shared grid), here at
/// an interval that does not divide the span.
#[test]
fn the_sensitivity_driver_samples_the_same_grid() {
    let mut spec = crate::common::shipped("two_tanks");
    spec.solver.output_interval = Some(0.7);
    spec.solver.t_end = 3.0;
    let run = plenum::sensitivity::run(&spec, Some(&[])).unwrap();
    let times: Vec<f64> = run.samples.iter().map(|s| s.t_s).collect();
    let want = expected_grid(spec.solver.t_start, 3.0, 0.7);
    println!("sensitivity samples {times:?}, definition {want:?}");
    assert_eq!(times, want);
}

/// Class 7. A tiny interval is refused before the run with an error naming the limit (it
/// reached 2.2 GB in 10 s); one the time axis cannot resolve too. Exit status 2, no CSV row.
#[test]
fn too_many_output_rows_are_refused_before_the_run() {
    for (tag, dt, needle) in [
        ("rows", "1e-9", "limit of 1000000"),
        ("rows_res", "1e-300", "resolution"),
    ] {
        let (code, times, _, stderr) = run_times(tag, &[&format!("solver.output_interval={dt}")]);
        println!(
            "output_interval = {dt}: exit {code:?}, {} rows; {stderr}",
            times.len()
        );
        assert_eq!(code, Some(2));
        assert!(stderr.contains(needle), "{stderr}");
        assert!(times.is_empty());
    }
}

/// Class 5. A start so late that t + h == t (1e15 s: the 1e-4 s step and the 0.01 s interval
/// are below 100·ε·|t| = 22 s there) is refused with a clear error, not run with duplicate times.
#[test]
fn a_time_axis_that_cannot_resolve_the_steps_is_refused() {
    let t0 = 1e15_f64;
    println!(
        "1e15 + 0.01 - 1e15 = {} (the time axis cannot resolve 0.01 s there)",
        (t0 + 0.01) - t0
    );
    let (code, times, _, stderr) = run_times(
        "late",
        &["solver.t_start=1e15", "solver.t_end=1000000000000003"],
    );
    println!("exit {code:?}: {stderr}");
    assert_eq!(code, Some(2));
    assert!(stderr.contains("resolution"), "{stderr}");
    assert!(times.is_empty());
    // The fixed step alone, with an interval the axis does resolve.
    let (code, _, _, stderr) = run_times(
        "late_step",
        &[
            "solver.t_start=1e15",
            "solver.t_end=1000000000001000",
            "solver.output_interval=100",
        ],
    );
    println!("exit {code:?}: {stderr}");
    assert_eq!(code, Some(2));
    assert!(stderr.contains("[solver] step"), "{stderr}");
}

/// The exit status of each kind of ending, as docs/checks.md states it ("Exit status of
/// `plenum run`: 0 fine …, 1 I/O or usage error …, 2 invalid model …, 3 stopped …"): the
/// numbers are read from the document and compared with the program's.
#[test]
fn exit_statuses_are_the_documented_ones() {
    let doc = include_str!("../../docs/checks.md");
    let at = doc
        .find("Exit status of `plenum run`:")
        .expect("docs/checks.md states the exit statuses");
    let paragraph = doc[at..].split("\n\n").next().unwrap();
    let line = &paragraph.split_whitespace().collect::<Vec<_>>().join(" ");
    let status_of = |what: &str| -> i32 {
        let at = line
            .find(what)
            .unwrap_or_else(|| panic!("`{what}` in {line}"));
        let before = line[..at].trim_end();
        let n = before.rsplit([' ', ':']).next().unwrap();
        n.parse()
            .unwrap_or_else(|_| panic!("no number before `{what}`"))
    };
    let (fine, io, invalid, stopped) = (
        status_of("fine"),
        status_of("I/O or usage error"),
        status_of("invalid model"),
        status_of("stopped by check"),
    );
    println!(
        "documented: fine {fine}, I/O or usage {io}, invalid model {invalid}, stopped {stopped}"
    );
    let dir = temp_dir("exit");
    let bad = dir.join("bad.toml");
    std::fs::write(
        &bad,
        std::fs::read_to_string(model("blowdown"))
            .unwrap()
            .replace("volume = 1e-3", "volume = -1e-3"),
    )
    .unwrap();
    let missing = dir.join("missing.toml");
    let status = |args: &[&str]| plenum().args(args).output().unwrap().status.code().unwrap();
    let (blowdown, projectile) = (model("blowdown"), model("projectile"));
    let cases: [(&str, Vec<&str>, i32); 8] = [
        ("a fine run", vec!["run", &blowdown, "-q"], fine),
        ("an unknown option", vec!["run", "--no-such-option"], io),
        ("no subcommand", vec![], io),
        (
            "a missing file",
            vec!["check", missing.to_str().unwrap()],
            io,
        ),
        ("a directory", vec!["check", dir.to_str().unwrap()], io),
        (
            "an invalid model",
            vec!["check", bad.to_str().unwrap()],
            invalid,
        ),
        (
            "an invalid --set",
            vec!["run", &blowdown, "--set", "nozzle.area=-1"],
            invalid,
        ),
        (
            "a run stopped by check 10",
            vec!["run", &projectile, "-q", "--set", "barrel.pressure=100"],
            stopped,
        ),
    ];
    for (what, args, want) in cases {
        let got = status(&args);
        println!("{what}: exit {got} (documented {want})");
        assert_eq!(got, want, "{what}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Class 17. After a run stopped by a check, the summary's rc is that check's code (it showed
/// the last good row's 0.0).
#[test]
fn the_summary_shows_the_code_that_stopped_the_run() {
    let out = plenum()
        .args([
            "run",
            &model("projectile"),
            "-q",
            "--set",
            "barrel.pressure=100",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let rc = stdout
        .lines()
        .find(|l| l.split_whitespace().next() == Some("rc"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|x| x.parse::<f64>().ok());
    println!("rc in the summary: {rc:?}; {stderr}");
    assert_eq!(rc, Some(10.0));
    assert!(stderr.contains("run-time check 10"), "{stderr}");
}

/// Class 17. A dotted key of 100,000 parts is refused at its own line, quickly (the parser
/// bounds its recursion); it was reported at 1:1.
#[test]
fn a_key_nested_too_deep_is_reported_where_it_is() {
    let dir = temp_dir("deep");
    let path = dir.join("deep.toml");
    let key = vec!["a"; 100_000].join(".");
    std::fs::write(
        &path,
        format!(
            "[model]\nname = \"x\"\n[solver]\nmethod = \"rk4\"\nstep = 1e-4\nt_end = 1.0\n\n{key} = 1\n"
        ),
    )
    .unwrap();
    let out = plenum().args(["check"]).arg(&path).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!(
        "exit {:?}: {}",
        out.status.code(),
        &stderr[..stderr.len().min(300)]
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr.contains("deep.toml:8:1:"), "{stderr}");
    assert!(stderr.contains("100000 dotted parts"), "{stderr}");
    std::fs::remove_dir_all(&dir).ok();
}

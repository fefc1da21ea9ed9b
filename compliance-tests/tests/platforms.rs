//! The libraries FMUs ship give the numbers of the library the other tests check: every output of
//! every shipped model, for every method, over its default experiment (the runner's
//! `trajectory` procedure, all rows dumped), compared value by value.
//!
//! - linux64 (zig, glibc 2.17, profile `fmu`) against the native build under test
//!   ([`library_path`]): bit for bit.
//! - win64 under Wine (the cross-compiled runner, `scripts/wine-run.sh`) against linux64: equal to
//!   the bit where the platforms' math libraries agree (most runs), else within 1e-12 relative,
//!   and within 1e-12 of the output's largest magnitude for a value formed by cancellation
//!   ([`CANCELLATION`]); the worst differences are printed.
//!
//! A platform whose library is not built is skipped with a message, unless
//! `PLENUM_FMU_PLATFORMS` names it (scripts/test.sh sets `linux64,win64`).

#![cfg(unix)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use compliance_tests::fmu::{temp_dir, unpack};
use compliance_tests::library_path;
use compliance_tests::procedures::{Row, read_rows};
use fmu_build::{Library, Platform, platform};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn required(p: &str) -> bool {
    std::env::var("PLENUM_FMU_PLATFORMS")
        .unwrap_or_default()
        .split(',')
        .any(|r| r.trim() == p)
}

/// A file the test needs, or None (skipped) when it is not built and not required.
fn built(path: PathBuf, platform: &str) -> Option<PathBuf> {
    if path.is_file() {
        return Some(path);
    }
    assert!(
        !required(platform),
        "PLENUM_FMU_PLATFORMS requires {platform}: {} is missing (bash scripts/build-fmu-libs.sh \
         --windows-tests builds it)",
        path.display()
    );
    println!("SKIPPED: {} is not built", path.display());
    None
}

fn shipped(p: Platform) -> Option<Library> {
    let target = workspace().join("target");
    let dirs = [std::env::var_os("CARGO_TARGET_DIR").map_or(target, PathBuf::from)];
    let path = platform::candidates(p, &dirs).remove(0);
    built(path, p.fmi2_folder()).map(|path| Library::load(&path, Some(p)).unwrap())
}

/// Every shipped model packed with `libs` into a fresh directory.
fn pack(libs: &[Library], tag: &str) -> Vec<PathBuf> {
    let out = temp_dir(tag);
    let mut models: Vec<PathBuf> = std::fs::read_dir(workspace().join("models"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    models.sort();
    models
        .iter()
        .map(|m| {
            let model = fmu_build::load(m).unwrap_or_else(|e| panic!("{e}"));
            fmu_build::write_fmu(&model, libs, &out).unwrap_or_else(|e| panic!("{e}"))
        })
        .collect()
}

/// Run a runner (`cmd`: the program and its first arguments) on `fmus` with every method's
/// trajectory dumped; the rows by `<model>-<method>`.
fn trajectories(mut cmd: Command, fmus: &[PathBuf], tag: &str) -> BTreeMap<String, Vec<Row>> {
    let dump = temp_dir(tag);
    let methods: Vec<&str> = plenum::integrators::METHODS
        .iter()
        .map(|(n, _)| *n)
        .collect();
    let out = cmd
        .args(fmus)
        .args(["--methods", &methods.join(",")])
        .args(["--procedures", "trajectory", "--dump"])
        .arg(&dump)
        .output()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!(
        "{tag}: {cmd:?}\n{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{tag}: the runner failed");
    assert!(!stdout.contains("FAIL "));
    let mut rows = BTreeMap::new();
    for fmu in fmus {
        let md = unpack(fmu).unwrap().md.clone();
        for entry in std::fs::read_dir(&dump).unwrap() {
            let path = entry.unwrap().path();
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            if stem.starts_with(&format!("{}-", md.model_name)) {
                rows.insert(stem, read_rows(&path, md.outputs.len()).unwrap());
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dump);
    rows
}

/// Below this fraction of its output's largest magnitude in a run, a value is formed by
/// cancellation (an orifice flow as the pressures equalize: the flow goes as the square root of
/// their difference, so one ulp of a tank pressure moves a flow at a fraction f of its peak by
/// about ε/(2f²) relative, 1e-8 at f = 1e-4), and only its difference relative to that
/// magnitude is held to 1e-12. Blowdown's nozzle flow with backward Euler, whose Newton
/// iterates carry the platforms' round-off into the next step, differs by 1e-10 relative at
/// f = 1.3e-5 (1.3e-15 of its peak).
const CANCELLATION: f64 = 1e-4;

/// Values compared, bit-identical, the worst relative difference |a − b| / max(|a|, |b|) over
/// values above [`CANCELLATION`], and the worst difference relative to the output's largest
/// magnitude over all values, with where each is; the runs that differ at all, with their count
/// of differing values.
struct Comparison {
    values: usize,
    identical: usize,
    worst: f64,
    worst_at: String,
    worst_scaled: f64,
    worst_scaled_at: String,
    small: usize,
    differing_runs: Vec<(String, usize)>,
}

fn compare(a: &BTreeMap<String, Vec<Row>>, b: &BTreeMap<String, Vec<Row>>) -> Comparison {
    assert_eq!(
        a.keys().collect::<Vec<_>>(),
        b.keys().collect::<Vec<_>>(),
        "the same model × method runs"
    );
    let mut c = Comparison {
        values: 0,
        identical: 0,
        worst: 0.0,
        worst_at: "none".into(),
        worst_scaled: 0.0,
        worst_scaled_at: "none".into(),
        small: 0,
        differing_runs: Vec::new(),
    };
    for (key, ra) in a {
        let rb = &b[key];
        assert_eq!(ra.len(), rb.len(), "{key}: rows");
        let n = ra.first().map_or(0, |r| r.1.len());
        let scale: Vec<f64> = (0..n)
            .map(|j| {
                ra.iter()
                    .chain(rb)
                    .map(|r| f64::from_bits(r.1[j]).abs())
                    .fold(0.0, f64::max)
            })
            .collect();
        let before = c.values - c.identical;
        for (i, (x, y)) in ra.iter().zip(rb).enumerate() {
            assert_eq!(x.0, y.0, "{key}: status of row {i}");
            for (j, (&u, &v)) in x.1.iter().zip(&y.1).enumerate() {
                c.values += 1;
                if u == v {
                    c.identical += 1;
                    continue;
                }
                let (u, v) = (f64::from_bits(u), f64::from_bits(v));
                if u == v {
                    continue; // +0 and −0
                }
                let at = format!("{key}, row {i}, output {j}: {u:e} vs {v:e}");
                let scaled = (u - v).abs() / scale[j];
                if scaled.is_nan() || scaled > c.worst_scaled {
                    c.worst_scaled = scaled;
                    c.worst_scaled_at = format!("{at} (largest |value| {:e})", scale[j]);
                }
                if u.abs().max(v.abs()) < CANCELLATION * scale[j] {
                    c.small += 1;
                    continue;
                }
                let rel = (u - v).abs() / u.abs().max(v.abs());
                if rel.is_nan() || rel > c.worst {
                    c.worst = rel;
                    c.worst_at = at;
                }
            }
        }
        if c.values - c.identical > before {
            c.differing_runs
                .push((key.clone(), c.values - c.identical - before));
        }
    }
    c
}

#[test]
fn linux64_zig_build_gives_the_native_builds_bits() {
    let Some(zig) = shipped(Platform::Linux64) else {
        return;
    };
    let native = Library::load(&library_path(), Some(Platform::Linux64)).unwrap();
    println!(
        "native {} (newest glibc {:?}) vs shipped {} (newest glibc {:?})",
        native.path.display(),
        native.info.newest_glibc,
        zig.path.display(),
        zig.info.newest_glibc
    );
    let runner = || Command::new(env!("CARGO_BIN_EXE_fmu-compliance"));
    let a = trajectories(runner(), &pack(&[native], "native"), "native");
    let b = trajectories(runner(), &pack(&[zig], "zig"), "zig");
    let c = compare(&a, &b);
    println!(
        "{} runs, {} values: {} bit-identical; worst relative difference {:e} ({})",
        a.len(),
        c.values,
        c.identical,
        c.worst_scaled,
        c.worst_scaled_at
    );
    assert!(c.values > 10_000, "{}", c.values);
    assert_eq!(c.identical, c.values, "worst at {}", c.worst_scaled_at);
}

#[test]
fn win64_under_wine_gives_linux64s_numbers() {
    let (Some(linux), Some(win)) = (shipped(Platform::Linux64), shipped(Platform::Win64)) else {
        return;
    };
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or(workspace().join("target"), PathBuf::from);
    let Some(exe) = built(
        target.join("x86_64-pc-windows-gnu/fmu/fmu-compliance.exe"),
        "win64",
    ) else {
        return;
    };
    let fmus = pack(&[linux, win], "both");
    let mut wine = Command::new("bash");
    wine.arg(workspace().join("scripts/wine-run.sh")).arg(&exe);
    let w = trajectories(wine, &fmus, "win64");
    let l = trajectories(
        Command::new(env!("CARGO_BIN_EXE_fmu-compliance")),
        &fmus,
        "linux64",
    );
    let c = compare(&l, &w);
    println!(
        "win64 (Wine) vs linux64: {} runs, {} values: {} bit-identical, {} differ ({} of them \
         below {CANCELLATION:e} of their output's largest magnitude); worst relative difference \
         {:e} ({}); \
         worst difference relative to the output's largest magnitude in the run {:e} ({}); runs \
         that differ: {:?}",
        l.len(),
        c.values,
        c.identical,
        c.values - c.identical,
        c.small,
        c.worst,
        c.worst_at,
        c.worst_scaled,
        c.worst_scaled_at,
        c.differing_runs
    );
    assert!(c.values > 10_000, "{}", c.values);
    assert!(c.worst <= 1e-12, "worst {:e} at {}", c.worst, c.worst_at);
    assert!(
        c.worst_scaled <= 1e-12,
        "{:e} at {}",
        c.worst_scaled,
        c.worst_scaled_at
    );
}

//! Memory independent of a run's length: `plenum run` hands every output row to the CSV and the
//! plot as it is produced and keeps one row. A network of 300 chambers (2,401 output columns)
//! run for the row limit of 10⁶ rows needed 19 GB when every row was kept (it aborted under a
//! memory limit); here it runs under an address-space limit of 500 MB.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::common::{Csv, output_ok, plenum_command as plenum, repo_path};

/// The address-space limit of the runs, bytes (`ulimit -v`, in KiB).
const LIMIT_BYTES: u64 = 500_000_000;

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("plenum-long-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `plenum <args>` under an address-space limit of [`LIMIT_BYTES`].
fn limited(args: &[&str]) -> Command {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!(
            "ulimit -v {} && exec \"$0\" \"$@\"",
            LIMIT_BYTES / 1024
        ))
        .arg(env!("CARGO_BIN_EXE_plenum"))
        .args(args);
    cmd
}

/// A summary line's value (`name  value  unit`).
fn summary(stdout: &str, name: &str) -> f64 {
    stdout
        .lines()
        .find(|l| l.split_whitespace().next() == Some(name))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|x| x.parse().ok())
        .unwrap_or_else(|| panic!("no `{name}` in the summary:\n{stdout}"))
}

/// Initial pressure of chamber i, Pa (2 to 3 bar, repeating every 7).
fn pressure(i: usize) -> f64 {
    2e5 + 1e5 * (i % 7) as f64 / 7.0
}

/// 300 chambers of 1 L at 300 K: a chain of linear valves, valves across every other pair, and
/// one orifice from the last chamber back to the first. Output columns: time, mass_total,
/// energy_total, rc (4), five per chamber (1,500), two per valve (447: 894), three for the
/// orifice: 2,401. Dormand–Prince's dense output gives the 10⁶ output times from a few steps.
fn network(rows: usize) -> String {
    let interval = 1e-6;
    let mut s = format!(
        "[model]\nname = \"net300\"\n[gas]\nspecies = \"air\"\n[solver]\nmethod = \"dopri5\"\n\
         t_end = {:?}\noutput_interval = {interval:?}\n",
        (rows - 1) as f64 * interval
    );
    for i in 0..300 {
        s += &format!(
            "[[chamber]]\nname = \"c{i}\"\nvolume = 1e-3\npressure = {:?}\ntemperature = 300.0\n",
            pressure(i)
        );
    }
    let links = (0..299)
        .map(|i| (i, i + 1))
        .chain((0..296).step_by(2).map(|i| (i, i + 2)));
    for (k, (a, b)) in links.enumerate() {
        s += &format!(
            "[[valve]]\nname = \"v{k}\"\nfrom = \"c{a}\"\nto = \"c{b}\"\ncoefficient = 1e-8\n"
        );
    }
    s += "[[orifice]]\nname = \"back\"\nfrom = \"c299\"\nto = \"c0\"\narea = 1e-5\n";
    s
}

/// The PNG's pixels of each palette colour `k` in `0..n`.
fn colour_pixels(png: &Path, n: usize) -> Vec<usize> {
    use plotters::style::{Color, Palette, Palette99};
    let img = image::open(png).unwrap().to_rgb8();
    (0..n)
        .map(|k| {
            let (r, g, b) = Palette99::pick(k).rgb();
            img.pixels().filter(|p| p.0 == [r, g, b]).count()
        })
        .collect()
}

/// 10⁶ rows of 2,401 columns under 500 MB of address space, with a plot: every row is
/// produced (the count follows the grid's definition), the total mass is the initial one (the
/// network is closed: Σ p·V/(R·T) of the file's values), and the plot holds both series (each
/// in its panel).
/// About 20 s of CPU (the output rows: every flow is evaluated again for each).
#[test]
fn a_million_rows_of_2401_columns_run_in_500_mb() {
    let rows = 1_000_000;
    let dir = temp_dir("net300");
    let model = dir.join("net300.toml");
    std::fs::write(&model, network(rows)).unwrap();
    let png = dir.join("plot.png");
    let start = Instant::now();
    let out = limited(&[
        "run",
        model.to_str().unwrap(),
        "-q",
        "--plot",
        png.to_str().unwrap(),
        "--vars",
        "c0.p,c299.T",
    ])
    .output()
    .unwrap();
    let secs = start.elapsed().as_secs_f64();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let columns = stdout
        .lines()
        .skip_while(|l| !l.starts_with("variable"))
        .skip(1)
        .take_while(|l| l.split_whitespace().next() != Some("steps"))
        .count();
    println!(
        "{rows} rows of {columns} columns under {} MB: exit {:?} after {secs:.1} s; {}",
        LIMIT_BYTES / 1_000_000,
        out.status.code(),
        stderr.trim()
    );
    assert!(out.status.success(), "{stderr}");
    assert_eq!(columns, 2401);
    assert_eq!(summary(&stdout, "output_rows"), rows as f64);
    assert_eq!(summary(&stdout, "time"), (rows - 1) as f64 * 1e-6);
    let air = plenum::gas::SPECIES
        .iter()
        .find(|s| s.name == "air")
        .unwrap();
    let r = 8.314_462_618 / air.molar_mass_kg_per_mol;
    let mass0: f64 = (0..300).map(|i| pressure(i) * 1e-3 / (r * 300.0)).sum();
    let mass = summary(&stdout, "mass_total");
    println!(
        "total mass {mass:e} kg, initial Σ p·V/(R·T) = {mass0:e} kg (relative {:.1e})",
        (mass - mass0) / mass0
    );
    assert!(((mass - mass0) / mass0).abs() < 1e-9);
    let pixels = colour_pixels(&png, 2);
    println!("plot: {pixels:?} pixels of the two series' colours");
    assert!(pixels.iter().all(|&n| n > 300), "{pixels:?}");
    std::fs::remove_dir_all(&dir).ok();
}

/// The CSV is written row by row: 10⁶ rows of a small model to /dev/null under the same limit,
/// and 2·10⁴ rows to a file whose times are the grid's definition (t = k·interval) and whose
/// last row is the summary's final values.
#[test]
fn csv_rows_are_written_as_they_are_produced() {
    let blowdown = repo_path("models/blowdown.toml").display().to_string();
    let start = Instant::now();
    let out = limited(&[
        "run",
        &blowdown,
        "-q",
        "--csv",
        "/dev/null",
        "--set",
        "solver.t_end=0.999999",
        "--set",
        "solver.output_interval=1e-6",
    ])
    .output()
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!(
        "blowdown, 10^6 rows to /dev/null: exit {:?} after {:.1} s; {}",
        out.status.code(),
        start.elapsed().as_secs_f64(),
        String::from_utf8_lossy(&out.stderr).trim()
    );
    assert!(out.status.success());
    assert_eq!(summary(&stdout, "output_rows"), 1e6);

    let dir = temp_dir("csv");
    let csv = dir.join("rows.csv");
    let n = 20_000;
    let out = output_ok(
        plenum()
            .args(["run", &blowdown, "-q", "--csv"])
            .arg(&csv)
            .args(["--set", &format!("solver.t_end={:?}", n as f64 * 1e-5)])
            .args(["--set", "solver.output_interval=1e-5"]),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let table = Csv::read(&csv);
    let times = table.column("time");
    println!(
        "{} rows in the CSV, last {:?}; summary output_rows {}",
        table.rows.len(),
        table.rows.last().map(|r| &r[..4]),
        summary(&stdout, "output_rows")
    );
    assert_eq!(table.rows.len(), n + 1);
    assert_eq!(summary(&stdout, "output_rows"), (n + 1) as f64);
    for (k, t) in times.iter().enumerate() {
        assert_eq!(*t, k as f64 * 1e-5, "row {k}");
    }
    let last = table.rows.last().unwrap();
    for (name, x) in table.header.iter().zip(last) {
        if name != "rc" {
            assert_eq!(summary(&stdout, name), *x, "{name}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A plot that would have to hold more than its limit is refused before the run, with its
/// estimate: every pressure, temperature and flow of the 300 chambers (1,048 series) over 10⁶
/// rows would keep 32,001 points of 16 bytes per series (32 per pixel of 1,000), 512 MiB.
#[test]
fn a_plot_too_large_to_keep_is_refused_before_the_run() {
    let dir = temp_dir("plot-limit");
    let model = dir.join("net300.toml");
    std::fs::write(&model, network(1_000_000)).unwrap();
    let start = Instant::now();
    let out = limited(&["run", model.to_str().unwrap(), "-q", "--plot"])
        .arg(dir.join("all.png"))
        .output()
        .unwrap();
    let secs = start.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let series = 300 + 300 + 448;
    let mib = (series * 32_001 * 16) as f64 / f64::from(1 << 20);
    println!(
        "default plot: exit {:?} after {secs:.1} s: {} (expected {series} series, {mib:.0} MiB)",
        out.status.code(),
        stderr.trim()
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr.contains(&format!("{series} series"))
            && stderr.contains(&format!("{mib:.0} MiB"))
            && stderr.contains("limit of 256 MiB"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "nothing was run");
    std::fs::remove_dir_all(&dir).ok();
}

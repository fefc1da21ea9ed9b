//! The command line as a user runs it: `plenum run` prints the summary and writes a CSV whose
//! numbers round-trip exactly; `plenum check` rejects an invalid model with exit code 2.

use crate::common;

use common::{output_ok, plenum_command as plenum};

fn repo(rel: &str) -> String {
    format!("{}/{rel}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn run_prints_a_summary_and_writes_a_full_precision_csv() {
    let dir = std::env::temp_dir().join(format!("plenum-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv_path = dir.join("projectile.csv");
    let out = output_ok(
        plenum()
            .args(["run", &repo("models/projectile.toml"), "--csv"])
            .arg(&csv_path),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    for needle in ["projectile.v", "rc", "steps", "rhs_evaluations", "solve_s"] {
        assert!(stdout.contains(needle), "summary lacks {needle}");
    }

    let csv = common::Csv::read(&csv_path);
    assert_eq!(csv.header[0], "time");
    let rows = &csv.rows;
    let col = |name: &str| csv.col(name);
    let last = rows.last().unwrap();
    // The last row is the exit event: x is exactly at x_exit (to the event tolerance).
    println!(
        "rows {}, last: t = {}, x = {}, v = {}",
        rows.len(),
        last[0],
        last[col("projectile.x")],
        last[col("projectile.v")]
    );
    assert!((last[col("projectile.x")] - 0.6).abs() < 1e-12);
    assert_eq!(last[col("projectile.exited")], 1.0);
    // Output rows every 1e-4 s before the exit.
    assert!((rows[1][0] - 1e-4).abs() < 1e-18);

    // The same run through the library gives the same bits as the CSV text.
    let spec = plenum::model::load_path(std::path::Path::new(&repo("models/projectile.toml")), &[])
        .unwrap()
        .spec;
    let mut sim = plenum::model::build_simulation(&spec, None).unwrap();
    let mut k = 1;
    while sim.advance_to(k as f64 * 1e-4).unwrap() == plenum::simulation::Advance::Reached {
        k += 1;
    }
    assert_eq!(
        sim.piston_state(0).1.to_bits(),
        last[col("projectile.v")].to_bits()
    );
}

#[test]
fn method_override_changes_the_integrator() {
    let out = plenum()
        .args(["run", &repo("models/two_tanks.toml"), "--method", "ab3"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(stdout.contains("method ab3"), "{stdout}");
}

#[test]
fn check_rejects_an_invalid_model_with_exit_code_2() {
    let dir = std::env::temp_dir().join(format!("plenum-cli-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.toml");
    let text = std::fs::read_to_string(repo("models/blowdown.toml"))
        .unwrap()
        .replace("volume = 1e-3", "volume = -1e-3");
    std::fs::write(&bad, text).unwrap();
    let out = plenum().args(["check"]).arg(&bad).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stderr}");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr.contains("volume"));
    let ok = plenum()
        .args(["check", &repo("models/blowdown.toml")])
        .output()
        .unwrap();
    assert!(ok.status.success());
}

/// `--repeat N`: the first solve records, the other N − 1 are only timed. The summary (final
/// values, counters, codes) must be that of a single run, line for line, whatever `solve_s`
/// reads; the projectile's exit event goes through the timed loop's `Exit` arm.
#[test]
fn repeat_reports_the_single_run_and_a_positive_solve_time() {
    let run = |repeat: &str| {
        let out =
            output_ok(plenum().args(["run", &repo("models/projectile.toml"), "--repeat", repeat]));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let (one, three) = (run("1"), run("3"));
    let split = |s: &str| -> (Vec<String>, f64) {
        let mut t = f64::NAN;
        let mut lines = Vec::new();
        for l in s.lines() {
            match l.strip_prefix("solve_s") {
                Some(v) => t = v.trim().parse().unwrap(),
                None => lines.push(l.to_string()),
            }
        }
        (lines, t)
    };
    let ((l1, t1), (l3, t3)) = (split(&one), split(&three));
    println!(
        "{} summary lines; solve_s {t1:e} s (--repeat 1), {t3:e} s (--repeat 3)",
        l1.len()
    );
    assert_eq!(l1, l3);
    assert!(t1 > 0.0 && t1.is_finite() && t3 > 0.0 && t3.is_finite());
}

/// `--units bar,degC`: the CSV's pressure and temperature columns are the SI run's values
/// through FMI's display formula (value·1e-5; value − 273.15), its header names the units,
/// every other column is the same bits; an unknown unit and an unknown method list the valid
/// ones.
#[test]
fn units_show_pressures_in_bar_and_temperatures_in_degc() {
    let dir = std::env::temp_dir().join(format!("plenum-cli-units-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (si, shown) = (dir.join("si.csv"), dir.join("shown.csv"));
    let model = repo("models/blowdown.toml");
    output_ok(plenum().args(["run", &model, "--quiet", "--csv"]).arg(&si));
    let out = output_ok(
        plenum()
            .args(["run", &model, "--quiet", "--units", "bar,degC", "--csv"])
            .arg(&shown),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert!(stdout.contains("tank.p") && stdout.contains("bar") && stdout.contains("degC"));
    let (a, b) = (common::Csv::read(&si), common::Csv::read(&shown));
    assert_eq!(b.header[a.col("tank.p")], "tank.p [bar]");
    assert_eq!(b.header[a.col("tank.T")], "tank.T [degC]");
    assert_eq!(b.header[a.col("tank.m")], "tank.m [kg]");
    let (p, t, m) = (a.col("tank.p"), a.col("tank.T"), a.col("tank.m"));
    for (ra, rb) in a.rows.iter().zip(&b.rows) {
        assert_eq!(rb[p].to_bits(), (1e-5 * ra[p]).to_bits());
        assert_eq!(rb[t].to_bits(), (ra[t] - 273.15).to_bits());
        assert_eq!(rb[m].to_bits(), ra[m].to_bits());
    }
    let (r0, r1) = (&a.rows[0], &b.rows[0]);
    println!(
        "t = 0: {} Pa = {} bar, {} K = {} degC; {} rows compared",
        r0[p],
        r1[p],
        r0[t],
        r1[t],
        a.rows.len()
    );
    assert_eq!(r1[p], 10.0);
    let out = plenum()
        .args(["run", &model, "--units", "psi"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stderr}");
    assert!(
        !out.status.success() && stderr.contains("bar, degC"),
        "{stderr}"
    );
    let out = plenum()
        .args(["run", &model, "--method", "bdf9"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stderr}");
    assert!(
        stderr.contains("bdf, bdf1") && stderr.contains("dopri5"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--units Nl/min`: a mass flow given as `"100 Nl/min"` in the model file is shown as 100
/// Nl/min, and every kg/s column is the SI run's value over ISO 8778's density (1 Nl/min =
/// 1e-3 m³ / 60 s · 1.185 kg/m³).
#[test]
fn units_show_mass_flows_in_normal_litres_per_minute() {
    let dir = std::env::temp_dir().join(format!("plenum-cli-nlmin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let model = dir.join("fill.toml");
    std::fs::write(
        &model,
        "[model]\nname = \"fill\"\n[gas]\nspecies = \"air\"\n[solver]\nmethod = \"rk4\"\n\
         step = 1e-3\nt_end = 0.1\n[[reservoir]]\nname = \"supply\"\npressure = \"6 bar\"\n\
         temperature = 293.15\n[[chamber]]\nname = \"tank\"\nvolume = \"1 L\"\n\
         pressure = \"1 bar\"\ntemperature = 293.15\n[[mass_flow]]\nname = \"feed\"\n\
         from = \"supply\"\nto = \"tank\"\nrate = \"100 Nl/min\"\n",
    )
    .unwrap();
    let (si, shown) = (dir.join("si.csv"), dir.join("shown.csv"));
    let m = model.to_str().unwrap();
    output_ok(plenum().args(["run", m, "--quiet", "--csv"]).arg(&si));
    output_ok(
        plenum()
            .args(["run", m, "--quiet", "--units", "Nl/min", "--csv"])
            .arg(&shown),
    );
    let (a, b) = (common::Csv::read(&si), common::Csv::read(&shown));
    let q = a.col("feed.mdot");
    assert_eq!(b.header[q], "feed.mdot [Nl/min]");
    let kg_per_s_per_nl_min = 1e-3 / 60.0 * 1.185;
    let mut worst: f64 = 0.0;
    for (ra, rb) in a.rows.iter().zip(&b.rows) {
        worst = worst.max((rb[q] - 100.0).abs() / 100.0);
        worst = worst.max((rb[q] * kg_per_s_per_nl_min / ra[q] - 1.0).abs());
    }
    println!(
        "feed.mdot: {} kg/s shown as {} Nl/min; largest relative difference from 100 Nl/min \
         and from the SI value's conversion {worst:.1e} over {} rows",
        a.rows[0][q],
        b.rows[0][q],
        a.rows.len()
    );
    assert!(worst < 1e-14, "{worst:e}");
}

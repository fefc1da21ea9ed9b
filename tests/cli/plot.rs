//! `plenum run --plot` and the progress bar, as a user runs them. The plotted data are checked
//! against the CSV of the same run: the SVG polyline's extremes map back, through the axis tick
//! labels, to the CSV's minimum and maximum; every PNG panel holds its series' colour.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Csv, output_ok, plenum_command as plenum};

use plotters::style::{Color, Palette};

fn repo(rel: &str) -> String {
    format!("{}/{rel}", env!("CARGO_MANIFEST_DIR"))
}

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("plenum-plot-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Value of attribute `name` in one SVG tag's text.
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    let len = tag[start..].find('"')?;
    Some(&tag[start..start + len])
}

/// Every `<tag ...>` of this element name, with the text up to its closing tag for `<text>`.
fn elements<'a>(svg: &'a str, name: &str) -> Vec<(&'a str, &'a str)> {
    let open = format!("<{name} ");
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find(&open) {
        let after = &rest[i..];
        let end = after.find('>').unwrap();
        let tag = &after[..=end];
        let body_end = after[end + 1..].find('<').unwrap_or(0);
        out.push((tag, &after[end + 1..end + 1 + body_end]));
        rest = &after[end + 1..];
    }
    out
}

#[test]
fn svg_plot_polyline_extremes_map_back_to_the_csv_extremes() {
    let dir = temp_dir("svg");
    let (svg_path, csv_path) = (dir.join("p.svg"), dir.join("p.csv"));
    output_ok(
        plenum()
            .args(["run", &repo("models/projectile.toml"), "--vars", "barrel.p"])
            .arg("--plot")
            .arg(&svg_path)
            .arg("--csv")
            .arg(&csv_path),
    );
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    let p = Csv::read(&csv_path).column("barrel.p");
    let (p_min, p_max) = p
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });

    // The data line: the coloured polyline with the most points (axes are black, and the
    // legend's sample line has two points).
    let polylines: Vec<Vec<(f64, f64)>> = elements(&svg, "polyline")
        .into_iter()
        .filter(|(tag, _)| attr(tag, "stroke") != Some("#000000"))
        .map(|(tag, _)| {
            attr(tag, "points")
                .unwrap()
                .split_whitespace()
                .map(|xy| {
                    let (x, y) = xy.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect()
        })
        .collect();
    let line = polylines.iter().max_by_key(|l| l.len()).unwrap();
    println!(
        "{} rows in the CSV, {} points in the polyline",
        p.len(),
        line.len()
    );
    assert_eq!(line.len(), p.len());

    // Tick labels: the y axis's are numeric texts sharing one x coordinate, each at its tick's
    // pixel row; the x axis's share one y coordinate, each at its tick's column.
    let mut by_x: std::collections::BTreeMap<String, Vec<(f64, f64)>> = Default::default();
    let mut by_y: std::collections::BTreeMap<String, Vec<(f64, f64)>> = Default::default();
    for (tag, body) in elements(&svg, "text") {
        if let (Some(x), Some(y), Ok(v)) =
            (attr(tag, "x"), attr(tag, "y"), body.trim().parse::<f64>())
        {
            by_x.entry(x.to_string())
                .or_default()
                .push((v, y.parse::<f64>().unwrap()));
            by_y.entry(y.to_string())
                .or_default()
                .push((v, x.parse::<f64>().unwrap()));
        }
    }
    let ticks = by_x.values().max_by_key(|t| t.len()).unwrap();
    assert!(ticks.len() >= 3, "y ticks: {ticks:?}");
    let (first, last) = (ticks[0], ticks[ticks.len() - 1]);
    let px_per_pa = (last.1 - first.1) / (last.0 - first.0);
    let pixel = |v: f64| first.1 + (v - first.0) * px_per_pa;
    let y_top = line.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let y_bottom = line.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
    println!(
        "ticks {:?} … {:?}; CSV max {p_max} Pa → row {:.2} px, polyline top {y_top}; \
         CSV min {p_min} Pa → row {:.2} px, polyline bottom {y_bottom}",
        first,
        last,
        pixel(p_max),
        pixel(p_min)
    );
    assert!(px_per_pa < 0.0, "pressure grows upwards");
    assert!((pixel(p_max) - y_top).abs() <= 1.0);
    assert!((pixel(p_min) - y_bottom).abs() <= 1.0);
    let t = Csv::read(&csv_path).column("time");
    let x_ticks = by_y.values().max_by_key(|t| t.len()).unwrap();
    assert!(x_ticks.len() >= 3, "x ticks: {x_ticks:?}");
    let (a, b) = (x_ticks[0], x_ticks[x_ticks.len() - 1]);
    let column = |time_s: f64| a.1 + (time_s - a.0) * (b.1 - a.1) / (b.0 - a.0);
    let (t_first, t_last) = (t[0], t[t.len() - 1]);
    println!(
        "x ticks {a:?} … {b:?}; t = {t_first} s → column {:.2} px, polyline starts at {}; \
         t = {t_last} s → column {:.2} px, polyline ends at {}",
        column(t_first),
        line[0].0,
        column(t_last),
        line[line.len() - 1].0
    );
    assert!((column(t_first) - line[0].0).abs() <= 1.0);
    assert!((column(t_last) - line[line.len() - 1].0).abs() <= 1.0);
    // The units are on the axes.
    assert!(svg.contains("pressure (Pa)") && svg.contains("time (s)"));
}

#[test]
fn png_plot_has_the_stated_size_and_every_panel_holds_its_series() {
    let dir = temp_dir("png");
    let png_path = dir.join("p.png");
    output_ok(
        plenum()
            .args([
                "run",
                &repo("models/projectile.toml"),
                "--plot-size",
                "800x1000",
            ])
            .arg("--plot")
            .arg(&png_path),
    );
    let img = image::open(&png_path).unwrap().to_rgb8();
    println!("PNG {}x{}", img.width(), img.height());
    assert_eq!((img.width(), img.height()), (800, 1000));
    // Default panels of the projectile: barrel.p, barrel.T, projectile.x, projectile.v; one
    // series each, coloured in palette order.
    let band = img.height() / 4;
    for panel in 0..4u32 {
        let (r, g, b) = plotters::style::Palette99::pick(panel as usize).rgb();
        let count = |y0: u32, y1: u32| {
            (y0..y1)
                .flat_map(|y| (0..img.width()).map(move |x| (x, y)))
                .filter(|&(x, y)| img.get_pixel(x, y).0 == [r, g, b])
                .count()
        };
        let inside = count(panel * band, (panel + 1) * band);
        let total = count(0, img.height());
        println!("panel {panel}: {inside} of {total} pixels of its colour");
        assert!(inside > 500, "panel {panel} has no line");
        assert_eq!(inside, total, "the colour belongs to panel {panel} only");
    }
    // Text is drawn (anti-aliased glyphs give grey pixels) without any system font.
    let grey = img
        .pixels()
        .filter(|p| p.0[0] == p.0[1] && p.0[1] == p.0[2] && (30..220).contains(&p.0[0]))
        .count();
    println!("{grey} grey (text) pixels");
    assert!(grey > 1000);
}

#[test]
fn plot_errors_are_clear() {
    let dir = temp_dir("bad");
    let out = plenum()
        .args(["run", &repo("models/projectile.toml"), "--plot"])
        .arg(dir.join("p.pdf"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stderr}");
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr.contains("must end in .svg or .png"));
    let out = plenum()
        .args(["run", &repo("models/projectile.toml"), "--vars", "barrel.q"])
        .arg("--plot")
        .arg(dir.join("p.svg"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stderr}");
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr.contains("no variable barrel.q") && stderr.contains("barrel.p"));
}

/// With the bar's delay set to 0, a run whose stderr is a pipe still prints no bar, and the
/// same run under a pseudo-terminal (`script`, util-linux) does, unless `--quiet`; with the
/// default delay a short run prints none on a terminal either.
#[test]
fn progress_bar_only_on_a_terminal() {
    let piped = plenum()
        .env("PLENUM_PROGRESS_AFTER_S", "0")
        .args(["run", &repo("models/projectile.toml")])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&piped.stderr);
    println!("piped stderr: {stderr:?}");
    assert!(piped.status.success());
    assert!(!stderr.contains("simulating") && !stderr.contains('\u{1b}'));

    let script = Path::new("/usr/bin/script");
    let pty_works = script.exists()
        && Command::new(script)
            .args(["-qec", "true", "/dev/null"])
            .output()
            .is_ok_and(|o| o.status.success());
    if !pty_works {
        println!("no /usr/bin/script or no pseudo-terminal: the terminal half is skipped");
        return;
    }
    let under_pty = |env: &str, extra: &str| {
        let cmd = format!(
            "{env} {} run {} {extra} >/dev/null",
            env!("CARGO_BIN_EXE_plenum"),
            repo("models/projectile.toml")
        );
        let out = Command::new(script)
            .args(["-qec", &cmd, "/dev/null"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let shown = under_pty("PLENUM_PROGRESS_AFTER_S=0", "");
    let quiet = under_pty("PLENUM_PROGRESS_AFTER_S=0", "--quiet");
    // With the default delay of 1 s, this run (milliseconds of solving) shows none.
    let short = under_pty("", "");
    println!(
        "terminal: {} bytes with a bar, {} with --quiet, {} for a short run",
        shown.len(),
        quiet.len(),
        short.len()
    );
    assert!(shown.contains("simulating"), "{shown:?}");
    assert!(!quiet.contains("simulating"), "{quiet:?}");
    assert!(!short.contains("simulating"), "{short:?}");
}

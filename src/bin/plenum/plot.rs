//! `plenum run --plot out.svg|out.png`: one panel per quantity, time on the x axis.
//!
//! PNG text is drawn with DejaVu Sans embedded in the binary (`assets/fonts/`), so a machine
//! without fonts or fontconfig draws the same picture; SVG leaves the glyphs to the viewer.
//!
//! The rows are not kept: [`Trace`] takes each row as the run produces it and keeps, per plotted
//! series, every point up to [`POINTS_PER_PX`] points per pixel of the plot's width; beyond
//! that it keeps, per time bucket narrower than a pixel column, the first, lowest, highest and
//! last point (the M4 aggregation of Jugel et al., "M4: A Visualization-Oriented Time Series
//! Data Aggregation", PVLDB 7(10), 2014, which draws the same line as all the points: a line
//! through a column covers the range between its lowest and highest point, and enters and
//! leaves it at its first and last). A run of any length keeps a bounded number of points; a
//! normal run (fewer rows than the bound) keeps them all and draws exactly what it drew before.

use std::path::PathBuf;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};

use plenum::units::text::escaped;
use plenum::variables::OutputVariable;

static FONT: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");

/// Default width, and height per panel, px.
const WIDTH_PX: u32 = 1000;
const PANEL_HEIGHT_PX: u32 = 260;

/// Points kept per series and pixel of the plot's width before buckets are formed.
const POINTS_PER_PX: usize = 32;
/// Time buckets per pixel of the width, at least (each between one and two of them).
const BUCKETS_PER_PX: usize = 4;
/// Largest memory the plot's points may take, bytes: a plot of more series or pixels than this
/// holds is refused before the run, with its estimate.
const MAX_TRACE_BYTES: usize = 256 << 20;

/// Suffixes plotted by default, in panel order.
const DEFAULT_SUFFIXES: [&str; 5] = [".p", ".T", ".x", ".v", ".mdot"];

#[derive(Clone, Copy, PartialEq)]
enum Format {
    Svg,
    Png,
}

pub struct PlotRequest {
    pub path: PathBuf,
    format: Format,
    vars: Vec<String>,
    size_px: Option<(u32, u32)>,
}

impl PlotRequest {
    /// Checks what can be checked before the run: the format and the size.
    pub fn new(path: PathBuf, vars: Vec<String>, size: Option<&str>) -> Result<Self, String> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        let format = match ext.as_deref() {
            Some("svg") => Format::Svg,
            Some("png") => Format::Png,
            _ => {
                return Err(format!(
                    "--plot {}: the file name must end in .svg or .png",
                    path.display()
                ));
            }
        };
        let size_px = match size {
            None => None,
            Some(s) => Some(parse_size(s)?),
        };
        Ok(PlotRequest {
            path,
            format,
            vars: vars.into_iter().filter(|v| !v.trim().is_empty()).collect(),
            size_px,
        })
    }

    /// The plot's size, px: `--plot-size`, else the default width and a height per panel.
    fn size_px(&self, panels: usize) -> (u32, u32) {
        self.size_px
            .unwrap_or((WIDTH_PX, PANEL_HEIGHT_PX * panels as u32))
    }
}

/// What a plot keeps of a run (module doc): the plotted columns' points, bounded.
pub struct Trace {
    /// Plotted columns of a row, and each one's points (time, value), in time order.
    columns: Vec<usize>,
    points: Vec<Vec<(f64, f64)>>,
    /// Times of the first and the last row.
    span: Option<(f64, f64)>,
    /// Buckets over the times seen, at least, once points are merged.
    buckets: usize,
    /// Points per series above which they are merged into buckets.
    cap: usize,
    /// Width of a bucket, s (a power of two, so that a wider one holds whole narrower ones);
    /// 0 while every point is kept.
    bucket_s: f64,
    /// Draw each series as two lines of one pixel instead of one of two pixels: once points
    /// are merged. A wide line is drawn as polygons whose mitred corners reach far beyond a
    /// sharp turn (a bucket's lowest point next to its highest), where one-pixel lines are
    /// drawn pixel by pixel, exactly.
    thin_lines: bool,
}

impl Trace {
    /// The summary for `request` of rows of `vars`, at most `rows` of them (the output grid's):
    /// refused when the variables to plot are unknown, or when the points it may keep would
    /// take more than [`MAX_TRACE_BYTES`].
    pub fn new(
        request: &PlotRequest,
        vars: &[OutputVariable],
        rows: usize,
    ) -> Result<Self, String> {
        let panels = panels(request, vars)?;
        let columns: Vec<usize> = panels.iter().flat_map(|p| p.columns.clone()).collect();
        let width = request.size_px(panels.len()).0 as usize;
        let cap = POINTS_PER_PX * width;
        let per_series = rows.min(cap + 1);
        let bytes = columns.len() * per_series * std::mem::size_of::<(f64, f64)>();
        if bytes > MAX_TRACE_BYTES {
            return Err(format!(
                "--plot of {} series {width} px wide would keep up to {:.0} MiB of points (at \
                 most {} per series), more than the limit of {} MiB: plot fewer with --vars, or \
                 narrower with --plot-size",
                columns.len(),
                bytes as f64 / f64::from(1 << 20),
                per_series,
                MAX_TRACE_BYTES >> 20
            ));
        }
        Ok(Trace {
            points: columns
                .iter()
                .map(|_| Vec::with_capacity(per_series))
                .collect(),
            columns,
            span: None,
            buckets: BUCKETS_PER_PX * width,
            cap,
            bucket_s: 0.0,
            thin_lines: false,
        })
    }

    /// One row (time first).
    pub fn push(&mut self, row: &[f64]) {
        let t = row[0];
        self.span = Some(self.span.map_or((t, t), |(t0, _)| (t0, t)));
        for (points, &c) in self.points.iter_mut().zip(&self.columns) {
            if row[c].is_finite() {
                points.push((t, row[c]));
            }
        }
        if self.points.iter().any(|p| p.len() > self.cap) {
            self.merge();
        }
    }

    /// Merge every series' points into buckets of a width that gives at most `buckets` of them
    /// over the times so far: at most four points per bucket stay.
    fn merge(&mut self) {
        let Some((t0, t1)) = self.span else {
            return;
        };
        // The smallest power of two at least (t1 − t0)/buckets, never narrower than before.
        let wanted = ((t1 - t0) / self.buckets as f64).max(f64::MIN_POSITIVE);
        self.bucket_s = self.bucket_s.max(2f64.powi(wanted.log2().ceil() as i32));
        self.thin_lines = true;
        for points in &mut self.points {
            m4(points, t0, self.bucket_s);
        }
    }
}

/// Keep, of each bucket ⌊(t − t0)/width⌋ of `points` (in time order), its first, lowest,
/// highest and last point, in time order.
fn m4(points: &mut Vec<(f64, f64)>, t0: f64, width: f64) {
    let bucket = |t: f64| ((t - t0) / width).floor();
    let mut kept = 0;
    let mut i = 0;
    while i < points.len() {
        let b = bucket(points[i].0);
        let mut end = i + 1;
        let (mut lo, mut hi) = (i, i);
        while end < points.len() && bucket(points[end].0) == b {
            if points[end].1 < points[lo].1 {
                lo = end;
            }
            if points[end].1 > points[hi].1 {
                hi = end;
            }
            end += 1;
        }
        let mut pick = [i, lo, hi, end - 1];
        pick.sort_unstable();
        let mut last = usize::MAX;
        for j in pick {
            if j != last {
                // j ≥ kept: points before `kept` are done, and j only grows.
                points[kept] = points[j];
                kept += 1;
                last = j;
            }
        }
        i = end;
    }
    points.truncate(kept);
}

fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let bad = || {
        format!(
            "--plot-size {}: expected WIDTHxHEIGHT in pixels, e.g. 1000x800",
            escaped(s)
        )
    };
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(bad)?;
    let w: u32 = w.trim().parse().map_err(|_| bad())?;
    let h: u32 = h.trim().parse().map_err(|_| bad())?;
    if !(100..=20_000).contains(&w) || !(100..=20_000).contains(&h) {
        return Err(format!(
            "--plot-size {}: width and height must be 100 to 20000 pixels",
            escaped(s)
        ));
    }
    Ok((w, h))
}

/// What a panel of this unit shows.
fn quantity(unit: &str) -> &'static str {
    match unit {
        "Pa" | "bar" => "pressure",
        "K" | "degC" => "temperature",
        "m" => "piston position",
        "m/s" => "piston velocity",
        "kg/s" => "mass flow",
        "kg" => "mass",
        "m3" => "volume",
        "m3/s" => "volume flow",
        "J" => "energy",
        _ => "value",
    }
}

/// One panel: a unit and the columns plotted in it.
struct Panel<'a> {
    unit: &'a str,
    columns: Vec<usize>,
}

fn panels<'a>(request: &PlotRequest, vars: &'a [OutputVariable]) -> Result<Vec<Panel<'a>>, String> {
    let mut chosen: Vec<usize> = Vec::new();
    if request.vars.is_empty() {
        for suffix in DEFAULT_SUFFIXES {
            chosen.extend(
                vars.iter()
                    .enumerate()
                    .filter(|(_, v)| v.name.ends_with(suffix))
                    .map(|(i, _)| i),
            );
        }
    } else {
        let mut unknown = Vec::new();
        for name in &request.vars {
            match vars.iter().position(|v| v.name == name.trim()) {
                Some(0) => unknown.push(format!("{} (time is the x axis)", escaped(name))),
                Some(i) => chosen.push(i),
                None => unknown.push(escaped(name).into_owned()),
            }
        }
        if !unknown.is_empty() {
            let known: Vec<&str> = vars.iter().skip(1).map(|v| v.name.as_str()).collect();
            return Err(format!(
                "--vars: no variable {}; this model has {}",
                unknown.join(", "),
                known.join(", ")
            ));
        }
    }
    if chosen.is_empty() {
        return Err(
            "nothing to plot: the model has no pressure, temperature, piston or flow \
                    variable; pick some with --vars"
                .to_string(),
        );
    }
    let mut out: Vec<Panel> = Vec::new();
    for i in chosen {
        let unit = vars[i].unit.symbol.as_str();
        match out.iter_mut().find(|p| p.unit == unit) {
            Some(p) if !p.columns.contains(&i) => p.columns.push(i),
            Some(_) => {}
            None => out.push(Panel {
                unit,
                columns: vec![i],
            }),
        }
    }
    Ok(out)
}

/// Tick labels: six significant digits at most, shortest form (`2.5e5`, `0.01`, `300`).
fn tick(v: &f64) -> String {
    let rounded: f64 = format!("{v:.5e}").parse().unwrap_or(*v);
    let a = rounded.abs();
    if rounded == 0.0 {
        "0".to_string()
    } else if (1e-3..1e5).contains(&a) {
        format!("{rounded}")
    } else {
        format!("{rounded:e}")
    }
}

/// Range of the values of `series`, widened by 5 % (and made non-empty).
fn range(series: &[&[(f64, f64)]]) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for points in series {
        for &(_, v) in *points {
            lo = lo.min(v);
            hi = hi.max(v);
        }
    }
    if !lo.is_finite() {
        return (-1.0, 1.0);
    }
    let pad = if hi > lo {
        0.05 * (hi - lo)
    } else {
        0.05 * lo.abs().max(1e-12)
    };
    (lo - pad, hi + pad)
}

pub fn plot(request: &PlotRequest, vars: &[OutputVariable], trace: &Trace) -> Result<(), String> {
    let panels = panels(request, vars)?;
    let (w, h) = request.size_px(panels.len());
    // Text layout needs glyph metrics for SVG too: register the embedded font for both.
    register_font("sans-serif", FontStyle::Normal, FONT)
        .map_err(|_| "the embedded font does not load".to_string())?;
    match request.format {
        Format::Svg => {
            let root = SVGBackend::new(&request.path, (w, h)).into_drawing_area();
            draw(&root, &panels, vars, trace)?;
            root.present().map_err(|e| e.to_string())
        }
        Format::Png => {
            let root = BitMapBackend::new(&request.path, (w, h)).into_drawing_area();
            draw(&root, &panels, vars, trace)?;
            root.present().map_err(|e| e.to_string())
        }
    }
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    panels: &[Panel],
    vars: &[OutputVariable],
    trace: &Trace,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(err)?;
    let (t0, t1) = match trace.span {
        Some((a, b)) if b > a => (a, b),
        Some((a, _)) => (a, a + 1.0),
        None => (0.0, 1.0),
    };
    let series = |c: usize| -> &[(f64, f64)] {
        trace
            .columns
            .iter()
            .position(|&k| k == c)
            .map_or(&[], |k| &trace.points[k])
    };
    let areas = root.split_evenly((panels.len(), 1));
    let mut colour = 0usize;
    for (panel, area) in panels.iter().zip(&areas) {
        let in_panel: Vec<&[(f64, f64)]> = panel.columns.iter().map(|&c| series(c)).collect();
        let (lo, hi) = range(&in_panel);
        let mut chart = ChartBuilder::on(area)
            .caption(quantity(panel.unit), ("sans-serif", 18))
            .margin(8)
            .x_label_area_size(36)
            .y_label_area_size(90)
            .build_cartesian_2d(t0..t1, lo..hi)
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc("time (s)")
            .y_desc(format!("{} ({})", quantity(panel.unit), panel.unit))
            .x_label_formatter(&tick)
            .y_label_formatter(&tick)
            .label_style(("sans-serif", 13))
            .draw()
            .map_err(err)?;
        // One pixel of the y axis, in its unit.
        let dy = (hi - lo) / f64::from(chart.plotting_area().dim_in_pixel().1.max(1));
        for &c in &panel.columns {
            let style = Palette99::pick(colour).stroke_width(2);
            colour += 1;
            let points = series(c).iter().copied();
            let drawn = if trace.thin_lines {
                // Two lines of one pixel, one pixel apart: the 2-pixel width, drawn exactly.
                let thin = Palette99::pick(colour - 1).stroke_width(1);
                chart
                    .draw_series(LineSeries::new(points.map(|(t, v)| (t, v - dy)), thin))
                    .map_err(err)?;
                chart.draw_series(LineSeries::new(series(c).iter().copied(), thin))
            } else {
                chart.draw_series(LineSeries::new(points, style))
            };
            drawn
                .map_err(err)?
                .label(vars[c].name.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], style));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperRight)
            .label_font(("sans-serif", 13))
            .draw()
            .map_err(err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use plenum::units::Unit;
    use plotters::style::Palette;

    fn var(name: &str, unit: Unit) -> OutputVariable {
        OutputVariable {
            name: name.to_string(),
            unit,
            description: String::new(),
        }
    }

    /// The picture of `rows` through a trace with points kept up to `cap` per series: RGB bytes.
    fn picture(rows: &[[f64; 3]], cap: Option<usize>, thin: bool) -> (Vec<u8>, usize) {
        let vars = [
            var("time", Unit::time()),
            var("a.p", Unit::pressure()),
            var("b.p", Unit::pressure()),
        ];
        let request = PlotRequest::new("x.png".into(), Vec::new(), None).unwrap();
        let mut trace = Trace::new(&request, &vars, rows.len()).unwrap();
        if let Some(cap) = cap {
            trace.cap = cap;
        }
        trace.thin_lines = thin;
        for r in rows {
            trace.push(r);
        }
        let kept = trace.points.iter().map(Vec::len).max().unwrap_or(0);
        let panels = panels(&request, &vars).unwrap();
        let (w, h) = request.size_px(panels.len());
        assert!(register_font("sans-serif", FontStyle::Normal, FONT).is_ok());
        let mut buf = vec![0u8; (w * h * 3) as usize];
        {
            let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
            draw(&root, &panels, &vars, &trace).unwrap();
            root.present().unwrap();
        }
        (buf, kept)
    }

    /// A long run's picture from its bounded summary is the picture of all its points: 200,000
    /// rows of two noisy signals (a sine with a pseudo-random jitter, and spikes), drawn once
    /// from every point and once from what a trace keeps. In every pixel column each series
    /// covers the same pixel rows, within one.
    #[test]
    fn the_bounded_summary_draws_the_picture_of_all_points() {
        let n = 200_000;
        let mut state = 12345u64;
        let mut noise = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        let rows: Vec<[f64; 3]> = (0..n)
            .map(|k| {
                let t = k as f64 * 1e-5;
                let a = 2e5 + 5e4 * (6.0 * t).sin() + 2e3 * noise();
                let b = 1e5 + if k % 9973 == 0 { 4e4 } else { 1e3 * noise() };
                [t, a, b]
            })
            .collect();
        let (all, all_kept) = picture(&rows, Some(usize::MAX), true);
        let (summary, kept) = picture(&rows, None, true);
        // Per pixel column and series colour: the topmost and bottommost pixel of that colour.
        let extents = |buf: &[u8], k: usize| -> Vec<Option<(u32, u32)>> {
            let (r, g, b) = Palette99::pick(k).rgb();
            (0..1000u32)
                .map(|x| {
                    let rows: Vec<u32> = (0..260u32)
                        .filter(|&y| {
                            let i = 3 * (y * 1000 + x) as usize;
                            buf[i..i + 3] == [r, g, b]
                        })
                        .collect();
                    Some((*rows.first()?, *rows.last()?))
                })
                .collect()
        };
        for k in 0..2 {
            let (a, b) = (extents(&all, k), extents(&summary, k));
            let columns = a.iter().filter(|e| e.is_some()).count();
            let off: Vec<(usize, i64)> = a
                .iter()
                .zip(&b)
                .enumerate()
                .filter_map(|(x, pair)| match pair {
                    (Some(a), Some(b)) => {
                        let d = (i64::from(a.0) - i64::from(b.0))
                            .abs()
                            .max((i64::from(a.1) - i64::from(b.1)).abs());
                        (d > 1).then_some((x, d))
                    }
                    (None, None) => None,
                    _ => Some((x, i64::MAX)),
                })
                .collect();
            println!(
                "series {k}: {columns} pixel columns; extents more than 1 px apart in {}: {:?}",
                off.len(),
                &off[..off.len().min(10)]
            );
            assert!(columns > 800);
            assert!(off.is_empty());
        }
        println!("{n} rows: {all_kept} points per series drawn from all, {kept} from the summary");
        assert_eq!(all_kept, n);
        assert!(kept <= POINTS_PER_PX * WIDTH_PX as usize, "{kept}");
    }

    /// A run shorter than the bound keeps every row: the same picture, pixel for pixel.
    #[test]
    fn a_normal_run_keeps_every_point() {
        let rows: Vec<[f64; 3]> = (0..1001)
            .map(|k| {
                let t = k as f64 * 1e-3;
                [t, 2e5 * (-t).exp(), 1e5 + 1e4 * (9.0 * t).sin()]
            })
            .collect();
        let (all, _) = picture(&rows, Some(usize::MAX), false);
        let (summary, kept) = picture(&rows, None, false);
        println!("{} rows, {kept} points kept", rows.len());
        assert_eq!(kept, rows.len());
        assert!(all == summary);
    }
}

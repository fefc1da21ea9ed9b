//! `plenum run --plot out.svg|out.png`: one panel per quantity, time on the x axis.
//!
//! PNG text is drawn with DejaVu Sans embedded in the binary (`assets/fonts/`), so a machine
//! without fonts or fontconfig draws the same picture; SVG leaves the glyphs to the viewer.

use std::path::PathBuf;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};

use plenum::variables::OutputVariable;

static FONT: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");

/// Default width, and height per panel, px.
const WIDTH_PX: u32 = 1000;
const PANEL_HEIGHT_PX: u32 = 260;

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

    /// The variables to plot exist in `vars`.
    pub fn check(&self, vars: &[OutputVariable]) -> Result<(), String> {
        panels(self, vars).map(|_| ())
    }
}

fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let bad = || format!("--plot-size {s}: expected WIDTHxHEIGHT in pixels, e.g. 1000x800");
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(bad)?;
    let w: u32 = w.trim().parse().map_err(|_| bad())?;
    let h: u32 = h.trim().parse().map_err(|_| bad())?;
    if !(100..=20_000).contains(&w) || !(100..=20_000).contains(&h) {
        return Err(format!(
            "--plot-size {s}: width and height must be 100 to 20000 pixels"
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
                Some(0) => unknown.push(format!("{name} (time is the x axis)")),
                Some(i) => chosen.push(i),
                None => unknown.push(name.clone()),
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

/// Range of the finite values of `columns`, widened by 5 % (and made non-empty).
fn range(rows: &[Vec<f64>], columns: &[usize]) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for row in rows {
        for &c in columns {
            let v = row[c];
            if v.is_finite() {
                lo = lo.min(v);
                hi = hi.max(v);
            }
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

pub fn plot(
    request: &PlotRequest,
    vars: &[OutputVariable],
    rows: &[Vec<f64>],
) -> Result<(), String> {
    let panels = panels(request, vars)?;
    let (w, h) = request
        .size_px
        .unwrap_or((WIDTH_PX, PANEL_HEIGHT_PX * panels.len() as u32));
    // Text layout needs glyph metrics for SVG too: register the embedded font for both.
    register_font("sans-serif", FontStyle::Normal, FONT)
        .map_err(|_| "the embedded font does not load".to_string())?;
    match request.format {
        Format::Svg => {
            let root = SVGBackend::new(&request.path, (w, h)).into_drawing_area();
            draw(&root, &panels, vars, rows)?;
            root.present().map_err(|e| e.to_string())
        }
        Format::Png => {
            let root = BitMapBackend::new(&request.path, (w, h)).into_drawing_area();
            draw(&root, &panels, vars, rows)?;
            root.present().map_err(|e| e.to_string())
        }
    }
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    panels: &[Panel],
    vars: &[OutputVariable],
    rows: &[Vec<f64>],
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(err)?;
    let (t0, t1) = match (rows.first(), rows.last()) {
        (Some(a), Some(b)) if b[0] > a[0] => (a[0], b[0]),
        (Some(a), _) => (a[0], a[0] + 1.0),
        _ => (0.0, 1.0),
    };
    let areas = root.split_evenly((panels.len(), 1));
    let mut colour = 0usize;
    for (panel, area) in panels.iter().zip(&areas) {
        let (lo, hi) = range(rows, &panel.columns);
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
        for &c in &panel.columns {
            let style = Palette99::pick(colour).stroke_width(2);
            colour += 1;
            chart
                .draw_series(LineSeries::new(
                    rows.iter()
                        .filter(|r| r[c].is_finite())
                        .map(|r| (r[0], r[c])),
                    style,
                ))
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

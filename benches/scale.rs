//! Scale: generated networks (a chain and a 2-D grid of chambers joined by orifices, with ~1 %
//! pistons venting to the atmosphere) of exactly 10, 100, 1,000, 10,000 and 100,000 components
//! (the grid: rows of equal width and a partial last row), written as model TOML text by a
//! generator of this bench only and loaded as any model file. Timed: building (parse,
//! validate, build), the right-hand side, one rk4 step and one BDF step (bdf2, fixed step,
//! Newton with the Jacobian over the sparsity pattern; M = I − γJ factored densely below
//! `SPARSE_MIN_STATES` states and with faer's sparse LU from there on). Memory per
//! component: the heap bytes the built simulation holds (a counting global allocator), divided
//! by the component count. Best of several repeats.
//!
//! `cargo bench --bench scale` (full; `-- --svg FILE` draws the log-log plot), `-- --quick`
//! (sizes up to 1,000, seconds, for CI: no time asserted), `-- --crossover` (only the bdf2 step
//! on chains of 7 to 3,000 states with the dense and the sparse LU forced: where the sparse
//! path starts to win, for `SPARSE_MIN_STATES`), `-- --krylov` (only the bdf2 step with
//! the sparse LU and with GMRES forced side by side, and what `Auto` picks, on grids and
//! chains (`Auto` takes Krylov on grids, a direct LU on chains); the full and quick runs print the
//! same table for grids), `-- --interleaved` (only the interleaved-size table: all sizes built
//! first, then rounds over the sizes, one sample of about the same work per size and round, best
//! and median per size, with the work counters per bdf2 step; the full and quick runs end with
//! it), `-- --instances chain|grid SIZE direct|krylov|sparse COPIES ROUNDS` (identical bdf2
//! simulations timed round-robin: does one instance run steadily slower than another), `-- --one chain|grid SIZE direct|krylov|sparse STEPS` (one bdf2
//! run for callgrind: `valgrind --tool=callgrind --toggle-collect='*bdf_steps*'`; `rhs|rk4
//! CALLS` instead: the right-hand side or the rk4 step alone, `*rhs_calls*`, `*rk4_steps*`), `-- --emit
//! chain|grid SIZE` (print one generated model, method `bdf`, for `plenum run`).

use std::alloc::{GlobalAlloc, Layout, System};
use std::fmt::Write as _;
use std::hint::black_box;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::Instant;

use plenum::ode::OdeSystem;
use plenum::simulation::Simulation;

/// Live heap bytes (the system allocator, counted).
struct Counting;
static LIVE_BYTES: AtomicIsize = AtomicIsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LIVE_BYTES.fetch_add(l.size() as isize, Ordering::Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        LIVE_BYTES.fetch_add(l.size() as isize, Ordering::Relaxed);
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        LIVE_BYTES.fetch_add(new as isize - l.size() as isize, Ordering::Relaxed);
        unsafe { System.realloc(p, l, new) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE_BYTES.fetch_sub(l.size() as isize, Ordering::Relaxed);
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[derive(Clone, Copy, PartialEq)]
enum Shape {
    Chain,
    Grid,
}

impl Shape {
    /// The name the tables and the plot use.
    fn label(self) -> &'static str {
        match self {
            Shape::Chain => "chain",
            Shape::Grid => "grid",
        }
    }
}

/// Model text of exactly `target` components (chambers + orifices + pistons + 1 reservoir;
/// at least 6): returns the text and its component count, counted from the text's tables and
/// asserted equal to `target`, so that every size is the one the tables name (the scale target
/// is per 100× more components). One piston per ~100 components (at least one; one or two more
/// where the last chamber leaves a remainder), on evenly spaced chambers, venting to the
/// atmosphere `atm`.
fn generate(shape: Shape, target: usize, method: &str) -> (String, usize) {
    let mut s = String::new();
    let _ = write!(
        s,
        "[model]\nname = \"scale\"\n\n[gas]\nspecies = \"air\"\n\n[solver]\nmethod = \"{method}\"\nstep = 1e-7\n\
         t_end = 1.0\n\n[[reservoir]]\nname = \"atm\"\npressure = 101325.0\n\
         temperature = 300.0\n"
    );
    let mut n_pistons = (target / 100).max(1);
    let chamber = |s: &mut String, name: &str, i: usize| {
        // Pressures 2–3 bar in a pattern, so that every orifice carries a flow.
        let p = 2e5 + 1e5 * (i % 7) as f64 / 7.0;
        let _ = write!(
            s,
            "\n[[chamber]]\nname = \"{name}\"\nvolume = 1e-3\npressure = {p:?}\n\
             temperature = 300.0\n"
        );
    };
    let orifice = |s: &mut String, k: usize, a: &str, b: &str| {
        let _ = write!(
            s,
            "\n[[orifice]]\nname = \"o{k}\"\nfrom = \"{a}\"\nto = \"{b}\"\narea = 1e-6\n"
        );
    };
    let mut names = Vec::new();
    let mut n_orifices = 0;
    match shape {
        Shape::Chain => {
            // m chambers and m − 1 orifices: 2m + pistons components, so an odd remainder
            // takes one more piston.
            n_pistons += (target - n_pistons) % 2;
            let m = ((target - n_pistons) / 2).max(2);
            for i in 0..m {
                let name = format!("c{i}");
                chamber(&mut s, &name, i);
                names.push(name);
            }
            for i in 1..m {
                orifice(&mut s, n_orifices, &names[i - 1], &names[i]);
                n_orifices += 1;
            }
        }
        Shape::Grid => {
            // Rows of `width` chambers (about square, ~3 components per chamber), filled row
            // by row; each chamber is joined to its left and upper neighbours, so it adds 1 to
            // 3 components. The last row may be partial; the 0–2 components a whole chamber
            // would overshoot by are pistons.
            let width = ((target.saturating_sub(1 + n_pistons) as f64 / 3.0)
                .sqrt()
                .round() as usize)
                .max(2);
            let mut count = 1 + n_pistons;
            loop {
                let (r, c) = (names.len() / width, names.len() % width);
                let adds = 1 + usize::from(c > 0) + usize::from(r > 0);
                if count + adds > target {
                    break;
                }
                let name = format!("g{r}_{c}");
                chamber(&mut s, &name, names.len());
                names.push(name);
                let here = names.len() - 1;
                if c > 0 {
                    orifice(&mut s, n_orifices, &names[here - 1], &names[here]);
                    n_orifices += 1;
                }
                if r > 0 {
                    orifice(&mut s, n_orifices, &names[here - width], &names[here]);
                    n_orifices += 1;
                }
                count += adds;
            }
            n_pistons += target - count;
        }
    }
    let stride = names.len() / n_pistons;
    for j in 0..n_pistons {
        let _ = write!(
            s,
            "\n[[piston]]\nname = \"p{j}\"\nbehind = \"{}\"\nahead = \"atm\"\narea = 1e-4\n\
             mass = 0.1\nx0 = 0.05\nspring_stiffness = 1000.0\n",
            names[j * stride]
        );
    }
    // Counted from the text, not from the arithmetic above.
    let count = s.matches("\n[[").count();
    assert_eq!(count, names.len() + n_orifices + n_pistons + 1);
    assert_eq!(
        count,
        target,
        "{} network of {target} components",
        shape.label()
    );
    (s, count)
}

/// The simulation of a model text, with the seconds spent parsing and validating it
/// (`parse_str`) and building it (`build_simulation`).
fn build(text: &str) -> (Simulation, f64, f64) {
    let t0 = Instant::now();
    let model = plenum::model::parse_str(text, "generated.toml", &[])
        .unwrap_or_else(|e| panic!("generated model: {e:?}"));
    let t1 = Instant::now();
    let sim = plenum::model::build_simulation(&model.spec, None).expect("builds");
    let t2 = Instant::now();
    (sim, (t1 - t0).as_secs_f64(), (t2 - t1).as_secs_f64())
}

/// Best seconds per call of `f` over `repeats` batches of `n`.
fn best_s(repeats: usize, n: usize, mut f: impl FnMut()) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..repeats {
        let t0 = Instant::now();
        for _ in 0..n {
            f();
        }
        best = best.min(t0.elapsed().as_secs_f64() / n as f64);
    }
    best
}

struct Row {
    shape: &'static str,
    components: usize,
    states: usize,
    parse_s: f64,
    build_s: f64,
    bytes_per_component: f64,
    rhs_s: f64,
    rk4_s: f64,
    bdf_s: Option<f64>,
}

fn fmt_time(s: f64) -> String {
    if s < 1e-6 {
        format!("{:.0} ns", s * 1e9)
    } else if s < 1e-3 {
        format!("{:.1} µs", s * 1e6)
    } else {
        format!("{:.2} ms", s * 1e3)
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--crossover") {
        crossover();
        return;
    }
    let quick = args.iter().any(|a| a == "--quick");
    if let Some(i) = args.iter().position(|a| a == "--one") {
        one(&args[i + 1..]);
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--instances") {
        instances(&args[i + 1..]);
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--emit") {
        // The model text of one network (method bdf), for `plenum run`.
        let shape = match args.get(i + 1).map(String::as_str) {
            Some("grid") => Shape::Grid,
            _ => Shape::Chain,
        };
        let size = args
            .get(i + 2)
            .and_then(|a| a.parse().ok())
            .unwrap_or(1_000);
        print!("{}", generate(shape, size, "bdf").0);
        return;
    }
    if args.iter().any(|a| a == "--interleaved") {
        interleaved(quick);
        return;
    }
    if args.iter().any(|a| a == "--krylov") {
        let sizes: &[usize] = if quick {
            &[100, 1_000]
        } else {
            &[1_000, 3_000, 10_000, 30_000, 100_000]
        };
        linear_solvers(Shape::Grid, sizes, quick);
        linear_solvers(Shape::Chain, sizes, quick);
        return;
    }
    let svg = args
        .iter()
        .position(|a| a == "--svg")
        .and_then(|i| args.get(i + 1).cloned());
    let sizes: &[usize] = if quick {
        &[10, 100, 1000]
    } else {
        &[10, 100, 1_000, 10_000, 100_000]
    };
    // Largest state count for the BDF: with the sparse Jacobian and LU (from
    // `SPARSE_MIN_STATES` on) every size; the quick run stays small.
    let bdf_max_states = if quick { 1_000 } else { 1_000_000 };
    let mut rows = Vec::new();
    for shape in [Shape::Chain, Shape::Grid] {
        let label = shape.label();
        for &size in sizes {
            let (text, components) = generate(shape, size, "rk4");
            let live0 = LIVE_BYTES.load(Ordering::Relaxed);
            let (mut sim, parse_s, build_s) = build(&text);
            let bytes = LIVE_BYTES.load(Ordering::Relaxed) - live0;
            let n = sim.y.len();
            // Work per size: about 2·10⁶ state updates per batch (at least 3 calls).
            let calls = (2_000_000 / n.max(1)).clamp(3, 20_000);
            let (repeats, calls) = if quick {
                (2, calls.min(50))
            } else {
                (9, calls)
            };
            let y = sim.y.clone();
            let mut dydt = vec![0.0; n];
            let rhs_s = best_s(repeats, calls, || {
                sim.network.rhs(0.0, &y, &mut dydt);
                black_box(&dydt);
            });
            sim.advance_to(1e-7).expect("warm-up step");
            let rk4_s = best_s(repeats, calls.div_ceil(4), || {
                let t = sim.t_s;
                black_box(sim.advance_to(t + 1e-7).expect("rk4 step"));
            });
            drop(sim);
            let bdf_s = (n <= bdf_max_states).then(|| {
                let (text, _) = generate(shape, size, "bdf2");
                let (mut sim, _, _) = build(&text);
                // Past the start-up step and the first Jacobian; batches of `BDF_BATCH` steps,
                // so that every size's batches hold the same factorizations and Jacobians
                // (before: 3 steps, with or without one), best of as many at every size.
                sim.advance_to(3e-7).expect("bdf warm-up");
                best_s(repeats.min(3), BDF_BATCH, || {
                    let t = sim.t_s;
                    black_box(sim.advance_to(t + 1e-7).expect("bdf step"));
                })
            });
            let row = Row {
                shape: label,
                components,
                states: n,
                parse_s,
                build_s,
                bytes_per_component: bytes as f64 / components as f64,
                rhs_s,
                rk4_s,
                bdf_s,
            };
            println!(
                "{label} {components} components ({n} states): parse {}, build {}, \
                 {:.0} B/component, rhs {}, rk4 step {}, bdf2 step {}",
                fmt_time(row.parse_s),
                fmt_time(row.build_s),
                row.bytes_per_component,
                fmt_time(row.rhs_s),
                fmt_time(row.rk4_s),
                row.bdf_s.map_or("n/a (dense)".into(), fmt_time)
            );
            rows.push(row);
        }
    }
    println!(
        "\n| network | components | states | parse + validate | build | memory / component | \
         rhs | rk4 step | bdf2 step |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for r in &rows {
        println!(
            "| {} | {} | {} | {} | {} | {:.0} B | {} | {} | {} |",
            r.shape,
            r.components,
            r.states,
            fmt_time(r.parse_s),
            fmt_time(r.build_s),
            r.bytes_per_component,
            fmt_time(r.rhs_s),
            fmt_time(r.rk4_s),
            r.bdf_s.map_or("n/a (dense)".into(), fmt_time)
        );
    }
    // Growth from 1,000 to the largest size (limit 150× for 100×).
    for shape in ["chain", "grid"] {
        let of = |c: usize| {
            rows.iter()
                .filter(|r| r.shape == shape)
                .min_by_key(|r| r.components.abs_diff(c))
        };
        if let (Some(a), Some(b)) = (of(1_000), rows.iter().rfind(|r| r.shape == shape))
            && b.components > a.components
        {
            let k = b.components as f64 / a.components as f64;
            println!(
                "{shape}: {} → {} components ({k:.0}×): rhs {:.0}×, rk4 step {:.0}×, parse \
                 {:.0}×, build {:.0}×",
                a.components,
                b.components,
                b.rhs_s / a.rhs_s,
                b.rk4_s / a.rk4_s,
                b.parse_s / a.parse_s,
                b.build_s / a.build_s
            );
            if let (Some(x), Some(y)) = (a.bdf_s, b.bdf_s) {
                println!("{shape}: bdf2 step {:.0}× (limit 150×)", y / x);
            }
        }
    }
    let grid_sizes: &[usize] = if quick {
        &[100, 1_000]
    } else {
        &[1_000, 10_000, 100_000]
    };
    linear_solvers(Shape::Grid, grid_sizes, quick);
    interleaved(quick);
    if let Some(path) = svg {
        plot(&rows, &path).expect("plot");
        println!("plot: {path}");
    }
}

/// bdf2 step with the sparse LU and with GMRES (ILU(0)) forced, and with what `Auto` picks;
/// GMRES iterations per Newton solve over the timed steps; the growth from the first size.
fn linear_solvers(shape: Shape, sizes: &[usize], quick: bool) {
    use plenum::integrators::Method;
    use plenum::integrators::bdf::{Bdf, LinearSolver};
    let label = shape.label();
    println!(
        "\n| {label} | components | states | fill ratio | sparse LU step | Krylov step | Krylov / \
         sparse | GMRES iterations per Newton solve (max) | Auto picks | Auto step |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---|---:|");
    let mut first: Option<[f64; 3]> = None;
    for &size in sizes {
        let (text, components) = generate(shape, size, "bdf2");
        let mut times = [0.0; 3];
        let (mut n, mut per_solve, mut max_its, mut auto_krylov, mut fill) =
            (0, 0.0, 0, false, None);
        for (k, linear) in [
            LinearSolver::Sparse,
            LinearSolver::Krylov,
            LinearSolver::Auto,
        ]
        .into_iter()
        .enumerate()
        {
            let (mut sim, _, _) = build(&text);
            n = sim.y.len();
            sim.integrator.set_linear_solver(linear);
            if k == 0 {
                fill = Bdf::fill_ratio_of(&sim.network);
            }
            sim.advance_to(3e-7).expect("bdf warm-up");
            let stats = |sim: &Simulation| match &sim.integrator {
                Method::Bdf(b) => b.krylov_stats(),
                _ => unreachable!("bdf2"),
            };
            let before = stats(&sim);
            // About 2·10⁶ state updates per batch, at least 3 steps; some hundred in quick.
            let calls = if quick {
                20
            } else {
                (2_000_000 / n).clamp(3, 200)
            };
            times[k] = best_s(if quick { 1 } else { 3 }, calls, || {
                let t = sim.t_s;
                black_box(sim.advance_to(t + 1e-7).expect("bdf step"));
            });
            match (k, before, stats(&sim)) {
                (1, Some(a), Some(b)) => {
                    per_solve =
                        (b.iterations - a.iterations) as f64 / (b.solves - a.solves).max(1) as f64;
                    max_its = b.max_iterations;
                }
                (2, _, s) => auto_krylov = s.is_some(),
                _ => {}
            }
        }
        println!(
            "| {label} | {components} | {n} | {} | {} | {} | {:.2} | {per_solve:.2} ({max_its}) | \
             {} | {} |",
            fill.map_or("n/a".into(), |f| format!("{f:.2}")),
            fmt_time(times[0]),
            fmt_time(times[1]),
            times[1] / times[0],
            if auto_krylov { "Krylov" } else { "direct" },
            fmt_time(times[2])
        );
        match first {
            None => first = Some(times),
            Some(f) => println!(
                "{label}: {components} components against the first row: sparse LU {:.0}×, \
                 Krylov {:.0}×, Auto {:.0}×",
                times[0] / f[0],
                times[1] / f[1],
                times[2] / f[2]
            ),
        }
    }
}

/// bdf2 step on chains with the dense and the sparse LU forced.
fn crossover() {
    use plenum::integrators::Method;
    use plenum::integrators::bdf::LinearSolver;
    println!("| states | dense LU step | sparse LU step | sparse / dense |");
    println!("|---:|---:|---:|---:|");
    for target in [6, 10, 14, 20, 30, 50, 100, 200, 300, 500, 1_000, 2_000] {
        let (text, _) = generate(Shape::Chain, target, "bdf2");
        let mut times = [0.0; 2];
        let mut n = 0;
        for (k, linear) in [LinearSolver::Dense, LinearSolver::Sparse]
            .into_iter()
            .enumerate()
        {
            let (mut sim, _, _) = build(&text);
            n = sim.y.len();
            match &mut sim.integrator {
                Method::Bdf(b) => b.set_linear_solver(linear),
                _ => unreachable!("bdf2"),
            }
            sim.advance_to(3e-7).expect("bdf warm-up");
            // 100 steps per batch: 5 factorizations, 1 or 2 Jacobians (every 60 steps), the
            // same phase for both solvers.
            times[k] = best_s(5, 100, || {
                let t = sim.t_s;
                black_box(sim.advance_to(t + 1e-7).expect("bdf step"));
            });
        }
        println!(
            "| {n} | {} | {} | {:.2} |",
            fmt_time(times[0]),
            fmt_time(times[1]),
            times[1] / times[0]
        );
    }
}

/// Log-log plot of time per call against component count.
fn plot(rows: &[Row], path: &str) -> Result<(), Box<dyn std::error::Error>> {
    use plotters::prelude::*;
    let root = SVGBackend::new(path, (800, 560)).into_drawing_area();
    root.fill(&WHITE)?;
    let xmax = rows.iter().map(|r| r.components).max().unwrap_or(10) as f64 * 2.0;
    let all = rows
        .iter()
        .flat_map(|r| [Some(r.rhs_s), Some(r.rk4_s), r.bdf_s])
        .flatten();
    let (ymin, ymax) = all.fold((f64::INFINITY, 0.0_f64), |(a, b), v| (a.min(v), b.max(v)));
    let mut chart = ChartBuilder::on(&root)
        .caption("Time per call against network size", ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d(
            (5.0..xmax).log_scale(),
            (ymin / 2.0..ymax * 2.0).log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_desc("components")
        .y_desc("seconds per call")
        .y_label_formatter(&|v| format!("{v:.0e}"))
        .x_label_formatter(&|v| format!("{v:.0e}"))
        .draw()?;
    type Series = (
        &'static str,
        &'static str,
        RGBColor,
        fn(&Row) -> Option<f64>,
    );
    let series: [Series; 6] = [
        ("chain", "rhs", BLUE, |r| Some(r.rhs_s)),
        ("chain", "rk4 step", RED, |r| Some(r.rk4_s)),
        ("chain", "bdf2 step", GREEN, |r| r.bdf_s),
        ("grid", "rhs", CYAN, |r| Some(r.rhs_s)),
        ("grid", "rk4 step", MAGENTA, |r| Some(r.rk4_s)),
        ("grid", "bdf2 step (dense)", BLACK, |r| r.bdf_s),
    ];
    for (shape, what, color, get) in series {
        let pts: Vec<(f64, f64)> = rows
            .iter()
            .filter(|r| r.shape == shape)
            .filter_map(|r| get(r).map(|v| (r.components as f64, v)))
            .collect();
        chart
            .draw_series(LineSeries::new(pts, color.stroke_width(2)))?
            .label(format!("{shape}: {what}"))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color));
    }
    // A slope-1 guide (linear cost) through the largest chain rhs point.
    if let Some(r) = rows.iter().rfind(|r| r.shape == "chain") {
        let k = r.rhs_s / r.components as f64;
        chart
            .draw_series(LineSeries::new(
                [(5.0, 5.0 * k), (xmax, xmax * k)],
                BLACK.mix(0.3),
            ))?
            .label("linear (slope 1)")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], BLACK.mix(0.3)));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()?;
    root.present()?;
    Ok(())
}

/// The linear solvers of the interleaved BDF table: what `Auto` picks (on chains the band LU in
/// reverse Cuthill–McKee order below 50,000 states, in the states' own order the piston states
/// after all chambers widen the band; on grids GMRES, where a direct LU fills), GMRES with
/// ILU(0) forced, and the sparse LU forced (what `Auto` took before the reordering on chains and
/// before the Krylov path on grids: the A/B in one run).
const KINDS: [(&str, plenum::integrators::bdf::LinearSolver); 3] = [
    ("direct", plenum::integrators::bdf::LinearSolver::Auto),
    ("Krylov", plenum::integrators::bdf::LinearSolver::Krylov),
    ("sparse LU", plenum::integrators::bdf::LinearSolver::Sparse),
];

/// bdf2 steps per timed batch: one period of the BDF's setups and Jacobians at a fixed step, so
/// that every batch, at every size, holds the same 3 factorizations and 1 Jacobian. M is set up
/// every 20 steps (MSBP) and J re-evaluated at the first setup more than 50 steps (MSBJ) after
/// the last, so every 60 steps. (It was 100: batches then held 1 or 2 Jacobians in a cycle of
/// three, so the best of a few batches was the cheapest kind and a long sample the average.)
const BDF_BATCH: usize = 60;

/// `n` bdf2 steps of 0.1 µs; a function of its own so that callgrind can collect it alone
/// (`--toggle-collect='*scale*bdf_steps*'`).
#[inline(never)]
fn bdf_steps(sim: &mut Simulation, n: usize) {
    for _ in 0..n {
        let t = sim.t_s;
        black_box(sim.advance_to(t + 1e-7).expect("bdf step"));
    }
}

/// Nanoseconds this thread has waited on a run queue (the second field of
/// `/proc/thread-self/schedstat`; Linux): time another process held the CPU this bench is
/// pinned to. `None` where the file is missing.
fn runqueue_wait_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().nth(1)?.parse().ok()
}

/// Load-independent work counters of a BDF run so far.
#[derive(Clone, Copy, Default)]
struct Work {
    steps: u64,
    newton: u64,
    jvps: u64,
    jacobians: u64,
    factorizations: u64,
    gmres: u64,
}

fn work(sim: &Simulation) -> Work {
    use plenum::integrators::Method;
    match &sim.integrator {
        Method::Bdf(b) => Work {
            steps: b.stats.steps,
            newton: b.stats.newton_iterations,
            jvps: b.stats.jacobian_rhs_evaluations,
            jacobians: b.stats.jacobian_evaluations,
            factorizations: b.stats.factorizations,
            gmres: b.krylov_stats().map_or(0, |k| k.iterations),
        },
        _ => unreachable!("bdf2"),
    }
}

/// A bdf2 simulation of `shape` at `size` with `linear`, past its start-up steps and first
/// Jacobian; the heap bytes it holds then.
fn bdf_sim(
    shape: Shape,
    size: usize,
    linear: plenum::integrators::bdf::LinearSolver,
) -> (Simulation, usize, isize) {
    let (text, components) = generate(shape, size, "bdf2");
    let live0 = LIVE_BYTES.load(Ordering::Relaxed);
    let (mut sim, _, _) = build(&text);
    sim.integrator.set_linear_solver(linear);
    sim.advance_to(3e-7).expect("bdf warm-up");
    let bytes = LIVE_BYTES.load(Ordering::Relaxed) - live0;
    (sim, components, bytes)
}

/// `--instances chain|grid SIZE direct|krylov|sparse COPIES ROUNDS`: `COPIES` identical bdf2
/// simulations built one after the other, then `ROUNDS` rounds timing one batch of each: whether
/// one instance of a size is steadily slower than another (its memory layout), or not.
fn instances(args: &[String]) {
    let shape = match args.first().map(String::as_str) {
        Some("grid") => Shape::Grid,
        _ => Shape::Chain,
    };
    let size = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let kind = match args.get(2).map(String::as_str) {
        Some("krylov") => 1,
        Some("sparse") => 2,
        _ => 0,
    };
    let copies = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(3);
    let rounds = args.get(4).and_then(|a| a.parse().ok()).unwrap_or(5);
    let mut sims: Vec<Simulation> = (0..copies)
        .map(|_| bdf_sim(shape, size, KINDS[kind].1).0)
        .collect();
    let mut times = vec![Vec::new(); copies];
    let mut counts = Vec::new();
    for _ in 0..rounds {
        for (i, sim) in sims.iter_mut().enumerate() {
            let w0 = work(sim);
            let t0 = Instant::now();
            bdf_steps(sim, BDF_BATCH);
            times[i].push(t0.elapsed().as_secs_f64() / BDF_BATCH as f64);
            let w1 = work(sim);
            if i == 0 {
                counts.push(format!(
                    "{}/{}/{}/{}",
                    w1.jacobians - w0.jacobians,
                    w1.factorizations - w0.factorizations,
                    w1.jvps - w0.jvps,
                    w1.gmres - w0.gmres
                ));
            }
        }
    }
    println!("per round, Jacobians/LU/jvp/GMRES: {}", counts.join(" "));
    for (i, t) in times.iter_mut().enumerate() {
        let all: Vec<String> = t.iter().map(|&x| fmt_time(x)).collect();
        t.sort_by(f64::total_cmp);
        println!(
            "instance {i}: best {}, median {}: {}",
            fmt_time(t[0]),
            fmt_time(t[t.len() / 2]),
            all.join(" ")
        );
    }
}

/// `--one chain|grid SIZE direct|krylov STEPS`: warm up, then `STEPS` bdf2 steps in
/// `bdf_steps` (for callgrind: instructions of the steps alone), and the counters.
fn one(args: &[String]) {
    let shape = match args.first().map(String::as_str) {
        Some("grid") => Shape::Grid,
        _ => Shape::Chain,
    };
    let size = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1_000);
    let steps = args
        .get(3)
        .and_then(|a| a.parse().ok())
        .unwrap_or(BDF_BATCH);
    let kind = match args.get(2).map(String::as_str) {
        Some("krylov") => 1,
        Some("sparse") => 2,
        Some(e @ ("rhs" | "rk4")) => {
            one_explicit(shape, size, e == "rk4", steps);
            return;
        }
        _ => 0,
    };
    let (mut sim, components, bytes) = bdf_sim(shape, size, KINDS[kind].1);
    let w0 = work(&sim);
    let t0 = Instant::now();
    bdf_steps(&mut sim, steps);
    let dt = t0.elapsed().as_secs_f64();
    let w1 = work(&sim);
    let per = |a: u64, b: u64| (b - a) as f64 / steps.max(1) as f64;
    println!(
        "{components} components ({} states), {}: {:.0} B/component; {steps} steps, {} per step; \
         per step: Newton {:.2}, jvp {:.2}, Jacobians {:.3}, LU {:.3}, GMRES {:.2}",
        sim.y.len(),
        KINDS[kind].0,
        bytes as f64 / components as f64,
        fmt_time(dt / steps.max(1) as f64),
        per(w0.newton, w1.newton),
        per(w0.jvps, w1.jvps),
        per(w0.jacobians, w1.jacobians),
        per(w0.factorizations, w1.factorizations),
        per(w0.gmres, w1.gmres),
    );
}

/// `n` right-hand sides at `y` (callgrind: `--toggle-collect='*scale*rhs_calls*'`).
#[inline(never)]
fn rhs_calls(sim: &mut Simulation, y: &[f64], dydt: &mut [f64], n: usize) {
    for _ in 0..n {
        sim.network.rhs(0.0, y, dydt);
        black_box(&*dydt);
    }
}

/// `n` rk4 steps of 0.1 µs (callgrind: `--toggle-collect='*scale*rk4_steps*'`).
#[inline(never)]
fn rk4_steps(sim: &mut Simulation, n: usize) {
    for _ in 0..n {
        let t = sim.t_s;
        black_box(sim.advance_to(t + 1e-7).expect("rk4 step"));
    }
}

/// `--one chain|grid SIZE rhs|rk4 CALLS`: after one warm-up call, `CALLS` right-hand sides
/// (`rhs_calls`) or rk4 steps (`rk4_steps`) alone, for callgrind's cache simulation.
fn one_explicit(shape: Shape, size: usize, rk4: bool, calls: usize) {
    let (text, components) = generate(shape, size, "rk4");
    let (mut sim, _, _) = build(&text);
    let n = sim.y.len();
    let y = sim.y.clone();
    let mut dydt = vec![0.0; n];
    sim.network.rhs(0.0, &y, &mut dydt);
    sim.advance_to(1e-7).expect("warm-up step");
    let t0 = Instant::now();
    if rk4 {
        rk4_steps(&mut sim, calls);
    } else {
        rhs_calls(&mut sim, &y, &mut dydt, calls);
    }
    let dt = t0.elapsed().as_secs_f64() / calls.max(1) as f64;
    println!(
        "{components} components ({n} states), {}: {calls} calls, {} per call",
        if rk4 { "rk4 step" } else { "rhs" },
        fmt_time(dt)
    );
}

/// Per-size times with the sizes interleaved: every simulation is built first, then in each
/// round every size is timed once (the order reversed every other round), best of the rounds per
/// size; a burst of load on this shared machine then hits all sizes alike instead of one.
/// Every size gets the same number of samples (one per round) of about the same work and
/// duration: a sample of a smaller size times `largest / components` batches back to back,
/// as one. (Before, each small-size batch was a sample of its own, so the 1,000 size took its
/// best of 100 short batches and the 100,000 size its best of 5: minima of unlike samples,
/// which favoured the small size and so inflated the growth.) The median of the rounds is
/// printed beside the best.
/// Timed: the rhs, one rk4 step, and bdf2 batches of `BDF_BATCH` steps with the direct solver
/// `Auto` picks and with GMRES; the counters per step (Newton iterations, Jacobian-vector
/// products, Jacobians, factorizations, GMRES iterations) do not depend on the load.
fn interleaved(quick: bool) {
    let sizes: &[usize] = if quick {
        &[100, 1_000]
    } else {
        &[1_000, 10_000, 100_000]
    };
    let rounds = if quick { 2 } else { 5 };
    let largest = sizes.iter().copied().max().unwrap_or(1);
    println!(
        "\n### Interleaved sizes ({rounds} rounds, one sample of each size per round of about \
         the same work, best per size; bdf2 batches of {BDF_BATCH} steps of 0.1 µs, \
         {largest}/components batches per sample)\n"
    );
    println!(
        "| network | components | states | B/component (rk4, bdf direct) | rhs | rk4 step | \
         solver | bdf2 step | Newton / step | jvp / step | LU / step | GMRES / step | step / rhs |"
    );
    println!("|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|");
    for shape in [Shape::Chain, Shape::Grid] {
        let label = shape.label();
        struct Sized {
            components: usize,
            explicit: Simulation,
            bdf: Vec<Simulation>,
            bytes: [isize; 2],
            /// Seconds per call of each round: rhs, rk4 step, bdf2 step per kind.
            samples: [Vec<f64>; 2 + KINDS.len()],
            work: [Work; KINDS.len()],
            timed_steps: [u64; KINDS.len()],
            /// Wall and run-queue wait seconds of the timed bdf2 samples.
            wall_s: f64,
            wait_s: Option<f64>,
        }
        let mut all: Vec<Sized> = sizes
            .iter()
            .map(|&size| {
                let (text, components) = generate(shape, size, "rk4");
                let live0 = LIVE_BYTES.load(Ordering::Relaxed);
                let (mut explicit, _, _) = build(&text);
                let bytes = LIVE_BYTES.load(Ordering::Relaxed) - live0;
                explicit.advance_to(1e-7).expect("warm-up step");
                let mut bdf = Vec::new();
                let mut direct_bytes = 0;
                for (k, (_, linear)) in KINDS.iter().enumerate() {
                    let (sim, _, b) = bdf_sim(shape, size, *linear);
                    if k == 0 {
                        direct_bytes = b;
                    }
                    bdf.push(sim);
                }
                Sized {
                    components,
                    explicit,
                    bdf,
                    bytes: [bytes, direct_bytes],
                    samples: Default::default(),
                    work: [Work::default(); KINDS.len()],
                    timed_steps: [0; KINDS.len()],
                    wall_s: 0.0,
                    wait_s: Some(0.0),
                }
            })
            .collect();
        for round in 0..rounds {
            let order: Vec<usize> = if round % 2 == 0 {
                (0..all.len()).collect()
            } else {
                (0..all.len()).rev().collect()
            };
            for &i in &order {
                let s = &mut all[i];
                let n = s.explicit.y.len();
                // About 10⁶ state updates per rhs and rk4 batch.
                let calls = (1_000_000 / n).clamp(3, 10_000);
                let calls = if quick { calls.min(50) } else { calls };
                let y = s.explicit.y.clone();
                let mut dydt = vec![0.0; n];
                let sim = &mut s.explicit;
                s.samples[0].push(best_s(1, calls, || {
                    sim.network.rhs(0.0, &y, &mut dydt);
                    black_box(&dydt);
                }));
                s.samples[1].push(best_s(1, calls.div_ceil(4), || {
                    let t = sim.t_s;
                    black_box(sim.advance_to(t + 1e-7).expect("rk4 step"));
                }));
                // One sample of `batches` batches, about the largest size's one batch of work.
                let batches = (largest / s.components).clamp(1, 100);
                for k in 0..KINDS.len() {
                    let sim = &mut s.bdf[k];
                    let w0 = work(sim);
                    let q0 = runqueue_wait_ns();
                    let t0 = Instant::now();
                    bdf_steps(sim, batches * BDF_BATCH);
                    let wall = t0.elapsed().as_secs_f64();
                    let q1 = runqueue_wait_ns();
                    let steps = batches * BDF_BATCH;
                    s.samples[2 + k].push(wall / steps as f64);
                    s.wall_s += wall;
                    s.wait_s = match (s.wait_s, q0, q1) {
                        (Some(w), Some(a), Some(b)) => Some(w + (b - a) as f64 * 1e-9),
                        _ => None,
                    };
                    let w1 = work(sim);
                    let acc = &mut s.work[k];
                    acc.steps += w1.steps - w0.steps;
                    acc.newton += w1.newton - w0.newton;
                    acc.jvps += w1.jvps - w0.jvps;
                    acc.jacobians += w1.jacobians - w0.jacobians;
                    acc.factorizations += w1.factorizations - w0.factorizations;
                    acc.gmres += w1.gmres - w0.gmres;
                    s.timed_steps[k] += steps as u64;
                }
            }
        }
        // Best and median of the rounds, per size and timing.
        let stat = |s: &Sized, k: usize, median: bool| {
            let mut v = s.samples[k].clone();
            v.sort_by(f64::total_cmp);
            if median { v[v.len() / 2] } else { v[0] }
        };
        for s in &all {
            for (k, (name, _)) in KINDS.iter().enumerate() {
                let w = s.work[k];
                let per = |v: u64| v as f64 / s.timed_steps[k] as f64;
                let solver = match (k, &s.bdf[k].integrator) {
                    (0, plenum::integrators::Method::Bdf(b)) if b.uses_reordered_band_lu() => {
                        "band LU (RCM)"
                    }
                    (0, plenum::integrators::Method::Bdf(b)) if b.uses_band_lu() => "band LU",
                    (0, plenum::integrators::Method::Bdf(b)) if b.uses_sparse_lu() => "sparse LU",
                    (0, plenum::integrators::Method::Bdf(b)) if b.uses_krylov() => "Krylov (Auto)",
                    _ => name,
                };
                debug_assert_eq!(w.steps, s.timed_steps[k]);
                println!(
                    "| {label} | {} | {} | {:.0}, {:.0} | {} | {} | {solver} | {} | {:.2} | {:.2} | \
                     {:.2} | {:.2} | {:.1} |",
                    s.components,
                    s.explicit.y.len(),
                    s.bytes[0] as f64 / s.components as f64,
                    s.bytes[1] as f64 / s.components as f64,
                    fmt_time(stat(s, 0, false)),
                    fmt_time(stat(s, 1, false)),
                    fmt_time(stat(s, 2 + k, false)),
                    per(w.newton),
                    per(w.jvps),
                    per(w.factorizations),
                    per(w.gmres),
                    stat(s, 2 + k, false) / stat(s, 0, false),
                );
            }
        }
        if let (Some(a), Some(b)) = (all.first(), all.last())
            && b.components > a.components
        {
            let g = |k: usize| stat(b, k, false) / stat(a, k, false);
            let gm = |k: usize| stat(b, k, true) / stat(a, k, true);
            println!(
                "{label}: {} → {} components ({:.0}×): rhs {:.0}×, rk4 step {:.0}×, bdf2 step \
                 {} (Auto) {:.0}×, Krylov forced {:.0}×, sparse LU forced {:.0}× (limit 150× for \
                 100×)",
                a.components,
                b.components,
                b.components as f64 / a.components as f64,
                g(0),
                g(1),
                match &b.bdf[0].integrator {
                    plenum::integrators::Method::Bdf(x) if x.uses_reordered_band_lu() => {
                        "band LU (RCM)"
                    }
                    plenum::integrators::Method::Bdf(x) if x.uses_band_lu() => "band LU",
                    plenum::integrators::Method::Bdf(x) if x.uses_sparse_lu() => "sparse LU",
                    plenum::integrators::Method::Bdf(x) if x.uses_krylov() => "Krylov",
                    _ => "direct",
                },
                g(2),
                g(3),
                g(4),
            );
            println!(
                "{label}, medians of the rounds: rhs {:.0}×, rk4 step {:.0}×, bdf2 step (Auto) \
                 {:.0}×, Krylov forced {:.0}×, sparse LU forced {:.0}×",
                gm(0),
                gm(1),
                gm(2),
                gm(3),
                gm(4),
            );
            // A share above ~1 % means another process shared this CPU during the samples
            // (a run to repeat): the times then hold its time slices.
            let share = |x: &Sized| {
                x.wait_s
                    .map_or("n/a".into(), |w| format!("{:.1} %", 100.0 * w / x.wall_s))
            };
            println!(
                "{label}, run-queue wait during the timed bdf2 samples (another process on this \
                 CPU): {} at {}, {} at {}",
                share(a),
                a.components,
                share(b),
                b.components,
            );
        }
    }
}

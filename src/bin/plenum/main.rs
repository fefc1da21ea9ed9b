//! `plenum run | check | describe`: simulate a model file, validate it, or show its network
//! (docs/architecture.md, "Layers"; the commands and exit codes: README, docs/checks.md).

mod describe;
mod plot;
mod progress;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use plenum::checks;
use plenum::model::{LoadedModel, ModelError, build_simulation, load_bytes, read_model_file};
use plenum::run::{Solve, output_times, solve, time_solve};
use plenum::simulation::{Finish, Simulation};
use plenum::variables::{OutputVariable, output_variables};

#[derive(Parser)]
#[command(
    name = "plenum",
    version,
    about = "Lumped gas and fluid network simulator"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate a model and print a summary of the final state.
    Run {
        /// Model file (TOML).
        model: PathBuf,
        /// Integrator, overriding the file's `solver.method` (docs/integrators.md).
        #[arg(long, value_parser = method_names())]
        method: Option<String>,
        /// Write every output row (time, then every variable) to this CSV file.
        #[arg(long)]
        csv: Option<PathBuf>,
        /// Override a model value: `<component>.<key>=<value>` or `solver.<key>=<value>`.
        #[arg(long = "set", value_name = "NAME=VALUE")]
        set: Vec<String>,
        /// Solve N times and report the best `solve_s` (for benchmarks): the first solve
        /// records the outputs, the other N − 1 only advance through the same output times,
        /// timed as one span (no clock read per output time).
        #[arg(long, default_value_t = 1)]
        repeat: u32,
        /// Plot the run to this file (`.svg` or `.png`): one panel per quantity (pressure,
        /// temperature, piston position, velocity, mass flow), units on the axes.
        #[arg(long, value_name = "FILE")]
        plot: Option<PathBuf>,
        /// Variables to plot, comma-separated (default: every `.p`, `.T`, `.x`, `.v`, `.mdot`).
        #[arg(long, value_delimiter = ',', value_name = "NAMES", requires = "plot")]
        vars: Vec<String>,
        /// Plot size in pixels, `WIDTHxHEIGHT` (default 1000 wide, 260 per panel).
        #[arg(long, value_name = "WxH", requires = "plot")]
        plot_size: Option<String>,
        /// No progress bar (it is shown only on a terminal, for runs longer than about 1 s).
        #[arg(long, short)]
        quiet: bool,
        /// Show values in these units instead of SI, comma-separated (`bar,degC,Nl/min`): in
        /// the printed table, the CSV (its header says `<name> [<unit>]`) and the plot.
        #[arg(long, value_delimiter = ',', value_name = "UNITS", value_parser = display_unit_names())]
        units: Vec<String>,
    },
    /// Validate a model file and report every problem; simulate nothing.
    Check {
        model: PathBuf,
        #[arg(long = "set", value_name = "NAME=VALUE")]
        set: Vec<String>,
    },
    /// Show the network: nodes, links, pistons and parameters with units, or a Graphviz graph.
    Describe {
        model: PathBuf,
        #[arg(long = "set", value_name = "NAME=VALUE")]
        set: Vec<String>,
        /// Print the network as a Graphviz `digraph` (render with `dot -Tsvg`).
        #[arg(long)]
        dot: bool,
    },
}

/// Every integrator name, for `run --help` and the error of an unknown `--method`.
fn method_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        plenum::integrators::METHODS
            .iter()
            .map(|m| clap::builder::PossibleValue::new(m.0).help(m.1)),
    )
}

/// The display units `--units` accepts (those the FMU's modelDescription declares).
fn display_unit_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        plenum::units::CLI_DISPLAY_UNITS
            .iter()
            .map(|d| clap::builder::PossibleValue::new(d.name).help(format!("for {}", d.unit))),
    )
}

/// The display unit `--units` chose for each column (None: SI).
type Shown = Vec<Option<&'static plenum::units::DisplayUnit>>;

/// The variables as `--units` shows them, and the display unit of each column: each column
/// whose SI unit has a chosen display unit is converted (value·factor + offset, as the FMU's
/// DisplayUnit) row by row as the rows are produced ([`Rows::push`]), its unit renamed.
fn displayed(
    vars: &[plenum::variables::OutputVariable],
    units: &[String],
) -> (Vec<plenum::variables::OutputVariable>, Shown) {
    let chosen: Shown = vars
        .iter()
        .map(|v| {
            plenum::units::CLI_DISPLAY_UNITS
                .iter()
                .find(|d| d.unit == v.unit.symbol && units.iter().any(|u| u == d.name))
        })
        .collect();
    let vars = vars
        .iter()
        .zip(&chosen)
        .map(|(v, d)| match d {
            Some(d) => plenum::variables::OutputVariable {
                unit: plenum::units::Unit {
                    symbol: d.name.to_string(),
                    si: v.unit.si,
                },
                ..v.clone()
            },
            None => v.clone(),
        })
        .collect();
    (vars, chosen)
}

/// Exit codes (docs/checks.md, "Exit status"): 0 fine, 1 I/O or usage error, 2 invalid model,
/// 3 the run was stopped by a run-time check (codes 1, 2, 3, 10) or a solver failure.
const EXIT_USAGE: u8 = 1;
const EXIT_INVALID_MODEL: u8 = 2;
const EXIT_RUN_FAILED: u8 = 3;

fn main() -> ExitCode {
    main_with(std::env::args_os())
}

/// The command line on `args` (the program's name first): the Python package's `plenum`
/// command runs it in-process, with its own arguments.
pub fn main_with(args: impl IntoIterator<Item = std::ffi::OsString>) -> ExitCode {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // clap's own exit status for a usage error is 2, which is "invalid model" here.
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(EXIT_USAGE)
            } else {
                ExitCode::SUCCESS // --help, --version
            };
        }
    };
    match cli.command {
        Command::Check { model, set } => match load(&model, &set) {
            Ok(m) => {
                print_warnings(&m);
                // A model that cannot start (an impossible initial state, a step the time axis
                // cannot resolve) is as invalid as one that does not parse.
                if let Err(e) = build_simulation(&m.spec, None) {
                    eprintln!("error: {}: {e}", model.display());
                    return ExitCode::from(EXIT_INVALID_MODEL);
                }
                let s = &m.spec;
                println!(
                    "{}: ok (model `{}`: {} chambers, {} reservoirs, {} orifices, {} valves, {} pistons, {} walls; method {})",
                    model.display(),
                    s.model.name,
                    s.chamber.len(),
                    s.reservoir.len(),
                    s.orifice.len(),
                    s.valve.len(),
                    s.piston.len(),
                    s.wall.len(),
                    s.solver.method
                );
                ExitCode::SUCCESS
            }
            Err(code) => code,
        },
        Command::Run {
            model,
            method,
            csv,
            set,
            repeat,
            plot,
            vars,
            plot_size,
            quiet,
            units,
        } => {
            let plot = match plot {
                Some(path) => match plot::PlotRequest::new(path, vars, plot_size.as_deref()) {
                    Ok(p) => Some(p),
                    Err(e) => {
                        eprintln!("error: {e}");
                        return ExitCode::FAILURE;
                    }
                },
                None => None,
            };
            let m = match load(&model, &set) {
                Ok(m) => m,
                Err(code) => return code,
            };
            print_warnings(&m);
            let opts = RunOptions {
                method: method.as_deref(),
                csv,
                repeat: repeat.max(1),
                plot,
                quiet,
                units,
            };
            run(&m, opts)
        }
        Command::Describe { model, set, dot } => match load(&model, &set) {
            Ok(m) => {
                if dot {
                    print!("{}", describe::dot(&m.spec));
                } else {
                    print!("{}", describe::text(&m.spec));
                }
                ExitCode::SUCCESS
            }
            Err(code) => code,
        },
    }
}

/// The model's plausibility warnings (a pressure of 6 Pa...), on stderr: they stop nothing.
fn print_warnings(m: &LoadedModel) {
    for w in &m.warnings {
        eprintln!("warning: {w}");
    }
}

fn load(path: &std::path::Path, set: &[String]) -> Result<LoadedModel, ExitCode> {
    let bytes = read_model_file(path).map_err(|e| {
        eprintln!("error: {}: {e}", path.display());
        ExitCode::from(EXIT_USAGE)
    })?;
    load_bytes(bytes, &path.display().to_string(), set).map_err(|errors: Vec<ModelError>| {
        for e in &errors {
            eprintln!("error: {e}");
        }
        eprintln!(
            "{} problem(s) in {}; nothing was simulated",
            errors.len(),
            path.display()
        );
        ExitCode::from(EXIT_INVALID_MODEL)
    })
}

struct RunOptions<'a> {
    method: Option<&'a str>,
    csv: Option<PathBuf>,
    repeat: u32,
    plot: Option<plot::PlotRequest>,
    quiet: bool,
    units: Vec<String>,
}

/// The CSV file, written row by row.
struct CsvOut {
    path: PathBuf,
    writer: csv::Writer<std::fs::File>,
    /// One value's text, reused for every value.
    field: String,
}

impl CsvOut {
    /// The file with its header (`labelled`: each name with its unit, `p [bar]`).
    fn create(path: PathBuf, vars: &[OutputVariable], labelled: bool) -> Result<CsvOut, String> {
        let io = |e: csv::Error| format!("cannot write {}: {e}", path.display());
        let mut writer = csv::Writer::from_path(&path).map_err(io)?;
        if labelled {
            writer.write_record(vars.iter().map(|v| match v.unit.symbol.as_str() {
                "1" => v.name.clone(),
                u => format!("{} [{u}]", v.name),
            }))
        } else {
            writer.write_record(vars.iter().map(|v| v.name.as_str()))
        }
        .map_err(io)?;
        Ok(CsvOut {
            path,
            writer,
            field: String::new(),
        })
    }

    fn write(&mut self, row: &[f64]) -> Result<(), String> {
        use std::fmt::Write;
        let io = |e: csv::Error| format!("cannot write {}: {e}", self.path.display());
        for x in row {
            self.field.clear();
            // `{:?}` is Rust's shortest round-trip form: every digit that matters, no more.
            let _ = write!(self.field, "{x:?}");
            self.writer.write_field(&self.field).map_err(io)?;
        }
        self.writer.write_record(None::<&[u8]>).map_err(io)
    }

    fn finish(mut self) -> Result<(), String> {
        let path = self.path.display().to_string();
        self.writer
            .flush()
            .map_err(|e| format!("cannot write {path}: {e}"))
    }
}

/// Where each output row goes as the run produces it: the CSV file, the plot's bounded summary
/// ([`plot::Trace`]) and the row kept for the final summary. Nothing here grows with the number
/// of rows, so a run of 10⁶ rows of 2,401 columns takes the memory of one row.
struct Rows {
    /// The variables as shown (`--units`), and each column's display unit.
    vars: Vec<OutputVariable>,
    chosen: Shown,
    /// The last row recorded, as shown; `count` rows so far.
    last: Vec<f64>,
    count: usize,
    csv: Option<CsvOut>,
    trace: Option<plot::Trace>,
}

impl Rows {
    fn push(&mut self, row: &[f64]) -> Result<(), String> {
        for ((shown, x), d) in self.last.iter_mut().zip(row).zip(&self.chosen) {
            *shown = d.map_or(*x, |d| d.display(*x));
        }
        self.count += 1;
        if let Some(csv) = &mut self.csv {
            csv.write(&self.last)?;
        }
        if let Some(trace) = &mut self.trace {
            trace.push(&self.last);
        }
        Ok(())
    }
}

fn run(m: &LoadedModel, opts: RunOptions) -> ExitCode {
    let RunOptions {
        method,
        csv,
        repeat,
        plot,
        quiet,
        units,
    } = opts;
    let invalid = |e: String| {
        eprintln!("error: {e}");
        ExitCode::from(EXIT_INVALID_MODEL)
    };
    let grid = match output_times(m) {
        Ok(g) => g,
        Err(e) => return invalid(e),
    };
    let sim = match build_simulation(&m.spec, method) {
        Ok(s) => s,
        Err(e) => return invalid(e),
    };
    // With `[sensitivities]` the same run integrates them: the d(output)/d(parameter) columns
    // are among the outputs.
    let labelled = !units.is_empty();
    let (vars, chosen) = displayed(&output_variables(&sim), &units);
    // Unknown `--vars`, a plot too large to keep and an unwritable CSV are reported before the
    // run, not after it.
    let trace = match &plot {
        Some(request) => match plot::Trace::new(request, &vars, grid.len() + 1) {
            Ok(t) => Some(t),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        },
        None => None,
    };
    let csv = match csv.map(|path| CsvOut::create(path, &vars, labelled)) {
        Some(Err(e)) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
        csv => csv.and_then(Result::ok),
    };
    let mut rows = Rows {
        last: vec![0.0; vars.len()],
        vars,
        chosen,
        count: 0,
        csv,
        trace,
    };
    let solver = &m.spec.solver;
    let mut bar = progress::Progress::new(solver.t_start, solver.t_end, quiet);
    let solved = solve(sim, &grid, |row| rows.push(row), |t| bar.update(t));
    bar.finish();
    let mut s = match solved {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    // The repeats are deterministic copies of the recorded solve: only their time is kept.
    for _ in 1..repeat {
        match time_solve(m, method) {
            Ok(t) => s.solve_s = s.solve_s.min(t),
            Err(e) => return invalid(e),
        }
    }
    report(m, s, rows, plot)
}

/// Print the run's summary, finish its CSV and draw its plot.
fn report(m: &LoadedModel, s: Solve, rows: Rows, plot: Option<plot::PlotRequest>) -> ExitCode {
    if !s.sim.sensitivities.names.is_empty() {
        println!("{}", sensitivity_report(&s.sim));
    }
    let Rows {
        vars,
        last,
        count,
        csv,
        trace,
        ..
    } = rows;
    if let Some(Err(e)) = csv.map(CsvOut::finish) {
        eprintln!("error: {e}");
        return ExitCode::FAILURE;
    }
    if let (Some(request), Some(trace)) = (&plot, &trace) {
        if let Err(e) = plot::plot(request, &vars, trace) {
            eprintln!("error: cannot plot to {}: {e}", request.path.display());
            return ExitCode::FAILURE;
        }
    }
    // The last row recorded (none when even the first had a value that is not finite).
    let last = if count > 0 { last } else { Vec::new() };
    let width = vars.iter().map(|v| v.name.len()).max().unwrap_or(4).max(12);
    println!(
        "model {} ({}), method {}",
        m.spec.model.name,
        m.file,
        s.sim.integrator_name()
    );
    let final_rc = match &s.failure {
        Some(f) if f.code != 0 => f.code,
        _ => s.sim.rc,
    };
    println!("{:<width$}  {:>24}  unit", "variable", "final value");
    for (v, x) in vars.iter().zip(&last) {
        // The last row is the last good time's; a run stopped by a check ends with its code.
        let x = if v.name == "rc" { final_rc as f64 } else { *x };
        // Units as `describe` writes them (m³, kg/(s·Pa)).
        println!(
            "{:<width$}  {:>24}  {}",
            v.name,
            format!("{x:?}"),
            plenum::components::keys::pretty_unit(&v.unit)
        );
    }
    match s.sim.finished {
        Some(Finish::Exited { t_s }) => {
            println!("{:<width$}  {:>24}  s", "exit_time", format!("{t_s:?}"))
        }
        Some(Finish::NeverExited { t_s }) => println!(
            "{:<width$}  {:>24}  s",
            "max_time_reached",
            format!("{t_s:?}")
        ),
        None => {}
    }
    println!("{:<width$}  {:>24}", "steps", s.sim.stats.steps);
    println!(
        "{:<width$}  {:>24}",
        "rejected_steps", s.sim.stats.rejected_steps
    );
    println!("{:<width$}  {:>24}", "events", s.sim.stats.events);
    println!(
        "{:<width$}  {:>24}",
        "rhs_evaluations",
        s.sim.rhs_evaluations()
    );
    println!("{:<width$}  {:>24}", "output_rows", count);
    for (code, t) in s.sim.first_fired_s.iter().enumerate() {
        if let Some(t) = t {
            println!(
                "check {code} fired first at t = {t:?} s: {}",
                checks::describe(code as u8)
            );
        }
    }
    // Nanoseconds: the peer benchmark compares solves of 10–100 µs.
    println!("solve_s {:.9}", s.solve_s);
    let stopped_by_check = matches!(s.sim.finished, Some(Finish::NeverExited { .. }));
    if let Some(f) = &s.failure {
        eprintln!("error: {f}");
        return ExitCode::from(EXIT_RUN_FAILED);
    }
    if stopped_by_check {
        eprintln!(
            "error: run-time check 1: {}",
            checks::describe(checks::NEVER_EXITED)
        );
        return ExitCode::from(EXIT_RUN_FAILED);
    }
    ExitCode::SUCCESS
}

/// One line on the sensitivity parameters and checks 6 and 7.
fn sensitivity_report(sim: &Simulation) -> String {
    let fired = [checks::MASS_GRADIENT_DRIFT, checks::ENERGY_GRADIENT_DRIFT]
        .into_iter()
        .filter_map(|c| sim.first_fired_s[c as usize].map(|t| (c, t)))
        .min_by(|a, b| a.1.total_cmp(&b.1));
    let [mass, energy] = sim.checks.max_gradient_drift;
    format!(
        "sensitivities of {}: gradient checks 6/7 {} (largest drifts: mass {mass:e}, energy {energy:e})",
        sim.sensitivities.names.join(", "),
        match fired {
            Some((c, t)) => format!(
                "code {c} ({}) at t = {} s",
                checks::describe(c),
                plenum::units::text::number(t)
            ),
            None => "fine".to_string(),
        },
    )
}

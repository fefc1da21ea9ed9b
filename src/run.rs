//! One run of a model through its output times, as `plenum run` does it: a row of every output
//! variable at the start, at every output time and at each piston exit, how the run ended, and
//! the time spent in [`Simulation::advance_to`]. The command line (which streams each row to
//! its CSV and plot) and the Python package (which keeps them) call this one loop, so their
//! results are the same bits.

use std::time::Instant;

use crate::checks;
use crate::model::{LoadedModel, build_simulation};
use crate::output_grid::OutputGrid;
use crate::simulation::{Advance, Simulation, StepFailure};
use crate::variables::{output_variables, write_outputs};

/// How one solve ended; its rows went to the caller's sink as they were produced.
pub struct Solve {
    pub solve_s: f64,
    pub failure: Option<StepFailure>,
    pub sim: Simulation,
}

/// The output times ([`OutputGrid`]: every multiple of the interval below `t_end`, then
/// `t_end`; computed from their index, never accumulated).
pub fn output_times(m: &LoadedModel) -> Result<OutputGrid, String> {
    let solver = &m.spec.solver;
    OutputGrid::new(solver.t_start, solver.t_end, solver.output_interval)
}

/// Run-time check 10 on a recorded row: no value that is not finite is reported.
fn non_finite(sim: &Simulation, row: &[f64]) -> Option<StepFailure> {
    let k = row.iter().position(|x| !x.is_finite())?;
    let name = output_variables(sim)
        .get(k)
        .map_or_else(|| format!("output {k}"), |v| v.name.clone());
    Some(StepFailure {
        code: checks::IMPOSSIBLE_STATE,
        last_good_t_s: sim.t_s,
        message: format!(
            "run-time check {}: {} (`{name}` = {} at t = {:?} s is not reported)",
            checks::IMPOSSIBLE_STATE,
            checks::describe(checks::IMPOSSIBLE_STATE),
            row[k],
            sim.t_s
        ),
    })
}

/// Solve `sim` through the output times `grid`, handing each recorded row to `sink` as it is
/// produced (one buffer, reused: nothing grows with the number of rows); `reached` is called
/// with each output time reached (the command line's progress bar). `Err` when the sink fails
/// (a CSV that cannot be written).
pub fn solve(
    mut sim: Simulation,
    grid: &OutputGrid,
    mut sink: impl FnMut(&[f64]) -> Result<(), String>,
    mut reached: impl FnMut(f64),
) -> Result<Solve, String> {
    let mut row = vec![0.0; output_variables(&sim).len()];
    // A row with a value that is not finite is not kept: the run stops there (check 10).
    let mut record = |sim: &mut Simulation| -> Result<Option<StepFailure>, String> {
        write_outputs(sim, &mut row);
        match non_finite(sim, &row) {
            Some(f) => Ok(Some(f)),
            None => sink(&row).map(|()| None),
        }
    };
    let mut failure = record(&mut sim)?;
    let mut solve_s = 0.0;
    let mut k = 1usize;
    'outer: while k <= grid.len() && failure.is_none() {
        let t_k = grid.time(k);
        let start = Instant::now();
        let result = sim.advance_to(t_k);
        solve_s += start.elapsed().as_secs_f64();
        failure = match result {
            Ok(Advance::Reached) => {
                // Once per output point, never inside the step loop.
                reached(t_k);
                k += 1;
                record(&mut sim)?
            }
            Ok(Advance::Exit { .. }) => record(&mut sim)?,
            Ok(Advance::Finished(_)) => break 'outer,
            Err(f) => Some(f),
        };
    }
    Ok(Solve {
        solve_s,
        failure,
        sim,
    })
}

/// [`solve`] of `m` (with `method` instead of the file's, if given), keeping every row: for
/// callers that hand the whole table on (the Python package's `Model.run`).
pub fn solve_keeping_rows(
    m: &LoadedModel,
    method: Option<&str>,
) -> Result<(Vec<Vec<f64>>, Solve), String> {
    let grid = output_times(m)?;
    let sim = build_simulation(&m.spec, method)?;
    let mut rows = Vec::with_capacity(grid.len() + 2);
    let s = solve(
        sim,
        &grid,
        |row| {
            rows.push(row.to_vec());
            Ok(())
        },
        |_| (),
    )?;
    Ok((rows, s))
}

/// Seconds of one solve through the output times of [`solve`], the `advance_to` calls only,
/// timed as one span: a clock read per output time (tens of ns) is no part of the solve.
pub fn time_solve(m: &LoadedModel, method: Option<&str>) -> Result<f64, String> {
    let grid = output_times(m)?;
    let mut sim = build_simulation(&m.spec, method)?;
    let start = Instant::now();
    let mut k = 1usize;
    while k <= grid.len() {
        match sim.advance_to(grid.time(k)) {
            Ok(Advance::Reached) => k += 1,
            Ok(Advance::Exit { .. }) => {}
            Ok(Advance::Finished(_)) | Err(_) => break,
        }
    }
    Ok(start.elapsed().as_secs_f64())
}

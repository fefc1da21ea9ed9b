//! Kinks of a continuous law located as events: a regulator's seats at their ends of travel,
//! against a tight-tolerance BDF run of the same model.

use crate::common::{output, sim_of};

/// A relieving regulator (set 4 bar gauge, range 0.5 bar, C = 1e-8 m³/(s·Pa), b = 0.6) between
/// a 10 bar supply and a 0.1 L outlet starting at 6 bar, which an orifice (C = 3e-8) draws to
/// the atmosphere until 0.12 s; the set point falls to 3 bar gauge from 0.25 s to 0.3 s. The
/// outlet falls through the relief seat's fully-open point (5.5 bar), the set point (5 bar) and
/// the main seat's fully-open point (4.5 bar), rises back through it when the draw closes, and
/// the falling set point passes it again (the relief seat cracks).
fn regulator_model(method: &str, rtol: f64) -> String {
    format!(
        r#"
[model]
name = "regulator_kinks"
[gas]
species = "air"
[solver]
method = "{method}"
t_end = 0.4
rtol = {rtol:e}
atol = 1e-16
[[chamber]]
name = "out"
volume = "0.1 L"
pressure = "6 bar"
temperature = 288.15
[[reservoir]]
name = "supply"
pressure = "10 bar"
temperature = 288.15
[[reservoir]]
name = "atm"
pressure = 1e5
temperature = 288.15
[[regulator]]
name = "reg"
from = "supply"
to = "out"
exhaust = "atm"
set_pressure = {{ table = [[0, 4e5], [0.25, 4e5], [0.3, 3e5]] }}
ambient_pressure = 1e5
regulation_range = "0.5 bar"
sonic_conductance = 1e-8
critical_pressure_ratio = 0.6
[[orifice]]
name = "draw"
from = "out"
to = "atm"
sonic_conductance = 3e-8
critical_pressure_ratio = 0.5
opening = {{ table = [[0, 1], [0.12, 0]], interpolation = "step" }}
"#
    )
}

/// The outlet's pressure and mass every 10 ms, and the run's events.
fn trajectory(method: &str, rtol: f64) -> (Vec<[f64; 2]>, usize) {
    let mut sim = sim_of(&regulator_model(method, rtol));
    let mut rows = Vec::new();
    for k in 1..=40 {
        sim.advance_to(0.01 * k as f64)
            .unwrap_or_else(|e| panic!("{method}: {}", e.message));
        rows.push([output(&mut sim, "out.p"), output(&mut sim, "out.m")]);
    }
    (rows, sim.stats.events as usize)
}

/// Located, the seats' ends of travel keep dopri5 and auto at rtol 1e-6 within 3 × rtol of an
/// rtol 1e-11 BDF run; stepped over (before they were events) both ended 19.1 × rtol from it.
#[test]
fn regulator_openings_ends_of_travel_are_located() {
    let (reference, ref_events) = trajectory("bdf", 1e-11);
    let rtol = 1e-6;
    for method in ["dopri5", "auto"] {
        let (rows, events) = trajectory(method, rtol);
        let mut worst = (0.0f64, 0);
        for (k, (a, b)) in rows.iter().zip(&reference).enumerate() {
            for (x, y) in a.iter().zip(b) {
                let rel = (x / y - 1.0).abs();
                if rel > worst.0 {
                    worst = (rel, k + 1);
                }
            }
        }
        println!(
            "{method} at rtol {rtol:e}: largest relative difference from bdf at 1e-11 {:.3e} \
             ({:.2} × rtol) at t = {:.2} s; {events} events (bdf: {ref_events})",
            worst.0,
            worst.0 / rtol,
            0.01 * worst.1 as f64
        );
        // Five crossings at least: 5.5, 5.0 and 4.5 bar falling, 4.5 bar rising, the set point.
        assert!(events >= 5, "{method}: {events} events");
        assert!(worst.0 < 3.0 * rtol, "{method}: {:e}", worst.0);
    }
}

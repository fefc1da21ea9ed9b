//! A check or relief valve's opening as a catalogue curve (`poppet_table`,
//! `src/components/poppet_table.rs`): a two-row table is the linear poppet, a three-row table's
//! flow is the ISO 6358 law times the opening interpolated by hand, and a relief valve with a
//! table vents to its closing pressure with every adaptive method.

use crate::common::{output, sim_of};

/// A 1 L tank at 10 bar vented to 1 atm through a relief valve of area 1e-5 m² whose
/// poppet is `poppet` (its keys), with `method` at its default tolerances.
fn vent_model(method: &str, poppet: &str, t_end: f64) -> String {
    format!(
        r#"
[model]
name = "relief_vent"
[gas]
R = 287.0
cp = 1004.5
[solver]
method = "{method}"
t_end = {t_end}
[[chamber]]
name = "tank"
volume = 1e-3
pressure = 10e5
temperature = 300.0
[[reservoir]]
name = "atm"
pressure = 101325.0
temperature = 293.15
[[orifice]]
name = "relief"
from = "tank"
to = "atm"
area = 1e-5
{poppet}
"#
    )
}

/// The tank's pressure at t = 0, 0.01, …, `t_end`.
fn pressures(src: &str, t_end: f64) -> Vec<f64> {
    let mut sim = sim_of(src);
    let n = (t_end / 0.01).round() as usize;
    (0..=n)
        .map(|i| {
            sim.advance_to(i as f64 * 0.01).expect("runs");
            output(&mut sim, "tank.p")
        })
        .collect()
}

/// [[Δp_c, 0], [Δp_f, 1]] interpolates 0 + 1·(Δp − Δp_c)/(Δp_f − Δp_c), the linear poppet's
/// own expression, and its two event functions are Δp − Δp_c and Δp − Δp_f: the runs agree
/// to round-off (here: to the bit), with a wide band (5 → 8 bar) the tank spends time in.
#[test]
fn a_two_row_table_is_the_linear_poppet() {
    for method in ["dopri5", "bdf"] {
        let linear = pressures(
            &vent_model(
                method,
                "cracking_pressure = 5e5\nfull_flow_pressure = 8e5",
                1.0,
            ),
            1.0,
        );
        let table = pressures(
            &vent_model(method, "poppet_table = [[5e5, 0], [8e5, 1]]", 1.0),
            1.0,
        );
        let worst = linear
            .iter()
            .zip(&table)
            .map(|(a, b)| (a - b).abs() / a)
            .fold(0.0, f64::max);
        println!(
            "{method}: largest relative difference of tank.p {worst:e} over {} samples, \
             end {} Pa",
            linear.len(),
            linear[linear.len() - 1]
        );
        assert!(worst <= 1e-14, "{method}: {worst:e}");
    }
}

/// ISO 6358 (ISO 6358-1:2013 with Sanville's laminar region at 0.999, ISO 8778's ρ₀, T₀),
/// written here from the standard, not the code's function.
fn iso_by_hand(c: f64, b: f64, p_u: f64, t_u: f64, p_d: f64) -> f64 {
    let (rho0, t0, lam) = (1.185, 293.15, 0.999);
    let r = p_d / p_u;
    let choked = c * p_u * rho0 * (t0 / t_u).sqrt();
    if r <= b {
        choked
    } else if r <= lam {
        choked * (1.0 - ((r - b) / (1.0 - b)).powi(2)).sqrt()
    } else {
        let k1 = c * rho0 / (1.0 - lam) * (1.0 - ((lam - b) / (1.0 - b)).powi(2)).sqrt();
        k1 * (p_u - p_d) * (t0 / t_u).sqrt()
    }
}

/// A check valve [[1 bar, 0], [2 bar, 0.3], [4 bar, 1]] between two reservoirs: its flow at
/// sampled pressure differences (closed, each piece, a row, beyond the last, reversed) is
/// the ISO law times the opening interpolated by hand.
#[test]
fn a_three_row_table_is_the_iso_law_times_its_interpolated_opening() {
    let (c, b, t_from) = (2e-8, 0.3, 320.0);
    let rows = [(1e5, 0.0), (2e5, 0.3), (4e5, 1.0)];
    let opening = |dp: f64| {
        if dp <= rows[0].0 {
            return 0.0;
        }
        for w in rows.windows(2) {
            let ((p0, x0), (p1, x1)) = (w[0], w[1]);
            if dp <= p1 {
                return x0 + (x1 - x0) * (dp - p0) / (p1 - p0);
            }
        }
        1.0
    };
    let p_to = 2e5;
    let mut worst = 0.0f64;
    for dp in [-1e5, 0.5e5, 1e5, 1.4e5, 2e5, 2.7e5, 3.9e5, 4e5, 7e5] {
        let p_from = p_to + dp;
        let src = format!(
            r#"
[model]
name = "check"
[gas]
R = 287.0
cp = 1004.5
[solver]
t_end = 0.1
[[chamber]]
name = "c"
volume = 1e-3
pressure = 1e5
temperature = 300.0
[[reservoir]]
name = "a"
pressure = {p_from:e}
temperature = {t_from}
[[reservoir]]
name = "b"
pressure = {p_to:e}
temperature = 250.0
[[orifice]]
name = "o"
from = "a"
to = "b"
sonic_conductance = {c:e}
critical_pressure_ratio = {b}
poppet_table = [[1e5, 0], [2e5, 0.3], [4e5, 1]]
"#
        );
        let mut sim = sim_of(&src);
        let got = output(&mut sim, "o.mdot");
        let want = if dp > 0.0 {
            opening(dp) * iso_by_hand(c, b, p_from, t_from, p_to)
        } else {
            0.0
        };
        let rel = (got - want).abs() / want.abs().max(1e-6);
        println!(
            "Δp = {dp:e} Pa: opening {:.4}, {got:e} kg/s (by hand {want:e}), rel {rel:.2e}",
            opening(dp)
        );
        worst = worst.max(rel);
        assert!(rel <= 1e-13, "Δp = {dp}: {got:e} vs {want:e}");
    }
    println!("largest relative difference {worst:e}");
}

/// A relief valve [[5 bar, 0], [5.2 bar, 0.4], [5.5 bar, 1]] vents a 1 L tank from 10 bar:
/// closed at and below 5 bar, it settles at 5 bar + p_atm = 601325 Pa (the pressure
/// approaches it exponentially inside the first piece, at least ~200/s here), within the
/// default tolerance rtol 1e-6 (0.6 Pa), with every adaptive method.
#[test]
fn a_relief_valve_with_a_table_settles_on_its_closed_form() {
    let p_closed = 101325.0 + 5e5;
    let tol_pa = 1e-6 * p_closed;
    let mut worst = (0.0f64, "");
    for method in ["dopri5", "bdf", "backward-euler", "auto"] {
        let src = vent_model(
            method,
            "poppet_table = [[5e5, 0], [5.2e5, 0.4], [5.5e5, 1]]",
            5.0,
        );
        let mut sim = sim_of(&src);
        sim.advance_to(5.0)
            .unwrap_or_else(|e| panic!("{method}: {}", e.message));
        let p = output(&mut sim, "tank.p");
        let err = p - p_closed;
        println!(
            "{method:>14}: p = {p:.6} Pa, error {err:+.3e} Pa (tolerance {tol_pa:.2} Pa), {} \
             events",
            sim.stats.events
        );
        if err.abs() > worst.0 {
            worst = (err.abs(), method);
        }
        assert!(
            err.abs() <= tol_pa,
            "{method}: {p} Pa, {err:e} from closed form"
        );
        assert!(sim.stats.events >= 2, "{method}: the rows are located");
    }
    println!(
        "worst {:.3e} Pa ({}), margin {:.1}×",
        worst.0,
        worst.1,
        tol_pa / worst.0.max(1e-300)
    );
}

//! Switches of component laws located as events: a relief valve's cracking and full-flow
//! points, whatever its band, with every method. Without them a step straddles the kink, its
//! error estimate does not see it, and a 1 L tank vents below the pressure at which its relief
//! valve closes.

use plenum::integrators::METHODS;

use crate::common::{output, sim_of};

/// A 1 L tank at 10 bar vented to 1 atm through a relief valve cracking at 5 bar with a band
/// `band_pa` to full flow.
fn vent_model(method: &str, band_pa: f64, t_end: f64) -> String {
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
step = 1e-4
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
cracking_pressure = 5e5
full_flow_pressure = {full}
"#,
        full = 5e5 + band_pa
    )
}

#[test]
fn relief_valve_vents_to_its_closing_pressure_with_every_method_and_band() {
    // Closed form: the valve is closed for Δp ≤ Δp_c, so the tank can never fall below
    // p_atm + Δp_c = 601325 Pa; inside the band the flow is proportional to Δp − Δp_c, so the
    // pressure approaches it exponentially (rate ≈ ṁ_open/(Δp_f − Δp_c)·γRT/V, at least 40/s
    // for the widest band here): after 5 s it is there to far below the tolerance. The default
    // tolerance is rtol 1e-6: 0.6 Pa here; the fixed-step methods run h = 1e-4 s.
    let p_closed = 101325.0 + 5e5;
    let tol_pa = 1e-6 * p_closed;
    let mut worst = (0.0f64, String::new());
    for band in [1.0, 100.0, 1e4, 1e5] {
        for &(method, _) in METHODS {
            let mut sim = sim_of(&vent_model(method, band, 5.0));
            sim.advance_to(5.0)
                .unwrap_or_else(|e| panic!("{method}, band {band} Pa: {}", e.message));
            let p = output(&mut sim, "tank.p");
            let err = p - p_closed;
            println!(
                "band {band:>6} Pa, {method:>14}: p = {p:.6} Pa, error {err:+.3e} Pa \
                 (tolerance {tol_pa:.2} Pa), {} events",
                sim.stats.events
            );
            if err.abs() > worst.0 {
                worst = (err.abs(), format!("{method}, band {band}"));
            }
            assert!(
                err.abs() <= tol_pa,
                "{method}, band {band} Pa: {p} Pa, {err:e} Pa from the closed form"
            );
            assert!(sim.stats.events >= 1, "{method}: the closing is located");
        }
    }
    println!(
        "worst error {:.3e} Pa ({}), margin {:.1}×",
        worst.0,
        worst.1,
        tol_pa / worst.0.max(1e-300)
    );
}

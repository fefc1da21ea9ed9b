//! The inertial tube (`[[inertial_tube]]`, a tube whose gas column's mass flow is a state) and
//! the hose with `inertia = true`, against closed forms and a peer: the laminar flow's
//! exponential approach to Δp/R_lam between two held pressures, the steady flow equal to the
//! plain `[[tube]]`'s in the same run (laminar and turbulent), a pressure step's travel time
//! along an N-segment hose converging to L/c, and no step arriving before sound could (which the
//! hose without inertia, a diffusive line, does).

use crate::common::{output, sim_of};

/// The specific gas constant of the library's air, J/(kg·K) (docs/model-file.md).
const AIR_R: f64 = 287.05;

/// Two reservoirs joined by an inertial tube and, as the peer, a plain tube of the same
/// geometry.
fn pair(dp_pa: f64, length_m: f64, diameter_m: f64) -> String {
    format!(
        r#"
[model]
name = "pair"
[gas]
species = "air"
[solver]
method = "dopri5"
rtol = 1e-11
atol = 1e-20
t_end = 1.0
[[reservoir]]
name = "a"
pressure = {pa}
temperature = 293.15
[[reservoir]]
name = "b"
pressure = 1e5
temperature = 293.15
[[tube]]
name = "plain"
from = "a"
to = "b"
length = {length_m}
diameter = {diameter_m}
[[inertial_tube]]
name = "heavy"
from = "a"
to = "b"
length = {length_m}
diameter = {diameter_m}
"#,
        pa = 1e5 + dp_pa
    )
}

#[test]
fn laminar_flow_approaches_the_tubes_exponentially() {
    let (dp, l, d, mu) = (50.0, 1.0, 1e-3, 1.82e-5);
    let mut sim = sim_of(&pair(dp, l, d));
    // The closed form: ρ̄ the mean of both ends' densities, R_lam = 128·μ·L/(π·d⁴·ρ̄),
    // ṁ(t) = Δp/R_lam·(1 − exp(−t/τ)), τ = L/(A·R_lam).
    let t_k = 293.15;
    let rho = 0.5 * ((1e5 + dp) + 1e5) / (AIR_R * t_k);
    let pi = std::f64::consts::PI;
    let r_lam = 128.0 * mu * l / (pi * d.powi(4) * rho);
    let tau = l / (pi / 4.0 * d * d * r_lam);
    let m_inf = dp / r_lam;
    let re = 4.0 * m_inf / (pi * d * mu);
    let mut worst = 0.0f64;
    for k in 1..=40 {
        let t = tau * k as f64 / 8.0;
        sim.advance_to(t).expect("advances");
        let m = output(&mut sim, "heavy.mdot");
        let exact = m_inf * (1.0 - (-t / tau).exp());
        worst = worst.max(((m - exact) / m_inf).abs());
    }
    let plain = output(&mut sim, "plain.mdot");
    println!(
        "Re = {re:.2}, τ = {tau:.4e} s, ṁ∞ = {m_inf:.6e} kg/s: worst |ṁ − closed form| / ṁ∞ over \
         5τ {worst:.2e} (limit 1e-9); the plain tube's ṁ {plain:.9e}, {:.2e} from Δp/R_lam",
        (plain / m_inf - 1.0).abs()
    );
    assert!(re < 2300.0, "laminar");
    assert!(worst <= 1e-9, "{worst:e}");
    assert!((plain / m_inf - 1.0).abs() <= 1e-12);
}

#[test]
fn steady_flow_equals_the_plain_tubes_laminar_and_turbulent() {
    for (dp, l, d) in [(50.0, 1.0, 1e-3), (2e4, 1.0, 4e-3), (5e4, 0.3, 6e-3)] {
        let mut sim = sim_of(&pair(dp, l, d));
        sim.advance_to(1.0).expect("advances");
        let (heavy, plain) = (
            output(&mut sim, "heavy.mdot"),
            output(&mut sim, "plain.mdot"),
        );
        let re = 4.0 * plain / (std::f64::consts::PI * d * 1.82e-5);
        let rel = (heavy / plain - 1.0).abs();
        println!(
            "Δp = {dp} Pa, L = {l} m, d = {d} m: Re = {re:.0}, inertial {heavy:.12e} kg/s, \
             plain {plain:.12e} kg/s, relative difference {rel:.1e} (limit 1e-9)"
        );
        assert!(rel <= 1e-9, "{rel:e}");
    }
}

/// A hose with inertia, N segments, between a supply one step above the hose's pressure and a
/// closed end (a 1 cm³ chamber, far below the hose's volume): when the end's pressure first
/// passes half of the reflected step (p0 + Δp, of p0 + 2·Δp), s.
fn arrival_s(segments: usize, length_m: f64, dp_pa: f64) -> f64 {
    let p0 = 1e5;
    let src = format!(
        r#"
[model]
name = "line"
[gas]
species = "air"
[solver]
method = "dopri5"
rtol = 1e-9
t_end = 1.0
[[reservoir]]
name = "supply"
pressure = {ps}
temperature = 293.15
[[hose]]
name = "h"
from = "supply"
to = "end"
diameter = 0.02
length = {length_m}
segments = {segments}
inertia = true
pressure = {p0}
temperature = 293.15
[[chamber]]
name = "end"
volume = 1e-6
pressure = {p0}
temperature = 293.15
"#,
        ps = p0 + dp_pa
    );
    let mut sim = sim_of(&src);
    let target = p0 + dp_pa;
    // Nothing arrives before 0.8·L/c (the test's hoses are L/c = 10 ms long).
    let (h, t0) = (2e-6, 8e-3);
    sim.advance_to(t0).expect("advances");
    let (mut t_prev, mut p_prev) = (t0, output(&mut sim, "end.p"));
    assert!(p_prev < target, "arrived before 0.8·L/c");
    for k in 1..200_000 {
        let t = t0 + k as f64 * h;
        if let Err(e) = sim.advance_to(t) {
            panic!("N = {segments}: {e}");
        }
        let p = output(&mut sim, "end.p");
        if p >= target {
            return t_prev + (target - p_prev) / (p - p_prev) * (t - t_prev);
        }
        (t_prev, p_prev) = (t, p);
    }
    panic!("the step never arrived");
}

#[test]
fn a_steps_travel_time_along_the_hose_converges_to_l_over_c() {
    // c = √(κ·R·T) of air (adiabatic chambers), L/c = 10 ms.
    let c = (1.4 * AIR_R * 293.15).sqrt();
    let length_m = c * 0.01;
    let travel = length_m / c;
    let ns = [5, 10, 20, 40];
    let mut times = Vec::new();
    for n in ns {
        let t = arrival_s(n, length_m, 1e3);
        println!(
            "N = {n:2}: the step reaches the closed end at {:.4} ms, L/c = {:.4} ms, relative \
             difference {:+.4}",
            t * 1e3,
            travel * 1e3,
            t / travel - 1.0
        );
        times.push(t);
    }
    // A discrete line's front spreads over ~N^(1/3) segments (its step response is an Airy
    // integral, whose half level lies past the front): the half-level time lags by
    // ~N^(1/3)·L/(N·c), an error ∝ N^(−2/3). Extrapolated at that order from N = 20 and 40:
    let errors: Vec<f64> = times.iter().map(|t| (t / travel - 1.0).abs()).collect();
    let orders: Vec<f64> = errors.windows(2).map(|w| (w[0] / w[1]).log2()).collect();
    let q = 2f64.powf(2.0 / 3.0);
    let limit = times[3] + (times[3] - times[2]) / (q - 1.0);
    let err_limit = limit / travel - 1.0;
    println!(
        "observed orders {orders:.3?} (theory 2/3); extrapolated travel time {:.4} ms, \
         {err_limit:+.4} from L/c (limit 0.002)",
        limit * 1e3
    );
    assert!(
        orders.iter().all(|&p| (0.45..=0.9).contains(&p)),
        "{orders:?}"
    );
    assert!(err_limit.abs() <= 0.002, "{err_limit:e}");
}

/// The hose of [`arrival_s`] (N = 20) at half the travel time L/c: the end's rise, Pa.
fn rise_at_half_travel_pa(inertia: bool) -> f64 {
    let c = (1.4 * AIR_R * 293.15).sqrt();
    let length_m = c * 0.01;
    let src = format!(
        r#"
[model]
name = "line"
[gas]
species = "air"
[solver]
method = "bdf"
rtol = 1e-8
t_end = 1.0
[[reservoir]]
name = "supply"
pressure = 101000.0
temperature = 293.15
[[hose]]
name = "h"
from = "supply"
to = "end"
diameter = 0.02
length = {length_m}
segments = 20
inertia = {inertia}
pressure = 1e5
temperature = 293.15
[[chamber]]
name = "end"
volume = 1e-6
pressure = 1e5
temperature = 293.15
"#
    );
    let mut sim = sim_of(&src);
    sim.advance_to(0.5 * length_m / c).expect("advances");
    output(&mut sim, "end.p") - 1e5
}

#[test]
fn without_inertia_the_step_arrives_before_sound_could() {
    // Without inertia the hose is a diffusive line (D = p·d²/(32·μ) ≈ 7·10⁴ m²/s here), whose
    // end feels the step at once: no causal wave does.
    let (diffusive, inertial) = (rise_at_half_travel_pa(false), rise_at_half_travel_pa(true));
    println!(
        "at L/(2c) the closed end has risen {diffusive:.3} Pa without inertia, {inertial:.3e} Pa \
         with it, of the 1000 Pa step"
    );
    assert!(diffusive > 500.0);
    assert!(inertial.abs() < 1.0);
}

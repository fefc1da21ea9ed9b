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

/// A 1 L receiver fed 2 g/s from a supply at 320 K and relieved to the atmosphere through an
/// ISO 6358 relief valve cracking at 4 bar with a 1 Pa band: it settles inside the band;
/// `solver`'s lines (the method, its step or tolerances).
pub(crate) fn receiver(solver: &str) -> String {
    format!(
        r#"
[model]
name = "receiver"
[gas]
R = 287.0
cp = 1004.5
[solver]
{solver}
t_end = 20.0
[[chamber]]
name = "vessel"
volume = 1e-3
pressure = 1e5
temperature = 300.0
[[reservoir]]
name = "supply"
pressure = 8e5
temperature = 320.0
[[reservoir]]
name = "atm"
pressure = 1e5
temperature = 293.15
[[mass_flow]]
name = "feed"
from = "supply"
to = "vessel"
rate = 2e-3
[[orifice]]
name = "relief"
from = "vessel"
to = "atm"
sonic_conductance = 1e-8
critical_pressure_ratio = 0.3
cracking_pressure = 4e5
full_flow_pressure = 400001.0
"#
    )
}

/// The receiver with `method` at a fixed step of 1e-4 s (the adaptive methods' first step).
fn receiver_model(method: &str) -> String {
    receiver(&format!("method = \"{method}\"\nstep = 1e-4"))
}

#[test]
fn receiver_settles_inside_a_one_pascal_band_on_its_closed_form() {
    // Steady state: ṁ_out = ṁ_in, T = T_in, and the choked ISO 6358 flow through the partly
    // open valve x_p·k·p, k = C·ρ₀·√(T₀/T_in), x_p = (p − p_a − Δp_c)/(Δp_f − Δp_c), equals
    // ṁ_in: p² − (p_a + Δp_c)·p − ṁ_in·(Δp_f − Δp_c)/k = 0.
    use plenum::components::orifice::{ISO_RHO0_KG_PER_M3, ISO_T0_K};
    let (mdot_in, t_in, c, p_a, crack, full) = (2e-3, 320.0, 1e-8, 1e5, 4e5, 400001.0);
    let k = c * ISO_RHO0_KG_PER_M3 * (ISO_T0_K / t_in).sqrt();
    let s = p_a + crack;
    let p_exact = 0.5 * (s + (s * s + 4.0 * mdot_in * (full - crack) / k).sqrt());
    let tol_pa = 1e-6 * p_exact;
    println!("closed form p = {p_exact:.6} Pa (band 1 Pa, tolerance {tol_pa:.2} Pa)");
    // The methods that hold a band whose stiffness (ṁ_open/1 Pa·γRT/V ≈ 7e5 /s) is far
    // beyond an explicit step of 1e-4 s: `auto` takes its BDF once its steps chatter between
    // the band's ends (docs/integrators.md, "Switches").
    for method in ["auto", "bdf", "backward-euler", "bdf1"] {
        let mut sim = sim_of(&receiver_model(method));
        for i in 1..=20 {
            sim.advance_to(i as f64)
                .unwrap_or_else(|e| panic!("{method}: {}", e.message));
        }
        let p = output(&mut sim, "vessel.p");
        let err = p - p_exact;
        println!(
            "{method:>14}: p = {p:.6} Pa, error {err:+.3e} Pa (margin {:.0}×), {} steps, {} events",
            tol_pa / err.abs().max(1e-300),
            sim.stats.steps,
            sim.stats.events
        );
        assert!(err.abs() <= tol_pa, "{method}: {err:e} Pa");
        assert!(sim.stats.events < 1000, "{method}: chattered");
    }
}

/// Chamber a filled at 1 g/s from a supply, joined to a closed chamber b by a check valve
/// cracking at 1 bar with a 1 Pa band.
fn check_model(method: &str) -> String {
    format!(
        r#"
[model]
name = "check"
[gas]
R = 287.0
cp = 1004.5
[solver]
method = "{method}"
t_end = 2.0
step = 1e-4
[[chamber]]
name = "a"
volume = 1e-3
pressure = 1e5
temperature = 300.0
[[chamber]]
name = "b"
volume = 1e-3
pressure = 1e5
temperature = 300.0
[[reservoir]]
name = "supply"
pressure = 8e5
temperature = 300.0
[[mass_flow]]
name = "feed"
from = "supply"
to = "a"
rate = 1e-3
[[orifice]]
name = "check"
from = "a"
to = "b"
area = 1e-6
cracking_pressure = 1e5
full_flow_pressure = 100001.0
"#
    )
}

#[test]
fn check_valve_with_a_narrow_band_holds_its_cracking_pressure() {
    // Once it has cracked (t_c = Δp_c·V/(γ·R·T·ṁ) = 0.83 s), the valve passes part of the
    // feed to b, which it can only do open: Δp_c < Δp ≤ Δp_f, a band of 1 Pa. The tolerance
    // is rtol 1e-6 of a's pressure.
    let (crack, full) = (1e5, 100001.0);
    for method in ["auto", "bdf", "backward-euler", "bdf1", "dopri5"] {
        let mut sim = sim_of(&check_model(method));
        let mut worst = 0.0f64;
        for i in 1..=200 {
            let t = i as f64 * 0.01;
            sim.advance_to(t)
                .unwrap_or_else(|e| panic!("{method}: {}", e.message));
            let (pa, pb) = (output(&mut sim, "a.p"), output(&mut sim, "b.p"));
            if t >= 1.0 {
                let tol = 1e-6 * pa;
                let dp = pa - pb;
                let outside = (crack - dp).max(dp - full).max(0.0);
                worst = worst.max(outside / tol);
                assert!(
                    outside <= tol,
                    "{method}: Δp = {dp} Pa at {t} s, {outside:e} Pa outside the band"
                );
            }
        }
        let (pa, pb) = (output(&mut sim, "a.p"), output(&mut sim, "b.p"));
        println!(
            "{method}: Δp = {:.6} Pa at 2 s (band {crack}..{full} Pa), worst excursion from \
             the band {worst:.2e} of the tolerance, {} events",
            pa - pb,
            sim.stats.events
        );
    }
}

#[test]
fn relief_valve_through_co_simulation_vents_to_its_closing_pressure() {
    // The 1 Pa band's tank as an FMU instance (what fmi2DoStep runs), stepped by a master at
    // 0.01 s with the model's own method and tolerance (`auto`, rtol 1e-6): the same closed
    // form, 601325 Pa, within the tolerance.
    use plenum::cosim::Instance;
    let p_closed = 101325.0 + 5e5;
    let tol_pa = 1e-6 * p_closed;
    for method in ["auto", "rk4", "bdf"] {
        let src = vent_model(method, 1.0, 1.0);
        let mut inst = Instance::new(&src, "model.toml").expect("loads");
        inst.setup_experiment(0.0, None).expect("setup");
        inst.enter_initialization_mode().expect("enter");
        inst.exit_initialization_mode().expect("exit");
        let vr = inst
            .description()
            .variables
            .iter()
            .find(|v| v.name == "tank.p")
            .expect("tank.p")
            .value_reference;
        let mut t = 0.0;
        for _ in 0..100 {
            inst.do_step(t, 0.01).expect("fmi2DoStep");
            t += 0.01;
        }
        let mut p = [0.0];
        inst.get_real(&[vr], &mut p).expect("get");
        let err = p[0] - p_closed;
        println!(
            "Co-Simulation {method:>5}: p = {:.6} Pa at t = {t:.2} s, error {err:+.3e} Pa \
             (tolerance {tol_pa:.2} Pa)",
            p[0]
        );
        assert!(err.abs() <= tol_pa, "{method}: {err:e} Pa");
    }
}

/// A Model Exchange master as an importer runs one: forward Euler at 1e-5 s, the event
/// indicators read after each step, a sign change located by bisection on the step, then event
/// mode there. The 1 Pa band's tank ends at 601325 Pa within the tolerance, whether the band is
/// given by its two points or as a `poppet_table` of two rows (the same law, whose indicators
/// are the table's row functions).
#[test]
fn relief_valve_switches_are_model_exchange_event_indicators() {
    let points = vent_model("auto", 1.0, 1.0);
    let table = points.replace(
        "cracking_pressure = 5e5\nfull_flow_pressure = 500001\n",
        "poppet_table = [[5e5, 0.0], [500001.0, 1.0]]\n",
    );
    assert_ne!(points, table, "the table replaces the points");
    model_exchange_vent(&points, "cracking and full-flow points");
    model_exchange_vent(&table, "poppet_table");
}

fn model_exchange_vent(src: &str, label: &str) {
    use plenum::cosim::{Instance, Interface};
    let p_closed = 101325.0 + 5e5;
    let tol_pa = 1e-6 * p_closed;
    let mut inst =
        Instance::with_interface(src, "model.toml", Interface::ModelExchange).expect("loads");
    inst.setup_experiment(0.0, None).expect("setup");
    inst.enter_initialization_mode().expect("enter");
    inst.exit_initialization_mode().expect("exit");
    inst.update_discrete_states().expect("event update");
    inst.enter_continuous_time_mode().expect("continuous");
    let (n, nz) = (inst.n_states(), inst.n_event_indicators());
    println!("{label}: {n} states, {nz} event indicators");
    assert!(
        nz >= 4,
        "the valve's cracking and full-flow points, both ways"
    );
    let (mut x, mut dx, mut x1) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    let (mut z0, mut z1) = (vec![0.0; nz], vec![0.0; nz]);
    inst.continuous_states(&mut x).expect("x");
    inst.event_indicators(&mut z0).expect("z");
    let crossed = |a: &[f64], b: &[f64]| {
        a.iter()
            .zip(b)
            .any(|(&g0, &g1)| (g0 < 0.0 && g1 >= 0.0) || (g0 > 0.0 && g1 <= 0.0))
    };
    let (h, mut t, mut events) = (1e-5, 0.0, 0);
    while t < 1.0 - 0.5 * h {
        inst.derivatives(&mut dx).expect("dx");
        let at = |theta: f64, inst: &mut Instance, x1: &mut [f64], z: &mut [f64]| {
            for i in 0..n {
                x1[i] = x[i] + theta * h * dx[i];
            }
            inst.set_time(t + theta * h).expect("time");
            inst.set_continuous_states(x1).expect("x");
            inst.event_indicators(z).expect("z");
        };
        at(1.0, &mut inst, &mut x1, &mut z1);
        let mut theta = 1.0;
        if crossed(&z0, &z1) {
            let (mut lo, mut hi) = (0.0, 1.0);
            for _ in 0..60 {
                let mid = 0.5 * (lo + hi);
                at(mid, &mut inst, &mut x1, &mut z1);
                if crossed(&z0, &z1) {
                    hi = mid
                } else {
                    lo = mid
                }
            }
            at(hi, &mut inst, &mut x1, &mut z1);
            theta = hi;
        }
        t += theta * h;
        let step = inst.completed_integrator_step().expect("completed");
        if crossed(&z0, &z1) || step.enter_event_mode {
            events += 1;
            inst.enter_event_mode().expect("event mode");
            inst.update_discrete_states().expect("event update");
            inst.enter_continuous_time_mode().expect("continuous");
        }
        inst.continuous_states(&mut x).expect("x");
        inst.event_indicators(&mut z0).expect("z");
    }
    let vr = inst
        .description()
        .variables
        .iter()
        .find(|v| v.name == "tank.p")
        .expect("tank.p")
        .value_reference;
    let mut p = [0.0];
    inst.get_real(&[vr], &mut p).expect("get");
    let err = p[0] - p_closed;
    println!(
        "{label}: Model Exchange (Euler 1e-5 s, indicators located by bisection): p = {:.6} \
         Pa at t = {t:.5} s, error {err:+.3e} Pa (tolerance {tol_pa:.2} Pa), {events} event \
         modes",
        p[0]
    );
    assert!(events >= 2, "both switches entered event mode");
    assert!(err.abs() <= tol_pa, "{err:e} Pa");
}

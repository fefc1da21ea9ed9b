//! The gallery (`examples/*/model.toml`, examples/README.md): every example model is run through
//! the library
//! and its physics asserted against an independent truth (a closed form or a conservation law).
//! Each test prints the figures it checks.

use crate::common;

use common::repo_path;
use plenum::model::build::gas_of;
use plenum::model::{ModelFile, build_simulation, load_path};
use plenum::simulation::Advance;
use plenum::variables::{output_variables, write_outputs};

/// Output rows of one run (one per `output_interval`, plus a row at each piston exit).
struct Table {
    names: Vec<String>,
    rows: Vec<Vec<f64>>,
}

impl Table {
    fn col(&self, name: &str) -> Vec<f64> {
        let i = self
            .names
            .iter()
            .position(|n| n == name)
            .unwrap_or_else(|| panic!("no output {name}"));
        self.rows.iter().map(|r| r[i]).collect()
    }

    fn last(&self, name: &str) -> f64 {
        *self.col(name).last().expect("rows")
    }
}

fn example(name: &str) -> ModelFile {
    load_path(&repo_path(&format!("examples/{name}/model.toml")), &[])
        .unwrap_or_else(|e| panic!("examples/{name}/model.toml: {e:?}"))
        .spec
}

/// Run to `t_end` (or to the end of the run) on the model's output grid.
fn run(spec: &ModelFile) -> Table {
    let mut sim = build_simulation(spec, None).expect("builds");
    let names: Vec<String> = output_variables(&sim).into_iter().map(|v| v.name).collect();
    let mut out = vec![0.0; names.len()];
    let mut rows = Vec::new();
    write_outputs(&mut sim, &mut out);
    rows.push(out.clone());
    let (t0, t_end) = (spec.solver.t_start, spec.solver.t_end);
    let dt = spec.solver.output_interval.expect("output_interval");
    let n = ((t_end - t0) / dt).round() as usize;
    let mut k = 1;
    while k <= n {
        let t_k = if k == n { t_end } else { t0 + k as f64 * dt };
        match sim.advance_to(t_k).expect("no check failure") {
            Advance::Reached => k += 1,
            Advance::Exit { .. } => {}
            Advance::Finished(_) => break,
        }
        write_outputs(&mut sim, &mut out);
        rows.push(out.clone());
    }
    Table { names, rows }
}

fn rel_drift(x: &[f64]) -> f64 {
    x.iter()
        .map(|v| ((v - x[0]) / x[0]).abs())
        .fold(0.0, f64::max)
}

// ---------------------------------------------------------------------------------------------
// Air gun

/// BlasterSim eq. 3.8 with a dead volume: the gas (p0 in V0 = V_dead + A·x0) expands
/// adiabatically, p·V^γ = const, against p_atm + p_f on the bore area:
///   ½·m·v² = p0·V0/(γ − 1)·(1 − (V0/V)^(γ−1)) − (p_atm + p_f)·A·(x − x0),  V = V_dead + A·x.
fn airgun_closed_form(spec: &ModelFile, v_dead: f64, p0: f64, x: f64) -> f64 {
    let g = gas_of(spec.gas.as_ref()).gamma;
    let p = &spec.piston[0];
    let p_atm = spec.reservoir[0].pressure.as_const().expect("constant");
    let p_f = p.friction_dynamic.as_const().expect("constant");
    let v0 = v_dead + p.area * p.x0;
    let v = v_dead + p.area * x;
    let work =
        p0 * v0 / (g - 1.0) * (1.0 - (v0 / v).powf(g - 1.0)) - (p_atm + p_f) * p.area * (x - p.x0);
    (2.0 * work / p.mass).sqrt()
}

fn airgun_exit(spec: &ModelFile, barrel_m: f64) -> Table {
    let mut spec = spec.clone();
    spec.piston[0].x_exit = Some(barrel_m);
    let t = run(&spec);
    assert_eq!(t.last("projectile.exited"), 1.0, "no exit at {barrel_m} m");
    t
}

#[test]
fn airgun_single_chamber_limit_matches_blastersim_closed_form() {
    // Where the closed form applies: no transfer port, the chamber's gas behind the projectile.
    let full = example("airgun");
    let mut spec = full.clone();
    spec.orifice.clear();
    let (v_chamber, p0) = (full.chamber[0].volume, full.chamber[0].pressure);
    spec.chamber.retain(|c| c.name == "barrel");
    spec.chamber[0].volume = v_chamber;
    spec.chamber[0].pressure = p0;
    for barrel in [0.1, 0.2, 0.3, 0.5] {
        let t = airgun_exit(&spec, barrel);
        let (x, v) = (t.last("projectile.x"), t.last("projectile.v"));
        let exact = airgun_closed_form(&spec, v_chamber, p0, x);
        let err = (v - exact).abs() / exact;
        println!(
            "single chamber, barrel {barrel} m: v_exit = {v:.9} m/s, eq. 3.8 {exact:.9} m/s, relative error {err:.2e} (limit 1e-8)"
        );
        assert!(err < 1e-8);
    }
}

#[test]
fn airgun_exit_velocity_rises_with_barrel_length() {
    let spec = example("airgun");
    let (v_chamber, p0) = (spec.chamber[0].volume, spec.chamber[0].pressure);
    let v_dead = spec.chamber[1].volume;
    let mut last = 0.0;
    for barrel in [0.1, 0.2, 0.3, 0.4, 0.5] {
        let t = airgun_exit(&spec, barrel);
        let v = t.last("projectile.v");
        // The reversible single-volume expansion of the chamber's gas into chamber + barrel
        // bounds what the throttled flow through the port can deliver.
        let bound = airgun_closed_form(&spec, v_chamber + v_dead, p0, barrel);
        let e = t.col("energy_total");
        let m = t.col("mass_total");
        println!(
            "barrel {barrel} m: v_exit = {v:.4} m/s (single-volume closed form {bound:.4} m/s), \
             exit at {:.5} s, energy drift {:.1e} (limit 1e-10), mass drift {:.1e} (limit 1e-12)",
            t.last("time"),
            rel_drift(&e),
            rel_drift(&m)
        );
        assert!(v > last, "exit velocity must rise with barrel length");
        assert!(v < bound);
        assert!(rel_drift(&e) < 1e-10 && rel_drift(&m) < 1e-12);
        last = v;
    }
}

// ---------------------------------------------------------------------------------------------
// Tank blowdown

#[test]
fn blowdown_unchokes_when_the_isentropic_closed_form_says() {
    let spec = example("blowdown");
    let gas = gas_of(spec.gas.as_ref());
    let (g, r) = (gas.gamma, gas.r_j_per_kg_k);
    let c = &spec.chamber[0];
    let o = &spec.orifice[0];
    let (p0, t0, vol) = (c.pressure, c.temperature, c.volume);
    let p_atm = spec.reservoir[0].pressure.as_const().expect("constant");
    let area = o.area.as_ref().and_then(|a| a.as_const()).expect("area");
    let cd = o
        .discharge_coefficient
        .as_ref()
        .and_then(|a| a.as_const())
        .expect("discharge_coefficient");
    // Adiabatic tank, choked isentropic outflow (Anderson 5.21): ρ̇V = −C_d·A·Ψ·ρ·√(R·T),
    // T ∝ ρ^(γ−1): p/p0 = (1 + (γ−1)/2·k·t)^(−2γ/(γ−1)), k = C_d·A·Ψ·√(R·T0)/V,
    // Ψ = √γ·(2/(γ+1))^((γ+1)/(2(γ−1))).
    let psi = g.sqrt() * (2.0 / (g + 1.0)).powf((g + 1.0) / (2.0 * (g - 1.0)));
    let k = cd * area * psi * (r * t0).sqrt() / vol;
    let p_exact = |t: f64| p0 * (1.0 + 0.5 * (g - 1.0) * k * t).powf(-2.0 * g / (g - 1.0));
    let r_crit = (2.0 / (g + 1.0)).powf(g / (g - 1.0));
    // Unchoking: p_atm/p = r*.
    let t_star = ((p_atm / r_crit / p0).powf(-(g - 1.0) / (2.0 * g)) - 1.0) / (0.5 * (g - 1.0) * k);

    let table = run(&spec);
    let (time, p) = (table.col("time"), table.col("tank.p"));
    let mut worst: f64 = 0.0;
    for (t, p) in time.iter().zip(&p) {
        if *t <= t_star {
            worst = worst.max((p - p_exact(*t)).abs() / p_exact(*t));
        }
    }
    // The simulated crossing, interpolated in ln p between the rows around it (ln p is smooth).
    let i = p
        .iter()
        .position(|&x| p_atm / x > r_crit)
        .expect("unchokes");
    assert!(i > 0, "choked at the start");
    let (l0, l1, lc) = (p[i - 1].ln(), p[i].ln(), (p_atm / r_crit).ln());
    let t_cross = time[i - 1] + (time[i] - time[i - 1]) * (lc - l0) / (l1 - l0);
    println!(
        "choked at t = 0 (p_atm/p0 = {:.4} < r* = {r_crit:.4}); closed form unchokes at t* = {t_star:.6} s, \
         the run at {t_cross:.6} s (|Δ| {:.1e} s, limit 1e-5 s); choked-phase p error ≤ {worst:.1e} (limit 1e-9); \
         final p/p_atm = {:.6}",
        p_atm / p0,
        (t_cross - t_star).abs(),
        p.last().unwrap() / p_atm
    );
    assert!(p_atm / p0 < r_crit);
    assert!(worst < 1e-9);
    assert!((t_cross - t_star).abs() < 1e-5);
    // Unchoked for good, and nearly emptied down to the atmosphere by the end.
    assert!(p[i..].iter().all(|&x| p_atm / x > r_crit));
    assert!((p.last().unwrap() / p_atm - 1.0).abs() < 0.02);
    let m = table.col("mass_total");
    println!("mass_total drift {:.1e} (limit 1e-12)", rel_drift(&m));
    assert!(rel_drift(&m) < 1e-12);
}

// ---------------------------------------------------------------------------------------------
// Pneumatic cylinder

#[test]
fn cylinder_moves_only_after_the_valve_opens_and_returns_after_it_closes() {
    let spec = example("cylinder");
    let t = run(&spec);
    let (time, x, p) = (t.col("time"), t.col("rod.x"), t.col("cap.p"));
    let pis = &spec.piston[0];
    let p_atm = spec.reservoir[1].pressure.as_const().expect("constant");
    let p_supply = spec.reservoir[0].pressure.as_const().expect("constant");
    let (t_open, t_close) = (0.05, 0.35);
    let x_max = pis.x_max.expect("x_max");
    // Break-away: A·(p − p_atm) must exceed the spring preload plus static friction.
    let preload = pis.spring_stiffness * (0.0 - pis.spring_x0);
    let p_break = p_atm + preload / pis.area + pis.friction_static.as_const().expect("constant");
    let first_move = x.iter().position(|&v| v > 0.0).expect("moves");
    println!(
        "valve opens at {t_open} s; rod first moves at t = {} s with cap p = {:.0} Pa \
         (break-away pressure {p_break:.0} Pa; at the previous row {:.0} Pa)",
        time[first_move],
        p[first_move],
        p[first_move - 1]
    );
    assert!(time[first_move] > t_open);
    assert!(p[first_move - 1] <= p_break);
    assert!(
        x[..first_move]
            .iter()
            .zip(&t.col("rod.v"))
            .all(|(&x, &v)| x == 0.0 && v == 0.0)
    );
    // On the end stop while the inlet is open, and the cap filled to the supply pressure.
    let at = |ts: f64| time.iter().position(|&v| v >= ts - 1e-12).expect("time");
    let i_close = at(t_close) - 1;
    let full = time
        .iter()
        .position(|&v| v > t_open && (x_max - x[at(v)]).abs() < 1e-9);
    let t_full = full.map(|i| time[i]).expect("reaches x_max");
    println!(
        "reaches x_max = {x_max} m at t = {t_full} s; at {} s x = {} m, cap p/p_supply = {:.6}; \
         final x = {} m, cap p/p_atm = {:.6}",
        time[i_close],
        x[i_close],
        p[i_close] / p_supply,
        x.last().unwrap(),
        p.last().unwrap() / p_atm
    );
    assert!(t_full < t_close);
    assert!((x[i_close] - x_max).abs() < 1e-9);
    assert!((p[i_close] / p_supply - 1.0).abs() < 2e-3);
    // Back on x_min after the exhaust opens, vented.
    assert!(x.last().unwrap().abs() < 1e-9);
    assert!((p.last().unwrap() / p_atm - 1.0).abs() < 1e-3);
    let (m, e) = (t.col("mass_total"), t.col("energy_total"));
    println!(
        "mass_total drift {:.1e} (limit 1e-12), energy_total drift {:.1e} (limit 1e-10)",
        rel_drift(&m),
        rel_drift(&e)
    );
    assert!(rel_drift(&m) < 1e-12 && rel_drift(&e) < 1e-10);
}

// ---------------------------------------------------------------------------------------------
// CircAdapt heart valve

#[test]
fn circadapt_valve_follows_the_closed_form_leak_and_opens() {
    let spec = example("circadapt_valve");
    let v = &spec.inertance_valve[0];
    let rho = v.density;
    let (a_open, a_leak) = (
        v.area_open.as_const().unwrap(),
        v.area_leak.as_const().unwrap(),
    );
    let (a_from, a_to) = (
        v.area_from.as_const().unwrap(),
        v.area_to.as_const().unwrap(),
    );
    let len = v.length.as_const().unwrap();
    let dp = 1000.0; // p_distal − p_proximal before 0.1 s: the valve closed, leaking backwards.
    // dq/dt = (α·q|q| − Δp)/L (docs/equations.md, inertance valve); q < 0 with Δp > 0:
    // α_leak = ½ρ(1/A_to² − 1/A_leak²),
    // L = ρ(1.5·length/A_leak + 0.75/√A_from + 0.75/√A_to): q = −q_l·tanh(ω·t),
    // q_l = √(Δp/−α), ω = √(−α·Δp)/L.
    let l = rho * (1.5 * len / a_leak + 0.75 / a_from.sqrt() + 0.75 / a_to.sqrt());
    let alpha = 0.5 * rho * (1.0 / (a_to * a_to) - 1.0 / (a_leak * a_leak));
    let q_l = (dp / -alpha).sqrt();
    let w = (-alpha * dp).sqrt() / l;
    // Open (Δp = −1000 Pa, q > 0): the flow tends to q_o = √(Δp/−α_open).
    let alpha_open = 0.5 * rho * (1.0 / (a_from * a_from) - 1.0 / (a_open * a_open));
    let q_o = (dp / -alpha_open).sqrt();

    let t = run(&spec);
    let (time, q, mdot) = (t.col("time"), t.col("valve.q"), t.col("valve.mdot"));
    let mut worst: f64 = 0.0;
    for (tk, qk) in time.iter().zip(&q) {
        if *tk <= 0.1 {
            worst = worst.max((qk + q_l * (w * tk).tanh()).abs() / q_l);
        }
    }
    let q_max = q.iter().cloned().fold(f64::MIN, f64::max);
    let i_open = time
        .iter()
        .zip(&q)
        .position(|(&tk, &qk)| tk > 0.1 && qk > 0.0)
        .expect("opens");
    let i_back = time
        .iter()
        .zip(&q)
        .position(|(&tk, &qk)| tk > 0.4 && qk < 0.0)
        .expect("closes");
    println!(
        "leak phase: |q − (−q_l·tanh ωt)| ≤ {worst:.1e}·q_l (q_l = {q_l:.4e} m³/s, limit 1e-8); \
         forward flow from t = {} s to {} s, peak {q_max:.4e} m³/s < q_open = {q_o:.4e} m³/s",
        time[i_open], time[i_back]
    );
    assert!(worst < 1e-8);
    assert!(time[i_open] < 0.4 && q_max < q_o && q_max > 0.5 * q_o);
    assert!(
        q.iter()
            .zip(&mdot)
            .all(|(q, m)| (m - rho * q).abs() <= 1e-12 * rho * q_o)
    );
}

// ---------------------------------------------------------------------------------------------
// Soft actuator

#[test]
fn soft_actuator_inflates_to_the_static_balance() {
    let spec = example("soft_actuator");
    let t = run(&spec);
    let pis = &spec.piston[0];
    let p_atm = spec.reservoir[1].pressure.as_const().expect("constant");
    let p_src = 151_325.0;
    let (time, x, p, temp) = (
        t.col("time"),
        t.col("membrane.x"),
        t.col("actuator.p"),
        t.col("actuator.T"),
    );
    // Static balance: k·x = A·(p − p_atm) at p = p_source.
    let x_static = pis.area * (p_src - p_atm) / pis.spring_stiffness;
    // Before the step the pressures balance: |x| stays within the adaptive method's absolute
    // tolerance, 1e-10 of the static stroke (1e-12 m), where a wrong balance would move it to a
    // fraction of the stroke.
    let x_before = time
        .iter()
        .zip(&x)
        .filter(|(tk, _)| **tk <= 0.01)
        .map(|(_, xk)| xk.abs())
        .fold(0.0, f64::max);
    let t63 = time[x
        .iter()
        .position(|&v| v > 0.632 * x_static)
        .expect("inflates")];
    println!(
        "source steps at 0.01 s; |x| before it ≤ {x_before:.1e} m (limit 1e-10 of the static stroke, {:.0e} m); x reaches 63 % of the static {x_static} m at t = {t63} s; \
         final x = {:.9} m (rel. {:.1e}), p = {:.3} Pa (rel. {:.1e}), T range {:.1e} K (limit 1e-9 K)",
        1e-10 * x_static,
        x.last().unwrap(),
        (x.last().unwrap() / x_static - 1.0).abs(),
        p.last().unwrap(),
        (p.last().unwrap() / p_src - 1.0).abs(),
        temp.iter().cloned().fold(f64::MIN, f64::max)
            - temp.iter().cloned().fold(f64::MAX, f64::min)
    );
    assert!(
        x_before < 1e-10 * x_static,
        "inflates before the source steps"
    );
    assert!((x.last().unwrap() / x_static - 1.0).abs() < 1e-6);
    assert!((p.last().unwrap() / p_src - 1.0).abs() < 1e-6);
    let t_range = temp.iter().cloned().fold(f64::MIN, f64::max)
        - temp.iter().cloned().fold(f64::MAX, f64::min);
    assert!(t_range < 1e-9, "isothermal");
    let m = t.col("mass_total");
    println!("mass_total drift {:.1e} (limit 1e-9)", rel_drift(&m));
    assert!(rel_drift(&m) < 1e-9);
}

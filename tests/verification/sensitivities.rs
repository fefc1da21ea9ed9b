//! Forward parameter sensitivities (`plenum::sensitivity`) against independent truths: the
//! derivative of BlasterSim's closed form for the projectile's exit velocity (BlasterSim
//! verification §3.1.4, eq. 3.8), central finite differences of whole runs, and the gradient
//! checks 6 and 7 on a conserving model and on a deliberately non-conserving test component.

use std::sync::Arc;

use crate::common;

use common::*;
use plenum::checks::{ENERGY_GRADIENT_DRIFT, MASS_GRADIENT_DRIFT};
use plenum::components::{Piston, chamber, piston};
use plenum::model::ModelFile;
use plenum::model::build::build_network;
use plenum::sensitivity::{self, SensitivityRun};

use crate::test_sink::TestSink;

const PARAMS: [&str; 2] = ["projectile.mass", "barrel.pressure"];

fn params() -> Vec<String> {
    PARAMS.iter().map(|s| s.to_string()).collect()
}

/// Eq. 3.8 and its derivatives with respect to the projectile's mass and the initial pressure,
/// at position x: (v, ∂v/∂m, ∂v/∂p0). With W the work term,
/// v² = v0² + (2A/m)·W, ∂v/∂m = −(v² − v0²)/(2·m·v), ∂v/∂p0 = (A/m)·∂W/∂p0 / v.
fn exact(spec: &ModelFile, x: f64) -> (f64, f64, f64) {
    let p = &spec.piston[0];
    let c = &spec.chamber[0];
    assert_eq!(c.volume, 0.0);
    assert_eq!(p.friction_static, p.friction_dynamic);
    let g = plenum::model::build::gas_of(spec.gas.as_ref()).gamma;
    let p_atm = spec.reservoir[0].pressure.as_const().unwrap();
    let p_f = p.friction_dynamic.as_const().unwrap();
    let (p0, x0, a, m) = (c.pressure, p.x0, p.area, p.mass);
    let dw_dp0 = (x0.powf(g) * x.powf(1.0 - g) - x0) / (1.0 - g);
    let work = p0 * dw_dp0 - (p_atm + p_f) * (x - x0);
    let v = (p.v0 * p.v0 + 2.0 * a / m * work).sqrt();
    (
        v,
        -(v * v - p.v0 * p.v0) / (2.0 * m * v),
        a / m * dw_dp0 / v,
    )
}

fn velocity_index(run: &SensitivityRun) -> usize {
    run.network.layout.first::<Piston>() + piston::VELOCITY
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs()
}

#[test]
fn projectile_exit_velocity_sensitivities_match_the_closed_form() {
    let spec = shipped("projectile");
    let run = sensitivity::run(&spec, Some(&params())).expect("runs");
    assert_eq!(run.events.len(), 1, "one exit event");
    let ev = &run.events[0];
    let iv = velocity_index(&run);
    let x_exit = spec.piston[0].x_exit.unwrap();
    let (v, dv_dm, dv_dp0) = exact(&spec, x_exit);
    let (sm, sp) = (ev.s[0][iv], ev.s[1][iv]);
    println!(
        "exit at t = {} s, v = {} m/s (exact {v}); dt_e/dm = {:e} s/kg, dt_e/dp0 = {:e} s/Pa",
        ev.t_s, ev.y[iv], ev.dt_dp[0], ev.dt_dp[1]
    );
    println!(
        "dv/dm: {sm:e} vs exact {dv_dm:e} (rel {:e}); dv/dp0: {sp:e} vs exact {dv_dp0:e} (rel {:e}); limit 1e-6",
        rel(sm, dv_dm),
        rel(sp, dv_dp0)
    );
    assert!(rel(sm, dv_dm) < 1e-6);
    assert!(rel(sp, dv_dp0) < 1e-6);
    // Without the event-time correction the velocity's sensitivity would be s_v⁻, off by
    // a·dt_e/dp: show that the correction matters at this tolerance.
    assert!(ev.dt_dp[0] != 0.0 && ev.dt_dp[1] != 0.0);
}

/// Exit time and velocity of a whole run (Simulation, rk4) with the parameters changed.
fn exit_of(spec: &ModelFile, dm: f64, dp0: f64) -> (f64, f64) {
    let mut spec = spec.clone();
    spec.piston[0].mass += dm;
    spec.chamber[0].pressure += dp0;
    let mut sim = simulation(&spec, "rk4", spec.solver.step.unwrap());
    let t = run_to_exit(&mut sim, spec.solver.t_end);
    (t, sim.piston_state(0).1)
}

#[test]
fn projectile_sensitivities_match_central_differences_of_whole_runs() {
    let spec = shipped("projectile");
    let run = sensitivity::run(&spec, Some(&params())).expect("runs");
    let ev = &run.events[0];
    let iv = velocity_index(&run);
    let (m, p0) = (spec.piston[0].mass, spec.chamber[0].pressure);
    for (i, (dm, dp)) in [(m * 1e-3, 0.0), (0.0, p0 * 1e-3)].into_iter().enumerate() {
        let d = dm + dp;
        let (tp, vp) = exit_of(&spec, dm, dp);
        let (tm, vm) = exit_of(&spec, -dm, -dp);
        let (fd_t, fd_v) = ((tp - tm) / (2.0 * d), (vp - vm) / (2.0 * d));
        println!(
            "{}: dv/dp {:e} vs central FD {fd_v:e} (rel {:e}); dt_e/dp {:e} vs FD {fd_t:e} (rel {:e}); limit 1e-5",
            PARAMS[i],
            ev.s[i][iv],
            rel(ev.s[i][iv], fd_v),
            ev.dt_dp[i],
            rel(ev.dt_dp[i], fd_t)
        );
        assert!(rel(ev.s[i][iv], fd_v) < 1e-5);
        assert!(rel(ev.dt_dp[i], fd_t) < 1e-5);
    }
}

/// Two tanks through a linear valve (no events), adaptive dopri5: the sensitivities of every
/// state at t_end to the valve coefficient (a right-hand-side parameter) and to tank a's initial
/// pressure (an initial condition) against central differences of whole runs.
#[test]
fn two_tanks_sensitivities_match_central_differences_dopri5() {
    two_tanks_against_central_differences("dopri5");
}

/// The same with the adaptive BDF (Newton on the augmented system).
#[test]
fn two_tanks_sensitivities_match_central_differences_bdf() {
    two_tanks_against_central_differences("bdf");
}

/// Parameter `i` of the two-tanks runs (0: the valve's coefficient, 1: tank a's initial
/// pressure) changed by `d`.
fn set_two_tanks(spec: &mut ModelFile, i: usize, d: f64) {
    if i == 0 {
        let k0 = spec.valve[0].coefficient.as_const().unwrap();
        spec.valve[0].coefficient = (k0 + d).into();
    } else {
        spec.chamber[0].pressure += d;
    }
}

fn two_tanks_against_central_differences(method: &str) {
    let mut spec = shipped("two_tanks");
    spec.solver.method = method.into();
    spec.solver.step = None;
    spec.solver.rtol = Some(1e-10);
    spec.solver.atol = Some(1e-14);
    spec.solver.t_end = 1.0;
    let names = vec!["valve.coefficient".to_string(), "a.pressure".to_string()];
    let run = sensitivity::run(&spec, Some(&names)).expect("runs");
    let last = run.last();
    let k0 = spec.valve[0].coefficient.as_const().unwrap();
    let pa = spec.chamber[0].pressure;
    let end_state = |spec: &ModelFile| {
        let run = sensitivity::run(spec, Some(&[])).expect("runs");
        run.last().y.clone()
    };
    let runs = perturbed_runs(&spec, &[k0 * 1e-4, pa * 1e-4], set_two_tanks, end_state);
    for (i, (d, yp, ym)) in runs.into_iter().enumerate() {
        for (what, j) in [
            ("m_a", chamber::MASS),
            ("U_b", chamber::STATES + chamber::ENERGY),
        ] {
            let fd = (yp[j] - ym[j]) / (2.0 * d);
            let s = last.s[i][j];
            println!(
                "{method} {}: d{what}/dp = {s:e} vs central FD {fd:e} (rel {:e}; limit 1e-5)",
                names[i],
                rel(s, fd)
            );
            assert!(rel(s, fd) < 1e-5);
        }
    }
    println!(
        "gradient checks: mass drift {:e}, energy drift {:e}, rc {}",
        run.max_mass_gradient_drift, run.max_energy_gradient_drift, run.rc
    );
    assert_eq!(run.rc, 0);
}

#[test]
fn gradient_checks_stay_quiet_on_the_projectile() {
    let spec = shipped("projectile");
    let run = sensitivity::run(&spec, Some(&params())).expect("runs");
    println!(
        "projectile: max |Δ dM/dp|·|p|/M0 = {:e} (threshold {:e}), max |Δ dE/dp|·|p|/|E0| = {:e} (threshold {:e})",
        run.max_mass_gradient_drift,
        spec.checks.mass_gradient_drift,
        run.max_energy_gradient_drift,
        spec.checks.energy_gradient_drift
    );
    assert_eq!(run.rc, 0);
    assert!(run.max_mass_gradient_drift < spec.checks.mass_gradient_drift);
    assert!(run.max_energy_gradient_drift < spec.checks.energy_gradient_drift);
}

fn with_sink(mass_rate: f64, energy_rate: f64) -> SensitivityRun {
    let mut spec = shipped("projectile");
    // Checks 4 and 5 are not what is tested here.
    spec.checks.mass_drift = 1.0;
    spec.checks.energy_drift = 1.0;
    let mut net = build_network(&spec);
    net.add_extra_term(Arc::new(TestSink {
        chamber: 0,
        mass_rate_per_s: mass_rate,
        energy_rate_per_s: energy_rate,
    }));
    sensitivity::run_network(net, &spec, Some(&params())).expect("runs")
}

#[test]
fn check_6_fires_on_a_mass_sink() {
    let run = with_sink(1.0, 0.0);
    println!(
        "mass sink 1/s: mass gradient drift {:e}, energy gradient drift {:e}, rc {} at {:?} s",
        run.max_mass_gradient_drift, run.max_energy_gradient_drift, run.rc, run.rc_time_s
    );
    assert_eq!(run.rc, MASS_GRADIENT_DRIFT);
}

#[test]
fn check_7_fires_on_an_energy_sink() {
    let run = with_sink(0.0, 1.0);
    println!(
        "energy sink 1/s: mass gradient drift {:e}, energy gradient drift {:e}, rc {} at {:?} s",
        run.max_mass_gradient_drift, run.max_energy_gradient_drift, run.rc, run.rc_time_s
    );
    assert!(run.max_mass_gradient_drift < 1e-5);
    assert_eq!(run.rc, ENERGY_GRADIENT_DRIFT);
}

/// `plenum run --csv` on the projectile with `[sensitivities]`: the extra columns exist, start at
/// their exact initial values (∂p/∂p0 = 1, ∂T/∂p0 = 0, ∂v/∂m = 0) and end (the exit row) at the
/// closed form's derivatives.
#[test]
fn cli_csv_has_the_sensitivity_columns() {
    let dir = std::env::temp_dir().join(format!("plenum-sens-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let model = dir.join("projectile_sens.toml");
    let src = std::fs::read_to_string(repo_path("models/projectile.toml")).unwrap();
    std::fs::write(
        &model,
        format!(
            "{src}\n[sensitivities]\nparameters = [\"projectile.mass\", \"barrel.pressure\"]\n"
        ),
    )
    .unwrap();
    let csv_path = dir.join("out.csv");
    output_ok(
        plenum_command()
            .arg("run")
            .arg(&model)
            .arg("--csv")
            .arg(&csv_path),
    );
    let csv = Csv::read(&csv_path);
    let (header, rows) = (&csv.header, &csv.rows);
    let col = |name: &str| csv.col(name);
    let (first, last) = (&rows[0], rows.last().unwrap());
    let dp = first[col("d(barrel.p)/d(barrel.pressure)")];
    let dt = first[col("d(barrel.T)/d(barrel.pressure)")];
    let dv0 = first[col("d(projectile.v)/d(projectile.mass)")];
    println!("t = 0: dp/dp0 = {dp}, dT/dp0 = {dt}, dv/dm = {dv0}");
    assert!((dp - 1.0).abs() < 1e-12 && dt.abs() < 1e-9 && dv0 == 0.0);
    let spec = shipped("projectile");
    let (_, dv_dm, dv_dp0) = exact(&spec, spec.piston[0].x_exit.unwrap());
    let (cm, cp) = (
        last[col("d(projectile.v)/d(projectile.mass)")],
        last[col("d(projectile.v)/d(barrel.pressure)")],
    );
    println!(
        "exit row t = {}: dv/dm {cm:e} (exact {dv_dm:e}, rel {:e}), dv/dp0 {cp:e} (exact {dv_dp0:e}, rel {:e})",
        last[0],
        rel(cm, dv_dm),
        rel(cp, dv_dp0)
    );
    assert!(rel(cm, dv_dm) < 1e-6 && rel(cp, dv_dp0) < 1e-6);
    let nan = rows.iter().flatten().filter(|x| x.is_nan()).count();
    println!("{} rows, {} columns, {nan} NaN", rows.len(), header.len());
    assert_eq!(nan, 0, "every row has its sensitivities");
}

#[test]
fn an_unknown_sensitivity_parameter_is_a_model_error() {
    let src = std::fs::read_to_string(repo_path("models/projectile.toml")).unwrap();
    let src = format!("{src}\n[sensitivities]\nparameters = [\"projectile.colour\"]\n");
    let Err(errs) = plenum::model::parse_str(&src, "t.toml", &[]) else {
        panic!("an unknown parameter must be refused");
    };
    println!("{errs:?}");
    assert_eq!(errs.len(), 1);
    assert!(
        errs[0]
            .message
            .contains("`projectile.colour` cannot be a sensitivity parameter")
    );
}

/// The output sensitivities the CLI writes (pressures, temperatures and link flows by a dual
/// evaluation) against central differences of the outputs of whole runs (Simulation, rk4), on
/// the two tanks at t = 1 s.
#[test]
fn output_sensitivities_match_central_differences_of_the_outputs() {
    use plenum::variables::{
        output_variables, sensitivity_variables, write_output_sensitivities, write_outputs,
    };
    let mut spec = shipped("two_tanks");
    spec.solver.t_end = 1.0;
    spec.solver.output_interval = Some(0.5);
    let names = vec!["valve.coefficient".to_string(), "a.pressure".to_string()];
    let run = sensitivity::run(&spec, Some(&names)).expect("runs");
    let last = run.last();
    let mut net = build_network(&spec);
    let params: Vec<_> = names
        .iter()
        .map(|n| net.sensitivity_parameter(n).unwrap())
        .collect();
    let svars = sensitivity_variables(&net, &names);
    let mut sens = vec![0.0; svars.len()];
    write_output_sensitivities(&mut net, last.t_s, &last.y, &last.s, &params, &mut sens);
    let outputs_at_end = |spec: &ModelFile| {
        let mut sim = simulation(spec, "rk4", spec.solver.step.unwrap());
        sim.advance_to(spec.solver.t_end).expect("runs");
        let vars = output_variables(&sim);
        let mut out = vec![0.0; vars.len()];
        write_outputs(&mut sim, &mut out);
        (vars, out)
    };
    let k0 = spec.valve[0].coefficient.as_const().unwrap();
    let pa = spec.chamber[0].pressure;
    let mut compared = 0;
    let runs = perturbed_runs(
        &spec,
        &[k0 * 1e-4, pa * 1e-4],
        set_two_tanks,
        outputs_at_end,
    );
    for (i, (d, (vars, yp), (_, ym))) in runs.into_iter().enumerate() {
        for out in ["a.p", "b.T", "valve.mdot", "mass_total"] {
            let j = vars.iter().position(|v| v.name == out).unwrap();
            let fd = (yp[j] - ym[j]) / (2.0 * d);
            let col = format!("d({out})/d({})", names[i]);
            let c = svars.iter().position(|v| v.name == col).unwrap();
            let s = sens[c];
            let scale = fd.abs().max(if out == "mass_total" { 1e-12 } else { 0.0 });
            let err = (s - fd).abs() / scale;
            println!("{col} = {s:e} vs central FD {fd:e} (rel {err:e}; limit 1e-5)");
            assert!(err < 1e-5, "{col}");
            compared += 1;
        }
    }
    assert_eq!(compared, 8);
}

/// A piston on a spring bouncing off its `x_max` stop (restitution 0.5) between two reservoirs.
fn stops() -> ModelFile {
    bouncing_piston(
        "method = \"dopri5\"\nrtol = 1e-12\natol = 1e-16\nt_end = 0.03\noutput_interval = 0.03",
        0.5,
        false,
    )
}

/// A piston on a spring bouncing off its `x_max` stop (restitution 0.5) between two reservoirs
/// (`events.rs`'s end-stop model): impacts at 10.5 and 24.7 ms, t_end 30 ms. The sensitivities of
/// x, v and the energy accumulator at t_end to the piston's mass (which also enters the impact
/// map through the energy lost) and to the left reservoir's pressure (a run-time parameter),
/// through the jumps s⁺ = H·s⁻ + ∂h/∂p + (H·f⁻ − f⁺)·dt_e/dp, against central differences of
/// whole runs; and checks 6/7 stay quiet (d E_total/dp is conserved through the impacts).
#[test]
fn end_stop_impacts_sensitivities_match_central_differences() {
    let spec = stops();
    let names = vec!["p.mass".to_string(), "left.pressure".to_string()];
    let run = sensitivity::run(&spec, Some(&names)).expect("runs");
    let end = |spec: &ModelFile| {
        let mut sim = plenum::model::build_simulation(spec, None).expect("builds");
        sim.advance_to(spec.solver.t_end).expect("runs");
        (sim.y.clone(), sim.stats.events)
    };
    let (_, impacts) = end(&spec);
    println!("{impacts} impacts before t_end");
    assert_eq!(impacts, 2);
    let last = run.last();
    let o = run.network.layout.first::<Piston>();
    let acc = run.network.layout.accumulator_offset + 1;
    let (m, pl) = (spec.piston[0].mass, 1e5);
    let set = |spec: &mut ModelFile, i: usize, d: f64| {
        if i == 0 {
            spec.piston[0].mass = m + d;
        } else {
            spec.reservoir[0].pressure = (pl + d).into();
        }
    };
    let runs = perturbed_runs(&spec, &[m * 1e-4, pl * 1e-4], set, end);
    for (i, (d, (yp, ep), (ym, em))) in runs.into_iter().enumerate() {
        assert_eq!(
            (ep, em),
            (impacts, impacts),
            "the same impacts in the perturbed runs"
        );
        for (what, j) in [
            ("x", o + piston::POSITION),
            ("v", o + piston::VELOCITY),
            ("E_lost", acc),
        ] {
            let fd = (yp[j] - ym[j]) / (2.0 * d);
            let s = last.s[i][j];
            // The energy lost does not depend on the mass (the impact speeds come from the
            // spring's energy): fd is 0 and s round-off, so the scale has a floor of
            // 1e-6·|y|/|p| (without ∂h/∂p, s would be ½(1 − e²)·Σv² ≈ 1e2 J/kg).
            let p = if i == 0 { m } else { pl };
            let scale = fd.abs().max(1e-6 * last.y[j].abs() / p);
            let err = (s - fd).abs() / scale;
            println!(
                "d{what}/d({}) = {s:e} vs central FD {fd:e} (error {err:e} of {scale:e}; limit 1e-5)",
                names[i]
            );
            assert!(err < 1e-5);
        }
    }
    println!(
        "gradient checks: mass drift {:e}, energy drift {:e} (thresholds 1e-5, 1e-4), rc {}",
        run.max_mass_gradient_drift, run.max_energy_gradient_drift, run.rc
    );
    assert_eq!(run.rc, 0);
}

/// The FMU's output dependencies (fmu-build's ModelStructure, fmi2GetDirectionalDerivative):
/// a sensitivity output `d(<link>.mdot)/d(p)` = ∂ṁ/∂y·s + ∂ṁ/∂p depends directly on a run-time
/// parameter exactly where the flow does; every other sensitivity output is a function of the
/// state and its sensitivities alone.
#[test]
fn sensitivity_outputs_depend_on_inputs_where_their_flows_do() {
    use plenum::variables::{is_sensitivity_output, output_depends_on, output_variables};
    let mut spec = shipped("two_tanks");
    spec.sensitivities.parameters = vec!["a.pressure".into(), "valve.coefficient".into()];
    let sim = plenum::model::build_simulation(&spec, None).expect("builds");
    let vars = output_variables(&sim);
    let mut dependent = Vec::new();
    for (k, v) in vars.iter().enumerate() {
        let depends = output_depends_on(&sim.network, k, "valve", "coefficient");
        let expected = v.name == "valve.mdot" || v.name.starts_with("d(valve.mdot)/");
        assert_eq!(depends, expected, "{}", v.name);
        assert_eq!(
            is_sensitivity_output(&sim.network, k),
            v.name.starts_with("d(")
        );
        if depends {
            dependent.push(v.name.as_str());
        }
    }
    println!(
        "{} outputs; depend on valve.coefficient: {dependent:?}",
        vars.len()
    );
    assert_eq!(dependent.len(), 3);
}

/// d(total)/dp by [`plenum::network::Network::totals_sensitivity`] (a dual evaluation on
/// y + ε·s) against central differences of the totals themselves,
/// (T(y + h·s; p + h) − T(y − h·s; p − h))/2h, with the piston's mass changed in the network
/// where it is the parameter, at every sample of a sensitivity run.
fn totals_gradient_against_central_differences(spec: &ModelFile, names: &[String]) {
    let run = sensitivity::run(spec, Some(names)).expect("runs");
    let (mut worst_m, mut worst_e) = (0.0f64, 0.0f64);
    let mut compared = 0;
    for sample in &run.samples {
        for (i, name) in names.iter().enumerate() {
            let net = &run.network;
            let p = net.sensitivity_parameter(name).unwrap();
            let (dm, de) = net.totals_sensitivity(&sample.y, &sample.s[i], &p);
            let value = run.values[i];
            let h = 1e-4 * value.abs();
            let total_at = |sign: f64| {
                let mut net = net.clone();
                if let plenum::network::SensitivityParameter::PistonMass(j) = p {
                    net.pistons_mut()[j].mass.value += sign * h;
                }
                let y: Vec<f64> = sample
                    .y
                    .iter()
                    .zip(&sample.s[i])
                    .map(|(y, s)| y + sign * h * s)
                    .collect();
                (net.mass_total_kg(&y), net.energy_total_j(&y))
            };
            let ((mp, ep), (mm, em)) = (total_at(1.0), total_at(-1.0));
            let (fd_m, fd_e) = ((mp - mm) / (2.0 * h), (ep - em) / (2.0 * h));
            // The totals are conserved, so their derivatives are sums of terms that nearly
            // cancel: the error is taken on the scale of checks 6 and 7, |total|/|p| (or |fd|
            // where larger); equal values are no error (the mass of a chamberless network).
            let err = |d: f64, fd: f64, total: f64| {
                let diff = (d - fd).abs();
                if diff == 0.0 {
                    0.0
                } else {
                    diff / fd.abs().max(total.abs() / value.abs())
                }
            };
            let err_m = err(dm, fd_m, net.mass_total_kg(&sample.y));
            let err_e = err(de, fd_e, net.energy_total_j(&sample.y));
            worst_m = worst_m.max(err_m);
            worst_e = worst_e.max(err_e);
            compared += 1;
        }
    }
    let last = run.last();
    for (i, name) in names.iter().enumerate() {
        let p = run.network.sensitivity_parameter(name).unwrap();
        let (dm, de) = run.network.totals_sensitivity(&last.y, &last.s[i], &p);
        println!(
            "{} at t = {} s: d(mass_total)/d({name}) = {dm:e}, d(energy_total)/d({name}) = {de:e}",
            spec.model.name, last.t_s
        );
    }
    println!(
        "{}: {compared} (sample, parameter) pairs; largest relative error against central \
         differences: mass {worst_m:e}, energy {worst_e:e} (limit 1e-7)",
        spec.model.name
    );
    assert!(compared >= 2 * names.len());
    assert!(worst_m < 1e-7 && worst_e < 1e-7);
}

#[test]
fn totals_gradient_matches_central_differences_on_the_projectile() {
    totals_gradient_against_central_differences(&shipped("projectile"), &params());
}

#[test]
fn totals_gradient_matches_central_differences_on_the_bouncing_piston() {
    let spec = stops();
    let names = ["p.mass".to_string(), "left.pressure".to_string()];
    totals_gradient_against_central_differences(&spec, &names);
}

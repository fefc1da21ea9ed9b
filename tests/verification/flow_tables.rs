//! An orifice's flow as a catalogue curve (`flow_table`, `src/components/flow_table.rs`):
//! a curve sampled from the ISO 6358 law reproduces the ISO orifice to its interpolation error,
//! a two-point curve (linear in the ratio) fills a tank as its closed form says, and the curve
//! combines with a poppet's opening, a one-way orifice and a reversed flow as the ISO law does.

use plenum::components::orifice::ISO_T0_K;
use plenum::components::orifice::iso6358_mass_flow_kg_per_s;

use crate::common::valves::IsoCurve;
use crate::common::{output, sim_of};

const C: f64 = 2e-8;
const B: f64 = 0.3;
/// The curve's rated inlet state: ISO 6358's nominal 6 bar gauge, ISO 8778's T₀.
const P_REF: f64 = 7e5;
const LAW: IsoCurve = IsoCurve::new(C, B, P_REF);

fn blowdown(law: &str) -> String {
    format!(
        r#"
[model]
name = "table_blowdown"
[gas]
R = 287.0
cp = 1004.5
[solver]
method = "bdf"
rtol = 1e-10
atol = 1e-16
t_end = 2.0
[[chamber]]
name = "tank"
volume = "1 L"
pressure = "10 bar"
temperature = 300.0
[[reservoir]]
name = "atm"
pressure = 1e5
temperature = 293.15
[[orifice]]
name = "nozzle"
from = "tank"
to = "atm"
{law}
"#
    )
}

/// A 1 L tank blows down from 10 bar through C = 2e-8 m³/(s·Pa), b = 0.3, and through a
/// 42-row curve sampled from that law at 7 bar, 293.15 K. The law: at states across every
/// piece (p_u = 9 bar, T_u = 250 K) the curve is within its pieces' bound max|F''|·h²/8,
/// scaled by (p_u/p_ref)·sqrt(T_ref/T_u) as the flow is. The run: the flow grows with the
/// tank's mass, so the difference of the tank's masses is at most the integral of the law's
/// error bound along the run (plus the two runs' rtol 1e-10).
#[test]
fn a_curve_sampled_from_the_iso_law_reproduces_the_iso_orifice() {
    let ratios = LAW.ratios(38);
    let bounds: Vec<f64> = ratios.windows(2).map(|w| LAW.bound(w[0], w[1])).collect();
    let rows: Vec<String> = ratios
        .iter()
        .map(|&r| format!("[{r:?}, {:?}]", LAW.flow(r)))
        .collect();
    println!("{} rows, largest piece bound {:.3e} kg/s", rows.len(), {
        bounds.iter().cloned().fold(0.0, f64::max)
    });

    // The law, state by state.
    let table = plenum::components::flow_table::FlowTable::new(
        &ratios.iter().map(|&r| [r, LAW.flow(r)]).collect::<Vec<_>>(),
        P_REF,
        ISO_T0_K,
    );
    let (p_u, t_u) = (9e5, 250.0);
    let scale = p_u / P_REF * (ISO_T0_K / t_u).sqrt();
    let mut worst: (f64, f64, f64) = (0.0, 0.0, 0.0);
    for i in 0..=20_000 {
        let r = i as f64 / 20_000.0;
        let iso = iso6358_mass_flow_kg_per_s(C, B, p_u, t_u, r * p_u);
        let tab = table.mass_flow_kg_per_s(p_u, t_u, r * p_u);
        let k = ratios
            .partition_point(|&x| x <= r)
            .clamp(1, ratios.len() - 1)
            - 1;
        let bound = bounds[k] * scale + 1e-14 * iso.abs();
        let err = (tab - iso).abs();
        assert!(err <= bound, "r = {r}: {err:e} above its bound {bound:e}");
        if err > worst.0 {
            worst = (err, bound, r);
        }
    }
    println!(
        "law: largest |table − ISO| {:.3e} kg/s at r = {:.4} (its bound {:.3e})",
        worst.0, worst.2, worst.1
    );

    // The runs, every 10 ms.
    let iso_law = format!("sonic_conductance = {C:e}\ncritical_pressure_ratio = {B}");
    let table_law = format!(
        "flow_table = [{}]\nflow_table_inlet_pressure = {P_REF:e}",
        rows.join(", ")
    );
    let (mut iso, mut tab) = (sim_of(&blowdown(&iso_law)), sim_of(&blowdown(&table_law)));
    let m0 = output(&mut iso, "tank.m");
    let (mut integral, mut worst_run) = (0.0, (0.0f64, 1.0f64, 0.0f64));
    let mut before = (output(&mut iso, "tank.p"), output(&mut iso, "tank.T"));
    for k in 1..=200 {
        let t = 0.01 * k as f64;
        iso.advance_to(t).expect("ISO run");
        tab.advance_to(t).expect("table run");
        let now = (output(&mut iso, "tank.p"), output(&mut iso, "tank.T"));
        // The bound over the step: r rises (pressure falls), so every piece between the two
        // ratios may be crossed; the largest scale of the two ends.
        let piece_of = |r: f64| {
            ratios
                .partition_point(|&x| x <= r)
                .clamp(1, ratios.len() - 1)
                - 1
        };
        let (a, b) = (piece_of(1e5 / before.0), piece_of(1e5 / now.0));
        let piece = bounds[a..=b].iter().cloned().fold(0.0, f64::max);
        let scale = (before.0 / P_REF * (ISO_T0_K / before.1).sqrt())
            .max(now.0 / P_REF * (ISO_T0_K / now.1).sqrt());
        integral += piece * scale * 0.01;
        before = now;
        let dm = (output(&mut tab, "tank.m") - output(&mut iso, "tank.m")).abs();
        let allowed = integral + 1e-8 * m0;
        assert!(dm <= allowed, "t = {t}: |Δm| {dm:e} above {allowed:e}");
        if dm / allowed > worst_run.0 / worst_run.1.max(1e-300) {
            worst_run = (dm, allowed, t);
        }
    }
    println!(
        "run: |Δm| {:.3e} kg of {:.3e} kg at t = {:.2} s (its bound {:.3e}); final tank {:.1} Pa \
         (ISO) and {:.1} Pa (table); events {} (ISO) and {} (table)",
        worst_run.0,
        m0,
        worst_run.2,
        worst_run.1,
        output(&mut iso, "tank.p"),
        output(&mut tab, "tank.p"),
        iso.stats.events,
        tab.stats.events
    );
    // Every breakpoint the tank crossed (r from 0.1 to past 0.999) was located.
    assert!(tab.stats.events as usize >= ratios.len() - 3);
}

/// A two-point curve [[0, F₀], [1, 0]] is ṁ = F₀·(p_u − p_d)/p_ref·sqrt(T_ref/T_u): filling
/// an adiabatic tank from a supply at T_ref, dU/dt = c_p·T_s·ṁ and p = (γ − 1)·U/V give
/// dp/dt = γ·R·T_s·F₀/(p_ref·V)·(p_s − p), so p_s − p = (p_s − p₀)·exp(−t/τ),
/// τ = p_ref·V/(γ·R·T_s·F₀).
#[test]
fn a_two_point_curve_fills_a_tank_as_its_closed_form() {
    let (f0, p_ref, v, p_s, p0) = (1e-2, 7e5, 1e-3, 6e5, 1e5);
    let (r, cp) = (287.0, 1004.5);
    let gamma = cp / (cp - r);
    let tau = p_ref * v / (gamma * r * ISO_T0_K * f0);
    let src = format!(
        r#"
[model]
name = "table_fill"
[gas]
R = {r}
cp = {cp}
[solver]
method = "bdf"
rtol = 1e-11
atol = 1e-16
t_end = 2.0
[[chamber]]
name = "tank"
volume = {v:e}
pressure = {p0:e}
temperature = 250.0
[[reservoir]]
name = "supply"
pressure = {p_s:e}
temperature = {ISO_T0_K}
[[orifice]]
name = "fill"
from = "supply"
to = "tank"
flow_table = [[0, {f0:e}], [1, 0]]
flow_table_inlet_pressure = {p_ref:e}
"#
    );
    let mut sim = sim_of(&src);
    let mut worst = 0.0f64;
    for k in 1..=20 {
        let t = 0.1 * k as f64;
        sim.advance_to(t).expect("runs");
        let want = p_s - (p_s - p0) * (-t / tau).exp();
        let got = output(&mut sim, "tank.p");
        worst = worst.max((got - want).abs() / p_s);
    }
    println!("tau = {tau:.4} s: largest |p − closed form|/p_s {worst:.3e}");
    assert!(worst < 1e-8, "{worst:e}");
}

/// The curve's flow at two supplies: `from` above `to` and the other way round, through a
/// two-way orifice, a one-way one and a check valve (cracking 1 bar, full flow 3 bar), each
/// against the curve interpolated by hand.
#[test]
fn a_curve_combines_with_reversal_one_way_and_a_poppet() {
    let (f_a, f_b, p_ref, t_ref) = (4e-3, 2e-3, 6e5, 300.0);
    let curve = |r: f64| {
        if r <= 0.5 {
            f_a + (f_b - f_a) * r / 0.5
        } else {
            f_b * (1.0 - r) / 0.5
        }
    };
    let flow = |p_from: f64, p_to: f64, keys: &str| {
        let src = format!(
            r#"
[model]
name = "table_ends"
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
temperature = 350.0
[[reservoir]]
name = "b"
pressure = {p_to:e}
temperature = 250.0
[[orifice]]
name = "o"
from = "a"
to = "b"
flow_table = [[0, {f_a:e}], [0.5, {f_b:e}], [1, 0]]
flow_table_inlet_pressure = {p_ref:e}
flow_table_inlet_temperature = {t_ref}
{keys}
"#
        );
        let mut sim = sim_of(&src);
        output(&mut sim, "o.mdot")
    };
    let (hi, lo) = (5e5, 3e5);
    let forward = curve(lo / hi) * hi / p_ref * (t_ref / 350.0f64).sqrt();
    let backward = -curve(lo / hi) * hi / p_ref * (t_ref / 250.0f64).sqrt();
    let poppet = "cracking_pressure = 1e5\nfull_flow_pressure = 3e5";
    let cases = [
        ("two-way, forward", flow(hi, lo, ""), forward),
        ("two-way, reversed", flow(lo, hi, ""), backward),
        ("one-way, forward", flow(hi, lo, "one_way = true"), forward),
        ("one-way, reversed", flow(lo, hi, "one_way = true"), 0.0),
        // Δp = 2 bar: halfway between cracking and full flow.
        ("check valve, forward", flow(hi, lo, poppet), 0.5 * forward),
        ("check valve, reversed", flow(lo, hi, poppet), 0.0),
    ];
    for (what, got, want) in cases {
        println!("{what}: {got:e} kg/s (by hand {want:e})");
        assert!((got - want).abs() <= 1e-14 * want.abs().max(1e-3), "{what}");
    }
}

/// Model Exchange: an importer's loop (forward Euler at 1e-4 s, the event indicators read
/// after each step, a change of domain located by bisection, then event mode) on a tank
/// blowing down through the curve [[0, F], [0.4, F], [0.7, 0.8F], [0.95, 0.3F], [1, 0]]:
/// event modes fall on the rows' ratios 0.4, 0.7 and 0.95 and nowhere else, and `choked`
/// (r below 0.4, the end of the curve's flat run) changes only in event mode, at 0.4.
#[test]
fn a_curves_rows_are_event_indicators_in_model_exchange() {
    use plenum::cosim::{Instance, Interface};
    let (p_atm, t_end, f) = (1e5, 3.0, 2e-2);
    let src = format!(
        r#"
[model]
name = "table_me"
[gas]
R = 287.0
cp = 1004.5
[solver]
t_end = {t_end}
[[chamber]]
name = "tank"
volume = "1 L"
pressure = "10 bar"
temperature = 293.15
[[reservoir]]
name = "atm"
pressure = {p_atm:e}
temperature = 293.15
[[orifice]]
name = "nozzle"
from = "tank"
to = "atm"
flow_table = [[0, {f:e}], [0.4, {f:e}], [0.7, {:e}], [0.95, {:e}], [1, 0]]
flow_table_inlet_pressure = 7e5
"#,
        0.8 * f,
        0.3 * f
    );
    let mut inst =
        Instance::with_interface(&src, "model.toml", Interface::ModelExchange).expect("loads");
    inst.setup_experiment(0.0, None).expect("setup");
    inst.enter_initialization_mode().expect("enter");
    inst.exit_initialization_mode().expect("exit");
    inst.update_discrete_states().expect("event update");
    inst.enter_continuous_time_mode().expect("continuous");
    let (n, nz) = (inst.n_states(), inst.n_event_indicators());
    let vr = |inst: &Instance, name: &str| {
        inst.description()
            .variables
            .iter()
            .find(|v| v.name == name)
            .unwrap_or_else(|| panic!("{name}"))
            .value_reference
    };
    let vrs = [vr(&inst, "nozzle.choked"), vr(&inst, "tank.p")];
    let read = |inst: &mut Instance| {
        let mut v = [0.0; 2];
        inst.get_real(&vrs, &mut v).expect("get");
        v
    };
    let (mut x, mut dx, mut x1) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    let (mut z0, mut z1) = (vec![0.0; nz], vec![0.0; nz]);
    inst.continuous_states(&mut x).expect("x");
    inst.event_indicators(&mut z0).expect("z");
    let crossed = |a: &[f64], b: &[f64]| a.iter().zip(b).any(|(&g0, &g1)| (g0 > 0.0) != (g1 > 0.0));
    let mut held = read(&mut inst)[0];
    assert_eq!(held, 1.0, "choked at 10 bar into 1 bar");
    let (h, mut t) = (1e-4, 0.0);
    let mut events: Vec<(f64, f64, f64)> = Vec::new(); // (ratio, choked before, after)
    while t < t_end - 0.5 * h {
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
        let event = crossed(&z0, &z1);
        if event {
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
            at(lo, &mut inst, &mut x1, &mut z1);
            assert_eq!(
                read(&mut inst)[0],
                held,
                "choked before the event at t = {t}"
            );
            at(hi, &mut inst, &mut x1, &mut z1);
            theta = hi;
        } else {
            assert_eq!(
                read(&mut inst)[0],
                held,
                "choked changed without an event, t = {t}"
            );
        }
        t += theta * h;
        let step = inst.completed_integrator_step().expect("completed");
        if event || step.enter_event_mode {
            inst.enter_event_mode().expect("event mode");
            inst.update_discrete_states().expect("event update");
            inst.enter_continuous_time_mode().expect("continuous");
            let v = read(&mut inst);
            events.push((p_atm / v[1], held, v[0]));
            held = v[0];
        }
        inst.continuous_states(&mut x).expect("x");
        inst.event_indicators(&mut z0).expect("z");
    }
    for (ratio, before, after) in &events {
        println!("event mode at p_atm/p_tank = {ratio:.12}, choked {before} -> {after}");
    }
    // Each row is a pair of indicators, h and −h: a root located exactly on h = 0 is in the
    // domain z ≤ 0 of both, so the second enters event mode once more at the next step.
    let near = |r: f64| events.iter().filter(|e| (e.0 - r).abs() <= 1e-9).count();
    let at_rows = [near(0.4), near(0.7), near(0.95)];
    println!("{nz} indicators; event modes at the rows 0.4, 0.7, 0.95: {at_rows:?}");
    for k in at_rows {
        assert!((1..=2).contains(&k), "{events:?}");
    }
    assert_eq!(
        at_rows.iter().sum::<usize>(),
        events.len(),
        "no other event"
    );
    let flips: Vec<_> = events.iter().filter(|e| e.1 != e.2).collect();
    assert_eq!(flips.len(), 1, "choked flips once");
    assert!((flips[0].0 - 0.4).abs() <= 1e-9 && flips[0].2 == 0.0);
}

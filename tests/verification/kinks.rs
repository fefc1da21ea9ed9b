//! The orifice's choked/unchoked transition (the pressure ratio through the critical one, where
//! the discrete output `choked` flips) and its laminar transition (the ratio through 0.999,
//! where the law's slope jumps) are Model Exchange event indicators, so `choked` changes only
//! in event mode.

use plenum::cosim::{Instance, Interface};

/// A 1 L tank at 10 bar vents to 1 atm through a 10 mm² nozzle (γ = 1.4 exactly).
fn blowdown(t_end: f64) -> String {
    format!(
        r#"
[model]
name = "kink_blowdown"
[gas]
R = 287.0
cp = 1004.5
[solver]
method = "auto"
t_end = {t_end}
[[chamber]]
name = "tank"
volume = 1e-3
pressure = 10e5
temperature = 300.0
[[reservoir]]
name = "atm"
pressure = 101325.0
temperature = 300.0
[[orifice]]
name = "nozzle"
from = "tank"
to = "atm"
area = 1e-5
discharge_coefficient = 0.8
"#
    )
}

fn vr(inst: &Instance, name: &str) -> u32 {
    inst.description()
        .variables
        .iter()
        .find(|v| v.name == name)
        .unwrap_or_else(|| panic!("{name}"))
        .value_reference
}

#[test]
fn choked_flag_changes_only_at_located_events_in_model_exchange() {
    // An importer's Model Exchange loop: forward Euler at 1e-4 s, the event indicators read
    // after each step, a change of domain (FMI 2.0 §3.1: z > 0 or z ≤ 0) located by bisection
    // on the step, then event mode there.
    // Between events `nozzle.choked` must keep the value it had after the last event; it
    // flips at the event where p_atm/p_tank = r* = (2/(γ+1))^(γ/(γ−1)) (Anderson, *Modern
    // Compressible Flow*, eq. 5.21), and the laminar event lies at the ratio 0.999.
    let gamma: f64 = 1004.5 / (1004.5 - 287.0);
    let r_star = (2.0 / (gamma + 1.0)).powf(gamma / (gamma - 1.0));
    let (p_atm, t_end) = (101325.0, 3.0);
    let mut inst =
        Instance::with_interface(&blowdown(t_end), "model.toml", Interface::ModelExchange)
            .expect("loads");
    inst.setup_experiment(0.0, None).expect("setup");
    inst.enter_initialization_mode().expect("enter");
    inst.exit_initialization_mode().expect("exit");
    inst.update_discrete_states().expect("event update");
    inst.enter_continuous_time_mode().expect("continuous");
    let (n, nz) = (inst.n_states(), inst.n_event_indicators());
    println!("{n} states, {nz} event indicators");
    assert!(nz >= 4, "the choked and laminar ratios, both ways");
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
    assert_eq!(held, 1.0, "choked at 10 bar into 1 atm");
    let (h, mut t) = (1e-4, 0.0);
    let mut events: Vec<(f64, f64, f64, f64)> = Vec::new(); // (t, ratio, choked before, after)
    let mut steps_checked = 0;
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
            // Just before the crossing, still in continuous time: the value held.
            at(lo, &mut inst, &mut x1, &mut z1);
            assert_eq!(
                read(&mut inst)[0],
                held,
                "choked before the event at t = {t}"
            );
            at(hi, &mut inst, &mut x1, &mut z1);
            theta = hi;
        } else {
            let v = read(&mut inst);
            assert_eq!(
                v[0],
                held,
                "choked changed without an event at t = {:.4} s (p_tank {:.1} Pa; indicators \
                 {z0:?} -> {z1:?})",
                t + h,
                v[1]
            );
            steps_checked += 1;
        }
        t += theta * h;
        let step = inst.completed_integrator_step().expect("completed");
        if event || step.enter_event_mode {
            inst.enter_event_mode().expect("event mode");
            inst.update_discrete_states().expect("event update");
            inst.enter_continuous_time_mode().expect("continuous");
            let v = read(&mut inst);
            events.push((t, p_atm / v[1], held, v[0]));
            held = v[0];
        }
        inst.continuous_states(&mut x).expect("x");
        inst.event_indicators(&mut z0).expect("z");
    }
    for (te, ratio, before, after) in &events {
        println!("event at t = {te:.6} s: p_atm/p_tank = {ratio:.12}, choked {before} -> {after}");
    }
    println!("{steps_checked} steps without an event: choked unchanged on each");
    let flips: Vec<_> = events.iter().filter(|e| e.2 != e.3).collect();
    assert_eq!(flips.len(), 1, "choked flips once, at an event");
    let (_, ratio, _, after) = *flips[0];
    println!("flip at ratio {ratio:.12}, r* = {r_star:.12}");
    assert_eq!(after, 0.0);
    assert!(
        (ratio - r_star).abs() <= 1e-9,
        "{ratio} against r* {r_star}"
    );
    // A root located exactly on an indicator's 0 is in its domain z ≤ 0, so the crossing may
    // enter event mode once more at the next step: at most two event modes per switch, and
    // every one on a switch's ratio.
    let near = |r: f64| events.iter().filter(|e| (e.1 - r).abs() <= 1e-9).count();
    let (at_choked, at_laminar) = (near(r_star), near(0.999));
    println!(
        "event modes: {at_choked} at r*, {at_laminar} at 0.999, {} in all",
        events.len()
    );
    assert!((1..=2).contains(&at_choked), "{events:?}");
    assert!(
        (1..=2).contains(&at_laminar),
        "the laminar transition: {events:?}"
    );
    assert_eq!(
        at_choked + at_laminar,
        events.len(),
        "no other event: {events:?}"
    );
}

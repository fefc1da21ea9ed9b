//! A cushion's needle as a run-time parameter (a number, a table or an FMU input): a needle
//! given as a step table is the constant-needle cylinder until the step and the same cylinder
//! with the needle changed there after it, whether that change is the network's parameter
//! set at the instant or the FMU's input set at the same communication point; a needle set
//! during a run beyond its key's rule or wider than the bore is refused, naming the key.

use crate::common::sim_of;
use plenum::cosim::Instance;
use plenum::simulation::Simulation;
use plenum::variables::{output_variables, write_outputs};

/// The needles before and after the step, m², and its instant, s (a whole number of steps).
const NEEDLE_M2: f64 = 3e-7;
const NARROW_M2: f64 = 1e-7;
const T_STEP_S: f64 = 0.01;

/// A 32 mm cylinder retracting from x0 = 15 mm, inside its cap end's 20 mm cushion (the cap's
/// gas leaves through the needle alone), fed at its rod port from 6 bar and drained from its
/// cap port to the atmosphere through ISO 6358 orifices; its cap needle `needle` (a number
/// or a table), its rod end's 0.3 mm² (else it would be the cap's); `inputs`: the model's `[inputs]` section, if any. Fixed RK4 steps of 2 µs, so
/// that the runs compared take the same steps.
fn circuit(needle: &str, inputs: &str) -> String {
    format!(
        r#"
[model]
name = "cushion_needle"
[gas]
species = "air"
[solver]
method = "rk4"
step = 2e-6
t_end = 0.3
{inputs}
[[reservoir]]
name = "supply"
pressure = 6e5
temperature = 293.15
[[reservoir]]
name = "atm"
pressure = 1e5
temperature = 293.15
[[cylinder]]
name = "cyl"
vent = "atm"
bore = 0.032
rod_diameter = 0.012
stroke = 0.1
dead_volume = 2e-6
mass = 0.5
x0 = 0.015
pressure = 1e5
temperature = 293.15
cushion_length = 0.02
cushion_needle_area = {needle}
rod_cushion_needle_area = {NEEDLE_M2:e}
port_diameter = 0.004
port_volume = 1e-6
[[orifice]]
name = "feed"
from = "supply"
to = "cyl_rod"
sonic_conductance = 1e-8
critical_pressure_ratio = 0.3
[[orifice]]
name = "drain"
from = "cyl_cap"
to = "atm"
sonic_conductance = 1e-8
critical_pressure_ratio = 0.3
"#
    )
}

fn outputs(sim: &mut Simulation) -> Vec<(String, f64)> {
    let vars = output_variables(sim);
    let mut out = vec![0.0; vars.len()];
    write_outputs(sim, &mut out);
    vars.into_iter().map(|v| v.name).zip(out).collect()
}

/// The largest difference of `a` from `b` relative to each output's scale (1e-3 at least),
/// and its output's name.
fn worst_difference(a: &[(String, f64)], b: &[(String, f64)]) -> (f64, String) {
    let mut worst = (0.0f64, String::new());
    for ((name, va), (nb, vb)) in a.iter().zip(b) {
        assert_eq!(name, nb);
        let d = (va - vb).abs() / va.abs().max(vb.abs()).max(1e-3);
        if d > worst.0 {
            worst = (d, name.clone());
        }
    }
    worst
}

/// The needle as a step table 0.3 → 0.1 mm² at 10 ms (the piston moving at 0.8 m/s inside the
/// cushion) against two runs of the constant-needle model spliced there (the first's needle
/// set to 0.1 mm² in its network at 10 ms, its integrator restarted, as an input's change
/// does), and against the FMU (Co-Simulation) with the needle an input set to 0.1 mm² at the
/// communication point 10 ms: every output equal to round-off at every 5 ms up to 300 ms. The
/// step changes the run: the constant-needle run left alone equals the table run up to 10 ms
/// and differs from it after.
#[test]
fn a_needle_table_is_the_constant_needle_spliced_at_its_step() {
    let table = format!(
        "{{ table = [[0.0, {NEEDLE_M2:e}], [{T_STEP_S}, {NARROW_M2:e}]], interpolation = \"step\" }}"
    );
    let mut tabled = sim_of(&circuit(&table, ""));
    let mut spliced = sim_of(&circuit(&format!("{NEEDLE_M2:e}"), ""));
    let src = circuit(
        &format!("{NEEDLE_M2:e}"),
        "[inputs]\nnames = [\"cyl.cushion_needle_area_min\"]",
    );
    let mut fmu = Instance::new(&src, "model.toml").expect("model loads");
    let names: Vec<String> = fmu
        .description()
        .variables
        .iter()
        .map(|v| v.name.clone())
        .collect();
    let vr = |name: &str| {
        fmu.description()
            .variables
            .iter()
            .find(|v| v.name == name)
            .unwrap_or_else(|| panic!("no variable {name}"))
            .value_reference
    };
    let needle_vr = vr("cyl.cushion_needle_area_min");
    fmu.setup_experiment(0.0, None).expect("setup");
    fmu.enter_initialization_mode().expect("enter");
    fmu.exit_initialization_mode().expect("exit");
    let (mut worst_splice, mut worst_fmu) = ((0.0f64, String::new()), (0.0f64, String::new()));
    let mut unchanged = sim_of(&circuit(&format!("{NEEDLE_M2:e}"), ""));
    let (mut before, mut after) = (0.0f64, 0.0f64);
    let h = 0.005;
    for k in 1..=60 {
        let t = h * k as f64;
        if (t - h - T_STEP_S).abs() < 1e-12 {
            // The spliced run's and the FMU's change at the step's instant.
            let changed = spliced
                .network
                .set_scalar("cyl", "cushion_needle_area_min", NARROW_M2)
                .expect("the needle is a run-time parameter");
            assert!(changed);
            spliced.restart_at_reported_state();
            fmu.set_real(&[needle_vr], &[NARROW_M2]).expect("set");
        }
        tabled.advance_to(t).expect("runs");
        spliced.advance_to(t).expect("runs");
        fmu.do_step(t - h, h).expect("step");
        let (a, b) = (outputs(&mut tabled), outputs(&mut spliced));
        let d = worst_difference(&a, &b);
        if d.0 > worst_splice.0 {
            worst_splice = d;
        }
        // The FMU's outputs by name, in the simulation's output order.
        let mut c = Vec::with_capacity(a.len());
        for (name, _) in &a {
            let i = names.iter().position(|n| n == name).expect("an FMU output");
            let mut v = [0.0];
            fmu.get_real(&[i as u32], &mut v).expect("get");
            c.push((name.clone(), v[0]));
        }
        let d = worst_difference(&a, &c);
        if d.0 > worst_fmu.0 {
            worst_fmu = d;
        }
        unchanged.advance_to(t).expect("runs");
        let d = worst_difference(&a, &outputs(&mut unchanged)).0;
        if t <= T_STEP_S + 1e-12 {
            before = before.max(d);
        } else {
            after = after.max(d);
        }
    }
    println!(
        "needle 0.3 → 0.1 mm² at {T_STEP_S} s: largest relative difference of the table run from \
         the spliced constant runs {:.3e} ({}), from the FMU with the input {:.3e} ({}); from \
         the constant needle left alone {before:.3e} up to the step, {after:.3e} after it",
        worst_splice.0, worst_splice.1, worst_fmu.0, worst_fmu.1
    );
    assert_eq!(before, 0.0, "the table changed the run before its step");
    assert!(
        after > 1e-3,
        "the step of the needle changed nothing: {after:e}"
    );
    assert!(worst_splice.0 < 1e-12, "{worst_splice:?}");
    assert!(worst_fmu.0 < 1e-12, "{worst_fmu:?}");
}

/// A needle set during a run (the FMU's input) that breaks its key's rule (negative), that is
/// wider than the bore (π·(32 mm)²/4 ≈ 8.04e-4 m²) or not finite is refused with a message
/// naming the input, and leaves the needle as it was.
#[test]
fn a_hostile_needle_input_is_refused_naming_its_key() {
    let src = circuit(
        &format!("{NEEDLE_M2:e}"),
        "[inputs]\nnames = [\"cyl.cushion_needle_area_min\"]",
    );
    let mut fmu = Instance::new(&src, "model.toml").expect("model loads");
    let needle = fmu
        .description()
        .variables
        .iter()
        .find(|v| v.name == "cyl.cushion_needle_area_min")
        .expect("the input")
        .value_reference;
    fmu.setup_experiment(0.0, None).expect("setup");
    fmu.enter_initialization_mode().expect("enter");
    fmu.exit_initialization_mode().expect("exit");
    fmu.do_step(0.0, 1e-3).expect("step");
    for bad in [-1e-7, 1e-3, f64::NAN, f64::INFINITY] {
        let e = fmu
            .set_real(&[needle], &[bad])
            .expect_err("a hostile needle is refused");
        println!("needle {bad:e}: {}", e.0);
        assert!(e.0.contains("cyl.cushion_needle_area_min"), "{}", e.0);
        let mut v = [0.0];
        fmu.get_real(&[needle], &mut v).expect("get");
        assert_eq!(v[0], NEEDLE_M2, "the needle changed");
    }
    // Within the bore, accepted.
    fmu.set_real(&[needle], &[5e-4])
        .expect("a needle within the bore");
    fmu.do_step(1e-3, 1e-3).expect("step");
}

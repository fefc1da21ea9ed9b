//! Each run-time check (BlasterSim's return codes) fires on a model built to trip it, and the
//! driver reacts as docs/checks.md says: 2 and 3 refuse the step and keep the last good state;
//! 1 ends the run at max_time; 4, 5, 8, 9 are warnings and the run goes on.

use crate::common;

use common::*;
use plenum::model::parse_str;
use plenum::simulation::{Advance, Finish};

fn model(extra_solver: &str, body: &str) -> plenum::model::ModelFile {
    let src = format!(
        "[model]\nname = \"t\"\n[gas]\nspecies = \"air\"\n[solver]\n{extra_solver}\n{body}"
    );
    parse_str(&src, "check.toml", &[])
        .unwrap_or_else(|e| panic!("{e:?}"))
        .spec
}

const TANK: &str = r#"
[[chamber]]
name = "tank"
volume = 1e-6
pressure = 5e5
temperature = 300.0
[[reservoir]]
name = "atm"
pressure = 1e5
temperature = 300.0
[[orifice]]
name = "hole"
from = "tank"
to = "atm"
area = 1e-4
"#;

#[test]
fn code_1_never_exited_ends_the_run_at_max_time() {
    let mut spec = shipped("projectile");
    spec.solver.max_time = Some(0.002);
    let mut sim = simulation(&spec, "rk4", 1e-6);
    let r = sim.advance_to(0.02).expect("no failure");
    println!("{r:?}, rc = {}", sim.rc);
    assert_eq!(r, Advance::Finished(Finish::NeverExited { t_s: 0.002 }));
    assert_eq!(sim.rc, 1);
    assert_eq!(sim.t_s, 0.002);
}

#[test]
fn code_2_negative_mass_refuses_the_step_and_keeps_the_last_good_state() {
    // A 1 cm³ tank (5.8 mg) behind a linear valve passing 0.4 kg/s: a 1 ms Euler step takes
    // out far more mass than there is. (A linear valve, as an orifice's pressure-ratio points
    // are events: the driver would end the step on the first of them, before the mass is
    // gone.)
    let body = TANK.replace(
        "[[orifice]]\nname = \"hole\"\nfrom = \"tank\"\nto = \"atm\"\narea = 1e-4",
        "[[valve]]\nname = \"hole\"\nfrom = \"tank\"\nto = \"atm\"\ncoefficient = 1e-6",
    );
    assert!(body.contains("[[valve]]"));
    let spec = model("method = \"euler\"\nstep = 1e-3\nt_end = 0.01", &body);
    let mut sim = simulation(&spec, "euler", 1e-3);
    let y0 = sim.y.clone();
    let err = sim.advance_to(0.01).expect_err("must fail");
    println!("{err}");
    assert_eq!(err.code, 2);
    assert_eq!(err.last_good_t_s, 0.0);
    assert_eq!(sim.t_s, 0.0);
    assert_eq!(sim.y, y0, "state untouched");
    assert_eq!(sim.rc, 2);
}

#[test]
fn code_3_negative_temperature_refuses_the_step() {
    // A wall pulled outward at 1000 m/s: the gas does −p·dV work faster than it has energy
    // (dU = −p·A·v·h > U for this step) while its mass stays.
    let body = r#"
[[chamber]]
name = "gas"
volume = 1e-6
pressure = 1e5
temperature = 300.0
[[reservoir]]
name = "outside"
pressure = 1e5
temperature = 300.0
[[wall]]
name = "lid"
left = "gas"
right = "outside"
area = 1e-4
velocity = 1000.0
"#;
    let spec = model("method = \"euler\"\nstep = 1e-4\nt_end = 0.01", body);
    let mut sim = simulation(&spec, "euler", 1e-4);
    let err = sim.advance_to(0.01).expect_err("must fail");
    println!("{err}");
    assert_eq!(err.code, 3);
    assert_eq!(sim.t_s, err.last_good_t_s);
}

#[test]
fn code_4_and_5_drift_beyond_a_threshold_are_warnings() {
    // Mass is conserved to round-off; a threshold below round-off makes check 4 fire.
    let mut spec = shipped("blowdown");
    spec.checks.mass_drift = 1e-18;
    let mut sim = simulation(&spec, "rk4", 1e-4);
    assert_eq!(sim.advance_to(1.0), Ok(Advance::Reached));
    println!(
        "mass drift threshold 1e-18: first fired at {:?}",
        sim.first_fired_s[4]
    );
    assert!(sim.first_fired_s[4].is_some());

    // Euler's energy drift on the projectile is ~1e-3 at h = 1e-5 s.
    let mut spec = shipped("projectile");
    spec.checks.energy_drift = 1e-6;
    let mut sim = simulation(&spec, "euler", 1e-5);
    let r = sim.advance_to(0.02).expect("warnings do not stop the run");
    let drift = (sim.network.energy_total_j(&sim.y) / sim.checks.energy0_j - 1.0).abs();
    println!(
        "euler energy drift {drift:e} > 1e-6: {r:?}, first fired at {:?}",
        sim.first_fired_s[5]
    );
    assert!(matches!(r, Advance::Exit { .. }));
    assert!(sim.first_fired_s[5].is_some());
}

#[test]
fn code_8_pressure_above_critical_is_a_warning() {
    let mut spec = shipped("blowdown");
    spec.chamber[0].pressure = 5e6; // air's critical pressure is 3.786 MPa
    let mut sim = simulation(&spec, "rk4", 1e-4);
    assert_eq!(sim.rc, 8, "fires on the initial state");
    let r = sim.advance_to(3.0);
    println!(
        "{r:?}; check 8 first at {:?}, final p = {} Pa, rc = {}",
        sim.first_fired_s[8],
        sim.chamber_state(0)[0],
        sim.rc
    );
    assert_eq!(r, Ok(Advance::Reached));
    assert_eq!(sim.rc, 0, "cleared once the pressure fell below p_c");
}

#[test]
fn code_9_volume_and_piston_desynchronization() {
    // The volume state and A·x are integrated separately; they agree to round-off, so only a
    // threshold below round-off (1e-30 m) makes check 9 fire. The default (1e-12 m) never does.
    let spec = shipped("projectile");
    let mut sim = simulation(&spec, "rk4", 1e-6);
    sim.advance_to(0.02).unwrap();
    let ratio = sim.checks.max_desync_ratio(&sim.network, &sim.y);
    println!("default threshold: |V − V(x)| / (1e-12 m · A) = {ratio:e}");
    assert!(ratio < 1e-3);
    assert!(sim.first_fired_s[9].is_none());
    let mut spec = shipped("projectile");
    spec.checks.piston_desync = 1e-30;
    let mut sim = simulation(&spec, "rk4", 1e-6);
    sim.advance_to(0.02).unwrap();
    println!(
        "threshold 1e-30 m: first fired at {:?}",
        sim.first_fired_s[9]
    );
    assert!(sim.first_fired_s[9].is_some());
}

//! The states' nominal values (a master's error weights: FMI's `nominal`, and CVODE's absolute
//! tolerance rtol · nominal in OMSimulator and FMPy) are the scale each state takes: a piston's
//! position its largest coordinate, else the length of its chambers' initial gas columns.

use plenum::model::{build_simulation, parse_str};

/// One chamber (volume `v0`) behind a piston of `area`, the atmosphere ahead; `extra` adds
/// piston keys.
fn nominals(v0: f64, area: f64, extra: &str) -> Vec<f64> {
    let src = format!(
        r#"
[model]
name = "free_piston"
[gas]
species = "air"
[solver]
t_end = 0.1
[[chamber]]
name = "behind"
volume = {v0:e}
pressure = 2e5
temperature = 293.15
[[reservoir]]
name = "atm"
pressure = 101325.0
temperature = 293.15
[[piston]]
name = "p"
behind = "behind"
ahead = "atm"
area = {area:e}
mass = 1e-3
x0 = 0.0
{extra}
"#
    );
    let m = parse_str(&src, "free_piston.toml", &[]).unwrap_or_else(|e| panic!("{e:?}"));
    let sim = build_simulation(&m.spec, None).unwrap();
    assert_eq!(
        sim.network.layout.n_states,
        3 + 2 + 2,
        "m U V, x v, the accumulators"
    );
    sim.network.state_nominals(&sim.y)
}

#[test]
fn a_free_pistons_position_is_scaled_by_its_gas_column() {
    // No coordinate but a start at 0: the gas column behind it, V0/A.
    let (v0, area) = (5e-6, 1e-3);
    let n = nominals(v0, area, "spring_stiffness = 5000.0");
    println!(
        "free piston: x nominal {:e} m (V0/A = {:e} m), v nominal {} m/s",
        n[3],
        v0 / area,
        n[4]
    );
    assert_eq!(n[3], v0 / area);
    assert_eq!(n[4], 1.0);
    // A coordinate sets it: the exit.
    let n = nominals(v0, area, "x_exit = 0.5");
    println!("piston with an exit at 0.5 m: x nominal {:e} m", n[3]);
    assert_eq!(n[3], 0.5);
}

//! A wall's swept volume is a pure quadrature (check 9 reads it, no derivative does): the
//! adaptive methods keep it out of their error norms, as the network's accumulators, so that a
//! state that starts at 0 with atol ≪ its scale does not set the steps. Against the right-hand
//! side itself (perturbing the swept volume changes no derivative), a closed form (adiabatic
//! compression by a wall of prescribed velocity) and the same chamber written by hand without
//! the swept volume (the BDF takes the same steps).

use crate::common;
use common::{output, sim_of};
use plenum::components::Wall;
use plenum::integrators::{Bdf, Integrator};
use plenum::ode::OdeSystem;
use plenum::simulation::Advance;

const R: f64 = 296.9450935;
const CP: f64 = 1039.30782725;
const V0: f64 = 1e-3;
const P0: f64 = 1e5;
const T0: f64 = 300.0;
const AREA: f64 = 0.01;
const VEL: f64 = -0.02;
const T_END: f64 = 2.0;
const RTOL: f64 = 1e-7;

fn model(method: &str) -> String {
    format!(
        r#"
[model]
name = "wall_compression"
[gas]
R = {R}
cp = {CP}
[solver]
method = "{method}"
rtol = {RTOL:e}
atol = 1e-15
t_end = {T_END}
output_interval = 0.05
[[chamber]]
name = "cyl"
volume = {V0:e}
pressure = {P0:e}
temperature = {T0}
[[reservoir]]
name = "atm"
pressure = 1e5
temperature = 300.0
[[wall]]
name = "w"
left = "cyl"
right = "atm"
area = {AREA}
velocity = {VEL}
"#
    )
}

/// Adiabatic compression: V = V0 + A·v·t, p = p0·(V0/V)^γ.
fn exact_pressure(t: f64) -> f64 {
    let gamma = CP / (CP - R);
    P0 * (V0 / (V0 + AREA * VEL * t)).powf(gamma)
}

#[test]
fn a_walls_swept_volume_is_a_pure_quadrature() {
    let mut sim = sim_of(&model("bdf"));
    let net = &mut sim.network;
    let n = net.dimension();
    let swept = net.layout.first::<Wall>();
    assert!(
        net.quadratures().iter().any(|r| r.contains(&swept)),
        "swept volume {swept} not among the quadratures {:?}",
        net.quadratures()
    );
    let y = sim.y.clone();
    let (mut f0, mut f1) = (vec![0.0; n], vec![0.0; n]);
    net.rhs(0.3, &y, &mut f0);
    let mut yp = y.clone();
    yp[swept] += 1e-4;
    net.rhs(0.3, &yp, &mut f1);
    assert_eq!(f0, f1, "a derivative reads the swept volume");
    assert!(f0[swept] != 0.0);
}

/// The chamber alone: (m, U, V) with dV/dt = A·v and the boundary work, as the network's
/// chamber, without the swept volume and the accumulators.
struct Chamber;

impl OdeSystem for Chamber {
    fn dimension(&self) -> usize {
        3
    }
    fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) {
        let cv = CP - R;
        let p = (R / cv) * y[1] / y[2];
        let dv = AREA * VEL;
        dy[0] = 0.0;
        dy[1] = -p * dv;
        dy[2] = dv;
    }
}

#[test]
fn a_wall_driven_compression_steps_as_the_chamber_alone() {
    let mut sim = sim_of(&model("bdf"));
    let mut worst: f64 = 0.0;
    for k in 1..=40 {
        let t = k as f64 * 0.05;
        match sim.advance_to(t).expect("no check failure") {
            Advance::Reached => {}
            other => panic!("{other:?}"),
        }
        let p = output(&mut sim, "cyl.p");
        worst = worst.max((p - exact_pressure(t)).abs() / exact_pressure(t));
    }
    let net_steps = sim.stats.steps;

    let mut sys = Chamber;
    let mut b = Bdf::adaptive(3);
    b.tolerances.rtol = RTOL;
    b.tolerances.atol = 1e-15;
    let m0 = P0 * V0 / (R * T0);
    let mut y = vec![m0, m0 * (CP - R) * T0, V0];
    let (mut t, mut inc, mut hand_steps) = (0.0, vec![0.0; 3], 0u64);
    while t < T_END {
        let room = T_END - t;
        let h = b.attempt(&mut sys, t, &y, room, &mut inc).expect("step");
        for (a, d) in y.iter_mut().zip(&inc) {
            *a += d;
        }
        t = if h == room { T_END } else { t + h };
        b.commit(&mut sys, t, &y);
        hand_steps += 1;
    }
    let hand_err =
        ((R / (CP - R)) * y[1] / y[2] - exact_pressure(T_END)).abs() / exact_pressure(T_END);
    println!(
        "wall compression, bdf rtol {RTOL:e}: network {net_steps} steps, worst pressure error \
         {worst:.2e}; the chamber alone {hand_steps} steps, error at the end {hand_err:.2e}"
    );
    // BDF's global error runs ~20·rtol here (the hand-written chamber's too).
    assert!(worst < 30.0 * RTOL, "pressure error {worst:e}");
    assert!(hand_err < 30.0 * RTOL, "hand-written error {hand_err:e}");
    // Before the swept volume left the norm: its weight 1/atol at 0 set a first step ~10⁻⁸ s
    // and many more steps than the chamber's own.
    assert!(
        net_steps.abs_diff(hand_steps) <= 2,
        "network {net_steps} steps, chamber alone {hand_steps}"
    );
}

//! The valves' compact links (K·opening formed once, ends' offsets in dy) against Cantera's
//! valve law written out here: ṁ = K·opening·(p_from − p_to), zero backwards through a one-way
//! valve, carrying c_p·T of the upstream node; also after parameter writes (which leave the
//! links stale until the next evaluation) and with an opening that varies in time.

use plenum::model::build_simulation;
use plenum::ode::OdeSystem;

const NET: &str = r#"
[model]
name = "valve_links"
[gas]
R = 287.0
cp = 1004.5
[solver]
t_end = 1.0
[[chamber]]
name = "a"
volume = 1e-3
pressure = 3e5
temperature = 300.0
[[chamber]]
name = "b"
volume = 2e-3
pressure = 2e5
temperature = 400.0
[[reservoir]]
name = "supply"
pressure = 5e5
temperature = 350.0
[[reservoir]]
name = "atm"
pressure = 1e5
temperature = 290.0
[[valve]]
name = "ab"
from = "a"
to = "b"
coefficient = 2e-8
opening = 0.5
[[valve]]
name = "back"
from = "b"
to = "a"
coefficient = 3e-8
one_way = true
[[valve]]
name = "ba"
from = "b"
to = "a"
coefficient = 1e-8
[[valve]]
name = "vent"
from = "b"
to = "atm"
coefficient = 4e-8
one_way = true
[[valve]]
name = "fill"
from = "supply"
to = "a"
coefficient = 5e-8
opening = { cubic = { t_open = 0.1, duration = 0.2 } }
"#;

/// Node pressures (Pa) and temperatures (K): a, b, supply, atm.
const P: [f64; 4] = [3e5, 2e5, 5e5, 1e5];
const T: [f64; 4] = [300.0, 400.0, 350.0, 290.0];
const CP: f64 = 1004.5;

/// dm/dt and dU/dt of chambers a and b, and (mass, energy) into the reservoirs, from the
/// valves (from, to, K·opening, one-way) by Cantera's law; and the largest flows of mass and
/// energy (the scales of the sums' rounding).
fn expected(valves: &[(usize, usize, f64, bool)]) -> ([f64; 4], [f64; 2], [f64; 2]) {
    let (mut chambers, mut left, mut scale) = ([0.0; 4], [0.0; 2], [0.0f64; 2]);
    for &(from, to, k_open, one_way) in valves {
        let mut mdot = k_open * (P[from] - P[to]);
        if one_way && mdot < 0.0 {
            mdot = 0.0;
        }
        let up = if mdot >= 0.0 { from } else { to };
        let edot = mdot * CP * T[up];
        scale = [scale[0].max(mdot.abs()), scale[1].max(edot.abs())];
        for (node, sign) in [(from, -1.0), (to, 1.0)] {
            if node < 2 {
                chambers[2 * node] += sign * mdot;
                chambers[2 * node + 1] += sign * edot;
            } else {
                left[0] += sign * mdot;
                left[1] += sign * edot;
            }
        }
    }
    (chambers, left, scale)
}

fn check(net: &mut plenum::network::Network, t: f64, valves: &[(usize, usize, f64, bool)]) {
    let y = net.initial_state();
    // The ramp's piece is the one the segment starts on (see `ParamValue::value`).
    net.segment_start_s = t;
    let mut dy = vec![f64::NAN; y.len()];
    net.rhs(t, &y, &mut dy);
    let (chambers, left, scale) = expected(valves);
    let acc = net.layout.accumulator_offset;
    let got = [dy[0], dy[1], dy[3], dy[4]];
    println!("t = {t}: dm/dt, dU/dt of a, b {got:?} (expected {chambers:?})");
    println!("  left {:?} (expected {left:?})", [dy[acc], dy[acc + 1]]);
    let close = |x: f64, e: f64, scale: f64| (x - e).abs() <= 1e-13 * scale;
    let expect = chambers.iter().chain(&left);
    let got = got.iter().chain([&dy[acc], &dy[acc + 1]]);
    for (k, (x, e)) in got.zip(expect).enumerate() {
        assert!(close(*x, *e, scale[k % 2]), "{x:e} vs {e:e} at t = {t}");
    }
    // Rigid chambers: no volume change.
    assert_eq!((dy[2], dy[5]), (0.0, 0.0));
    for (l, v) in valves.iter().enumerate() {
        let mdot = net.link_mass_flow(l);
        let e = expected(&[*v]).0;
        let into_to = if v.1 < 2 { e[2 * v.1] } else { -e[2 * v.0] };
        assert!(
            close(mdot, into_to, into_to.abs()),
            "link {l}: {mdot:e} vs {into_to:e}"
        );
    }
}

#[test]
fn valve_links_follow_cantera_law_through_parameter_writes() {
    let spec = plenum::model::parse_str(NET, "valve_links.toml", &[])
        .unwrap()
        .spec;
    let mut sim = build_simulation(&spec, None).unwrap();
    let net = &mut sim.network;
    // The cubic opening 3s² − 2s³ at s = (t − 0.1)/0.2.
    let cubic = |t: f64| {
        let s = ((t - 0.1) / 0.2f64).clamp(0.0, 1.0);
        s * s * (3.0 - 2.0 * s)
    };
    let valves = |k_ab: f64, open_fill: f64| {
        [
            (0, 1, k_ab * 0.5, false),
            (1, 0, 3e-8, true), // backwards (p_b < p_a): blocked
            (1, 0, 1e-8, false),
            (1, 3, 4e-8, true),
            (2, 0, 5e-8 * open_fill, false),
        ]
    };
    for t in [0.0, 0.15, 0.2, 0.5] {
        check(net, t, &valves(2e-8, cubic(t)));
    }
    // Writes leave the links stale: the next evaluations see the new values.
    assert!(net.set_scalar("ab", "coefficient", 6e-8).unwrap());
    check(net, 0.2, &valves(6e-8, cubic(0.2)));
    check(net, 0.25, &valves(6e-8, cubic(0.25)));
    assert!(net.set_scalar("fill", "opening", 0.25).unwrap());
    check(net, 0.2, &valves(6e-8, 0.25));
    check(net, 0.25, &valves(6e-8, 0.25));
}

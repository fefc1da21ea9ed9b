//! The switching property (proptest): random small networks of chambers joined by relief and
//! check valves with random cracking pressures and bands (1 Pa to 1 bar) and by plain orifices
//! (ISO 6358 or isentropic, two-way between chambers or to the atmosphere), and a piston between
//! two chambers with end stops and static friction; each adaptive method at rtol 1e-6 against a
//! BDF run at rtol 1e-11 of the same network. At every output time, every chamber's pressure and
//! the volumes the piston moves are within a stated multiple of the requested tolerance of the
//! reference (relative to the output's largest magnitude over the run).
//!
//! The multiples: `dopri5` 20 × rtol, `bdf` 30 × rtol (the order-variable BDF's global error is
//! 3–15 × rtol on these networks, its error constant), `auto` 60 × rtol (it takes its BDF where
//! a valve chatters in its band or DP5's steps are fought). A forced `dopri5` beyond its
//! multiple passes only where run-time check 11 fired: a valve's band that makes the problem
//! stiff for its steps is warned about, never silently off. A valve's kink stepped over instead
//! of located cost 10–60 × rtol on a 1 Pa band alone. Plain orifices between chambers are drawn
//! to the atmosphere instead: a chamber filling from 1 bar through one is a smooth transient on
//! which `dopri5` reaches 19 × rtol with no switch at all.
//!
//! The piston's viscous damping is drawn as a damping ratio of 0.1 to 1 of its oscillation
//! between the two chambers' gas springs (`Piston::damping_n_s_per_m`). Nearly undamped, it
//! swings for the whole run and every method's phase error grows with each period: no
//! multiple of rtol holds for it, near a switch or not (docs/integrators.md, "The switching
//! property"). The damped draws found two defects: a resting piston let go by a Newton
//! correction's round-off in x (`stuck_piston.rs`), and `bdf` locating its own error's
//! crossings without end where two relief valves in series settle onto both their closing
//! points at once (seed 7; `chattering.rs`). Both are fixed: 120 draws each from seeds 7, 13
//! and 21 pass; the draws are seeded (24 from seed 1) so that a CI run is repeatable.

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestCaseError};

use crate::common::{output, sim_of};

#[derive(Clone, Debug)]
struct Valve {
    /// The two chambers (indices) or the atmosphere (`None`) it joins.
    from: usize,
    to: Option<usize>,
    /// (cracking pressure, band) Pa, or a plain orifice.
    poppet: Option<(f64, f64)>,
    one_way: bool,
    area_m2: f64,
    /// The ISO 6358 form (C = area·0.02 m³/(s·Pa) per m², b = 0.3) instead of the isentropic one.
    iso: bool,
}

#[derive(Clone, Debug)]
struct Net {
    /// (volume L, pressure bar) per chamber.
    chambers: Vec<(f64, f64)>,
    valves: Vec<Valve>,
    piston: Option<Piston>,
}

/// A piston between chambers 0 and 1, of area `AREA_M2`, with end stops at ±`stroke_m`, static
/// and dynamic friction, and viscous damping.
#[derive(Clone, Copy, Debug)]
struct Piston {
    mass_kg: f64,
    stroke_m: f64,
    static_friction_pa: f64,
    /// Dynamic friction as a fraction of the static.
    dynamic_fraction: f64,
    /// The damping ratio of its oscillation between the two chambers' gas springs at the start
    /// (see `damping_n_s_per_m`).
    damping_ratio: f64,
}

const AREA_M2: f64 = 1e-3;

impl Piston {
    /// The viscous damping c = 2ζ·√(k·m) that gives the drawn damping ratio ζ, with k the two
    /// gas springs' stiffness at the start, γ·A²·(p₀/V₀ + p₁/V₁) (adiabatic, air).
    fn damping_n_s_per_m(&self, chambers: &[(f64, f64)]) -> f64 {
        let stiffness = |(litres, bar): (f64, f64)| bar * 1e5 / (litres * 1e-3);
        let k = 1.4 * AREA_M2 * AREA_M2 * (stiffness(chambers[0]) + stiffness(chambers[1]));
        2.0 * self.damping_ratio * (k * self.mass_kg).sqrt()
    }
}

/// Whether networks are drawn with a piston (a switch kept to study the networks without).
const PISTONS: bool = true;

fn log_uniform(lo: f64, hi: f64) -> impl Strategy<Value = f64> {
    (lo.log10()..hi.log10()).prop_map(|e| 10f64.powf(e))
}

fn valve(n: usize) -> impl Strategy<Value = Valve> {
    (
        0..n,
        prop::option::weighted(0.7, 0..n),
        prop::option::weighted(0.8, (log_uniform(1e4, 3e5), log_uniform(1.0, 1e5))),
        any::<bool>(),
        log_uniform(1e-7, 3e-6),
        any::<bool>(),
    )
        .prop_map(move |(from, to, poppet, one_way, area_m2, iso)| Valve {
            from,
            // A valve from a chamber to itself goes to the atmosphere instead, and so does a
            // plain orifice (see the module's documentation).
            to: to.filter(|&t| t != from && poppet.is_some()),
            poppet,
            one_way,
            area_m2,
            iso,
        })
}

fn net() -> impl Strategy<Value = Net> {
    (2usize..=3).prop_flat_map(|n| {
        (
            prop::collection::vec((log_uniform(0.05, 2.0), 1.0..10.0f64), n),
            prop::collection::vec(valve(n), 1..=3),
            (
                log_uniform(0.05, 1.0),
                0.005..0.03f64,
                prop_oneof![Just(0.0), log_uniform(1e3, 1e5)],
                0.3..1.0f64,
                log_uniform(0.1, 1.0),
            )
                .prop_map(
                    |(mass_kg, stroke_m, stat, dynamic_fraction, damping_ratio)| {
                        PISTONS.then_some(Piston {
                            mass_kg,
                            stroke_m,
                            static_friction_pa: stat,
                            dynamic_fraction,
                            damping_ratio,
                        })
                    },
                ),
        )
            .prop_map(|(chambers, valves, piston)| Net {
                chambers,
                valves,
                piston,
            })
    })
}

fn model(net: &Net, method: &str, rtol: f64) -> String {
    let mut s = format!(
        "[model]\nname = \"switching\"\n[gas]\nspecies = \"air\"\n[solver]\nmethod = \"{method}\"\n\
         rtol = {rtol:e}\natol = 1e-12\nt_end = 0.2\n\
         [[reservoir]]\nname = \"atm\"\npressure = 101325.0\ntemperature = 293.15\n"
    );
    for (i, (litres, bar)) in net.chambers.iter().enumerate() {
        s += &format!(
            "[[chamber]]\nname = \"c{i}\"\nvolume = \"{litres} L\"\npressure = \"{bar} bar\"\n\
             temperature = 293.15\n"
        );
    }
    for (k, v) in net.valves.iter().enumerate() {
        let to = v.to.map_or("atm".to_string(), |t| format!("c{t}"));
        let size = if v.iso {
            format!(
                "sonic_conductance = {:e}\ncritical_pressure_ratio = 0.3\n",
                v.area_m2 * 2e-2
            )
        } else {
            format!("area = {:e}\n", v.area_m2)
        };
        s += &format!(
            "[[orifice]]\nname = \"v{k}\"\nfrom = \"c{}\"\nto = \"{to}\"\n{size}\
             one_way = {}\n",
            v.from, v.one_way
        );
        if let Some((crack, band)) = v.poppet {
            s += &format!(
                "cracking_pressure = {crack:e}\nfull_flow_pressure = {:e}\n",
                crack + band
            );
        }
    }
    if let Some(p) = net.piston {
        s += &format!(
            "[[piston]]\nname = \"p\"\nbehind = \"c0\"\nahead = \"c1\"\narea = {AREA_M2:e}\n\
             mass = {}\nx0 = 0.0\nx_min = {}\nx_max = {}\n\
             friction_static = {:e}\nfriction_dynamic = {:e}\ndamping = {:e}\n",
            p.mass_kg,
            -p.stroke_m,
            p.stroke_m,
            p.static_friction_pa,
            p.static_friction_pa * p.dynamic_fraction,
            p.damping_n_s_per_m(&net.chambers)
        );
    }
    s
}

/// The worst relative error over the outputs, and whether run-time check 11 fired in the run
/// (an explicit method warned that it cannot resolve the problem at its steps).
fn worst_error(net: &Net, method: &str) -> Result<(f64, bool), String> {
    // Pressures, and the volumes the piston moves (its position is ill-conditioned in the
    // pressures near its equilibrium: a pressure error of rtol moves it by V/(γ·A)·rtol, many
    // times its stroke's rtol in a small chamber).
    let mut names: Vec<String> = (0..net.chambers.len()).map(|i| format!("c{i}.p")).collect();
    if net.piston.is_some() {
        names.extend(["c0.V".to_string(), "c1.V".to_string()]);
    }
    let mut sim = sim_of(&model(net, method, 1e-6));
    let mut reference = sim_of(&model(net, "bdf", 1e-11));
    let (mut diffs, mut scale) = (vec![0.0f64; names.len()], vec![0.0f64; names.len()]);
    for k in 1..=40 {
        let t = 0.2 * k as f64 / 40.0;
        sim.advance_to(t)
            .map_err(|e| format!("{method}: {}", e.message))?;
        reference
            .advance_to(t)
            .map_err(|e| format!("reference: {}", e.message))?;
        for (j, n) in names.iter().enumerate() {
            let (u, r) = (output(&mut sim, n), output(&mut reference, n));
            diffs[j] = diffs[j].max((u - r).abs());
            scale[j] = scale[j].max(r.abs());
        }
    }
    let warned = sim.first_fired_s[plenum::checks::BEYOND_STABILITY as usize].is_some();
    let worst = diffs
        .iter()
        .zip(&scale)
        .map(|(d, s)| if *s > 0.0 { d / s } else { *d })
        .fold(0.0, f64::max);
    Ok((worst, warned))
}

/// 24 draws from a fixed seed, so that a CI run is repeatable (a random draw may be one of
/// those named above); `PROPTEST_CASES` and `PROPTEST_RNG_SEED` ask for others.
fn config() -> Config {
    let env = Config::default();
    let set = |name: &str| std::env::var_os(name).is_some();
    Config {
        cases: if set("PROPTEST_CASES") { env.cases } else { 24 },
        rng_seed: if set("PROPTEST_RNG_SEED") {
            env.rng_seed
        } else {
            RngSeed::Fixed(1)
        },
        failure_persistence: None,
        ..env
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn switching_networks_meet_the_tolerance_with_every_adaptive_method(net in net()) {
        for (method, multiple) in [("auto", 60.0), ("dopri5", 20.0), ("bdf", 30.0)] {
            let (err, warned) = worst_error(&net, method).map_err(TestCaseError::fail)?;
            println!(
                "{} chambers, {} valves, piston {}: {method:>6} {:.2} × rtol (bound {multiple}){}",
                net.chambers.len(),
                net.valves.len(),
                net.piston.is_some(),
                err / 1e-6,
                if warned { ", check 11 fired" } else { "" }
            );
            // A forced explicit method may be beyond what its steps resolve (a valve's band
            // that makes the problem stiff); it must then say so (check 11), never be silently
            // off. `auto` and `bdf` have no such way out.
            let excused = method == "dopri5" && warned;
            prop_assert!(
                err <= multiple * 1e-6 || excused,
                "{method}: {err:e} in {}",
                model(&net, method, 1e-6)
            );
        }
    }
}

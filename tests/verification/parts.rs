//! Parts (`[[hose]]`), which the model reader expands into chambers and tubes, against
//! independent truths: the same model written by hand component by component, the closed form
//! of the laminar line's pressure diffusion (the limit the segments must converge to), and the
//! conservation of mass and energy in a closed system.

use crate::common::sim_of;
use plenum::simulation::Simulation;
use plenum::variables::{output_variables, write_outputs};

/// Every output of the current state, by name.
fn outputs(sim: &mut Simulation) -> Vec<(String, f64)> {
    let vars = output_variables(sim);
    let mut out = vec![0.0; vars.len()];
    write_outputs(sim, &mut out);
    vars.into_iter().map(|v| v.name).zip(out).collect()
}

fn value(outs: &[(String, f64)], name: &str) -> f64 {
    outs.iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no output {name}"))
        .1
}

const HEAD: &str = r#"
[model]
name = "hose"
[gas]
species = "air"
[solver]
method = "bdf"
rtol = 1e-9
atol = 1e-14
t_end = 0.2
[[reservoir]]
name = "supply"
pressure = "6 bar"
temperature = 293.15
[[chamber]]
name = "end"
volume = "0.1 l"
pressure = "1 bar"
temperature = 293.15
"#;

#[test]
fn one_segment_hose_is_a_chamber_between_two_half_tubes() {
    let part = format!(
        "{HEAD}
[[hose]]
name = \"h\"
from = \"supply\"
to = \"end\"
diameter = \"4 mm\"
length = \"3 m\"
roughness = \"0.01 mm\"
pressure = \"1 bar\"
temperature = 293.15
"
    );
    // By hand: the volume π·d²/4·L and two tubes of L/2, named as the part names them.
    let volume = std::f64::consts::PI / 4.0 * 0.004 * 0.004 * 3.0;
    let tube = |name: &str, from: &str, to: &str| {
        format!(
            "[[tube]]\nname = \"{name}\"\nfrom = \"{from}\"\nto = \"{to}\"\nlength = 1.5\n\
             diameter = 0.004\nroughness = 1e-5\n"
        )
    };
    let hand = format!(
        "{HEAD}
[[chamber]]
name = \"h_1\"
volume = {volume:e}
pressure = 1e5
temperature = 293.15
{}{}",
        tube("h_t0", "supply", "h_1"),
        tube("h_t1", "h_1", "end")
    );
    let (mut a, mut b) = (sim_of(&part), sim_of(&hand));
    let mut worst = 0.0_f64;
    for k in 1..=20 {
        let t = 0.01 * k as f64;
        a.advance_to(t).expect("runs");
        b.advance_to(t).expect("runs");
        let (oa, ob) = (outputs(&mut a), outputs(&mut b));
        assert_eq!(
            oa.iter().map(|x| &x.0).collect::<Vec<_>>(),
            ob.iter().map(|x| &x.0).collect::<Vec<_>>()
        );
        for ((name, x), (_, y)) in oa.iter().zip(&ob) {
            let rel = (x - y).abs() / x.abs().max(1e-30);
            worst = worst.max(rel);
            assert!(rel <= 1e-12, "{name} at t = {t}: part {x}, by hand {y}");
        }
    }
    let o = outputs(&mut a);
    println!(
        "t = 0.2 s: end.p = {:.1} Pa, h_1.p = {:.1} Pa, h_t1.mdot = {:.4e} kg/s; largest \
         relative difference part vs by hand over 20 outputs: {worst:e}",
        value(&o, "end.p"),
        value(&o, "h_1.p"),
        value(&o, "h_t1.mdot")
    );
    assert!(value(&o, "end.p") > 1.5e5, "the end filled");
}

/// The closed end's pressure rise of a laminar line, a step Δp at x = 0 and a closed end at
/// x = L, as a fraction of Δp: the linear diffusion equation ∂p/∂t = D·∂²p/∂x², D = p̄·d²/(32·μ)
/// (Poiseuille's law in an isothermal gas: ṁ = π·d⁴·ρ/(128·μ)·(−∂p/∂x), ∂p/∂t = R·T/A·(−∂ṁ/∂x)),
/// solved by separation of variables (Carslaw & Jaeger, *Conduction of Heat in Solids*, 1959,
/// §3.3): u(L, t) = 1 − (4/π)·Σ_n (−1)ⁿ/(2n+1)·exp(−(2n+1)²·π²·D·t/(4·L²)).
fn closed_end_fraction(d_m2_per_s: f64, l_m: f64, t_s: f64) -> f64 {
    let pi = std::f64::consts::PI;
    let sum: f64 = (0..200)
        .map(|n| {
            let k = (2 * n + 1) as f64;
            let sign = if n % 2 == 0 { 1.0 } else { -1.0 };
            sign / k * (-(k * k) * pi * pi * d_m2_per_s * t_s / (4.0 * l_m * l_m)).exp()
        })
        .sum();
    1.0 - 4.0 / pi * sum
}

#[test]
fn hose_segments_converge_to_the_laminar_lines_closed_form() {
    let (p0, dp, d, l, mu, t_k) = (1e5, 10.0, 1e-3, 2.0, 1.82e-5, 293.15);
    let diffusivity = (p0 + dp / 2.0) * d * d / (32.0 * mu);
    // The half-rise time of the closed form, by bisection.
    let (mut lo, mut hi) = (0.0, 1.0);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if closed_end_fraction(diffusivity, l, mid) < 0.5 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let t_half = 0.5 * (lo + hi);
    let (r, gamma): (f64, f64) = (8.314_462_618 / 0.028_965, 1.4);
    let t_wave = l / (gamma * r * t_k).sqrt();
    println!(
        "closed form: D = {diffusivity:.2} m²/s, half rise at the closed end after \
         {:.4} ms; the acoustic travel time L/c = {:.4} ms",
        t_half * 1e3,
        t_wave * 1e3
    );
    let (mut errors, mut times) = (Vec::new(), Vec::new());
    for n in [1, 4, 16, 64] {
        // The closed end: a chamber of 10⁻⁶ of the hose's volume.
        let v_end = 1e-6 * std::f64::consts::PI / 4.0 * d * d * l;
        let src = format!(
            r#"
[model]
name = "line"
[gas]
species = "air"
isothermal = true
[solver]
method = "bdf"
rtol = 1e-10
atol = 1e-16
t_end = 0.1
[[reservoir]]
name = "supply"
pressure = {}
temperature = {t_k}
[[chamber]]
name = "end"
volume = {v_end:e}
pressure = {p0}
temperature = {t_k}
[[hose]]
name = "h"
from = "supply"
to = "end"
diameter = {d}
length = {l}
viscosity = {mu}
segments = {n}
pressure = {p0}
temperature = {t_k}
"#,
            p0 + dp
        );
        let mut sim = sim_of(&src);
        let dt = t_half / 400.0;
        let (mut t_prev, mut u_prev, mut crossed) = (0.0, 0.0, None);
        let mut re_max = 0.0_f64;
        for k in 1..=2000 {
            let t = dt * k as f64;
            sim.advance_to(t).expect("runs");
            let o = outputs(&mut sim);
            let u = (value(&o, "end.p") - p0) / dp;
            let mdot = value(&o, "h_t0.mdot").abs();
            re_max = re_max.max(4.0 * mdot / (std::f64::consts::PI * d * mu));
            if u >= 0.5 {
                crossed = Some(t_prev + (0.5 - u_prev) / (u - u_prev) * (t - t_prev));
                break;
            }
            (t_prev, u_prev) = (t, u);
        }
        let t_n = crossed.expect("the end reaches half the step");
        let err = (t_n - t_half) / t_half;
        println!(
            "N = {n:2}: half rise after {:.4} ms, {:+.3} % from the closed form, {:.2}·L/c \
             (largest Re at the inlet {re_max:.0})",
            t_n * 1e3,
            err * 100.0,
            t_n / t_wave
        );
        // The closed form is of laminar flow.
        assert!(re_max < 2300.0, "laminar flow: Re = {re_max}");
        errors.push(err.abs());
        times.push(t_n);
    }
    // The segments converge (each refinement by 4 changes the result less than the one
    // before), to the closed form: what is left at 64 segments is the linearisation (Δp/p =
    // 10⁻⁴) and the closed end's small volume, not the discretisation.
    let steps: Vec<f64> = times.windows(2).map(|w| (w[1] - w[0]).abs()).collect();
    println!("changes from one N to the next: {steps:?} s");
    for w in steps.windows(2) {
        assert!(w[1] < 0.25 * w[0], "converges with N: {steps:?}");
    }
    assert!(errors[1] < errors[0], "{errors:?}");
    assert!(errors[3] < 2e-4, "64 segments within 0.02 %: {errors:?}");
}

#[test]
fn a_closed_system_with_hoses_keeps_its_mass_and_energy() {
    let src = r#"
[model]
name = "closed"
[gas]
species = "air"
[solver]
method = "bdf"
rtol = 1e-8
t_end = 0.5
[[chamber]]
name = "a"
volume = "0.2 l"
pressure = "6 bar"
temperature = 293.15
[[chamber]]
name = "b"
volume = "0.1 l"
pressure = "1 bar"
temperature = 293.15
[[hose]]
name = "ab"
from = "a"
to = "b"
diameter = "4 mm"
length = "2 m"
segments = 8
pressure = "3 bar"
temperature = 320
[[hose]]
name = "ba"
from = "b"
to = "a"
diameter = "2 mm"
length = "1 m"
segments = 3
pressure = "2 bar"
temperature = 280
"#;
    let mut sim = sim_of(src);
    let chambers: Vec<String> = ["a", "b"]
        .into_iter()
        .map(String::from)
        .chain((1..=8).map(|k| format!("ab_{k}")))
        .chain((1..=3).map(|k| format!("ba_{k}")))
        .collect();
    let totals = |sim: &mut Simulation| {
        let o = outputs(sim);
        let m: f64 = chambers.iter().map(|c| value(&o, &format!("{c}.m"))).sum();
        let u: f64 = chambers.iter().map(|c| value(&o, &format!("{c}.U"))).sum();
        (m, u, value(&o, "b.p"))
    };
    let (m0, u0, pb0) = totals(&mut sim);
    let (mut dm, mut du) = (0.0_f64, 0.0_f64);
    for k in 1..=50 {
        sim.advance_to(0.01 * k as f64).expect("runs");
        let (m, u, _) = totals(&mut sim);
        dm = dm.max((m - m0).abs() / m0);
        du = du.max((u - u0).abs() / u0);
    }
    let (_, _, pb) = totals(&mut sim);
    println!(
        "m = {m0:.6e} kg, U = {u0:.6e} J over 13 chambers; largest relative drift of m \
         {dm:e}, of U {du:e}; b.p {pb0:.0} → {pb:.0} Pa"
    );
    assert!(pb > pb0 + 1e5, "gas moved into b");
    assert!(dm < 1e-12, "mass kept to round-off: {dm:e}");
    assert!(du < 1e-12, "energy kept to round-off: {du:e}");
}

#[test]
fn a_hose_with_wall_heat_exchange_relaxes_to_the_wall_temperature() {
    // Each segment's heat exchange h·π·d·(L/N)·(T_wall − T): a closed hose (both ends on one
    // chamber of the same state) relaxes at the rate h·A/(m·c_v) to T_wall, as one chamber
    // with the whole wall does. The chamber `a` at its ends has its own wall in the same
    // proportion (area 4·V/d), so that every chamber relaxes alike and no gas moves.
    let (h, d, l, t0, tw) = (50.0, 0.01, 1.0, 350.0, 300.0);
    let src = format!(
        r#"
[model]
name = "warm"
[gas]
R = 287.0
cp = 1004.5
[solver]
method = "bdf"
rtol = 1e-10
atol = 1e-14
t_end = 1.0
[[chamber]]
name = "a"
volume = 1e-12
pressure = 1e5
temperature = {t0}
[[ambient_heat]]
name = "a_wall"
chamber = "a"
heat_transfer_coefficient = {h}
area = 4e-10
ambient_temperature = {tw}
[[hose]]
name = "h"
from = "a"
to = "a"
diameter = {d}
length = {l}
segments = 4
pressure = 1e5
temperature = {t0}
heat_transfer_coefficient = {h}
ambient_temperature = {tw}
"#
    );
    let mut sim = sim_of(&src);
    let o = outputs(&mut sim);
    let m = value(&o, "h_1.m") * 4.0;
    let cv = 1004.5 - 287.0;
    let rate = h * std::f64::consts::PI * d * l / (m * cv);
    // The gas's mass and volume stay (both ends on one node, all at one state), so T follows
    // dT/dt = rate·(T_wall − T).
    for t in [0.05, 0.1, 0.2] {
        sim.advance_to(t).expect("runs");
        let o = outputs(&mut sim);
        let want = tw + (t0 - tw) * (-rate * t).exp();
        let got = value(&o, "h_2.T");
        println!("t = {t} s: h_2.T = {got:.6} K, closed form {want:.6} K");
        assert!((got - want).abs() < 1e-5 * want, "{got} vs {want}");
    }
}

#[test]
fn a_hoses_bad_keys_are_named_with_the_hose_and_the_key() {
    let base = format!(
        "{HEAD}
[[hose]]
name = \"h\"
from = \"supply\"
to = \"end\"
diameter = \"4 mm\"
length = \"3 m\"
pressure = \"1 bar\"
temperature = 293.15
"
    );
    let cases = [
        (
            ("to = \"end\"", "to = \"h_1\""),
            "`hose.h.to`",
            "`to` = `h_1` is a component this hose generates itself",
        ),
        (
            ("length = \"3 m\"", "lenght = \"3 m\""),
            "`hose.h.lenght`",
            "did you mean `length`?",
        ),
        (
            ("diameter = \"4 mm\"", "diameter = \"-4 mm\""),
            "`hose.h.diameter`",
            "`diameter` must be greater than 0 m, got -0.004",
        ),
        (
            ("length = \"3 m\"", "length = \"3 m\"\nsegments = 2.5"),
            "`hose.h.segments`",
            "whole number from 1 to 1000, got 2.5",
        ),
        (
            ("length = \"3 m\"", "length = \"3 m\"\nsegments = 1e9"),
            "`hose.h.segments`",
            "whole number from 1 to 1000",
        ),
        (
            ("to = \"end\"", "to = \"ned\""),
            "`hose.h.to`",
            "`to` = `ned` is not a chamber or reservoir (nor a chamber a part generates); did \
             you mean `end`?",
        ),
        (
            ("name = \"end\"", "name = \"h_1\""),
            "`hose.h.name`",
            "hose `h` generates the chamber `h_1`, a name a chamber already has",
        ),
        (
            (
                "length = \"3 m\"",
                "length = \"3 m\"\nheat_transfer_coefficient = 10",
            ),
            "`hose.h.heat_transfer_coefficient`",
            "needs `ambient_temperature`",
        ),
        (
            ("length = \"3 m\"", "length = \"3 mm/s\""),
            "`hose.h.length`",
            "",
        ),
    ];
    for ((from, to), key, words) in cases {
        let mut src = base.replacen(from, to, 1);
        if from.starts_with("name") {
            src = src.replacen("to = \"end\"", "to = \"supply\"", 1);
            src = src.replacen("from = \"supply\"", "from = \"h_1\"", 1);
        }
        let errors = plenum::model::parse_str(&src, "m.toml", &[]).expect_err("refused");
        let text: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        println!("{}", text.join("\n"));
        assert!(
            text.iter()
                .any(|t| t.contains(key) && t.contains(words) && t.contains("m.toml:")),
            "{key} {words}: {text:?}"
        );
    }
}

#[test]
fn a_hose_may_be_overridden_by_its_keys_and_writes_back_as_its_components() {
    let src = format!(
        "{HEAD}
[[hose]]
name = \"h\"
from = \"supply\"
to = \"end\"
diameter = \"4 mm\"
length = \"3 m\"
pressure = \"1 bar\"
temperature = 293.15
"
    );
    let m = plenum::model::parse_str(&src, "m.toml", &["h.segments=3".to_string()])
        .unwrap_or_else(|e| panic!("{e:?}"));
    let names: Vec<&str> = m.spec.tube.iter().map(|t| t.name.as_str()).collect();
    let lengths: Vec<f64> = m
        .spec
        .tube
        .iter()
        .map(|t| match t.length {
            plenum::param::ParamSpec::Const(v) => v,
            _ => f64::NAN,
        })
        .collect();
    println!("{names:?} {lengths:?}");
    assert_eq!(names, ["h_t0", "h_t1", "h_t2", "h_t3"]);
    assert_eq!(lengths, [0.5, 1.0, 1.0, 0.5]);
    assert!(m.spec.hose.is_empty(), "expanded");
    // `plenum describe` says what the part became.
    let path = std::env::temp_dir().join(format!("plenum-parts-{}.toml", std::process::id()));
    std::fs::write(&path, &src).expect("writes");
    let out = crate::common::output_ok(
        crate::common::plenum_command()
            .arg("describe")
            .arg(&path)
            .args(["--set", "h.segments=3"]),
    );
    let _ = std::fs::remove_file(&path);
    let text = String::from_utf8_lossy(&out.stdout);
    println!("{text}");
    assert!(text.contains(
        "hose h → chamber h_1, chamber h_2, chamber h_3, tube h_t0, tube h_t1, tube h_t2, tube \
         h_t3"
    ));
    // The expanded model, written back, is a model of kinds only that reads the same.
    let text = toml::to_string(&m.spec).expect("serializes");
    assert!(!text.contains("[[hose]]"));
    let again = plenum::model::parse_str(&text, "again.toml", &[]).expect("reads");
    assert!(
        again.spec.expanded.is_empty(),
        "no part in the written-back model"
    );
    let mut spec = m.spec.clone();
    assert_eq!(spec.expanded.len(), 1);
    spec.expanded.clear();
    assert_eq!(again.spec, spec);
}

/// A single-acting cylinder fed from `supply` (absolute, Pa) through an ISO 6358 orifice,
/// its rod side open to the atmosphere, with a return spring and damping.
fn cylinder_model(supply_pa: f64, extra: &str) -> String {
    format!(
        r#"
[model]
name = "cyl"
[gas]
species = "air"
[solver]
method = "bdf"
rtol = 1e-9
t_end = 3.0
[[reservoir]]
name = "supply"
pressure = {supply_pa}
temperature = 293.15
[[reservoir]]
name = "atm"
pressure = 1e5
temperature = 293.15
[[cylinder]]
name = "cyl"
vent = "atm"
bore = "32 mm"
stroke = "100 mm"
dead_volume = "5 cm3"
mass = 0.5
pressure = 1e5
temperature = 293.15
damping = 200.0
{extra}
[[orifice]]
name = "in"
from = "supply"
to = "cyl_cap"
sonic_conductance = "0.5 l/(s bar)"
critical_pressure_ratio = 0.3
"#
    )
}

#[test]
fn a_cylinder_against_its_spring_settles_at_the_force_balance() {
    let area = std::f64::consts::PI / 4.0 * 0.032 * 0.032;
    for (supply, k, x_spring) in [
        (4e5, 5000.0, 0.0),
        (3e5, 8000.0, -0.02),
        (2.5e5, 3000.0, 0.01),
    ] {
        let src = cylinder_model(
            supply,
            &format!("spring_stiffness = {k}\nspring_x0 = {x_spring}"),
        );
        let mut sim = sim_of(&src);
        sim.advance_to(3.0).expect("runs");
        let o = outputs(&mut sim);
        // (p_cap − p_atm)·A = k·(x − x_spring), with p_cap = the supply's at rest.
        let want = x_spring + (supply - 1e5) * area / k;
        let got = value(&o, "cyl.x");
        println!(
            "supply {supply} Pa, k = {k} N/m, spring free at {x_spring} m: x = {got:.9} m, \
             closed form {want:.9} m (cap at {:.3} Pa)",
            value(&o, "cyl_cap.p")
        );
        assert!(
            (0.0..0.1).contains(&want),
            "the balance is inside the stroke"
        );
        assert!(
            (got - want).abs() < 1e-6 * want.abs().max(1e-3),
            "{got} vs {want}"
        );
    }
}

#[test]
fn a_cylinder_stops_at_zero_and_at_its_stroke() {
    // Out: 6 bar against a weak spring would go to 0.47 m; the stop holds it at the stroke.
    let mut sim = sim_of(&cylinder_model(6e5, "spring_stiffness = 500.0"));
    sim.advance_to(3.0).expect("runs");
    let o = outputs(&mut sim);
    let (x, v) = (value(&o, "cyl.x"), value(&o, "cyl.v"));
    println!("extending: x = {x} m, v = {v} m/s (stroke 0.1 m)");
    assert!(
        (x - 0.1).abs() < 1e-9 && v.abs() < 1e-9,
        "at the stroke: {x}, {v}"
    );
    // In: from the full stroke, the cap vented to 1 bar and a preloaded spring (free at
    // −0.05 m) push it back; the stop holds it at 0.
    let mut sim = sim_of(&cylinder_model(
        1e5,
        "spring_stiffness = 500.0\nspring_x0 = -0.05\nx0 = 0.1",
    ));
    sim.advance_to(3.0).expect("runs");
    let o = outputs(&mut sim);
    let (x, v) = (value(&o, "cyl.x"), value(&o, "cyl.v"));
    println!("retracting: x = {x} m, v = {v} m/s");
    assert!(x.abs() < 1e-9 && v.abs() < 1e-9, "at 0: {x}, {v}");
}

#[test]
fn a_cylinder_is_a_cap_chamber_and_a_piston() {
    let part = cylinder_model(5e5, "spring_stiffness = 2000.0");
    let area = std::f64::consts::PI / 4.0 * 0.032 * 0.032;
    let hand = part.replace(
        "[[cylinder]]\nname = \"cyl\"\nvent = \"atm\"\nbore = \"32 mm\"\nstroke = \"100 mm\"\n\
         dead_volume = \"5 cm3\"\nmass = 0.5\npressure = 1e5\ntemperature = 293.15\n\
         damping = 200.0\nspring_stiffness = 2000.0\n",
        &format!(
            "[[chamber]]\nname = \"cyl_cap\"\nvolume = 5e-6\npressure = 1e5\n\
             temperature = 293.15\n[[piston]]\nname = \"cyl\"\nbehind = \"cyl_cap\"\n\
             ahead = \"atm\"\narea = {area:e}\nmass = 0.5\nx0 = 0.0\nx_min = 0.0\n\
             x_max = 0.1\ndamping = 200.0\nspring_stiffness = 2000.0\n"
        ),
    );
    assert_ne!(part, hand, "the cylinder was replaced");
    // Friction is passed to the piston as given (run here without it: a piston starting on its
    // stop with friction is the friction law's own business).
    let with_friction = plenum::model::parse_str(
        &cylinder_model(
            5e5,
            "friction_static = 3e4\nfriction_dynamic = 2e4\nrestitution = 0.5",
        ),
        "m.toml",
        &[],
    )
    .expect("reads");
    let p = &with_friction.spec.piston[0];
    assert_eq!(
        (&p.friction_static, &p.friction_dynamic, p.restitution),
        (
            &plenum::param::ParamSpec::Const(3e4),
            &plenum::param::ParamSpec::Const(2e4),
            0.5
        )
    );
    let (mut a, mut b) = (sim_of(&part), sim_of(&hand));
    let mut worst = 0.0_f64;
    for k in 1..=30 {
        let t = 0.01 * k as f64;
        a.advance_to(t).expect("runs");
        b.advance_to(t).expect("runs");
        for ((name, x), (n2, y)) in outputs(&mut a).iter().zip(&outputs(&mut b)) {
            assert_eq!(name, n2);
            let rel = (x - y).abs() / x.abs().max(1e-30);
            worst = worst.max(rel);
            assert!(rel <= 1e-12, "{name} at t = {t}: part {x}, by hand {y}");
        }
    }
    let o = outputs(&mut a);
    println!(
        "t = 0.3 s: cyl.x = {:.6} m; largest relative difference part vs by hand {worst:e}",
        value(&o, "cyl.x")
    );
}

#[test]
fn a_cylinders_bad_keys_are_named_with_the_cylinder_and_the_key() {
    let base = cylinder_model(4e5, "");
    for ((from, to), key, words) in [
        (
            ("damping = 200.0", "damping = 200.0\nx0 = 0.2"),
            "`cylinder.cyl.x0`",
            "beyond the `stroke`",
        ),
        (
            ("bore =", "bor ="),
            "`cylinder.cyl.bor`",
            "did you mean `bore`?",
        ),
        (
            ("vent = \"atm\"", "vent = \"amt\""),
            "`cylinder.cyl.vent`",
            "did you mean `atm`?",
        ),
        (
            ("name = \"atm\"", "name = \"cyl\""),
            "`cylinder.cyl.name`",
            "duplicate name `cyl`",
        ),
    ] {
        let src = base.replacen(from, to, 1);
        let errors = plenum::model::parse_str(&src, "m.toml", &[]).expect_err("refused");
        let text: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        println!("{}", text.join("\n"));
        assert!(
            text.iter().any(|t| t.contains(key) && t.contains(words)),
            "{key} {words}: {text:?}"
        );
        // The orifice into the cap port is not blamed for the cylinder's error.
        assert!(
            !text.iter().any(|t| t.contains("orifice.in")),
            "follow-on error: {text:?}"
        );
    }
}

/// A double-acting cylinder (32 mm bore, 12 mm rod): the cap port fed at `cap_pa`, the rod port
/// at `rod_pa`, each through an orifice from a reservoir; the rod's end sees the atmosphere.
fn double_acting(cap_pa: f64, rod_pa: f64, extra: &str) -> String {
    format!(
        r#"
[model]
name = "cyl2"
[gas]
species = "air"
[solver]
method = "bdf"
rtol = 1e-10
t_end = 3.0
[[reservoir]]
name = "a"
pressure = {cap_pa}
temperature = 293.15
[[reservoir]]
name = "b"
pressure = {rod_pa}
temperature = 293.15
[[reservoir]]
name = "atm"
pressure = 1e5
temperature = 293.15
[[cylinder]]
name = "cyl"
vent = "atm"
bore = "32 mm"
rod_diameter = "12 mm"
stroke = "100 mm"
dead_volume = "5 cm3"
rod_dead_volume = "4 cm3"
mass = 0.5
pressure = 1e5
temperature = 293.15
damping = 200.0
{extra}
[[orifice]]
name = "in_a"
from = "a"
to = "cyl_cap"
sonic_conductance = "0.5 l/(s bar)"
critical_pressure_ratio = 0.3
[[orifice]]
name = "in_b"
from = "b"
to = "cyl_rod"
sonic_conductance = "0.5 l/(s bar)"
critical_pressure_ratio = 0.3
"#
    )
}

#[test]
fn a_double_acting_cylinder_settles_at_its_force_balance() {
    let area = std::f64::consts::PI / 4.0 * 0.032 * 0.032;
    let rod = std::f64::consts::PI / 4.0 * 0.012 * 0.012;
    for (cap, rod_p, k, x_spring) in [
        (4e5, 3e5, 5000.0, 0.0),
        (3e5, 4e5, 8000.0, 0.06),
        (5e5, 5e5, 3000.0, 0.0),
    ] {
        let src = double_acting(
            cap,
            rod_p,
            &format!("spring_stiffness = {k}\nspring_x0 = {x_spring}\nx0 = 0.05"),
        );
        let mut sim = sim_of(&src);
        sim.advance_to(3.0).expect("runs");
        let o = outputs(&mut sim);
        // p_cap·A − p_rod·(A − A_r) − p_atm·A_r = k·(x − x_spring).
        let force = cap * area - rod_p * (area - rod) - 1e5 * rod;
        let want = x_spring + force / k;
        let got = value(&o, "cyl.x");
        println!(
            "cap {cap} Pa, rod side {rod_p} Pa, k = {k} N/m: x = {got:.9} m, closed form \
             {want:.9} m (net pressure force {force:.4} N; chambers {:.3} / {:.3} Pa)",
            value(&o, "cyl_cap.p"),
            value(&o, "cyl_rod.p")
        );
        assert!((0.0..0.1).contains(&want), "inside the stroke: {want}");
        assert!((got - want).abs() < 1e-6 * want.abs(), "{got} vs {want}");
    }
}

#[test]
fn a_sealed_double_acting_cylinder_keeps_its_mass_and_energy() {
    // Both ports sealed (no orifices), the cap at 5 bar and the rod side at 1 bar: the piston
    // runs out, compresses the rod side, oscillates on its damping and settles; the rod pushes
    // the atmosphere away. energy_total counts the rod's work on it.
    let src = double_acting(1e5, 1e5, "x0 = 0.02\nrod_pressure = 1e5").replace(
        "pressure = 1e5\ntemperature = 293.15\ndamping",
        "pressure = 5e5\ntemperature = 293.15\ndamping",
    );
    let cut = src.find("[[orifice]]").expect("orifices");
    let sealed = &src[..cut];
    let mut sim = sim_of(sealed);
    let o = outputs(&mut sim);
    let (m0, e0) = (value(&o, "mass_total"), value(&o, "energy_total"));
    let v_cap0 = value(&o, "cyl_cap.V");
    let v_rod0 = value(&o, "cyl_rod.V");
    let mut worst: (f64, f64) = (0.0, 0.0);
    let mut travel: f64 = 0.0;
    for k in 1..=30 {
        sim.advance_to(0.1 * k as f64).expect("runs");
        let o = outputs(&mut sim);
        worst.0 = worst.0.max((value(&o, "mass_total") / m0 - 1.0).abs());
        worst.1 = worst.1.max((value(&o, "energy_total") / e0 - 1.0).abs());
        travel = travel.max(value(&o, "cyl.x") - 0.02);
        // The chambers' volumes follow the bore and the annulus.
        let x = value(&o, "cyl.x") - 0.02;
        let area = std::f64::consts::PI / 4.0 * 0.032 * 0.032;
        let rod = std::f64::consts::PI / 4.0 * 0.012 * 0.012;
        assert!((value(&o, "cyl_cap.V") - (v_cap0 + area * x)).abs() < 1e-15);
        assert!((value(&o, "cyl_rod.V") - (v_rod0 - (area - rod) * x)).abs() < 1e-15);
    }
    println!(
        "sealed: travel {travel:.6} m; mass drift {:.1e}, energy drift {:.1e} (rtol 1e-10)",
        worst.0, worst.1
    );
    assert!(travel > 0.01, "it moved: {travel}");
    assert!(worst.0 < 1e-13 && worst.1 < 1e-8, "{worst:?}");
}

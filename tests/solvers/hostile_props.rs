//! The hostile-input property (proptest, docs/integrators.md): random small networks (one to three
//! chambers in a chain to
//! an atmosphere, sometimes a piston), each integrator, random valid and invalid `--set` values
//! and random fmi2SetReal values of parameters and inputs, and random communication steps
//! (0, negative, NaN, tiny, huge among them). Every run ends in bounded work (no advance takes
//! more than `[solver] max_steps` steps, and a fixed-step method as many again cut short by
//! events: `Simulation::advance_to`), and every value reported is finite with every
//! chamber's volume and mass positive, or the run reports an error.

use plenum::cosim::{Causality, Instance, Phase, StepStatus};
use plenum::integrators::Integrator;
use plenum::model::{build_simulation, parse_str};
use plenum::output_grid::OutputGrid;
use plenum::simulation::{Advance, Simulation};
use plenum::variables::{output_variables, write_outputs};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestCaseError};

const METHODS: [&str; 9] = [
    "rk4",
    "euler",
    "ab3",
    "bdf2",
    "dopri5",
    "auto",
    "bdf",
    "backward-euler",
    "bdf1",
];

/// Steps one advance may take: small, so every case runs in well under a second.
const MAX_STEPS: u64 = 5_000;
/// Output times (and fmi2DoStep calls) run per case at most.
const MAX_ADVANCES: usize = 120;

#[derive(Clone, Debug)]
struct Net {
    /// (volume m³, pressure Pa, temperature K) per chamber.
    chambers: Vec<(f64, f64, f64)>,
    atm_pa: f64,
    /// Orifice areas along the chain c0 → c1 → … → atm, m².
    areas: Vec<f64>,
    /// A piston behind the first chamber, ahead the atmosphere: (mass kg, area m²).
    piston: Option<(f64, f64)>,
    method: &'static str,
    step_s: f64,
    t_end_s: f64,
    interval_s: Option<f64>,
}

fn log_uniform(lo: f64, hi: f64) -> impl Strategy<Value = f64> {
    (lo.log10()..hi.log10()).prop_map(|e| 10f64.powf(e))
}

fn net() -> impl Strategy<Value = Net> {
    (
        prop::collection::vec(
            (
                log_uniform(1e-5, 1e-2),
                log_uniform(1e4, 1e7),
                200.0..800.0f64,
            ),
            1..=3,
        ),
        log_uniform(1e4, 1e6),
        prop::collection::vec(log_uniform(1e-8, 1e-4), 3),
        prop::option::of((log_uniform(1e-6, 1.0), log_uniform(1e-5, 1e-3))),
        prop::sample::select(METHODS.as_slice()),
        log_uniform(1e-6, 1e-2),
        log_uniform(1e-3, 0.3),
        prop::option::of(log_uniform(1e-4, 0.5)),
    )
        .prop_map(
            |(chambers, atm_pa, areas, piston, method, step_s, t_end_s, interval_s)| Net {
                chambers,
                atm_pa,
                areas,
                piston,
                method,
                step_s,
                t_end_s,
                interval_s,
            },
        )
}

/// A value a hostile user might set: negative, zero, subnormal, huge, not a number, or any
/// magnitude from 1e-20 to 1e20.
fn hostile_value() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(-1.0),
        Just(0.0),
        Just(5e-324),
        Just(1e-300),
        Just(1e300),
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(-1e-12),
        (-20.0..20.0f64).prop_map(|e| 10f64.powf(e)),
    ]
}

/// A communication step a hostile master might ask for.
fn hostile_step() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0),
        Just(-0.0),
        Just(-1e-3),
        Just(f64::NAN),
        Just(1e-300),
        Just(1e9),
        log_uniform(1e-6, 0.1),
        log_uniform(1e-6, 0.1),
        log_uniform(1e-6, 0.1),
    ]
}

fn toml_number(x: f64) -> String {
    if x.is_nan() {
        "nan".into()
    } else if x.is_infinite() {
        if x > 0.0 { "inf".into() } else { "-inf".into() }
    } else {
        format!("{x:?}")
    }
}

impl Net {
    fn toml(&self) -> String {
        let mut s = format!(
            "[model]\nname = \"net\"\n[gas]\nspecies = \"air\"\n[solver]\nmethod = \"{}\"\n\
             step = {:?}\nt_end = {:?}\nmax_steps = {MAX_STEPS}\n",
            self.method, self.step_s, self.t_end_s
        );
        if let Some(dt) = self.interval_s {
            s += &format!("output_interval = {dt:?}\n");
        }
        for (i, (v, p, t)) in self.chambers.iter().enumerate() {
            let v = if i == 0 && self.piston.is_some() {
                0.0
            } else {
                *v
            };
            s += &format!(
                "[[chamber]]\nname = \"c{i}\"\nvolume = {v:?}\npressure = {p:?}\ntemperature = {t:?}\n"
            );
        }
        s += &format!(
            "[[reservoir]]\nname = \"atm\"\npressure = {:?}\ntemperature = 300.0\n",
            self.atm_pa
        );
        let n = self.chambers.len();
        for i in 0..n {
            let to = if i + 1 < n {
                format!("c{}", i + 1)
            } else {
                "atm".into()
            };
            s += &format!(
                "[[orifice]]\nname = \"o{i}\"\nfrom = \"c{i}\"\nto = \"{to}\"\narea = {:?}\n\
                 discharge_coefficient = 0.8\n",
                self.areas[i]
            );
        }
        if let Some((m, a)) = self.piston {
            s += &format!(
                "[[piston]]\nname = \"p\"\nbehind = \"c0\"\nahead = \"atm\"\narea = {a:?}\n\
                 mass = {m:?}\nx0 = 0.1\n"
            );
        }
        s + "[inputs]\nnames = [\"atm.pressure\"]\n"
    }

    /// Keys a `--set` or an fmi2SetReal may name.
    fn keys(&self) -> Vec<String> {
        let mut k = vec![
            "atm.pressure".to_string(),
            "solver.step".into(),
            "solver.rtol".into(),
            "solver.atol".into(),
            "solver.output_interval".into(),
            "solver.initial_step".into(),
        ];
        for i in 0..self.chambers.len() {
            for key in ["pressure", "temperature", "volume"] {
                k.push(format!("c{i}.{key}"));
            }
            k.push(format!("o{i}.area"));
        }
        if self.piston.is_some() {
            k.extend(["p.mass".into(), "p.area".into(), "p.x0".into()]);
        }
        k
    }
}

/// The state the simulation reports: every chamber's m and V finite and > 0 (the run-time
/// checks guarantee it). Then the row `plenum run` would write: `Ok(false)` when a value is
/// not finite (a pressure or a flow that overflows), which `plenum run` refuses to write and
/// stops with an error (check 10).
fn check_reported(sim: &mut Simulation, row: &mut Vec<f64>) -> Result<bool, TestCaseError> {
    for i in 0..sim.network.chambers().len() {
        let [_, _, m, v, _] = sim.chamber_state(i);
        prop_assert!(
            m > 0.0 && v > 0.0 && m.is_finite() && v.is_finite(),
            "chamber {i}: m = {m}, V = {v} at t = {}",
            sim.t_s
        );
    }
    row.resize(output_variables(sim).len(), 0.0);
    write_outputs(sim, row);
    Ok(row.iter().all(|x| x.is_finite()))
}

/// The model with `--set` overrides through the library, as `plenum run` runs it.
fn run_cli(net: &Net, set: &[String]) -> Result<&'static str, TestCaseError> {
    let Ok(model) = parse_str(&net.toml(), "net.toml", set) else {
        return Ok("refused at load");
    };
    let Ok(mut sim) = build_simulation(&model.spec, None) else {
        return Ok("refused at build");
    };
    let s = &model.spec.solver;
    let Ok(grid) = OutputGrid::new(s.t_start, s.t_end, s.output_interval) else {
        return Ok("output grid refused");
    };
    let mut row = Vec::new();
    if !check_reported(&mut sim, &mut row)? {
        return Ok("a row not finite: stopped (check 10)");
    }
    let mut advances = 0;
    for k in 1..=grid.len().min(MAX_ADVANCES) {
        loop {
            let steps = sim.stats.steps;
            let r = sim.advance_to(grid.time(k));
            // A fixed-step method's steps cut short by events count beyond max_steps, as many
            // again (a law chattering at one point: a chamber of 1e-300 m³ crossing the
            // atmosphere's laminar band at every Euler step), then the advance stops with an
            // error saying so.
            let limit = if sim.integrator.fixed_step() {
                2 * model.spec.solver.max_steps
            } else {
                model.spec.solver.max_steps
            };
            prop_assert!(
                sim.stats.steps - steps <= limit,
                "one advance took {} steps",
                sim.stats.steps - steps
            );
            advances += 1;
            prop_assert!(advances < 10 * MAX_ADVANCES, "no progress");
            match r {
                Err(_) => return Ok("stopped with an error"),
                Ok(a) => {
                    if !check_reported(&mut sim, &mut row)? {
                        return Ok("a row not finite: stopped (check 10)");
                    }
                    match a {
                        Advance::Exit { .. } => continue,
                        Advance::Finished(_) => return Ok("finished"),
                        Advance::Reached => break,
                    }
                }
            }
        }
    }
    Ok("ran")
}

/// The model as an FMU instance: parameters set before the run, the input during it, and
/// the given communication steps.
fn run_fmu(
    net: &Net,
    params: &[(usize, f64)],
    inputs: &[(usize, f64)],
    steps: &[f64],
) -> Result<&'static str, TestCaseError> {
    let Ok(mut inst) = Instance::new(&net.toml(), "net.toml") else {
        return Ok("refused at instantiation");
    };
    let vars = inst.description().variables.clone();
    let of = |c: Causality| -> Vec<u32> {
        vars.iter()
            .filter(|v| v.causality == c)
            .map(|v| v.value_reference)
            .collect()
    };
    let (parameters, input_vrs) = (of(Causality::Parameter), of(Causality::Input));
    let outputs: Vec<u32> = vars
        .iter()
        .filter(|v| matches!(v.causality, Causality::Output | Causality::Independent))
        .map(|v| v.value_reference)
        .collect();
    let named = |suffix: &str| -> Vec<usize> {
        vars.iter()
            .enumerate()
            .filter(|(_, v)| v.causality == Causality::Output && v.name.ends_with(suffix))
            .map(|(i, _)| i)
            .collect()
    };
    let (masses, volumes) = (named(".m"), named(".V"));
    if inst.setup_experiment(0.0, None).is_err() || inst.enter_initialization_mode().is_err() {
        return Ok("refused at setup");
    }
    for &(k, x) in params {
        if !parameters.is_empty() {
            let _ = inst.set_real(&[parameters[k % parameters.len()]], &[x]);
        }
    }
    if inst.exit_initialization_mode().is_err() {
        return Ok("refused at initialization");
    }
    let mut values = vec![0.0; outputs.len()];
    let mut t = 0.0;
    for (i, &h) in steps.iter().enumerate() {
        if let Some(&(k, x)) = inputs.get(i)
            && k % 3 == 0
            && !input_vrs.is_empty()
        {
            let _ = inst.set_real(&[input_vrs[0]], &[x]);
        }
        let before = inst.simulation().stats.steps;
        let r = inst.do_step(t, h);
        let taken = inst.simulation().stats.steps - before;
        // The bound of `run_cli`: a fixed-step method's steps cut short by events as many again.
        let limit = if inst.simulation().integrator.fixed_step() {
            2 * MAX_STEPS
        } else {
            MAX_STEPS
        };
        prop_assert!(taken <= limit, "one fmi2DoStep took {taken} steps");
        match r {
            Err(_) if h.is_nan() || h <= 0.0 => {
                prop_assert_eq!(inst.simulation().t_s, t, "a refused step moved the time");
                continue;
            }
            // Refused with nothing changed (too much work, a step the time axis cannot
            // resolve): the master goes on; failed (a solver failure): the run is over.
            Err(_) if inst.phase() == Phase::StepComplete => continue,
            Err(_) => return Ok("step failed"),
            Ok(report) => {
                if report.status == StepStatus::Discard {
                    return Ok("discarded");
                }
                t = inst.simulation().t_s;
                if inst.get_real(&outputs, &mut values).is_err() {
                    return Ok("outputs refused");
                }
                prop_assert!(values.iter().all(|x| x.is_finite()), "outputs {values:?}");
                for &k in masses.iter().chain(&volumes) {
                    prop_assert!(values[k] > 0.0, "{} = {}", vars[k].name, values[k]);
                }
            }
        }
    }
    Ok("ran")
}

/// 512 draws of each property from a fixed seed, so that a CI run is repeatable (each takes
/// milliseconds); `PROPTEST_CASES` and `PROPTEST_RNG_SEED` ask for others, as a search for new
/// classes does (a random draw found the fixed-step budget overrun that
/// `fixed_steps_cut_short_by_events_end_in_a_clear_error` now holds; 40,000 random draws of
/// each property passed after its fix).
fn config() -> Config {
    let env = Config::default();
    let set = |name: &str| std::env::var_os(name).is_some();
    Config {
        cases: if set("PROPTEST_CASES") {
            env.cases
        } else {
            512
        },
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

    /// The `--set` path (`plenum run`): up to three overrides with hostile values.
    #[test]
    fn hostile_overrides_end_in_an_error_or_in_physical_finite_results(
        net in net(),
        picks in prop::collection::vec((any::<prop::sample::Index>(), hostile_value()), 0..=3),
    ) {
        let keys = net.keys();
        let set: Vec<String> = picks
            .iter()
            .map(|(i, x)| format!("{}={}", i.get(&keys), toml_number(*x)))
            .collect();
        let outcome = run_cli(&net, &set)?;
        println!("{} {} chambers {set:?}: {outcome}", net.method, net.chambers.len());
    }

    /// The FMU path: hostile fmi2SetReal of parameters and of the input, hostile steps.
    #[test]
    fn hostile_fmu_calls_end_in_an_error_or_in_physical_finite_results(
        net in net(),
        params in prop::collection::vec((0usize..64, hostile_value()), 0..=3),
        inputs in prop::collection::vec((0usize..64, hostile_value()), 0..=8),
        steps in prop::collection::vec(hostile_step(), 1..=8),
    ) {
        let outcome = run_fmu(&net, &params, &inputs, &steps)?;
        println!("{} {} chambers, steps {steps:?}: {outcome}", net.method, net.chambers.len());
    }
}

/// A draw of the property above: Euler at 10 ms with a chamber of 1e-300 m³ next to the
/// atmosphere, whose pressure crosses the atmosphere's laminar band at every step, each crossing
/// an event that cuts the step short. The advance ends in bounded work with an error that says
/// so.
#[test]
fn fixed_steps_cut_short_by_events_end_in_a_clear_error() {
    // A chamber of 1e-300 m³ between two others: its laws chatter at one point. The second
    // case's steps are 1e-4 s, so one segment holds more steps than the budget left.
    let cases = [
        (
            vec![(0.01, 483839.8730026299, 200.0), (0.01, 10000.0, 200.0)],
            336247.4154636889,
            0.01,
        ),
        (
            vec![
                (0.01, 4107980.0, 200.0),
                (0.01, 10000.0, 200.0),
                (0.01, 3e6, 200.0),
            ],
            10000.0,
            1e-4,
        ),
    ];
    for (chambers, atm_pa, step_s) in cases {
        let net = Net {
            chambers,
            atm_pa,
            areas: vec![6.026580816681539e-8, 1.620400729722436e-8, 1e-4],
            piston: Some((1.0, 0.001)),
            method: "euler",
            step_s,
            t_end_s: 0.3,
            interval_s: None,
        };
        let model = parse_str(&net.toml(), "net.toml", &["c1.volume=1e-300".to_string()])
            .expect("the model reads");
        let mut sim = build_simulation(&model.spec, None).expect("it builds");
        let err = sim.advance_to(0.3).expect_err("no progress is possible");
        println!(
            "{} steps (at most {}): {}",
            sim.stats.steps,
            2 * MAX_STEPS,
            err.message
        );
        assert!(
            sim.stats.steps <= 2 * MAX_STEPS,
            "{} steps",
            sim.stats.steps
        );
        assert!(
            err.message.contains("events cut the steps short"),
            "{}",
            err.message
        );
    }
}

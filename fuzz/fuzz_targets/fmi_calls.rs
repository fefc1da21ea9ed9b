//! Sequences of co-simulation calls on one instance, as a hostile master makes them: the input
//! picks a model (`call_models()`) and then a list of 10-byte calls (an opcode, a variable
//! index, an f64), among them fmi2SetReal of any variable to any value, fmi2DoStep with any
//! communication step (0, negative, NaN, 1e300 …) or from a wrong communication point, the
//! life-cycle calls in any order, fmi2GetFMUstate / fmi2SetFMUstate and fmi2Reset. Errors are
//! fine; a panic, an abort or a hang (every call's work is bounded) is a crash, and so is any
//! output that fmi2GetReal returns as not finite, or a chamber volume or mass that is not
//! positive.
#![no_main]

use std::cell::RefCell;

use libfuzzer_sys::fuzz_target;
use plenum::cosim::{Causality, Instance, Snapshot};
use plenum_fuzz::call_models;

/// Calls one input makes at most (each fmi2DoStep is bounded by the model's `max_steps`).
const MAX_CALLS: usize = 64;

struct Model {
    /// A pristine instance (Instantiated): every input starts from a copy.
    pristine: Instance,
    outputs: Vec<u32>,
    /// Output indices of the chambers' masses and volumes.
    positive: Vec<usize>,
    n_variables: u32,
}

thread_local! {
    static MODELS: Vec<Model> = call_models()
        .into_iter()
        .map(|(label, src)| {
            let inst = Instance::new(&src, label).unwrap_or_else(|e| panic!("{label}: {e}"));
            let vars = &inst.description().variables;
            let outputs: Vec<u32> = vars
                .iter()
                .filter(|v| matches!(v.causality, Causality::Output | Causality::Independent))
                .map(|v| v.value_reference)
                .collect();
            let positive = vars
                .iter()
                .enumerate()
                .filter(|(_, v)| {
                    v.causality == Causality::Output
                        && (v.name.ends_with(".m") || v.name.ends_with(".V"))
                })
                .map(|(i, _)| i)
                .collect();
            Model {
                n_variables: vars.len() as u32,
                outputs,
                positive,
                pristine: inst,
            }
        })
        .collect();
    static VALUES: RefCell<Vec<f64>> = const { RefCell::new(Vec::new()) };
}

fn f64_at(b: &[u8]) -> f64 {
    f64::from_le_bytes(b.try_into().expect("8 bytes"))
}

fn run(model: &Model, calls: &[u8]) {
    let mut inst = model.pristine.clone();
    let mut saved: Option<Snapshot> = None;
    let mut values = VALUES.with_borrow_mut(std::mem::take);
    values.resize(model.outputs.len(), 0.0);
    for call in calls.chunks_exact(10).take(MAX_CALLS) {
        let (op, index, x) = (call[0] % 12, call[1] as u32, f64_at(&call[2..]));
        let t = inst.simulation().t_s;
        match op {
            0 | 1 => {
                let _ = inst.set_real(&[index % model.n_variables], &[x]);
            }
            2..=4 => {
                let _ = inst.do_step(t, x);
            }
            5 => {
                let _ = inst.do_step(x, 1e-3);
            }
            6 => {
                let _ = inst.setup_experiment(x, None);
            }
            7 => {
                let _ = inst.enter_initialization_mode();
            }
            8 => {
                let _ = inst.exit_initialization_mode();
            }
            9 => match index % 4 {
                0 => saved = inst.snapshot().ok(),
                1 => {
                    if let Some(s) = &saved {
                        let _ = inst.restore(s);
                    }
                }
                2 => {
                    let _ = inst.terminate();
                }
                _ => {
                    let _ = inst.reset();
                }
            },
            _ => {}
        }
        // Every reported value: finite, and every chamber's volume and mass positive.
        if inst.get_real(&model.outputs, &mut values).is_ok() {
            if let Some(k) = values.iter().position(|v| !v.is_finite()) {
                panic!("output {k} is {} after call {op}", values[k]);
            }
            for &k in &model.positive {
                assert!(values[k] > 0.0, "output {k} is {} after call {op}", values[k]);
            }
        }
    }
    VALUES.with_borrow_mut(|v| *v = values);
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, calls)) = data.split_first() else {
        return;
    };
    MODELS.with(|models| run(&models[pick as usize % models.len()], calls));
});

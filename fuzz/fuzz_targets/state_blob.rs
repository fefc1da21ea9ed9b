//! fmi2DeSerializeFMUstate through the public `Instance` API: `Instance::deserialize` checks the
//! PLNMSTAT header (magic, version, GUID, body length, CRC-32) and decodes the bincode body. Any
//! input must be refused with an error or give a state that serializes again and that the
//! instance takes (fmi2SetFMUstate), reads outputs from and runs from (fmi2GetReal, fmi2DoStep;
//! `PLENUM_FUZZ_DEEP=0` stops after fmi2SetFMUstate). A panic, an abort or a hang is a crash.
//!
//! Each input is tried as it is, and again with its body length and CRC repaired (see
//! `with_repaired_header`): otherwise almost every mutation would stop at the checksum and the
//! decoder behind it would never be fuzzed. Every input is offered to one initialized instance
//! of each model of `state_models()`; the GUID check routes it to its own model.
#![no_main]

use std::cell::RefCell;

use libfuzzer_sys::fuzz_target;
use plenum::cosim::{Instance, Snapshot};
use plenum_fuzz::{initialized, state_models, with_repaired_header};

struct Held {
    label: &'static str,
    src: String,
    inst: Instance,
    /// The state right after initialization: restored after every accepted input so that one
    /// input never changes what the next one meets.
    baseline: Snapshot,
    vrs: Vec<u32>,
    values: Vec<f64>,
}

impl Held {
    fn new(label: &'static str, src: String) -> Held {
        let inst = initialized(&src, label);
        let baseline = inst
            .snapshot()
            .expect("fmi2GetFMUstate after initialization");
        let n = inst.description().variables.len();
        Held {
            label,
            src,
            inst,
            baseline,
            vrs: (0..n as u32).collect(),
            values: vec![0.0; n],
        }
    }

    fn try_blob(&mut self, blob: &[u8]) {
        let Ok(state) = self.inst.deserialize(blob) else {
            return;
        };
        // An accepted state serializes again, and that blob is accepted too.
        let again = self
            .inst
            .serialize(&state)
            .expect("an accepted state does not serialize again");
        self.inst
            .deserialize(&again)
            .expect("the re-serialized form of an accepted state is refused");
        // fmi2SetFMUstate, outputs, a short fmi2DoStep: errors are fine, panics are not.
        if self.inst.restore(&state).is_ok() {
            if deep() {
                let _ = self.inst.get_real(&self.vrs, &mut self.values);
                let t = state.time_s();
                if self.inst.do_step(t, 1e-5).is_ok() {
                    let _ = self.inst.get_real(&self.vrs, &mut self.values);
                }
            }
        }
        if self.inst.restore(&self.baseline).is_err() {
            // Only a fatal instance refuses its own state: start afresh.
            *self = Held::new(self.label, std::mem::take(&mut self.src));
        }
    }
}

/// Also read every output (fmi2GetReal) and take an fmi2DoStep from every accepted state: on by
/// default (and so in CI); `PLENUM_FUZZ_DEEP=0` turns it off. `deserialize` and `restore` check
/// a state's contents against the instance's own model (`Instance::check_snapshot`: the
/// network's structure, the settings, every integrator history by `validate_state`), so an
/// accepted state runs. Before they did, two regression inputs panicked here:
/// - corpus/state_blob/regress_bdf3_start_len.bin: the order of a `bdf3` changed to 12 in a
///   valid blob (its RK4 start counts its start points against it) panicked `Bdf::commit`;
/// - corpus/state_blob/regress_component_index.bin: an orifice's node index changed panicked
///   `Network::rhs` at the next fmi2GetReal.
fn deep() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("PLENUM_FUZZ_DEEP").is_none_or(|v| v != "0"))
}

thread_local! {
    static HELD: RefCell<Vec<Held>> = RefCell::new(
        state_models()
            .into_iter()
            .map(|(label, src)| Held::new(label, src))
            .collect(),
    );
}

fuzz_target!(
    init: {
        if let Some(dir) = std::env::var_os("PLENUM_FUZZ_GEN_CORPUS") {
            plenum_fuzz::write_state_corpus(std::path::Path::new(&dir));
            std::process::exit(0);
        }
    },
    |data: &[u8]| {
    let repaired = with_repaired_header(data);
    HELD.with_borrow_mut(|held| {
        for h in held.iter_mut() {
            h.try_blob(data);
            if let Some(r) = &repaired {
                h.try_blob(r);
            }
        }
    });
    }
);

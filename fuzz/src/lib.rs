//! What the fuzz targets and the corpus generator share: the models whose states the
//! `state_blob` target reads, and the header repair that lets mutated bodies past the CRC.

use plenum::cosim::{Instance, STATE_MAGIC};

/// The shipped models, and two of them with other integrators so that the corpus holds states
/// of the multistep and BDF histories too. The `state_blob` target keeps one initialized
/// instance of each; a blob is tried on every one (the GUID check picks its model).
pub fn state_models() -> Vec<(&'static str, String)> {
    let blowdown = include_str!("../../models/blowdown.toml");
    let two_tanks = include_str!("../../models/two_tanks.toml");
    let projectile = include_str!("../../models/projectile.toml");
    let with = |src: &str, m: &str| src.replace("method = \"rk4\"", &format!("method = \"{m}\""));
    vec![
        ("blowdown", blowdown.to_string()),
        ("two_tanks", two_tanks.to_string()),
        ("projectile", projectile.to_string()),
        ("blowdown_bdf", with(blowdown, "bdf")),
        ("two_tanks_bdf3", with(two_tanks, "bdf3")),
    ]
}

/// The models the `fmi_calls` target drives: the shipped ones with several integrators (the
/// blowdown has an input, `atm.pressure`), each with `[solver] max_steps = 2000` so that the
/// work of one fmi2DoStep stays small (a fuzzer wants thousands of inputs a second).
pub fn call_models() -> Vec<(&'static str, String)> {
    let bounded = |src: &str, m: &str| {
        src.replace("method = \"rk4\"", &format!("method = \"{m}\""))
            .replacen("[solver]\n", "[solver]\nmax_steps = 2000\n", 1)
    };
    let blowdown = include_str!("../../models/blowdown.toml");
    let two_tanks = include_str!("../../models/two_tanks.toml");
    let projectile = include_str!("../../models/projectile.toml");
    vec![
        ("blowdown", bounded(blowdown, "rk4")),
        ("blowdown_auto", bounded(blowdown, "auto")),
        ("blowdown_euler", bounded(blowdown, "euler")),
        ("projectile", bounded(projectile, "rk4")),
        ("projectile_dopri5", bounded(projectile, "dopri5")),
        ("two_tanks_bdf2", bounded(two_tanks, "bdf2")),
        ("two_tanks_backward_euler", bounded(two_tanks, "backward-euler")),
    ]
}

/// An instance of `src` in Initialization-done (Step) mode, as a master holds it.
pub fn initialized(src: &str, label: &str) -> Instance {
    let mut inst = Instance::new(src, label).unwrap_or_else(|e| panic!("{label}: {e}"));
    inst.setup_experiment(0.0, None)
        .expect("fmi2SetupExperiment");
    inst.enter_initialization_mode()
        .expect("fmi2EnterInitializationMode");
    inst.exit_initialization_mode()
        .expect("fmi2ExitInitializationMode");
    inst
}

/// Header layout: magic (8), version (u32), GUID length (u32), GUID, body length (u64),
/// CRC-32 of the body (u32), body.
///
/// If `blob` has a structurally complete header, return a copy whose body length and CRC
/// describe the bytes that follow it, so that mutations of the body reach the bincode decoder
/// and the snapshot checks instead of stopping at the checksum. `None` when the header is too
/// short to repair or the copy would equal `blob`.
pub fn with_repaired_header(blob: &[u8]) -> Option<Vec<u8>> {
    if blob.len() < 16 || &blob[..8] != STATE_MAGIC {
        return None;
    }
    let guid_len = u32::from_le_bytes(blob[12..16].try_into().ok()?) as usize;
    let body_start = 16usize.checked_add(guid_len)?.checked_add(12)?;
    if blob.len() < body_start {
        return None;
    }
    let body = &blob[body_start..];
    let mut out = blob.to_vec();
    let len_at = body_start - 12;
    out[len_at..len_at + 8].copy_from_slice(&(body.len() as u64).to_le_bytes());
    out[len_at + 8..body_start].copy_from_slice(&crc32fast::hash(body).to_le_bytes());
    (out != blob).then_some(out)
}

/// Write the seed state blobs of `fuzz/corpus/state_blob/` into `dir`: for every model of
/// `state_models()`, the state right after initialization and after a few communication steps
/// (so that integrator histories are filled). The `state_blob` target does this instead of
/// fuzzing when `PLENUM_FUZZ_GEN_CORPUS` names a directory (`bash scripts/fuzz.sh
/// --gen-corpus`), so no second, uninstrumented build is needed.
pub fn write_state_corpus(dir: &std::path::Path) {
    std::fs::create_dir_all(dir).expect("create the corpus directory");
    for (label, src) in state_models() {
        let mut inst = initialized(&src, label);
        let mut t = 0.0;
        for (tag, steps) in [("init", 0), ("steps", 5)] {
            for _ in 0..steps {
                let h = 1e-5;
                inst.do_step(t, h).expect("fmi2DoStep");
                t += h;
            }
            let state = inst.snapshot().expect("fmi2GetFMUstate");
            let blob = inst.serialize(&state).expect("fmi2SerializeFMUstate");
            inst.deserialize(&blob).expect("own blob is accepted");
            let path = dir.join(format!("{label}_{tag}.bin"));
            std::fs::write(&path, &blob).expect("write a blob");
            println!("{} ({} bytes)", path.display(), blob.len());
        }
    }
}

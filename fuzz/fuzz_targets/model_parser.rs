//! The model-file parser: `plenum::model::parse_str` on any UTF-8 text (as fmi2Instantiate and
//! `plenum run` give it a file), with `--set` overrides taken from the input's own lines that
//! start with `#set ` (a TOML comment, so every seed stays a valid model file). An accepted
//! model is then instantiated and initialized as an FMU: errors are fine, a panic, an abort,
//! a hang or running out of memory is a crash.
#![no_main]

use libfuzzer_sys::fuzz_target;
use plenum::cosim::Instance;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let overrides: Vec<String> = src
        .lines()
        .filter_map(|l| l.strip_prefix("#set "))
        .take(8)
        .map(|s| s.trim().to_string())
        .collect();
    let Ok(model) = plenum::model::parse_str(src, "fuzz.toml", &overrides) else {
        return;
    };
    // The overridden text is what an FMU ships in resources/: it must load as the same model.
    let Ok(mut inst) = Instance::new(&model.source, "resources/model.toml") else {
        return;
    };
    if inst
        .setup_experiment(model.spec.solver.t_start, None)
        .is_ok()
        && inst.enter_initialization_mode().is_ok()
    {
        let _ = inst.exit_initialization_mode();
    }
});

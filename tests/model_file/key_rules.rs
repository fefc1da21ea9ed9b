//! The key table's rules hold for every value, whenever it is set (hostile-input classes 3,
//! 13, 15 and the key messages of 17, docs/integrators.md): a value set during a run (fmi2SetReal
//! of an input) obeys the
//! same rule as the model file's, a key that cannot change during a run cannot be an input,
//! the values of fmi2SetReal are judged together on their final values, and the messages say
//! what the rule is in the words of the one who set the value.

use crate::common::plenum_command;
use plenum::cosim::{Instance, Interface, Phase};
use plenum::model::parse_str;

const BLOWDOWN: &str = include_str!("../../models/blowdown.toml");
const PROJECTILE: &str = include_str!("../../models/projectile.toml");
const ALL_KINDS: &str = include_str!("../fixtures/models/all_kinds.toml");

fn vr(inst: &Instance, name: &str) -> u32 {
    inst.description()
        .variables
        .iter()
        .find(|v| v.name == name)
        .unwrap_or_else(|| panic!("no variable {name}"))
        .value_reference
}

fn get(inst: &mut Instance, name: &str) -> f64 {
    let mut v = [0.0];
    inst.get_real(&[vr(inst, name)], &mut v).expect("get");
    v[0]
}

/// An instance in initialization mode (where parameters may be set and read).
fn in_initialization(src: &str) -> Instance {
    let mut inst = Instance::new(src, "model.toml").expect("model loads");
    inst.setup_experiment(0.0, None).expect("setup");
    inst.enter_initialization_mode().expect("enter");
    inst
}

fn initialized(src: &str) -> Instance {
    let mut inst = Instance::new(src, "model.toml").expect("model loads");
    inst.setup_experiment(0.0, None).expect("setup");
    inst.enter_initialization_mode().expect("enter");
    inst.exit_initialization_mode().expect("exit");
    inst
}

/// Class 3: blowdown's input `atm.pressure` set to −1 or 0 during the run, and an orifice area
/// input of −1e-6, are refused (fmi2Error) naming the variable and the rule, and the run goes
/// on with the value as it was; a valid value is taken.
#[test]
fn inputs_set_during_a_run_obey_the_rules_of_the_model_file() {
    let src = BLOWDOWN.replace(
        "names = [\"atm.pressure\"]",
        "names = [\"atm.pressure\", \"nozzle.area\"]",
    );
    let mut inst = initialized(&src);
    inst.do_step(0.0, 0.01).expect("a step");
    for (name, bad, rule) in [
        ("atm.pressure", -1.0, "greater than 0 Pa (absolute"),
        ("atm.pressure", 0.0, "greater than 0 Pa (absolute"),
        ("nozzle.area", -1e-6, "0 m^2 or more"),
    ] {
        let before = get(&mut inst, name);
        let e = inst
            .set_real(&[vr(&inst, name)], &[bad])
            .expect_err("refused");
        println!("{name} = {bad}: {e}");
        assert!(e.0.contains(name) && e.0.contains(rule), "{e}");
        assert!(!e.0.contains("--set"), "{e}");
        assert_eq!(get(&mut inst, name), before, "unchanged");
    }
    inst.set_real(&[vr(&inst, "atm.pressure")], &[2e5])
        .expect("a valid pressure");
    assert_eq!(get(&mut inst, "atm.pressure"), 2e5);
    inst.do_step(0.01, 0.01).expect("the run goes on");
}

/// Class 3, every rule at the network (what fmi2SetReal and a restored state's inputs go
/// through): each value a rule refuses is refused with the rule's words and leaves the
/// parameter as it was; a reservoir that feeds only inertance valves may take a gauge
/// (negative) pressure, as in the model file.
#[test]
fn every_run_time_rule_refuses_what_the_model_file_refuses() {
    let model = parse_str(ALL_KINDS, "all_kinds.toml", &[]).unwrap();
    let mut net = plenum::model::build_network(&model.spec);
    for (c, k, bad, words) in [
        ("atm", "pressure", 0.0, "greater than 0 Pa"),
        ("atm", "temperature", -1.0, "greater than 0 K"),
        ("nozzle", "area", -1e-9, "0 m^2 or more"),
        ("nozzle", "opening", 1.5, "between 0 and 1"),
        ("nozzle", "discharge_coefficient", 1.2, "at most 1"),
        ("feed", "coefficient", -1e-9, "0 kg/(s Pa) or more"),
        ("feed", "opening", 1.5, "between 0 and 1"),
        ("slug", "friction_static", -1.0, "0 Pa or more"),
        ("slug", "damping", -1e-9, "0 N s/m or more"),
        ("membrane", "area", -1e-3, "greater than 0 m^2"),
        (
            "membrane",
            "heat_transfer_coefficient",
            -1.0,
            "0 W/(m^2 K) or more",
        ),
    ] {
        let before = net.get_scalar(c, k, 0.0);
        let e = net.set_scalar(c, k, bad).expect_err("refused");
        println!("{c}.{k} = {bad}: {e}");
        assert!(
            e.contains(&format!("`{c}.{k}`")) && e.contains(words),
            "{e}"
        );
        assert_eq!(net.get_scalar(c, k, 0.0), before);
    }
    // A liquid reservoir (CircAdapt's valve): gauge pressures, as at load time.
    let liquid = include_str!("../../examples/circadapt_valve/model.toml");
    let model = parse_str(liquid, "circadapt_valve.toml", &[]).unwrap();
    let mut net = plenum::model::build_network(&model.spec);
    let r = &model.spec.reservoir[0].name;
    println!("liquid reservoir `{r}`: pressure −1000 Pa");
    assert_eq!(net.set_scalar(r, "pressure", -1000.0), Ok(true));
    assert_eq!(net.get_scalar(r, "pressure", 0.0), Some(-1000.0));
    assert!(net.set_scalar(r, "temperature", -1.0).is_err());
}

/// Class 13: a key that cannot change during a run is refused as an input when the model
/// loads (check, run, fmu-build and fmi2Instantiate all load through `parse_str`), naming it.
#[test]
fn an_input_that_cannot_change_during_a_run_is_refused_at_load() {
    for (input, what) in [
        ("tank.pressure", "`pressure` of chamber `tank`"),
        ("tank.volume", "`volume` of chamber `tank`"),
    ] {
        let src = BLOWDOWN.replace("\"atm.pressure\"", &format!("\"{input}\""));
        let errs = parse_str(&src, "blowdown.toml", &[]).expect_err("refused");
        for e in &errs {
            println!("{e}");
        }
        assert!(
            errs.iter().any(|e| e.key == "inputs.names[0]"
                && e.message.contains(what)
                && e.message.contains("cannot change during a run")),
            "{errs:?}"
        );
        let e = Instance::new(&src, "blowdown.toml")
            .err()
            .expect("fmi2Instantiate refuses it");
        assert!(e.contains(input), "{e}");
    }
    // The command line's check says so too (exit 2).
    let dir = std::env::temp_dir().join(format!("plenum-keyrules-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("blowdown.toml");
    std::fs::write(
        &path,
        BLOWDOWN.replace("\"atm.pressure\"", "\"tank.pressure\""),
    )
    .unwrap();
    let out = plenum_command().arg("check").arg(&path).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("plenum check: {:?}\n{stderr}", out.status.code());
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr.contains("tank.pressure") && stderr.contains("cannot change during a run"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Class 15: the projectile's `x0` and `x_exit` moved together past the old exit are judged on
/// their final values: in one fmi2SetReal, in either order; and one per call (as FMPy sets
/// start values), until initialization ends. The run then starts at the new `x0`. A final set
/// of values that is invalid is refused when initialization ends, naming the keys, and the
/// instance stays in initialization mode until valid values are set.
#[test]
fn set_real_judges_the_final_values() {
    for order in [[0usize, 1], [1, 0]] {
        let mut inst = Instance::new(PROJECTILE, "projectile.toml").unwrap();
        let names = ["projectile.x0", "projectile.x_exit"];
        let values = [0.7, 0.9];
        let vrs: Vec<u32> = order.iter().map(|&i| vr(&inst, names[i])).collect();
        let xs: Vec<f64> = order.iter().map(|&i| values[i]).collect();
        inst.set_real(&vrs, &xs).expect("one call, either order");
        println!("one call {:?} = {xs:?}: accepted", order.map(|i| names[i]));
    }
    // One per call, x0 first: past the old exit until x_exit follows.
    let mut inst = in_initialization(PROJECTILE);
    inst.set_real(&[vr(&inst, "projectile.x0")], &[0.7])
        .expect("x0 alone: kept until initialization ends");
    assert_eq!(get(&mut inst, "projectile.x0"), 0.7);
    let e = inst
        .get_real(&[vr(&inst, "projectile.x")], &mut [0.0])
        .expect_err("no outputs of a model the parameters do not make");
    println!("outputs while x0 = 0.7 > x_exit = 0.6: {e}");
    inst.set_real(&[vr(&inst, "projectile.x_exit")], &[0.9])
        .expect("x_exit");
    inst.exit_initialization_mode()
        .expect("valid on the final values");
    let x = get(&mut inst, "projectile.x");
    println!("x0 = 0.7, then x_exit = 0.9: starts at x = {x} m");
    assert_eq!(x, 0.7);
    inst.do_step(0.0, 1e-4).expect("runs");
    // Invalid on the final values: refused when initialization ends, fixable.
    let mut inst = in_initialization(PROJECTILE);
    inst.set_real(&[vr(&inst, "projectile.x0")], &[0.95])
        .unwrap();
    let e = inst.exit_initialization_mode().expect_err("x0 past x_exit");
    println!("x0 = 0.95 with x_exit = 0.6: {e}");
    assert!(
        e.0.contains("projectile.x0") && e.0.contains("x_exit"),
        "{e}"
    );
    assert!(!e.0.contains("--set"), "{e}");
    assert_eq!(inst.phase(), Phase::InitializationMode);
    inst.set_real(&[vr(&inst, "projectile.x_exit")], &[1.0])
        .unwrap();
    inst.exit_initialization_mode().expect("fixed");
    // A value that breaks its own key's rule is refused at once, and nothing is set.
    let mut inst = in_initialization(PROJECTILE);
    let (m, x0) = (vr(&inst, "projectile.mass"), vr(&inst, "projectile.x0"));
    let before = (
        get(&mut inst, "projectile.mass"),
        get(&mut inst, "projectile.x0"),
    );
    let e = inst.set_real(&[x0, m], &[0.2, -1.0]).expect_err("mass < 0");
    println!("{{x0, mass}} = {{0.2, -1}}: {e}");
    assert!(e.0.contains("projectile.mass") && e.0.contains("greater than 0 kg"));
    assert_eq!(
        (
            get(&mut inst, "projectile.mass"),
            get(&mut inst, "projectile.x0")
        ),
        before
    );
}

/// Class 15 in Model Exchange: while the projectile's `x0` = 0.7 is past its `x_exit` = 0.6,
/// the values computed from the model (continuous states, a state derivative, event
/// indicators) are refused as the outputs are; once `x_exit` = 0.9 follows, the piston's
/// position state reads the `x0` set.
#[test]
fn model_exchange_reads_wait_for_a_valid_model() {
    let mut inst =
        Instance::with_interface(PROJECTILE, "projectile.toml", Interface::ModelExchange)
            .expect("model loads");
    inst.setup_experiment(0.0, None).expect("setup");
    inst.enter_initialization_mode().expect("enter");
    inst.set_real(&[vr(&inst, "projectile.x0")], &[0.7])
        .expect("x0 alone: kept until initialization ends");
    let mut x = vec![0.0; inst.n_states()];
    let mut z = vec![0.0; inst.n_event_indicators()];
    let der = vr(&inst, "der(projectile.x)");
    let refusals = [
        inst.continuous_states(&mut x).expect_err("states"),
        inst.event_indicators(&mut z).expect_err("event indicators"),
        inst.get_real(&[der], &mut [0.0]).expect_err("a derivative"),
    ];
    for e in &refusals {
        println!("while x0 = 0.7 > x_exit = 0.6: {e}");
        assert!(e.0.contains("do not make a valid model"), "{e}");
    }
    inst.set_real(&[vr(&inst, "projectile.x_exit")], &[0.9])
        .expect("x_exit");
    inst.continuous_states(&mut x).expect("states");
    let at = inst
        .description()
        .states
        .iter()
        .position(|&s| s == vr(&inst, "projectile.x"));
    let position = x[at.expect("the position is a state")];
    println!("x0 = 0.7, then x_exit = 0.9: the position state is {position} m");
    assert_eq!(position, 0.7);
    inst.exit_initialization_mode()
        .expect("valid on the final values");
    assert_eq!(inst.phase(), Phase::EventMode);
}

/// Class 17 (the key messages): `max_steps` says what a whole number is expected, and a
/// parameter refused through the FMU names the variable and fmi2SetReal, not `--set`.
#[test]
fn key_messages_say_what_is_expected() {
    for (value, want) in [
        ("1.5", "`max_steps` must be a whole number ≥ 1, not 1.5"),
        ("-5", "`max_steps` must be a whole number ≥ 1, not -5"),
        ("0", "`max_steps` must be a whole number ≥ 1, not 0"),
    ] {
        let src = BLOWDOWN.replace("[solver]\n", &format!("[solver]\nmax_steps = {value}\n"));
        let errs = parse_str(&src, "blowdown.toml", &[]).expect_err("refused");
        println!("max_steps = {value}: {}", errs[0]);
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].message, want);
        assert_eq!(errs[0].key, "solver.max_steps");
        // The same value from the command line (`--set`, which has no source text to quote).
        let set = format!("solver.max_steps={value}");
        let errs =
            parse_str(BLOWDOWN, "blowdown.toml", std::slice::from_ref(&set)).expect_err("refused");
        println!("--set {set}: {}", errs[0]);
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].message, want);
    }
    // A parameter before the run: the value's own rule, then a rule joining keys.
    let mut inst = Instance::new(BLOWDOWN, "blowdown.toml").unwrap();
    let e = inst
        .set_real(&[vr(&inst, "tank.volume")], &[-1.0])
        .expect_err("negative volume");
    println!("tank.volume = -1: {e}");
    assert!(
        e.0.contains("`tank.volume`") && e.0.contains("0 m^3 or more"),
        "{e}"
    );
    assert!(!e.0.contains("--set"), "{e}");
    let mut inst = Instance::new(PROJECTILE, "projectile.toml").unwrap();
    inst.set_real(&[vr(&inst, "barrel.volume")], &[0.0])
        .unwrap();
    inst.set_real(&[vr(&inst, "projectile.x0")], &[0.0])
        .unwrap();
    inst.setup_experiment(0.0, None).unwrap();
    inst.enter_initialization_mode().unwrap();
    let e = inst
        .exit_initialization_mode()
        .expect_err("no initial volume");
    println!("barrel.volume = 0 and projectile.x0 = 0: {e}");
    assert!(
        e.0.contains("set by the importer") && !e.0.contains("--set"),
        "{e}"
    );
}

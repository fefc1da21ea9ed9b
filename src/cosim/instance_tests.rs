use super::*;
use crate::integrators::Method;

const PROJECTILE: &str = include_str!("../../models/projectile.toml");
const BLOWDOWN: &str = include_str!("../../models/blowdown.toml");

fn with_method(src: &str, method: &str) -> String {
    src.replace("method = \"rk4\"", &format!("method = \"{method}\""))
}

fn initialized(src: &str) -> Instance {
    let mut inst = Instance::new(src, "model.toml").expect("model loads");
    inst.setup_experiment(0.0, None).expect("setup");
    inst.enter_initialization_mode().expect("enter");
    inst.exit_initialization_mode().expect("exit");
    inst
}

fn all_outputs(inst: &mut Instance) -> Vec<u64> {
    let vrs: Vec<u32> = (0..inst.description().variables.len() as u32).collect();
    let mut out = vec![0.0; vrs.len()];
    inst.get_real(&vrs, &mut out).expect("get");
    out.iter().map(|x| x.to_bits()).collect()
}

/// `n` steps of `h` from the instance's time; every output after each step, as bits.
fn run(inst: &mut Instance, n: usize, h: f64) -> Vec<Vec<u64>> {
    let mut rows = Vec::new();
    for _ in 0..n {
        let t = inst.simulation().t_s;
        let r = inst.do_step(t, h).expect("step");
        assert_eq!(r.status, StepStatus::Ok, "{:?}", r.log);
        rows.push(all_outputs(inst));
    }
    rows
}

#[test]
fn restore_and_deserialize_continue_bit_for_bit_for_every_method() {
    // With `[sensitivities]` too: the BDF then runs on the augmented system, whose saved
    // Jacobian is dense (n·(1 + parameters))², not the network's pattern.
    let sens = "\n[sensitivities]\nparameters = [\"projectile.mass\"]\n";
    for method in [
        "euler",
        "rk4",
        "ab2",
        "ab3",
        "ab4",
        "ab5",
        "bdf1",
        "bdf3",
        "bdf",
        "dopri5",
        "auto",
        "bdf+sens",
        "bdf3+sens",
        "auto+sens",
    ] {
        let src = match method.strip_suffix("+sens") {
            Some(m) => with_method(PROJECTILE, m) + sens,
            None => with_method(PROJECTILE, method),
        };
        let mut a = initialized(&src);
        let h = 1e-4;
        run(&mut a, 5, h);
        let s = a.snapshot().unwrap();
        let first = run(&mut a, 10, h);
        a.restore(&s).unwrap();
        let second = run(&mut a, 10, h);
        assert_eq!(first, second, "{method}: restore");

        let blob = a.serialize(&s).unwrap();
        let mut b = initialized(&src);
        let s2 = b.deserialize(&blob).unwrap();
        b.restore(&s2).unwrap();
        let third = run(&mut b, 10, h);
        assert_eq!(first, third, "{method}: deserialize into a fresh instance");
        println!(
            "{method}: {} steps from t = {} s restored and deserialized bit for bit ({} byte blob)",
            first.len(),
            s.time_s(),
            blob.len()
        );
    }
}

#[test]
fn corrupted_or_foreign_blobs_are_refused() {
    let mut a = initialized(PROJECTILE);
    run(&mut a, 3, 1e-4);
    let blob = a.serialize(&a.snapshot().unwrap()).unwrap();
    let msg = |r: Result<Snapshot, CallError>| r.expect_err("refused").0;
    let m = msg(a.deserialize(&blob[..blob.len() - 1]));
    assert!(m.contains("truncated"), "{m}");
    let mut flipped = blob.clone();
    let k = blob.len() - 10;
    flipped[k] ^= 0x04;
    let m = msg(a.deserialize(&flipped));
    assert!(m.contains("checksum mismatch"), "{m}");
    let other = initialized(BLOWDOWN);
    let m = msg(other.deserialize(&blob));
    assert!(m.contains("state is for model GUID"), "{m}");
    for cut in [0, 5, 12, 20, 60] {
        let m = msg(a.deserialize(&blob[..cut]));
        assert!(m.contains("truncated"), "{cut}: {m}");
    }
    // Every single-bit flip is refused.
    for k in 0..blob.len() {
        let mut b = blob.clone();
        b[k] ^= 0x80;
        assert!(a.deserialize(&b).is_err(), "flip in byte {k} accepted");
    }
}

/// A BDF state's saved Jacobian is its values over the model's pattern of I − γJ: a blob
/// whose J has another length (one value more, or the n² of a dense J as format 2 of the
/// dense code saved it) is refused by fmi2DeSerializeFMUstate with the two lengths named;
/// the state as taken is accepted.
#[test]
fn a_bdf_jacobian_of_another_length_is_refused() {
    let mut a = initialized(&with_method(BLOWDOWN, "bdf"));
    run(&mut a, 5, 1e-3);
    let s = a.snapshot().unwrap();
    let n = a.simulation().y.len();
    let nnz = a.simulation().bdf_jacobian_len();
    let ok = a.deserialize(&encode_snapshot(&s).unwrap());
    println!("blowdown bdf: n = {n}, J of {nnz} values (pattern of I − γJ) accepted");
    assert!(ok.is_ok(), "{:?}", ok.err());
    assert!(nnz < n * n);
    for len in [nnz + 1, n * n] {
        let mut bad = s.clone();
        match &mut bad.integrator {
            Method::Bdf(b) => b.saved_jacobian_mut().resize(len, 0.5),
            _ => unreachable!("bdf"),
        }
        let m = a
            .deserialize(&encode_snapshot(&bad).unwrap())
            .expect_err("refused")
            .0;
        println!("J of {len} values: {m}");
        assert!(
            m.contains(&format!(
                "BDF Jacobian has {len} values, this model's has {nnz}"
            )),
            "{m}"
        );
    }
}

/// The phase is restored with a state, so it must agree with the rest: a state taken
/// before initialization is taken and set again, but a stepping instance's state whose
/// phase says `instantiated` or `initializationMode` (at a later time, after steps) is
/// refused by fmi2DeSerializeFMUstate and fmi2SetFMUstate, the instance untouched.
#[test]
fn a_phase_that_contradicts_the_state_is_refused() {
    let mut fresh = Instance::new(PROJECTILE, "model.toml").expect("model loads");
    let early = fresh.snapshot().unwrap();
    let blob = fresh.serialize(&early).unwrap();
    fresh.restore(&fresh.deserialize(&blob).unwrap()).unwrap();
    assert_eq!(fresh.phase(), Phase::Instantiated);
    let mut a = initialized(PROJECTILE);
    run(&mut a, 3, 1e-4);
    for phase in [Phase::Instantiated, Phase::InitializationMode] {
        let mut s = a.snapshot().unwrap();
        s.phase = phase;
        let m = a
            .deserialize(&encode_snapshot(&s).unwrap())
            .expect_err("refused")
            .0;
        assert!(
            m.contains("does not fit") && m.contains("corrupted state"),
            "{m}"
        );
        let m = a.restore(&s).expect_err("refused").0;
        assert!(m.contains(phase.name()), "{m}");
        assert_eq!(a.phase(), Phase::StepComplete);
    }
}

/// Live inputs are part of a state (format 2 carries no network): a state taken after an
/// input was set brings that value back, and one taken before brings back the model's own,
/// and the run continues bit for bit as when the state was taken.
#[test]
fn states_carry_the_live_inputs() {
    let mut inst = initialized(BLOWDOWN);
    let vr = inst
        .description()
        .variables
        .iter()
        .find(|v| v.name == "atm.pressure")
        .unwrap()
        .value_reference;
    let h = 1e-3;
    let before = inst.snapshot().unwrap();
    let p0 = {
        let mut v = [0.0];
        inst.get_real(&[vr], &mut v).unwrap();
        v[0]
    };
    inst.set_real(&[vr], &[1.5e5]).unwrap();
    run(&mut inst, 3, h);
    let set = inst.snapshot().unwrap();
    let first = run(&mut inst, 5, h);
    inst.set_real(&[vr], &[3e5]).unwrap();
    run(&mut inst, 2, h);
    inst.restore(&set).unwrap();
    let mut v = [0.0];
    inst.get_real(&[vr], &mut v).unwrap();
    assert_eq!(v[0], 1.5e5, "the input as the state had it");
    assert_eq!(run(&mut inst, 5, h), first, "continues bit for bit");
    // Through bytes, into a fresh instance.
    let blob = inst.serialize(&set).unwrap();
    let mut fresh = initialized(BLOWDOWN);
    let s = fresh.deserialize(&blob).unwrap();
    fresh.restore(&s).unwrap();
    assert_eq!(run(&mut fresh, 5, h), first, "deserialized: bit for bit");
    // The state before any input was set: the model's own value again.
    inst.restore(&before).unwrap();
    inst.get_real(&[vr], &mut v).unwrap();
    assert_eq!(v[0], p0);
    println!(
        "atm.pressure: {p0} Pa in the initial state, 1.5e5 Pa restored from the later one; \
         {} steps bit for bit after restore and after deserialize ({} byte blob)",
        first.len(),
        blob.len()
    );
}

#[test]
fn inputs_change_live_and_parameters_only_before_the_run() {
    let mut inst = initialized(BLOWDOWN);
    let vr = inst
        .description()
        .variables
        .iter()
        .find(|v| v.name == "atm.pressure")
        .unwrap()
        .value_reference;
    inst.set_real(&[vr], &[2e5]).unwrap();
    let mut v = [0.0];
    inst.get_real(&[vr], &mut v).unwrap();
    assert_eq!(v[0], 2e5);
    assert!(inst.set_real(&[vr], &[f64::NAN]).is_err());
    let pvr = inst
        .description()
        .variables
        .iter()
        .find(|v| v.causality == Causality::Parameter)
        .unwrap()
        .value_reference;
    let e = inst.set_real(&[pvr], &[1.0]).unwrap_err();
    assert!(e.0.contains("fixed parameter"), "{e}");
    let e = inst.set_real(&[0], &[1.0]).unwrap_err();
    assert!(e.0.contains("output"), "{e}");
}

/// The warnings the FMU logs: none for the shipped model, one for a temperature given in °C
/// as a number, and one at fmi2ExitInitializationMode for a pressure set in bar as a number.
#[test]
fn plausibility_warnings_of_the_file_and_of_parameters_set() {
    let fine = Instance::new(BLOWDOWN, "model.toml").expect("model loads");
    assert!(fine.plausibility_warnings().is_empty());
    assert!(!fine.has_overrides());
    let cold = BLOWDOWN.replacen("temperature = 300.0", "temperature = 27.0", 1);
    let inst = Instance::new(&cold, "model.toml").expect("a warning is no error");
    let w = inst.plausibility_warnings();
    println!("{w:#?}");
    assert_eq!(w.len(), 1);
    assert!(
        w[0].contains("did you mean temperature = \"27 degC\" = 300.15 K?"),
        "{}",
        w[0]
    );
    let mut inst = Instance::new(BLOWDOWN, "model.toml").expect("model loads");
    inst.setup_experiment(0.0, None).expect("setup");
    inst.enter_initialization_mode().expect("enter");
    let pvr = inst
        .description()
        .variables
        .iter()
        .find(|v| v.name == "tank.pressure")
        .expect("a parameter")
        .value_reference;
    inst.set_real(&[pvr], &[10.0]).expect("a valid pressure");
    inst.exit_initialization_mode().expect("exit");
    let w = inst.plausibility_warnings();
    println!("{w:#?}");
    assert!(inst.has_overrides());
    assert_eq!(w.len(), 1);
    assert!(w[0].contains("\"10 bar\" = 1e6 Pa"), "{}", w[0]);
}

/// The times a message names are written as the model file's messages write numbers: a time
/// the run derives (an exit crossing, an event) to six significant digits, a time the
/// importer gave exactly and short whatever its magnitude (`1e-300`, not 300 digits).
#[test]
fn messages_write_times_short() {
    let mut inst = initialized(PROJECTILE);
    let h = 1e-3;
    let mut lines = Vec::new();
    for _ in 0..2000 {
        let t0 = inst.simulation().t_s;
        let Ok(r) = inst.do_step(t0, h) else { break };
        for l in &r.log {
            if let Some(rest) = l.text.split(" at t = ").nth(1) {
                let text = rest.split(" s").next().unwrap().to_string();
                lines.push((t0, text, l.text.clone()));
            }
        }
        if r.status != StepStatus::Ok || inst.simulation().finished.is_some() {
            break;
        }
    }
    assert!(
        !lines.is_empty(),
        "no message with a time in the projectile's run"
    );
    for (t0, text, line) in &lines {
        println!("step from {t0} s: {line}");
        let t: f64 = text
            .parse()
            .unwrap_or_else(|_| panic!("{text:?} in {line}"));
        let digits = text.trim_start_matches("0.").replace('.', "");
        let digits = digits.split('e').next().unwrap().trim_start_matches('0');
        assert!(
            digits.len() <= 6,
            "{text} has more than 6 significant digits: {line}"
        );
        // Within the step it happened in, to the 6 digits written.
        assert!(
            t >= t0 * (1.0 - 1e-6) && t <= (t0 + h) * (1.0 + 1e-6),
            "{t} outside [{t0}, {}]: {line}",
            t0 + h
        );
    }
    let mut inst = Instance::new(PROJECTILE, "model.toml").expect("model loads");
    let e = inst.setup_experiment(1e-300, Some(0.0)).unwrap_err();
    println!("{e}");
    assert!(e.0.contains("startTime = 1e-300, got 0"), "{e}");
}

/// `rc` is a discrete output: in Model Exchange it changes only in an event iteration. Forward
/// Euler at 4 µs on the projectile drifts past check 5's energy threshold and back; a completed
/// step whose checks change the code asks for event mode and `rc` is unchanged until then.
/// After each event iteration `rc` is 5 exactly when the drift computed from the outputs
/// (`energy_total` against its initial value) exceeds the threshold.
#[test]
fn rc_changes_only_in_event_mode_in_model_exchange() {
    let mut inst = Instance::with_interface(PROJECTILE, "model.toml", Interface::ModelExchange)
        .expect("loads");
    inst.setup_experiment(0.0, None).expect("setup");
    inst.enter_initialization_mode().expect("enter");
    inst.exit_initialization_mode().expect("exit");
    inst.update_discrete_states().expect("event update");
    inst.enter_continuous_time_mode().expect("continuous");
    let vr = |name: &str| {
        inst.description()
            .variables
            .iter()
            .find(|v| v.name == name)
            .unwrap_or_else(|| panic!("{name}"))
            .value_reference
    };
    let (rc_vr, e_vr) = (vr("rc"), vr("energy_total"));
    let threshold = inst.simulation().checks.thresholds.energy_drift;
    let read = |inst: &mut Instance| {
        let mut v = [0.0; 2];
        inst.get_real(&[rc_vr, e_vr], &mut v).expect("get");
        (v[0], v[1])
    };
    let (rc0, e0) = read(&mut inst);
    assert_eq!(rc0, 0.0);
    let n = inst.n_states();
    let (mut x, mut dx) = (vec![0.0; n], vec![0.0; n]);
    let (h, mut t) = (4e-6, 0.0);
    let mut changes = Vec::new();
    let mut rc = rc0;
    for _ in 0..1200 {
        inst.continuous_states(&mut x).expect("x");
        inst.derivatives(&mut dx).expect("dx");
        for (xi, di) in x.iter_mut().zip(&dx) {
            *xi += h * di;
        }
        t += h;
        inst.set_time(t).expect("time");
        inst.set_continuous_states(&x).expect("x");
        let step = inst.completed_integrator_step().expect("completed");
        assert!(!step.terminate_simulation);
        let (rc_during, _) = read(&mut inst);
        assert_eq!(rc_during, rc, "rc changed during integration at t = {t}");
        if step.enter_event_mode {
            inst.enter_event_mode().expect("event mode");
            inst.update_discrete_states().expect("event update");
            inst.enter_continuous_time_mode().expect("continuous");
            let (rc_after, e) = read(&mut inst);
            let drift = ((e - e0) / e0).abs();
            assert_eq!(
                rc_after == 5.0,
                drift > threshold,
                "t = {t}: rc {rc_after}, drift {drift:e}"
            );
            if rc_after != rc {
                changes.push((t, rc_after, drift));
            }
            rc = rc_after;
        }
    }
    println!(
        "projectile, forward Euler at {h:e} s, threshold {threshold:e}: rc changed in event \
         iterations only, (t, rc, drift): {changes:?}"
    );
    assert!(
        !changes.is_empty(),
        "the drift must fire for the test to mean anything"
    );
}

//! What the Co-Simulation (`state_machine.rs`) and Model Exchange (`me_calls.rs`) tests share:
//! a model's description, and the driver that calls every function of a calling-sequence table
//! in every state and checks each forbidden call's refusal and each allowed call's acceptance.

use compliance_tests::*;

/// `model`'s description, as the FMU's modelDescription.xml states it.
pub fn description(model: &ModelDir) -> plenum::cosim::Description {
    let loaded = plenum::model::parse_str(&model.text, "m.toml", &[]).expect("model");
    plenum::cosim::describe(&loaded)
}

/// The value reference of variable `name` of `model`.
pub fn value_reference(model: &ModelDir, name: &str) -> u32 {
    description(model)
        .variables
        .iter()
        .find(|v| v.name == name)
        .unwrap_or_else(|| panic!("no variable {name}"))
        .value_reference
}

/// One function of a calling-sequence table: its name, the states in which the standard allows
/// it (a mask of `states`' bits), and a call with valid arguments (`C`: what the calls need).
pub type Row<C> = (&'static str, u8, fn(&Fmu, &C) -> fmi2Status);

/// What [`check_table`] counted.
pub struct Counts {
    /// Forbidden calls refused with fmi2Error, a logStatusError line naming the state, and the
    /// instance then continuing bit for bit as an untouched twin.
    pub refused: usize,
    /// Allowed calls not refused for their state.
    pub allowed: usize,
    /// The states `reach` found no way to.
    pub unreachable: Vec<&'static str>,
}

/// Every function of `table` in every state of `states` (`reach(state)`: a fresh instance
/// there, `None` when there is no way there). A forbidden call must return fmi2Error with an
/// error line that starts with the function's name and says "not allowed in state S" or one of
/// `other_refusals` (a function of the other interface), and the instance must then go on as
/// `continuation` shows, bit for bit as a twin that never saw the call; an allowed call must
/// not be refused for its state. Prints the table of outcomes.
pub fn check_table<C>(
    states: &[(u8, &'static str)],
    table: &[Row<C>],
    x: &C,
    other_refusals: &[&str],
    reach: impl Fn(u8) -> Option<Fmu>,
    continuation: impl Fn(&Fmu, u8) -> Vec<(u32, Vec<u64>)>,
) -> Counts {
    let mut counts = Counts {
        refused: 0,
        allowed: 0,
        unreachable: Vec::new(),
    };
    let header: String = states.iter().map(|(_, n)| format!("{n:>19}")).collect();
    println!("{:<36} {header}", "function \\ state");
    let mut lines = Vec::new();
    for (name, ok_in, call) in table {
        let mut line = format!("{name:<36}");
        for &(state, state_name) in states {
            let Some(f) = reach(state) else {
                if !counts.unreachable.contains(&state_name) {
                    counts.unreachable.push(state_name);
                }
                line.push_str(&format!("{:>19}", "-"));
                continue;
            };
            let n = f.logs().len();
            let status = call(&f, x);
            let logs = f.logs();
            let refused_for_state = logs[n..].iter().any(|r| {
                r.status == ERROR as i32
                    && r.text.starts_with(name.split('+').next().unwrap_or(name))
                    && (r
                        .text
                        .contains(&format!("not allowed in state {state_name}"))
                        || other_refusals.iter().any(|m| r.text.contains(m)))
            });
            if ok_in & state != 0 {
                assert!(
                    !refused_for_state,
                    "{name} in {state_name} is allowed by the standard but was refused: {:?}",
                    &logs[n..]
                );
                counts.allowed += 1;
                line.push_str(&format!("{:>19}", format!("ok({status})")));
            } else {
                assert_eq!(status, ERROR, "{name} in {state_name}");
                assert!(
                    refused_for_state,
                    "{name} in {state_name}: no error message naming the state: {:?}",
                    &logs[n..]
                );
                let msg = logs[n..].iter().find(|r| r.status == ERROR as i32).unwrap();
                assert_eq!(msg.format, "%s");
                assert_eq!(msg.category, "logStatusError");
                // The instance is still in its state: it goes on as a twin that never saw the
                // call.
                let twin = reach(state).expect("twin");
                assert_eq!(
                    continuation(&f, state),
                    continuation(&twin, state),
                    "{name} in {state_name} changed the instance"
                );
                counts.refused += 1;
                line.push_str(&format!("{:>19}", "Error+log"));
            }
        }
        lines.push(line);
    }
    for l in &lines {
        println!("{l}");
    }
    counts
}

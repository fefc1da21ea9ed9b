//! Model Exchange's event indicators are the events a network's structure lets fire
//! (`Network::reported_events`): a slot a part lacks (a plain orifice's valve points, a
//! (C, b) valve's missing path, a curve's rows of a parity it has none of, a piston's absent
//! stop or exit, a cushion at an end without one) is left out, as the driver's search leaves it
//! out, so that no indicator stays constant by construction.

use plenum::model::{build_simulation, parse_str};

/// The gallery's models and the fixtures that hold every kind.
const MODELS: [&str; 14] = [
    "examples/airgun/model.toml",
    "examples/blowdown/model.toml",
    "examples/circadapt_valve/model.toml",
    "examples/cylinder/model.toml",
    "examples/double_acting/model.toml",
    "examples/pneumatic_cylinder/model.toml",
    "examples/soft_actuator/model.toml",
    "tests/fixtures/models/every_kind.toml",
    "tests/fixtures/models/all_kinds.toml",
    "tests/fixtures/models/other_kinds.toml",
    "tests/fixtures/models/flow_table.toml",
    "tests/fixtures/models/cushioned_cylinder.toml",
    "tests/fixtures/models/shared_exhaust.toml",
    "tests/fixtures/models/hose.toml",
];

/// Along each model's run (201 instants to its `t_end`): every event left out has no value at
/// any instant, and every event reported that has none at any (an indicator constant over the
/// run) is one that the state or a parameter switches on: static friction's switches (a
/// friction of 0 may be set) or a cushion's check valve, not a slot the part lacks.
#[test]
fn indicators_leave_out_exactly_the_slots_a_part_lacks() {
    let (mut slots_all, mut reported_all, mut constant_all) = (0, 0, 0);
    for file in MODELS {
        let src = std::fs::read_to_string(crate::common::repo_path(file)).expect("the model");
        let model = parse_str(&src, file, &[]).expect("reads");
        let mut sim = build_simulation(&model.spec, None).expect("builds");
        let t_end = model.spec.solver.t_end;
        let slots = sim.network.n_events();
        let reported = sim.network.reported_events().to_vec();
        let mut valued = vec![false; slots];
        for k in 0..=200 {
            if k > 0 {
                sim.advance_to(t_end * k as f64 / 200.0).expect("runs");
            }
            for (e, v) in valued.iter_mut().enumerate() {
                *v |= sim.network.event_value(e, sim.t_s, &sim.y).is_some();
            }
        }
        let left_out_valued: Vec<String> = (0..slots)
            .filter(|&e| !reported.contains(&(e as u32)) && valued[e])
            .map(|e| sim.network.event_description(e))
            .collect();
        let constant: Vec<String> = reported
            .iter()
            .filter(|&&e| !valued[e as usize])
            .map(|&e| sim.network.event_description(e as usize))
            .collect();
        println!(
            "{file}: {slots} slots, {} reported; constant over the run: {constant:?}",
            reported.len()
        );
        assert!(
            left_out_valued.is_empty(),
            "{file}: left out, yet valued: {left_out_valued:?}"
        );
        for d in &constant {
            assert!(
                ["static friction", "sticks, sliding", "check valve"]
                    .iter()
                    .any(|s| d.contains(s)),
                "{file}: a reported indicator no state or parameter can switch: {d}"
            );
        }
        slots_all += slots;
        reported_all += reported.len();
        constant_all += constant.len();
    }
    println!(
        "all: {slots_all} slots, {reported_all} reported, {constant_all} constant over their \
         runs (friction and cushion check valves)"
    );
}

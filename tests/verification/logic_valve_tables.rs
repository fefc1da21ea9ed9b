//! The logic valves rated by a catalogue curve (`flow_table`, `src/components/flow_table.rs`)
//! against second formulations, as `logic_valves.rs` does for their ISO 6358 rating: with the
//! disc at an end of its travel a shuttle valve is the orifice of the same curve from its
//! higher inlet, a two-pressure valve from its lower one, a quick-exhaust valve the orifice
//! from its supply while filling and to its exhaust while venting, and a pilot-operated check
//! valve piloted open the orifice of its curve, vented a one-way check orifice with it — to
//! round-off, each run crossing the curve's rows (events, the closed path's too, so the peer
//! lists the closed path as an orifice of opening 0 with the curve, and both runs take the
//! same steps). Then a law check against an independent truth: a curve sampled from the ISO
//! law of (C, b) rates a shuttle valve that is the (C, b) valve within the curve's linear
//! interpolation error; and Model Exchange reports only the row events that can fire.

use plenum::components::orifice::{ISO_T0_K, iso6358_mass_flow_kg_per_s};

use crate::common::valves::{
    GAS, IsoCurve, chamber, compare, fill_then_vent, flow_table_keys, held_cylinder, step,
    supply_switched_off, two_inlets, vented_pilot,
};
use crate::common::{output, sim_of};

/// A coarse curve (a few rows far apart, each a visible kink): about the ISO law of C = 3e-9
/// m³/(s·Pa), b = 0.35 at 7 bar (F₀ = C·p_ref·ρ₀ ≈ 2.49e-3 kg/s).
const ROWS: [[f64; 2]; 6] = [
    [0.0, 2.5e-3],
    [0.35, 2.5e-3],
    [0.6, 2.1e-3],
    [0.8, 1.5e-3],
    [0.95, 0.55e-3],
    [1.0, 0.0],
];

/// An orifice of the curve `ROWS` (scaled by `scale`), of opening `opening`.
fn orifice(name: &str, from: &str, to: &str, scale: f64, opening: &str) -> String {
    format!(
        "[[orifice]]\nname = \"{name}\"\nfrom = \"{from}\"\nto = \"{to}\"\n{}opening = {opening}\n",
        flow_table_keys(&scaled(scale), 7e5)
    )
}

fn scaled(scale: f64) -> Vec<[f64; 2]> {
    ROWS.iter().map(|[r, f]| [*r, f * scale]).collect()
}

/// X at 6 bar and Y at 4 bar (1 L each) feed O (0.1 L, from 1 bar) through a shuttle valve
/// (and through a two-pressure valve) rated by the curve (its flows times 4): O's ratio to the open inlet rises
/// from 1/6 (1/4) past every interior row. Against the orifice of the curve from the higher
/// (lower) inlet and a closed one from the other.
#[test]
fn a_shuttle_valve_rated_by_a_curve_is_the_orifice_of_its_curve() {
    for (two_pressure, from, closed_inlet) in [(false, "X", "Y"), (true, "Y", "X")] {
        let head = two_inlets("logic_table", 0.3);
        let one = format!(
            "{head}[[shuttle_valve]]\nname = \"v\"\nx = \"X\"\ny = \"Y\"\nout = \"O\"\n{}\
             two_pressure = {two_pressure}\n",
            flow_table_keys(&scaled(4.0), 7e5)
        );
        let two = format!(
            "{head}{}{}",
            orifice("v", from, "O", 4.0, "1.0"),
            orifice("closed", closed_inlet, "O", 4.0, "0.0")
        );
        let (worst, events, peer_events) = compare(&one, &two, 0.3, &["X.p", "Y.p", "O.p"]);
        let mut sim = sim_of(&one);
        sim.advance_to(0.3).expect("runs");
        let p_in = output(&mut sim, &format!("{from}.p"));
        let (po, disc) = (output(&mut sim, "O.p"), output(&mut sim, "v.disc"));
        println!(
            "two_pressure = {two_pressure}, curve-rated: against the orifice of the curve \
             {from} → O (and a closed one {closed_inlet} → O): largest relative difference \
             {worst:.1e}, events {events} / {peer_events}; at 0.3 s p_O/p_{from} = {:.5}, \
             disc {disc}",
            po / p_in
        );
        assert_eq!(disc, 1.0);
        assert!(worst < 1e-12, "{worst:e}");
        // O's ratio passed the last interior row (0.95): every row was crossed, located.
        assert!(po / p_in > 0.95, "{}", po / p_in);
        assert!(
            events >= 4 && events == peer_events,
            "{events} {peer_events}"
        );
        // The closed inlet loses nothing.
        let closed = if two_pressure {
            output(&mut sim, "X.p") / 6e5
        } else {
            output(&mut sim, "Y.p") / 4e5
        };
        assert!((closed - 1.0).abs() < 1e-13, "{closed}");
    }
}

/// The supply is 6 bar until 70 ms, then atmospheric: A (0.2 L) fills through the curve's path
/// p–a, then vents through a–r, by the same curve (a quick-exhaust valve's `flow_table` alone
/// rates both paths) or by its own (`exhaust_flow_table`, 1.1 times the flows). Against an
/// inlet orifice and a vent orifice of those curves opened by steps.
#[test]
fn a_quick_exhaust_rated_by_a_curve_is_the_orifices_of_its_curve() {
    for exhaust_scale in [None, Some(11.0)] {
        let head = supply_switched_off("qev_table", 0.16, 0.07, 0.2);
        let own = exhaust_scale.map_or(String::new(), |k| {
            // `flow_table_keys`'s first line, the rows, under the exhaust curve's key.
            let rows = flow_table_keys(&scaled(k), 7e5);
            format!("exhaust_{}\n", rows.lines().next().unwrap_or_default())
        });
        let one = format!(
            "{head}[[quick_exhaust]]\nname = \"q\"\np = \"P\"\na = \"A\"\nr = \"R\"\n{}{own}",
            flow_table_keys(&scaled(10.0), 7e5)
        );
        let two = format!(
            "{head}{}{}",
            orifice("q", "P", "A", 10.0, &step(0.07, 1.0, 0.0)),
            orifice(
                "vent",
                "A",
                "R",
                exhaust_scale.unwrap_or(10.0),
                &step(0.07, 0.0, 1.0)
            )
        );
        let (worst, events, peer_events) = compare(&one, &two, 0.16, &["A.p"]);
        let mut sim = sim_of(&one);
        let (peak, low) = fill_then_vent(&mut sim, 160, 0.07);
        let end = output(&mut sim, "A.p");
        println!(
            "quick exhaust, exhaust curve {exhaust_scale:?} x the rows (None: flow_table's), \
             against an inlet and a vent orifice of the curves: largest relative difference \
             {worst:.1e}, events {events} / {peer_events}; p_A peaks at {peak:.6e} Pa (ratio to \
             the supply {:.4}) and ends at {end:.6e} Pa (ratio of R to it {:.4}); |p_P − p_A| ≥ \
             {low:.0} Pa (half the band: 2500 Pa)",
            peak / 6e5,
            101_325.0 / end
        );
        assert!(low > 2500.0, "the disc entered its band: {low}");
        // Filling passed every row, up to 0.95 of the supply; venting back down past 0.8.
        assert!(peak / 6e5 > 0.95 && 101_325.0 / end > 0.8, "{peak} {end}");
        assert!(worst < 1e-12, "{worst:e}");
        assert!(
            events >= 6 && events == peer_events,
            "{events} {peer_events}"
        );
    }
}

/// A cylinder chamber at 6 bar held by a pilot-operated check valve rated by the curve, its
/// line vented; the pilot is raised to 6 bar gauge at 50 ms: against the orifice of the curve
/// opened by a step then. With the pilot vented, from 6 bar into 1 bar: against a one-way
/// check orifice of the curve with the same cracking and full-flow pressures.
#[test]
fn a_pilot_check_rated_by_a_curve_is_the_orifice_of_its_curve() {
    let rows = flow_table_keys(&scaled(20.0), 7e5);
    let held = |valve: &str| held_cylinder("pc_table", 0.2, valve);
    let one = held(&format!(
        "[[pilot_check]]\nname = \"pc\"\nfrom = \"line\"\nto = \"cyl\"\npilot = \"X\"\n\
         pilot_ratio = 3.0\ncracking_pressure = 1e4\nfull_flow_pressure = 5e4\n{rows}"
    ));
    let two = held(&orifice(
        "pc",
        "line",
        "cyl",
        20.0,
        "{ table = [[0.0, 0.0], [0.05, 1.0]], interpolation = \"step\" }",
    ));
    let (worst, events, peer_events) = compare(&one, &two, 0.2, &["cyl.p"]);
    let mut sim = sim_of(&one);
    sim.advance_to(0.2).expect("runs");
    let released = output(&mut sim, "cyl.p");
    println!(
        "piloted open, curve-rated: against the orifice of the curve opened by a step, largest \
         relative difference {worst:.1e}, events {events} / {peer_events}; released to \
         {released:.6e} Pa (ratio of the line to it {:.4})",
        101_325.0 / released
    );
    assert!(worst < 1e-12, "{worst:e}");
    assert!(101_325.0 / released > 0.6, "{released}");
    assert!(
        events >= 2 && events == peer_events,
        "{events} {peer_events}"
    );

    let head = vented_pilot("pc_vented");
    let one = format!(
        "{head}[[pilot_check]]\nname = \"pc\"\nfrom = \"A\"\nto = \"B\"\npilot = \"atm\"\n\
         pilot_ratio = 3.0\ncracking_pressure = 2e4\nfull_flow_pressure = 8e4\n{rows}"
    );
    let two = format!(
        "{head}[[orifice]]\nname = \"pc\"\nfrom = \"A\"\nto = \"B\"\n{rows}one_way = true\n\
         cracking_pressure = 2e4\nfull_flow_pressure = 8e4\n"
    );
    let (worst, events, peer_events) = compare(&one, &two, 0.3, &["A.p", "B.p"]);
    let mut sim = sim_of(&one);
    sim.advance_to(0.3).expect("runs");
    let (pa, pb) = (output(&mut sim, "A.p"), output(&mut sim, "B.p"));
    println!(
        "pilot vented, curve-rated: against a one-way check orifice of the curve, largest \
         relative difference {worst:.1e}, events {events} / {peer_events}; at 0.3 s \
         p_A − p_B = {:.1} Pa (cracking 2e4), p_B/p_A = {:.4}",
        pa - pb,
        pb / pa
    );
    assert!(worst < 1e-12, "{worst:e}");
    assert!(
        events > 0 && events == peer_events,
        "{events} {peer_events}"
    );
    // It closes at its cracking pressure, to the error the tolerance allows Δp (rtol 1e-6 of
    // each pressure): the method's own error across the closing point is passed over, not
    // located again and again (docs/integrators.md, "Switches").
    let allowed = 1e-6 * (pa + pb);
    println!(
        "closed {:.3e} Pa from cracking (allowed {allowed:.2e} Pa)",
        pa - pb - 2e4
    );
    assert!(pa - pb > 2e4 - allowed && pa - pb < 2.1e4, "{}", pa - pb);
}

/// The ISO law's (C, b) of the law check, and the curve's rated inlet pressure (T_ref: T₀).
const C: f64 = 3e-9;
const B: f64 = 0.3;
const P_REF: f64 = 7e5;
const LAW: IsoCurve = IsoCurve::new(C, B, P_REF);

/// A shuttle valve rated by a 22-row curve sampled from the ISO law of (C, b) = (3e-9, 0.3)
/// at 7 bar, fed from X (8 bar, 1 L) into O (0.1 L from 1 bar): along the run, every 5 ms
/// until O's ratio to X is past 0.99 (across all rows but the laminar one), its flow x → out
/// (the disc at its end) is the ISO law of (C, b) at the run's own node states (from the
/// outputs) within the piece's bound, scaled as the curve's law.
#[test]
fn a_shuttle_valve_rated_by_a_sampled_curve_is_its_iso_law_within_the_interpolation_error() {
    let rows = LAW.rows(18);
    let model = format!(
        "[model]\nname = \"sampled\"\n{GAS}[solver]\nmethod = \"auto\"\nrtol = 1e-10\n\
         atol = 1e-14\nt_end = 2.0\n{}{}{}\
         [[shuttle_valve]]\nname = \"v\"\nx = \"X\"\ny = \"Y\"\nout = \"O\"\n{}",
        chamber("X", 1.0, 8.0),
        chamber("Y", 1.0, 1.0),
        chamber("O", 0.1, 1.0),
        flow_table_keys(&rows, P_REF)
    );
    let mut sim = sim_of(&model);
    let (mut worst, mut worst_ratio, mut r_max) = ((0.0f64, 0.0f64), 0.0f64, 0.0f64);
    for k in 1..=400 {
        if r_max > 0.99 {
            break;
        }
        let t = 5e-3 * k as f64;
        sim.advance_to(t).expect("runs");
        let (px, tx, po) = (
            output(&mut sim, "X.p"),
            output(&mut sim, "X.T"),
            output(&mut sim, "O.p"),
        );
        let mdot = output(&mut sim, "v.mdot");
        assert_eq!(output(&mut sim, "v.disc"), 1.0);
        let r = po / px;
        r_max = r_max.max(r);
        let want = iso6358_mass_flow_kg_per_s(C, B, px, tx, po);
        // The curve's law F(r)·(p/p_ref)·sqrt(T_ref/T): its bound scales the same way.
        let bound = LAW.piece_bound(&rows, r) * px / P_REF * (ISO_T0_K / tx).sqrt() + 1e-13 * want;
        let err = (mdot - want).abs();
        assert!(err <= bound, "t = {t}: r = {r}: {err:e} above {bound:e}");
        if err / bound.max(1e-300) > worst_ratio {
            worst_ratio = err / bound;
            worst = (err, bound);
        }
    }
    println!(
        "shuttle valve on a 22-row curve sampled from ISO (C 3e-9, b 0.3): largest |ṁ − ṁ_ISO| \
         relative to its bound {worst_ratio:.3} ({:.3e} kg/s of {:.3e}); r up to {r_max:.5}; \
         events {}",
        worst.0, worst.1, sim.stats.events
    );
    assert!(r_max > 0.99, "{r_max}");
    // Every interior row was crossed (each a located event).
    assert!(
        sim.stats.events as usize >= rows.len() - 2,
        "{}",
        sim.stats.events
    );
}

/// Model Exchange reports a curve's row events only where they can fire: each logic valve
/// rated by a curve of one interior row (parity 2, 4, …) reports 2 of each path's 4 slots
/// (h and −h of that row's function) beside its disc's or poppet's 4; rated by (C, b), all.
#[test]
fn model_exchange_reports_only_a_logic_valves_row_events_that_can_fire() {
    let head = format!(
        "[model]\nname = \"me\"\n{GAS}[solver]\nt_end = 0.1\n{}{}{}",
        chamber("c", 1.0, 1.0),
        chamber("d", 1.0, 3.0),
        chamber("e", 1.0, 2.0)
    );
    let kinds = [
        "[[shuttle_valve]]\nname = \"v\"\nx = \"c\"\ny = \"d\"\nout = \"e\"\n",
        "[[quick_exhaust]]\nname = \"v\"\np = \"c\"\na = \"d\"\nr = \"e\"\n",
        "[[pilot_check]]\nname = \"v\"\nfrom = \"c\"\nto = \"d\"\npilot = \"e\"\n\
         pilot_ratio = 3.0\nfull_flow_pressure = 5e4\n",
    ];
    let counts = |src: &str| {
        let sim = sim_of(src);
        (sim.network.n_reported_events(), sim.network.n_events())
    };
    let one_row =
        "flow_table = [[0, 1e-2], [0.5, 5e-3], [1, 0]]\nflow_table_inlet_pressure = 7e5\n";
    let iso = "sonic_conductance = 1e-9\ncritical_pressure_ratio = 0.3\n";
    let mut got = Vec::new();
    for (kind, paths) in kinds.iter().zip([2, 2, 1]) {
        let (curve, by_iso) = (
            counts(&format!("{head}{kind}{one_row}")),
            counts(&format!("{head}{kind}{iso}")),
        );
        got.push((curve, by_iso));
        let all = 4 + 4 * paths;
        assert_eq!(by_iso, (all, all), "{kind}");
        assert_eq!(curve, (4 + 2 * paths, all), "{kind}");
    }
    println!(
        "reported of all events (one-row curve, then C and b): shuttle {:?}, quick exhaust \
         {:?}, pilot check {:?}",
        got[0], got[1], got[2]
    );
}

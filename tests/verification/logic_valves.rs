//! The logic valves against second formulations: a shuttle valve (OR) is the orifice from its
//! higher inlet, a two-pressure valve (AND) the orifice from its lower one, a quick-exhaust
//! valve the orifice from its supply while filling and the orifice to its exhaust while
//! venting — to round-off while the disc is at an end of its travel (each path's pressure-ratio
//! kinks are events as an orifice's are, the closed path's too, so the peer lists the closed
//! path as an orifice of opening 0 and both runs take the same steps); across the switch the
//! total mass is conserved and the result meets the tolerance.

use crate::common::valves::{
    GAS, chamber, compare, fill_then_vent, held_cylinder, step, supply_switched_off, two_inlets,
    vented_pilot,
};
use crate::common::{output, sim_of};

fn orifice(name: &str, from: &str, to: &str, c: f64, opening: &str) -> String {
    format!(
        "[[orifice]]\nname = \"{name}\"\nfrom = \"{from}\"\nto = \"{to}\"\n\
         sonic_conductance = {c:e}\ncritical_pressure_ratio = 0.3\nopening = {opening}\n"
    )
}

#[test]
fn shuttle_passes_its_higher_inlet_and_two_pressure_its_lower() {
    for (two_pressure, from, closed_inlet) in [(false, "X", "Y"), (true, "Y", "X")] {
        let head = two_inlets("logic", 0.2);
        let valve = format!(
            "[[shuttle_valve]]\nname = \"v\"\nx = \"X\"\ny = \"Y\"\nout = \"O\"\n\
             sonic_conductance = 3e-9\ncritical_pressure_ratio = 0.3\n\
             two_pressure = {two_pressure}\n"
        );
        let one = format!("{head}{valve}");
        let two = format!(
            "{head}{}{}",
            orifice("v", from, "O", 3e-9, "1.0"),
            orifice("closed", closed_inlet, "O", 3e-9, "0.0")
        );
        let (worst, events, peer_events) = compare(&one, &two, 0.2, &["X.p", "Y.p", "O.p"]);
        // Without the closed path's orifice the peer lacks its ratio events (O crosses b·p_Y
        // and 0.999·p_Y rising) and steps otherwise: the comparison sees events.
        let lone = format!("{head}{}", orifice("v", from, "O", 3e-9, "1.0"));
        let (apart, _, lone_events) = compare(&one, &lone, 0.2, &["X.p", "Y.p", "O.p"]);
        let mut sim = sim_of(&one);
        sim.advance_to(0.2).expect("runs");
        let (px, py, po) = (
            output(&mut sim, "X.p"),
            output(&mut sim, "Y.p"),
            output(&mut sim, "O.p"),
        );
        let disc = output(&mut sim, "v.disc");
        println!(
            "two_pressure = {two_pressure}: fed from {from}; against the orifice {from} → O \
             (and a closed one {closed_inlet} → O): largest relative difference {worst:.1e}, \
             events {events} / {peer_events}; without the closed one {apart:.1e}, \
             {lone_events} events; at 0.2 s p_X = {px:.6e}, p_Y = {py:.6e}, \
             p_O = {po:.6e} Pa, disc {disc}"
        );
        // The disc stays at its end: p_X − p_Y is far outside the 5 kPa band throughout.
        assert!(px - py > 1e5, "{px} {py}");
        assert_eq!(disc, 1.0);
        assert!(worst < 1e-12, "{worst:e}");
        // O fills past b·p_X and to the laminar band of its open path: ratio events fired.
        assert!(
            events > 0 && events == peer_events,
            "{events} {peer_events}"
        );
        assert!(
            lone_events < events && apart > 1e3 * worst.max(1e-16),
            "{apart:e}"
        );
        // The closed inlet loses nothing.
        let closed = if two_pressure { px / 6e5 } else { py / 4e5 };
        assert!((closed - 1.0).abs() < 1e-13, "{closed}");
    }
}

/// X empties into a sink and falls below Y: the shuttle's disc crosses and O is fed from Y.
fn switching_shuttle(method: &str, rtol: f64) -> String {
    format!(
        "[model]\nname = \"shuttle_switch\"\n{GAS}[solver]\nmethod = \"{method}\"\nrtol = {rtol:e}\n\
         atol = 1e-9\nt_end = 0.6\n{}{}{}{}{}\
         [[shuttle_valve]]\nname = \"v\"\nx = \"X\"\ny = \"Y\"\nout = \"O\"\n\
         switching_band = \"0.02 bar\"\nsonic_conductance = 3e-9\ncritical_pressure_ratio = 0.3\n",
        chamber("X", 0.2, 6.0),
        chamber("Y", 0.5, 3.0),
        chamber("O", 0.5, 1.0),
        chamber("sink", 20.0, 1.0),
        orifice("drain", "X", "sink", 1e-9, "1.0"),
    )
}

#[test]
fn shuttle_switch_conserves_mass_and_meets_the_tolerance() {
    let names = ["X", "Y", "O", "sink"];
    let mass = |sim: &mut plenum::simulation::Simulation| -> f64 {
        names.iter().map(|n| output(sim, &format!("{n}.m"))).sum()
    };
    let mut reference = sim_of(&switching_shuttle("bdf", 1e-11));
    let m0 = mass(&mut reference);
    let mut worst_ref: f64 = 0.0;
    let rtol = 1e-6;
    for method in ["auto", "dopri5", "bdf"] {
        let mut sim = sim_of(&switching_shuttle(method, rtol));
        let mut reference = sim_of(&switching_shuttle("bdf", 1e-11));
        let mut crossed = false;
        let (mut before, mut after): (f64, f64) = (0.0, 0.0);
        for k in 1..=60 {
            let t = 0.01 * k as f64;
            sim.advance_to(t).expect("runs");
            reference.advance_to(t).expect("runs");
            crossed |= output(&mut sim, "v.disc") == 0.0;
            for n in ["X.p", "Y.p", "O.p"] {
                let (u, r) = (output(&mut sim, n), output(&mut reference, n));
                let e = (u - r).abs() / r;
                if crossed {
                    after = after.max(e);
                } else {
                    before = before.max(e);
                }
            }
            worst_ref = worst_ref.max((mass(&mut reference) / m0 - 1.0).abs());
            let drift = (mass(&mut sim) / m0 - 1.0).abs();
            assert!(drift < 1e-12, "{method}: mass drift {drift:e} at {t}");
        }
        println!(
            "{method} at rtol {rtol:e}: largest relative difference from bdf at 1e-11 before \
             the disc crossed {before:.2e}, after {after:.2e} (bound: 1.5 × before, at least \
             rtol); p_O at 0.6 s {:.6e} Pa",
            output(&mut sim, "O.p")
        );
        assert!(crossed && after > 0.0, "{method}: X never fell below Y");
        // The switch adds nothing to the method's own global error (BDF's is ~10 × rtol
        // before any switch): its ends of travel are located, not stepped over.
        assert!(
            after <= 1.5 * before.max(rtol),
            "{method}: {after:e} after, {before:e} before"
        );
        assert!(before < 20.0 * rtol, "{method}: {before:e}");
    }
    println!("reference mass drift {worst_ref:.1e}");
    let _ = &mut reference;
}

#[test]
fn quick_exhaust_fills_from_its_supply_and_vents_to_its_exhaust() {
    // The supply is 6 bar until 0.05 s, then atmospheric: the cylinder A fills through p–a,
    // then vents through a–r (C 1.5 times the inlet's) as the valve's exhaust would.
    let head = supply_switched_off("qev", 0.09, 0.05, 1.0);
    let one = format!(
        "{head}[[quick_exhaust]]\nname = \"q\"\np = \"P\"\na = \"A\"\nr = \"R\"\n\
         sonic_conductance = 3e-8\nexhaust_sonic_conductance = 4.5e-8\n\
         critical_pressure_ratio = 0.3\n"
    );
    let two = format!(
        "{head}{}{}",
        orifice("q", "P", "A", 3e-8, &step(0.05, 1.0, 0.0)),
        orifice("vent", "A", "R", 4.5e-8, &step(0.05, 0.0, 1.0))
    );
    let (worst, events, peer_events) = compare(&one, &two, 0.09, &["A.p"]);
    let mut sim = sim_of(&one);
    let (peak, low) = fill_then_vent(&mut sim, 90, 0.05);
    let vented = output(&mut sim, "q.exhaust_mdot");
    println!(
        "quick exhaust against an inlet and a vent orifice: largest relative difference \
         {worst:.1e}, events {events} / {peer_events}; p_A peaks at {peak:.6e} Pa and ends at {:.6e} Pa venting {vented:.4e} kg/s; \
         |p_P − p_A| ≥ {low:.0} Pa (half the band: 2500 Pa)",
        output(&mut sim, "A.p")
    );
    assert!(low > 2500.0, "the disc entered its band: {low}");
    assert!(peak > 2e5 && vented > 0.0);
    assert!(worst < 1e-12, "{worst:e}");
    assert!(
        events > 0 && events == peer_events,
        "{events} {peer_events}"
    );
}

#[test]
fn logic_valves_refuse_a_missing_or_doubled_rating() {
    let head = format!(
        "[model]\nname = \"bad\"\n{GAS}[solver]\nt_end = 0.1\n{}{}",
        chamber("c", 1.0, 1.0),
        chamber("d", 1.0, 1.0)
    );
    let cases = [
        (
            "[[shuttle_valve]]\nname = \"s\"\nx = \"c\"\ny = \"d\"\nout = \"e\"\n\
             critical_pressure_ratio = 0.3\n",
            "missing the valve's flow rating",
        ),
        (
            "[[quick_exhaust]]\nname = \"q\"\np = \"c\"\na = \"d\"\nr = \"e\"\n\
             sonic_conductance = 1e-9\nnominal_flow = \"10 Nl/min\"\n\
             critical_pressure_ratio = 0.3\n",
            "give either `sonic_conductance` (C) or `nominal_flow` (Q_N), not both",
        ),
        (
            "[[quick_exhaust]]\nname = \"q\"\np = \"c\"\na = \"d\"\nr = \"e\"\n\
             sonic_conductance = 1e-9\nexhaust_sonic_conductance = 1e-9\n\
             exhaust_nominal_flow = \"10 Nl/min\"\ncritical_pressure_ratio = 0.3\n",
            "give either `exhaust_sonic_conductance` or `exhaust_nominal_flow`, not both",
        ),
    ];
    for (valve, wanted) in cases {
        let src = format!("{head}{}{valve}", chamber("e", 1.0, 1.0));
        let Err(errs) = plenum::model::parse_str(&src, "bad.toml", &[]) else {
            panic!("accepted: {valve}")
        };
        let text: Vec<String> = errs.iter().map(|e| e.to_string()).collect();
        println!("{}", text.join("\n"));
        assert!(text.iter().any(|t| t.contains(wanted)), "{text:?}");
    }
}

#[test]
fn pilot_check_holds_until_piloted_then_is_an_open_orifice() {
    let valve = "[[pilot_check]]\nname = \"pc\"\nfrom = \"line\"\nto = \"cyl\"\npilot = \"X\"\n\
                 pilot_ratio = 3.0\ncracking_pressure = 1e4\nfull_flow_pressure = 5e4\n\
                 sonic_conductance = 5e-8\ncritical_pressure_ratio = 0.3\n";
    let one = held_cylinder("pilot_check", 0.1, valve);
    // The same as an ISO orifice, both ways, opened by a step at 0.05 s.
    let two = held_cylinder(
        "pilot_check",
        0.1,
        &orifice(
            "pc",
            "line",
            "cyl",
            5e-8,
            "{ table = [[0.0, 0.0], [0.05, 1.0]], interpolation = \"step\" }",
        ),
    );
    let (worst, events, peer_events) = compare(&one, &two, 0.1, &["cyl.p"]);
    let mut sim = sim_of(&one);
    sim.advance_to(0.049).expect("runs");
    let held = output(&mut sim, "cyl.p");
    let closed = output(&mut sim, "pc.open_fraction");
    let mut lowest_control = f64::INFINITY;
    for k in 50..=100 {
        sim.advance_to(1e-3 * k as f64).expect("runs");
        let p = output(&mut sim, "cyl.p");
        // Δp_c = (p_line − p_cyl) + 3·(7.01325e5 − 1.01325e5): fully open while above 5e4 Pa.
        lowest_control = lowest_control.min(101_325.0 - p + 3.0 * 6e5);
    }
    let released = output(&mut sim, "cyl.p");
    println!(
        "held at {held:.6} Pa (open fraction {closed}) until the pilot; released to \
         {released:.6e} Pa at 0.1 s; control pressure ≥ {lowest_control:.4e} Pa (full flow at \
         5e4); against an orifice opened by a step: largest relative difference {worst:.1e}, \
         events {events} / {peer_events}"
    );
    assert_eq!(closed, 0.0);
    assert!((held / 6e5 - 1.0).abs() < 1e-13, "{held}");
    assert!(lowest_control > 5e4 && released < 4e5, "{released}");
    assert!(worst < 1e-12, "{worst:e}");
    assert!(
        events > 0 && events == peer_events,
        "{events} {peer_events}"
    );
}

#[test]
fn pilot_check_with_its_pilot_vented_is_a_one_way_check_orifice() {
    let head = vented_pilot("pc");
    let one = format!(
        "{head}[[pilot_check]]\nname = \"pc\"\nfrom = \"A\"\nto = \"B\"\npilot = \"atm\"\n\
         pilot_ratio = 3.0\ncracking_pressure = 2e4\nfull_flow_pressure = 8e4\n\
         sonic_conductance = 5e-8\ncritical_pressure_ratio = 0.3\n"
    );
    let two = format!(
        "{head}[[orifice]]\nname = \"pc\"\nfrom = \"A\"\nto = \"B\"\nsonic_conductance = 5e-8\n\
         critical_pressure_ratio = 0.3\none_way = true\ncracking_pressure = 2e4\n\
         full_flow_pressure = 8e4\n"
    );
    let (worst, events, peer_events) = compare(&one, &two, 0.3, &["A.p", "B.p"]);
    let mut sim = sim_of(&one);
    sim.advance_to(0.3).expect("runs");
    let (pa, pb) = (output(&mut sim, "A.p"), output(&mut sim, "B.p"));
    println!(
        "pilot vented: against a one-way check orifice, largest relative difference \
         {worst:.1e}, events {events} / {peer_events}; at 0.3 s p_A − p_B = {:.1} Pa \
         (cracking 2e4)",
        pa - pb
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

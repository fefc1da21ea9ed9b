//! Valves rated by a catalogue curve (`flow_table`, `src/components/flow_table.rs`) instead of
//! C and b: a regulator whose curve is sampled from the ISO 6358 law of its C, b is that
//! regulator within the curve's interpolation error, in its law and in its held pressure; wide
//! open it is the orifice of the same curve to round-off, and relieving through the curve's
//! choked run it vents to the closed-form pressure. A directional valve with a curve is four
//! orifices with it (`pneumatics.rs`, extended); the curve's rows are located as events (a
//! loose explicit run against a tight BDF reference), and Model Exchange reports only the row
//! events that can fire.

use plenum::components::flow_table::FlowTable;
use plenum::components::orifice::{ISO_RHO0_KG_PER_M3, ISO_T0_K, iso6358_mass_flow_kg_per_s};

use crate::common::valves::{IsoCurve, flow_table_keys};
use crate::common::{output, sim_of};

/// The regulator's ISO rating: C, m³/(s·Pa), and b.
const C: f64 = 1e-8;
const B: f64 = 0.3;
/// The curve's rated inlet pressure (ISO 6358's nominal 6 bar gauge), Pa; T_ref is T₀.
const P_REF: f64 = 7e5;
const LAW: IsoCurve = IsoCurve::new(C, B, P_REF);
/// The regulator's supply, set point (absolute) and regulation range, Pa.
const P_SUPPLY: f64 = 10e5;
const SET_PA: f64 = 5e5;
const RANGE_PA: f64 = 0.5e5;

/// Supply at 10 bar (T₀), an outlet chamber of 0.1 L at 1 bar behind a regulator set to 4 bar
/// gauge over 1 bar, range 0.5 bar, rated by `rating`, and `extra` (a draw or a feed).
fn regulator_model(rating: &str, exhaust: &str, set: &str, extra: &str) -> String {
    format!(
        r#"
[model]
name = "regulator_table"
[gas]
species = "air"
[solver]
method = "auto"
t_end = 30.0
rtol = 1e-11
atol = 1e-16
[[chamber]]
name = "out"
volume = "0.1 L"
pressure = 1e5
temperature = {ISO_T0_K}
[[reservoir]]
name = "supply"
pressure = {P_SUPPLY:e}
temperature = {ISO_T0_K}
[[reservoir]]
name = "atm"
pressure = 1e5
temperature = {ISO_T0_K}
[[regulator]]
name = "reg"
from = "supply"
to = "out"
{exhaust}
set_pressure = {set}
ambient_pressure = 1e5
regulation_range = {RANGE_PA:e}
{rating}
{extra}
"#
    )
}

/// A regulator rated by a 42-row curve sampled from its ISO law (C = 1e-8 m³/(s·Pa), b = 0.3,
/// at 7 bar) fills its outlet from 1 bar and holds it against a draw of 1 g/s, the main seat
/// subsonic (p_o/p_s ≈ 0.5). The law in the run: at every 0.1 s its inlet flow is the opening
/// times the ISO flow within the opening times the piece's bound, scaled by p_s/p_ref. The held
/// pressure: steady, G(p_o) = x(p_o)·F(p_o) = ṁ for either law; the laws' G differ by at most
/// x·ε (ε the piece's bound, scaled) and G falls in p_o at least as fast as F/Δp_r (F falls
/// with p_o too), so the two held pressures differ by at most x·ε·Δp_r/F = Δp_r·ṁ·ε/F².
#[test]
fn a_regulator_rated_by_a_sampled_curve_is_its_iso_law_within_the_interpolation_error() {
    let rows = LAW.rows(38);
    let draw = 1e-3;
    let extra =
        format!("[[mass_flow]]\nname = \"draw\"\nfrom = \"out\"\nto = \"atm\"\nrate = {draw}\n");
    let iso_rating = format!("sonic_conductance = {C:e}\ncritical_pressure_ratio = {B}\n");
    let (mut tab, mut iso) = (
        sim_of(&regulator_model(
            &flow_table_keys(&rows, P_REF),
            "",
            "\"4 bar\"",
            &extra,
        )),
        sim_of(&regulator_model(&iso_rating, "", "\"4 bar\"", &extra)),
    );
    let scale = P_SUPPLY / P_REF;
    let mut worst = (0.0f64, 0.0f64, 0.0f64);
    for k in 1..=300 {
        let t = 0.1 * k as f64;
        tab.advance_to(t).expect("table run");
        iso.advance_to(t).expect("ISO run");
        let (p_o, x, mdot) = (
            output(&mut tab, "out.p"),
            output(&mut tab, "reg.open_fraction"),
            output(&mut tab, "reg.mdot"),
        );
        let r = p_o / P_SUPPLY;
        let want = x * iso6358_mass_flow_kg_per_s(C, B, P_SUPPLY, ISO_T0_K, p_o);
        let bound = x * LAW.piece_bound(&rows, r) * scale + 1e-13 * want.abs();
        let err = (mdot - want).abs();
        assert!(
            err <= bound,
            "t = {t}: |ṁ − x·ṁ_ISO| {err:e} above {bound:e}"
        );
        if err > worst.0 {
            worst = (err, bound, r);
        }
    }
    println!(
        "law along the run: largest |ṁ_table − x·ṁ_ISO| {:.3e} kg/s at r = {:.4} (its bound \
         {:.3e}); events {} (table) and {} (ISO)",
        worst.0, worst.2, worst.1, tab.stats.events, iso.stats.events
    );
    // Every row the outlet crossed (r from 0.1 to about 0.49) was located.
    let crossed = rows.iter().filter(|x| x[0] > 0.1 && x[0] < 0.49).count();
    assert!(
        tab.stats.events as usize >= crossed,
        "{crossed} rows crossed"
    );

    let (p_tab, p_iso) = (output(&mut tab, "out.p"), output(&mut iso, "out.p"));
    let (m_tab, m_iso) = (output(&mut tab, "reg.mdot"), output(&mut iso, "reg.mdot"));
    // F at the higher of the two held pressures is the smaller (F falls with p_o).
    let f_min = iso6358_mass_flow_kg_per_s(C, B, P_SUPPLY, ISO_T0_K, p_tab.max(p_iso));
    let eps = LAW.piece_bound(&rows, p_tab.max(p_iso) / P_SUPPLY) * scale;
    let allowed = RANGE_PA * draw * eps / (f_min * f_min) + 1e-9 * SET_PA;
    let dp = (p_tab - p_iso).abs();
    println!(
        "held: {p_tab:.9e} Pa (table), {p_iso:.9e} Pa (ISO), |Δp| {dp:.3e} Pa (bound \
         {allowed:.3e}); inlet flows {m_tab:.9e} and {m_iso:.9e} kg/s (draw {draw:e})"
    );
    assert!((m_tab / draw - 1.0).abs() < 1e-8 && (m_iso / draw - 1.0).abs() < 1e-8);
    assert!(dp <= allowed, "{dp:e} above {allowed:e}");
}

/// Wide open (its set point far above the supply) the regulator rated by a curve is the
/// orifice of that curve: filling the outlet from 1 bar towards 10 bar crosses every row, and
/// the two runs take the same steps and agree to round-off.
#[test]
fn an_open_regulator_rated_by_a_curve_is_the_orifice_of_that_curve() {
    // A coarse curve: its rows are few and far apart, each crossing a visible kink.
    let rows = [
        [0.0, 2.4e-3],
        [0.35, 2.4e-3],
        [0.6, 2.0e-3],
        [0.8, 1.4e-3],
        [0.95, 0.5e-3],
        [1.0, 0.0],
    ];
    let keys = flow_table_keys(&rows, P_REF);
    let regulator = regulator_model(&keys, "", "\"100 bar\"", "");
    let orifice = regulator.replace(
        "set_pressure = \"100 bar\"\nambient_pressure = 1e5\nregulation_range = 5e4\n",
        "",
    );
    let orifice = orifice.replace("[[regulator]]", "[[orifice]]");
    assert!(!orifice.contains("set_pressure"), "{orifice}");
    let (mut a, mut b) = (sim_of(&regulator), sim_of(&orifice));
    let mut worst: f64 = 0.0;
    for k in 1..=100 {
        let t = 1e-2 * k as f64;
        a.advance_to(t).expect("regulator run");
        b.advance_to(t).expect("orifice run");
        let (pa, pb) = (output(&mut a, "out.p"), output(&mut b, "out.p"));
        let (ma, mb) = (output(&mut a, "reg.mdot"), output(&mut b, "reg.mdot"));
        worst = worst
            .max((pa / pb - 1.0).abs())
            .max((ma - mb).abs() / 2.4e-3);
        if k % 20 == 0 {
            println!("t = {t:.3} s: regulator p = {pa:.12e}, orifice p = {pb:.12e}, ṁ {ma:.6e}");
        }
    }
    let p_end = output(&mut a, "out.p");
    println!(
        "outlet at 1 s {p_end:.6e} Pa (ratio {:.4}); largest relative difference {worst:.1e}; \
         events {} and {}",
        p_end / P_SUPPLY,
        a.stats.events,
        b.stats.events
    );
    // Past the last interior row: every row was crossed.
    assert!(p_end / P_SUPPLY > 0.95, "{p_end}");
    assert!(worst < 1e-12, "{worst:e}");
}

/// A relieving regulator rated by the sampled curve, fed ṁ into its outlet, vents it through
/// its relief seat, choked (p_atm/p_o ≈ 0.2, below b, on the curve's flat first piece, which is
/// the ISO law exactly): (p_o − p_set)/Δp_r·F₀·(p_o/p_ref) = ṁ (T_o = T₀), F₀ = C·p_ref·ρ₀, so
/// p_o = (p_set + sqrt(p_set² + 4·ṁ·Δp_r/(C·ρ₀)))/2, with the main seat shut.
#[test]
fn a_relieving_regulator_rated_by_a_curve_vents_to_the_closed_form_pressure() {
    let feed = 2e-3;
    let extra =
        format!("[[mass_flow]]\nname = \"feed\"\nfrom = \"supply\"\nto = \"out\"\nrate = {feed}\n");
    let rows = LAW.rows(38);
    let mut sim = sim_of(&regulator_model(
        &flow_table_keys(&rows, P_REF),
        "exhaust = \"atm\"",
        "\"4 bar\"",
        &extra,
    ));
    sim.advance_to(30.0).expect("runs");
    let p = output(&mut sim, "out.p");
    let (main, relief) = (
        output(&mut sim, "reg.mdot"),
        output(&mut sim, "reg.relief_mdot"),
    );
    let k = feed * RANGE_PA / (C * ISO_RHO0_KG_PER_M3);
    let exact = 0.5 * (SET_PA + (SET_PA * SET_PA + 4.0 * k).sqrt());
    let rel = (p / exact - 1.0).abs();
    println!(
        "relief: p_out = {p:.9e} Pa (closed form {exact:.9e}, rel. {rel:.1e}), ṁ_relief = \
         {relief:.9e} (fed {feed:e}), ṁ_in = {main:e}, p_atm/p_out = {:.3}",
        1e5 / p
    );
    assert!(1e5 / p < B, "choked");
    assert_eq!(main, 0.0);
    assert!(rel < 1e-9, "{rel:e}");
    assert!((relief / feed - 1.0).abs() < 1e-9);
}

/// A cylinder's sides A and B (0.1 L each) behind a 5/2 valve rated by a curve (as
/// `pneumatics.rs`'s 5/2 circuit), switched at 20 ms over 10 ms and back at 60 ms: every
/// path's pressure ratio sweeps its range, crossing the curve's rows, each an event. An
/// explicit run (dopri5, rtol 1e-6) against a BDF reference (rtol 1e-11): the rows located, the
/// loose run's pressures are within a few of its rtol of the reference.
#[test]
fn a_valve_curves_rows_are_located_by_a_loose_explicit_run() {
    let circuit = |method: &str, rtol: f64| {
        format!(
            r#"
[model]
name = "valve_table"
[gas]
species = "air"
[solver]
method = "{method}"
t_end = 0.1
rtol = {rtol:e}
atol = 1e-16
[[chamber]]
name = "A"
volume = "0.1 L"
pressure = "1 bar"
temperature = 293.15
[[chamber]]
name = "B"
volume = "0.1 L"
pressure = "7 bar"
temperature = 293.15
[[reservoir]]
name = "P"
pressure = "7 bar"
temperature = 293.15
[[reservoir]]
name = "EA"
pressure = "1 bar"
temperature = 293.15
[[reservoir]]
name = "EB"
pressure = "1 bar"
temperature = 293.15
[[directional_valve]]
name = "v"
p = "P"
a = "A"
b = "B"
ea = "EA"
eb = "EB"
position = {{ table = [[0.0, 0.0], [0.02, 0.0], [0.03, 1.0], [0.06, 1.0], [0.07, 0.0], [0.1, 0.0]] }}
flow_table = [[0, "1500 Nl/min"], [0.3, "1500 Nl/min"], [0.55, "1350 Nl/min"], [0.75, "1050 Nl/min"], [0.9, "650 Nl/min"], [0.97, "275 Nl/min"], [1, 0]]
flow_table_inlet_pressure = "7 bar"
"#
        )
    };
    let (mut loose, mut reference) = (
        sim_of(&circuit("dopri5", 1e-6)),
        sim_of(&circuit("bdf", 1e-11)),
    );
    let mut worst = (0.0f64, 0.0f64, "");
    for k in 1..=50 {
        let t = 2e-3 * k as f64;
        loose.advance_to(t).expect("dopri5 run");
        reference.advance_to(t).expect("bdf run");
        for node in ["A.p", "B.p"] {
            let (a, b) = (output(&mut loose, node), output(&mut reference, node));
            let rel = (a / b - 1.0).abs();
            if rel > worst.0 {
                worst = (rel, t, node);
            }
        }
    }
    println!(
        "dopri5 rtol 1e-6 against bdf rtol 1e-11: largest relative error {:.3e} ({} at t = \
         {:.3} s, {:.1} rtol); events {} (dopri5) and {} (bdf); steps {} and {}",
        worst.0,
        worst.2,
        worst.1,
        worst.0 / 1e-6,
        loose.stats.events,
        reference.stats.events,
        loose.stats.steps,
        reference.stats.steps
    );
    // A's p–a ratio rises from 1/7 past every row, its a–ea ratio later: at least the five
    // interior rows each way.
    assert!(loose.stats.events >= 10, "{}", loose.stats.events);
    assert!(worst.0 < 5e-6, "{:e}", worst.0);
}

/// Model Exchange reports a curve's row events only where they can fire: a 2/2 valve (one
/// path of its four) with one interior row (parity 2, 4, …) reports 2 of its 16 event slots
/// (h and −h of that row's function on p–a); with two rows, 4. A non-relieving regulator with a
/// curve of both parities reports its flow path's 4 and its 6 opening events, not its relief
/// path's 4. A flow control reports its check's 4 and ratio kinks' 4 as before curves, and a
/// throttle curve with one row adds that row's 2.
#[test]
fn model_exchange_reports_only_the_row_events_that_can_fire() {
    let valve = |table: &str| {
        format!(
            "[model]\nname = \"v\"\n[gas]\nspecies = \"air\"\n[solver]\nt_end = 0.1\n\
             [[chamber]]\nname = \"A\"\nvolume = \"0.1 L\"\npressure = 1e5\ntemperature = 293.15\n\
             [[reservoir]]\nname = \"P\"\npressure = 7e5\ntemperature = 293.15\n\
             [[directional_valve]]\nname = \"v\"\np = \"P\"\na = \"A\"\nposition = 1.0\n\
             flow_table = {table}\nflow_table_inlet_pressure = 7e5\n"
        )
    };
    let counts = |src: &str| {
        let sim = sim_of(src);
        (sim.network.n_reported_events(), sim.network.n_events())
    };
    let one = counts(&valve("[[0, 1e-2], [0.5, 5e-3], [1, 0]]"));
    let two = counts(&valve("[[0, 1e-2], [0.5, 5e-3], [0.8, 2e-3], [1, 0]]"));
    let reg = counts(&regulator_model(
        &flow_table_keys(&LAW.rows(4), P_REF),
        "",
        "\"4 bar\"",
        "",
    ));
    let flow_control = |throttle: &str| {
        counts(&format!(
            "[model]\nname = \"f\"\n[gas]\nspecies = \"air\"\n[solver]\nt_end = 0.1\n\
             [[chamber]]\nname = \"A\"\nvolume = \"0.1 L\"\npressure = 1e5\n\
             temperature = 293.15\n[[reservoir]]\nname = \"P\"\npressure = 7e5\n\
             temperature = 293.15\n[[flow_control]]\nname = \"f\"\nfrom = \"P\"\nto = \"A\"\n\
             critical_pressure_ratio = 0.3\ncheck_sonic_conductance = 6e-9\n\
             full_flow_pressure = 6e4\n{throttle}"
        ))
    };
    let fc_iso = flow_control("sonic_conductance = 2e-9\n");
    let fc_curve = flow_control(
        "flow_table = [[0, 1e-3], [0.5, 5e-4], [1, 0]]\nflow_table_inlet_pressure = 7e5\n",
    );
    println!(
        "reported of all events: 2/2 with one row {one:?}, two rows {two:?}; regulator {reg:?}; \
         flow control {fc_iso:?} (C), {fc_curve:?} (one row)"
    );
    assert_eq!(fc_iso, (8, 12));
    assert_eq!(fc_curve, (10, 12));
    assert_eq!(one, (2, 16));
    assert_eq!(two, (4, 16));
    assert_eq!(reg, (10, 14));
    // The table's function is the orifice's: its rows' values match FlowTable's h_q.
    let t = FlowTable::new(&[[0.0, 1e-2], [0.5, 5e-3], [1.0, 0.0]], 7e5, ISO_T0_K);
    assert_eq!(t.breakpoints_of_parity(0), 0);
    assert_eq!(t.breakpoints_of_parity(1), 1);
}

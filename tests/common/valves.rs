//! What the valve and flow-curve verification tests share (`logic_valves.rs`,
//! `logic_valve_tables.rs`, `valve_flow_tables.rs`, `flow_tables.rs`, `lagged_valve.rs`): model
//! text pieces, the comparison of a component's run with its peer formulation's, and a
//! catalogue curve sampled from the ISO 6358 law with the interpolation error bound it has.

use plenum::components::orifice::{
    ISO_LAMINAR_RATIO, ISO_RHO0_KG_PER_M3, ISO_T0_K, iso6358_mass_flow_kg_per_s,
};

use plenum::simulation::Simulation;

use super::{output, sim_of};

pub const GAS: &str = "[gas]\nspecies = \"air\"\n";

/// The method of the comparisons: adaptive, so that a switch (or a curve's row) one run
/// locates and the other steps over parts their step sequences (and their results, by about
/// rtol); a fixed RK4 step of 1e-5 s is too accurate to show it.
pub const ADAPTIVE: &str = "method = \"auto\"\nrtol = 1e-6\natol = 1e-9\n";

/// A `[[chamber]]` of `litres` at `bar` and 293.15 K.
pub fn chamber(name: &str, litres: f64, bar: f64) -> String {
    format!(
        "[[chamber]]\nname = \"{name}\"\nvolume = \"{litres} L\"\npressure = \"{bar} bar\"\n\
         temperature = 293.15\n"
    )
}

/// The largest relative difference of `names` between two runs at 20 outputs to `t_end`, and
/// the events each run handled.
pub fn compare(a: &str, b: &str, t_end: f64, names: &[&str]) -> (f64, u64, u64) {
    let (mut x, mut y) = (sim_of(a), sim_of(b));
    let mut worst: f64 = 0.0;
    for k in 1..=20 {
        let t = t_end * k as f64 / 20.0;
        x.advance_to(t).expect("runs");
        y.advance_to(t).expect("runs");
        for n in names {
            let (u, v) = (output(&mut x, n), output(&mut y, n));
            worst = worst.max((u / v - 1.0).abs());
        }
    }
    (worst, x.stats.events, y.stats.events)
}

/// Rows `[r, flow]` as a model file's `flow_table`, rated at `p_ref` (T_ref: absent, T₀).
pub fn flow_table_keys(rows: &[[f64; 2]], p_ref: f64) -> String {
    let cells: Vec<String> = rows
        .iter()
        .map(|[r, f]| format!("[{r:?}, {f:?}]"))
        .collect();
    format!(
        "flow_table = [{}]\nflow_table_inlet_pressure = {p_ref:e}\n",
        cells.join(", ")
    )
}

/// The ISO 6358 law of (C, b) as a catalogue curve rated at `p_ref` and T₀.
#[derive(Clone, Copy, Debug)]
pub struct IsoCurve {
    /// C, m³/(s·Pa).
    pub c: f64,
    pub b: f64,
    /// The curve's rated inlet pressure, Pa.
    pub p_ref: f64,
}

impl IsoCurve {
    pub const fn new(c: f64, b: f64, p_ref: f64) -> Self {
        IsoCurve { c, b, p_ref }
    }

    /// The ratios sampled for the curve: 0, b, then `m − 1` points between b and the laminar
    /// ratio, uniform in θ with s = (r − b)/(1 − b) = sin θ (denser towards it, where the
    /// curvature grows), the laminar ratio and 1. The law is flat below b and linear in Δp
    /// above the laminar ratio, so the curve is exact on those pieces.
    pub fn ratios(&self, m: usize) -> Vec<f64> {
        let b = self.b;
        let s_lam = (ISO_LAMINAR_RATIO - b) / (1.0 - b);
        let mut r = vec![0.0, b];
        for i in 1..m {
            let theta = s_lam.asin() * i as f64 / m as f64;
            r.push(b + theta.sin() * (1.0 - b));
        }
        r.extend([ISO_LAMINAR_RATIO, 1.0]);
        r
    }

    /// The law's flow at ratio `r` at the rated state, kg/s (0 at r = 1).
    pub fn flow(&self, r: f64) -> f64 {
        if r == 1.0 {
            0.0
        } else {
            iso6358_mass_flow_kg_per_s(self.c, self.b, self.p_ref, ISO_T0_K, r * self.p_ref)
        }
    }

    /// The curve's rows `[r, F(r)]` at [`Self::ratios`].
    pub fn rows(&self, m: usize) -> Vec<[f64; 2]> {
        self.ratios(m)
            .into_iter()
            .map(|r| [r, self.flow(r)])
            .collect()
    }

    /// The linear interpolation error bound of a piece [r0, r1] at the rated state,
    /// max|F''|·h²/8, with F = K·sqrt(1 − s²) concave and |F''| = K/((1 − b)²·(1 − s²)^{3/2})
    /// largest at the piece's right end; 0 on the flat and the laminar pieces, where F is
    /// linear.
    pub fn bound(&self, r0: f64, r1: f64) -> f64 {
        let b = self.b;
        if r1 <= b || r0 >= ISO_LAMINAR_RATIO - 1e-15 {
            return 0.0;
        }
        let s = (r1 - b) / (1.0 - b);
        let f2 = self.c * ISO_RHO0_KG_PER_M3 * self.p_ref
            / ((1.0 - b).powi(2) * (1.0 - s * s).powf(1.5));
        f2 * (r1 - r0).powi(2) / 8.0
    }

    /// [`Self::bound`] of the piece of `rows` that holds `r`.
    pub fn piece_bound(&self, rows: &[[f64; 2]], r: f64) -> f64 {
        let n = rows.len();
        let k = rows[1..n - 1].partition_point(|x| x[0] <= r);
        self.bound(rows[k][0], rows[k + 1][0])
    }
}

/// The head of a model `name` run adaptively to `t_end`, with `nodes`.
fn adaptive_head(name: &str, t_end: f64, nodes: &str) -> String {
    format!("[model]\nname = \"{name}\"\n{GAS}[solver]\n{ADAPTIVE}t_end = {t_end}\n{nodes}")
}

/// The logic valves' circuit (a shuttle or two-pressure valve to add): X at 6 bar and Y at
/// 4 bar (1 L each) feed O (0.1 L, from 1 bar).
pub fn two_inlets(name: &str, t_end: f64) -> String {
    let nodes = format!(
        "{}{}{}",
        chamber("X", 1.0, 6.0),
        chamber("Y", 1.0, 4.0),
        chamber("O", 0.1, 1.0)
    );
    adaptive_head(name, t_end, &nodes)
}

/// An opening that steps from `a` to `b` at `t_switch`.
pub fn step(t_switch: f64, a: f64, b: f64) -> String {
    format!("{{ table = [[0.0, {a}], [{t_switch}, {b}]], interpolation = \"step\" }}")
}

/// The quick-exhaust circuit (a valve `P` → `A` → `R` to add): the supply `P` at 6 bar until
/// `t_switch`, then atmospheric; a cylinder chamber `A` of `litres` from 1 bar; the exhaust
/// `R` atmospheric.
pub fn supply_switched_off(name: &str, t_end: f64, t_switch: f64, litres: f64) -> String {
    let nodes = format!(
        "[[reservoir]]\nname = \"P\"\npressure = {{ table = [[0.0, 6e5], [{t_switch}, 101325.0]], \
         interpolation = \"step\" }}\ntemperature = 293.15\n\
         [[reservoir]]\nname = \"R\"\npressure = 101325.0\ntemperature = 293.15\n{}",
        chamber("A", litres, 1.0)
    );
    adaptive_head(name, t_end, &nodes)
}

/// The pilot-operated check valve's held cylinder (a valve `line` → `cyl` piloted by `X` to
/// add): `cyl` (0.5 L) at 6 bar, its line vented, the pilot `X` raised to 6 bar gauge at 50 ms.
pub fn held_cylinder(name: &str, t_end: f64, valve: &str) -> String {
    let nodes = format!(
        "{}[[reservoir]]\nname = \"line\"\npressure = 101325.0\ntemperature = 293.15\n\
         [[reservoir]]\nname = \"X\"\npressure = {{ table = [[0.0, 101325.0], [0.05, 701325.0]], \
         interpolation = \"step\" }}\ntemperature = 293.15\n{valve}",
        chamber("cyl", 0.5, 6.0)
    );
    adaptive_head(name, t_end, &nodes)
}

/// The pilot-operated check valve with its pilot vented (a valve `A` → `B` piloted by `atm` to
/// add): `A` at 6 bar into `B` at 1 bar (0.2 L each), to 0.3 s.
pub fn vented_pilot(name: &str) -> String {
    let nodes = format!(
        "{}{}[[reservoir]]\nname = \"atm\"\npressure = 101325.0\ntemperature = 293.15\n",
        chamber("A", 0.2, 6.0),
        chamber("B", 0.2, 1.0)
    );
    adaptive_head(name, 0.3, &nodes)
}

/// Samples of a run whose supply `P` steps from 6 bar to the atmosphere at `t_switch`, every
/// 1 ms for `steps` ms: A's largest pressure, and the smallest |p_P − p_A| (the disc stays
/// out of its band while it is above half the band).
pub fn fill_then_vent(sim: &mut Simulation, steps: usize, t_switch: f64) -> (f64, f64) {
    let (mut peak, mut low): (f64, f64) = (0.0, f64::INFINITY);
    for k in 1..=steps {
        let t = 1e-3 * k as f64;
        sim.advance_to(t).expect("runs");
        let pp = if t < t_switch { 6e5 } else { 101_325.0 };
        let pa = output(sim, "A.p");
        low = low.min((pp - pa).abs());
        peak = peak.max(pa);
    }
    (peak, low)
}

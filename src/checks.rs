//! Run-time consistency checks, evaluated after every step with BlasterSim's return codes
//! (BlasterSim verification §3.1.1, `check_sys` in cva.f90). 0 means fine.
//!
//! 1 never exited before `max_time` · 2 negative mass · 3 negative temperature ·
//! 4 mass drift · 5 energy drift · 6/7 gradients of mass/energy (runs with sensitivities only:
//! see [`crate::sensitivity`]) ·
//! 8 pressure above the gas's critical pressure · 9 piston volumes desynchronized ·
//! 10 a state no physics allows (a chamber's volume ≤ 0, a non-finite value) · 11 an explicit
//! method past its stability limit (see [`crate::integrators::stability`]).
//!
//! Codes 2, 3 and 10 refuse a step ([`Checks::hard_failure`]): the state stays at the last good
//! time. 4–9 and 11 are warnings.

use serde::{Deserialize, Serialize};

use crate::components::chamber;
use crate::network::{Network, SensitivityParameter};

/// The thresholds of checks 4 to 7 and 9 (built from a model's `[checks]` section).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Thresholds {
    /// Check 4: |m_total − m_total,0| / m_total,0.
    pub mass_drift: f64,
    /// Check 5: |E_total − E_total,0| / |E_total,0|.
    pub energy_drift: f64,
    /// Check 9: piston-coordinate desynchronization, m (multiplied by the piston area).
    pub piston_desync: f64,
    /// Check 6 (sensitivity runs): |d m_total/dp − its initial value|·|p| / m_total,0.
    pub mass_gradient_drift: f64,
    /// Check 7 (sensitivity runs): |d E_total/dp − its initial value|·|p| / |E_total,0|.
    pub energy_gradient_drift: f64,
}

pub const NEVER_EXITED: u8 = 1;
pub const NEGATIVE_MASS: u8 = 2;
pub const NEGATIVE_TEMPERATURE: u8 = 3;
pub const MASS_DRIFT: u8 = 4;
pub const ENERGY_DRIFT: u8 = 5;
pub const MASS_GRADIENT_DRIFT: u8 = 6;
pub const ENERGY_GRADIENT_DRIFT: u8 = 7;
pub const ABOVE_CRITICAL_PRESSURE: u8 = 8;
pub const PISTON_DESYNC: u8 = 9;
pub const IMPOSSIBLE_STATE: u8 = 10;
pub const BEYOND_STABILITY: u8 = 11;
/// Number of codes (0..CODES): the length of the tables of first firings.
pub const CODES: usize = 12;

/// What each code means, for messages and the FMU log.
pub fn describe(code: u8) -> &'static str {
    match code {
        0 => "fine",
        NEVER_EXITED => "no projectile exited before max_time",
        NEGATIVE_MASS => "a chamber's mass became zero or negative",
        NEGATIVE_TEMPERATURE => "a chamber's temperature became negative",
        MASS_DRIFT => "total mass drifted beyond the threshold",
        ENERGY_DRIFT => "total energy drifted beyond the threshold",
        MASS_GRADIENT_DRIFT => "gradient of the total mass is not conserved",
        ENERGY_GRADIENT_DRIFT => "gradient of the total energy is not conserved",
        ABOVE_CRITICAL_PRESSURE => {
            "a pressure exceeds the gas's critical pressure (ideal gas inaccurate)"
        }
        PISTON_DESYNC => "piston coordinates and chamber volumes desynchronized",
        IMPOSSIBLE_STATE => {
            "a state no physics allows: a chamber's volume reached 0 or below (a piston driven \
             through the bottom of its bore) or a state value is not finite"
        }
        BEYOND_STABILITY => {
            "the explicit method's step is past its stability limit for the current Jacobian \
             (choose a smaller step or an implicit method)"
        }
        _ => "unknown check",
    }
}

/// Checks 6 and 7 for one sensitivity parameter: |p| and the initial d m_total/dp,
/// d E_total/dp, which stay constant in exact arithmetic like the totals themselves.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GradientReference {
    pub value_abs: f64,
    pub dmass0: f64,
    pub denergy0: f64,
}

/// `Network::mass_total_kg` and `energy_total_j` in one pass over the chambers, inlined: the
/// same sums in the same order (from −0.0, as `Iterator::sum` of f64), so the same bits
/// (test `totals_are_the_networks_bit_for_bit`). After every step, where the energy total's
/// call and a second pass were a third of the checks.
#[inline(always)]
fn totals(net: &Network, y: &[f64]) -> (f64, f64) {
    let (m, e, _) = totals_and_flags(net, y);
    (m, e)
}

/// A chamber's mass not > 0 (NaN included).
const BAD_MASS: u8 = 1;
/// A chamber's internal energy not ≥ 0 (temperature below 0, or NaN).
const BAD_ENERGY: u8 = 2;
/// A chamber's volume not > 0 (NaN included).
const BAD_VOLUME: u8 = 4;

/// [`totals`] and, from the same pass over the chambers, which of a chamber's states no
/// physics allows (`BAD_*` bits). The comparisons are written so that NaN fails them.
#[inline(always)]
fn totals_and_flags(net: &Network, y: &[f64]) -> (f64, f64, u8) {
    let (mut gas, mut u) = (-0.0, -0.0);
    // The bits of the bounds every chamber meets; a NaN meets none.
    let mut fine = BAD_MASS | BAD_ENERGY | BAD_VOLUME;
    for c in y[..net.chambers().len() * chamber::STATES].chunks_exact(chamber::STATES) {
        let (m, e, v) = (c[chamber::MASS], c[chamber::ENERGY], c[chamber::VOLUME]);
        gas += m;
        u += e;
        fine &= (u8::from(m > 0.0) * BAD_MASS)
            | (u8::from(e >= 0.0) * BAD_ENERGY)
            | (u8::from(v > 0.0) * BAD_VOLUME);
    }
    let flags = (BAD_MASS | BAD_ENERGY | BAD_VOLUME) & !fine;
    let acc = net.layout.accumulator_offset;
    // The kinds' stored mechanical energy (piston kinetic and spring energy), as
    // `Network::energy_total_j` sums it.
    let mech = net.stored_energy_j(y);
    (gas + y[acc], u + mech + y[acc + 1], flags)
}

/// Reference values and thresholds, fixed at initialization.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Checks {
    pub thresholds: Thresholds,
    pub mass0_kg: f64,
    pub energy0_j: f64,
    /// One per sensitivity parameter (empty without sensitivities).
    #[serde(default)]
    pub gradients0: Vec<GradientReference>,
    /// Largest dimensionless drifts of checks 6 and 7 seen so far, |Δ(dM/dp)|·|p|/M₀ and
    /// |Δ(dE/dp)|·|p|/|E₀| (observation only).
    #[serde(skip)]
    pub max_gradient_drift: [f64; 2],
}

impl Checks {
    /// `y0` is the initial state followed by one sensitivity vector per entry of `params`.
    pub fn new(
        thresholds: Thresholds,
        net: &Network,
        y0: &[f64],
        params: &[SensitivityParameter],
        t0_s: f64,
    ) -> Self {
        let n = net.layout.n_states;
        let gradients0 = params
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let (dmass0, denergy0) =
                    net.totals_sensitivity(&y0[..n], &y0[(i + 1) * n..(i + 2) * n], p);
                GradientReference {
                    value_abs: net.sensitivity_parameter_value(p, t0_s).abs(),
                    dmass0,
                    denergy0,
                }
            })
            .collect();
        Checks {
            thresholds,
            mass0_kg: net.mass_total_kg(y0),
            energy0_j: net.energy_total_j(y0),
            gradients0,
            max_gradient_drift: [0.0; 2],
        }
    }

    /// Checks 6 and 7 (BlasterSim's gradient checks): the largest dimensionless drifts of
    /// d m_total/dp and d E_total/dp over the parameters, (mass, energy).
    pub fn gradient_drifts(
        &self,
        net: &Network,
        y: &[f64],
        params: &[SensitivityParameter],
    ) -> (f64, f64) {
        let n = net.layout.n_states;
        let (mut rm, mut re) = (0.0f64, 0.0f64);
        for (i, (p, g)) in params.iter().zip(&self.gradients0).enumerate() {
            let (dm, de) = net.totals_sensitivity(&y[..n], &y[(i + 1) * n..(i + 2) * n], p);
            if self.mass0_kg > 0.0 {
                rm = rm.max((dm - g.dmass0).abs() * g.value_abs / self.mass0_kg);
            }
            if self.energy0_j != 0.0 {
                re = re.max((de - g.denergy0).abs() * g.value_abs / self.energy0_j.abs());
            }
        }
        (rm, re)
    }

    /// Codes 2, 3 and 10: a candidate state that must not be accepted, else its totals
    /// (m_total, E_total) for [`Self::warnings_with`] once it is. One pass over the chambers:
    /// a mass ≤ 0 is code 2, an internal energy < 0 (a temperature below 0) code 3, a volume
    /// ≤ 0 or a non-finite total (every chamber's m and U, every piston's position and
    /// velocity through its energies, the accumulators) code 10, which takes precedence: a
    /// NaN is no negative mass.
    #[inline]
    pub fn hard_failure(net: &Network, y: &[f64]) -> Result<(f64, f64), u8> {
        let (m, e, flags) = totals_and_flags(net, y);
        if flags & BAD_VOLUME != 0 || !(m.is_finite() && e.is_finite()) {
            Err(IMPOSSIBLE_STATE)
        } else if flags & BAD_MASS != 0 {
            Err(NEGATIVE_MASS)
        } else if flags & BAD_ENERGY != 0 {
            Err(NEGATIVE_TEMPERATURE)
        } else {
            Ok((m, e))
        }
    }

    /// Where `y` fails [`Self::hard_failure`]: the first chamber whose mass, energy or volume
    /// is out of bounds, with the three values, or the first non-finite state (for messages;
    /// not on the step path).
    pub fn describe_failure(net: &Network, y: &[f64]) -> String {
        for (i, c) in net.chambers().iter().enumerate() {
            let o = i * chamber::STATES;
            let (m, e, v) = (
                y[o + chamber::MASS],
                y[o + chamber::ENERGY],
                y[o + chamber::VOLUME],
            );
            if !(m > 0.0 && e >= 0.0 && v > 0.0) {
                return format!(
                    "chamber `{}`: m = {m:e} kg, U = {e:e} J, V = {v:e} m^3",
                    c.name
                );
            }
        }
        match y[..net.layout.n_states].iter().position(|x| !x.is_finite()) {
            Some(k) => format!("state {k} is {}", y[k]),
            None => "the energy of a piston is not finite".to_string(),
        }
    }

    /// Codes 4–9 on an accepted state (6 and 7 only with sensitivity parameters, whose
    /// sensitivities follow the states in `y`): the smallest code that fires, or 0.
    pub fn warnings(&mut self, net: &Network, y: &[f64], params: &[SensitivityParameter]) -> u8 {
        let totals = totals(net, y);
        self.warnings_with(net, y, params, totals)
    }

    /// [`Self::warnings`] with the totals of `y` already known (from [`Self::hard_failure`] on
    /// the same state).
    #[inline]
    pub fn warnings_with(
        &mut self,
        net: &Network,
        y: &[f64],
        params: &[SensitivityParameter],
        (m, e): (f64, f64),
    ) -> u8 {
        let gradient_code = if params.is_empty() {
            0
        } else {
            self.gradient_code(net, y, params)
        };
        if self.mass0_kg > 0.0
            && ((m - self.mass0_kg) / self.mass0_kg).abs() > self.thresholds.mass_drift
        {
            return MASS_DRIFT;
        }
        if self.energy0_j != 0.0
            && ((e - self.energy0_j) / self.energy0_j).abs() > self.thresholds.energy_drift
        {
            return ENERGY_DRIFT;
        }
        if gradient_code != 0 {
            return gradient_code;
        }
        if let Some(pc) = net.gas.p_critical_pa {
            for i in 0..net.chambers().len() {
                let o = i * chamber::STATES;
                let p = net
                    .gas
                    .pressure_pa(y[o + chamber::ENERGY], y[o + chamber::VOLUME]);
                if p > pc {
                    return ABOVE_CRITICAL_PRESSURE;
                }
            }
        }
        // Without pistons or walls no volume can desynchronize (the ratio is 0).
        if !net.boundaries.is_empty() && self.max_desync_ratio(net, y) > 1.0 {
            return PISTON_DESYNC;
        }
        0
    }

    /// Checks 6 and 7, with the largest drifts recorded: out of line, so that the common
    /// run without sensitivities (this runs after every step and at every output time) does
    /// not pay for its registers.
    #[cold]
    #[inline(never)]
    fn gradient_code(&mut self, net: &Network, y: &[f64], params: &[SensitivityParameter]) -> u8 {
        let (rm, re) = self.gradient_drifts(net, y, params);
        let m = &mut self.max_gradient_drift;
        m[0] = m[0].max(rm);
        m[1] = m[1].max(re);
        if rm > self.thresholds.mass_gradient_drift {
            MASS_GRADIENT_DRIFT
        } else if re > self.thresholds.energy_gradient_drift {
            ENERGY_GRADIENT_DRIFT
        } else {
            0
        }
    }

    /// max over chambers of |V_state − V_geometric| / (threshold·Σ boundary areas); > 1 fires 9.
    // One pass over each chamber's boundaries for its area and its geometric volume (the same
    // sums in the same order as `Iterator::sum` and `Network::geometric_volume_m3`: test
    // `desync_ratio_is_the_two_pass_one_bit_for_bit`); chambers without boundaries skipped
    // before any arithmetic. This runs after every step of a network with pistons or walls.
    // Not inlined into `warnings`: there it cost the networks without boundaries (vent +0.4k).
    pub fn max_desync_ratio(&self, net: &Network, y: &[f64]) -> f64 {
        let mut worst: f64 = 0.0;
        for (i, c) in net.chambers().iter().enumerate() {
            let bs = net.chamber_boundaries(i);
            if bs.is_empty() {
                continue;
            }
            let (mut area, mut v_geometric) = (-0.0, c.dead_volume.value);
            for b in bs {
                area += b.area_m2;
                v_geometric += b.factor * y[b.state];
            }
            if area == 0.0 {
                continue;
            }
            let v_state = y[i * chamber::STATES + chamber::VOLUME];
            let d = (v_state - v_geometric).abs();
            worst = worst.max(d / (self.thresholds.piston_desync * area));
        }
        worst
    }
}

#[cfg(test)]
mod tests {
    /// The checks' fused totals against the network's own, bit for bit, on the peers'
    /// networks (one with a piston, one with a wall) and the projectile (a piston with a
    /// spring), at their initial states and at states moved off them.
    #[test]
    fn totals_are_the_networks_bit_for_bit() {
        let models = [
            include_str!("../compliance-tests/peers/models/cantera_vent.toml"),
            include_str!("../compliance-tests/peers/models/cantera_wall.toml"),
            include_str!("../compliance-tests/peers/models/cantera_piston.toml"),
            include_str!("../compliance-tests/peers/models/cantera_chain20.toml"),
            include_str!("../models/projectile.toml"),
        ];
        for src in models {
            let model = crate::model::parse_str(src, "model.toml", &[]).unwrap();
            let net = crate::model::build_network(&model.spec);
            let y0 = net.initial_state();
            for k in 0..4 {
                let y: Vec<f64> = y0
                    .iter()
                    .enumerate()
                    .map(|(i, &v)| v * (1.0 + 0.1 * k as f64) + 1e-3 * (k * i) as f64)
                    .collect();
                let (m, e) = super::totals(&net, &y);
                println!("{}: m {m:e} kg, E {e:e} J", model.spec.model.name);
                assert_eq!(m.to_bits(), net.mass_total_kg(&y).to_bits());
                assert_eq!(e.to_bits(), net.energy_total_j(&y).to_bits());
            }
        }
    }

    /// Check 9's ratio in one pass per chamber against the two passes it replaces (area by
    /// `Iterator::sum`, then `Network::geometric_volume_m3`), written out here, bit for bit, on
    /// the piston, wall and projectile networks at states whose volumes are moved off the
    /// boundaries' (desynchronized by 0 to 30 %).
    #[test]
    fn desync_ratio_is_the_two_pass_one_bit_for_bit() {
        use crate::components::chamber;
        let models = [
            include_str!("../compliance-tests/peers/models/cantera_wall.toml"),
            include_str!("../compliance-tests/peers/models/cantera_piston.toml"),
            include_str!("../models/projectile.toml"),
        ];
        for src in models {
            let model = crate::model::parse_str(src, "model.toml", &[]).unwrap();
            let sim = crate::model::build_simulation(&model.spec, None).unwrap();
            let net = &sim.network;
            let mut y = net.initial_state();
            for k in 0..4 {
                for i in 0..net.chambers().len() {
                    y[i * chamber::STATES + chamber::VOLUME] *= 1.0 + 0.1 * k as f64;
                }
                let mut want: f64 = 0.0;
                for i in 0..net.chambers().len() {
                    let area: f64 = net.chamber_boundaries(i).iter().map(|b| b.area_m2).sum();
                    if area == 0.0 {
                        continue;
                    }
                    let v = y[i * chamber::STATES + chamber::VOLUME];
                    let d = (v - net.geometric_volume_m3(i, &y)).abs();
                    want = want.max(d / (sim.checks.thresholds.piston_desync * area));
                }
                let got = sim.checks.max_desync_ratio(net, &y);
                println!("{}: ratio {got:e}", model.spec.model.name);
                assert_eq!(got.to_bits(), want.to_bits());
                assert!(k == 0 || got > 0.0);
            }
        }
    }
}

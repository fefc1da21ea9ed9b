//! Circular tube with the inertia of its gas: the tube's friction law
//! ([`crate::components::tube`], FONSim's CircularTube) inside the momentum balance of the gas
//! column, whose mass flow ṁ (kg/s, positive from `from` to `to`) is a state:
//!   dṁ/dt = (A/L)·(p_from − p_to − Δp_f(ṁ)),   A = π·d²/4,
//! Δp_f(ṁ) = sign(ṁ)·Δp(|ṁ|) the tube's pressure drop at the mean density of both ends. This
//! is the momentum equation of one face of a staggered-grid line (Patankar, *Numerical Heat
//! Transfer and Fluid Flow*, 1980, §6.3; the lumped pneumatic line of Beater, *Pneumatic
//! Drives*, 2007, ch. 3.4): chambers between such tubes carry the gas's compliance, these its
//! inertance L/A, so a line of N segments carries pressure waves at c = √(κ·R·T) (adiabatic
//! chambers; √(R·T) isothermal) with a travel time that converges to L/c as N grows. In steady
//! flow the balance is the tube's own relation, Δp = Δp_f(ṁ).
//!
//! The gas enters and leaves with the upstream enthalpy, as through the plain tube: the column's
//! kinetic energy ½·(L/A)·ṁ²/ρ̄ is not counted in `energy_total` (it is ρ̄v²/2 per volume of the
//! tube, below 1 % of the gas's internal energy p/(κ − 1) up to v ≈ 0.1·c).
//!
//! The flow reversing (ṁ through 0) changes the upstream end, whose enthalpy the flow carries:
//! the enthalpy flow ṁ·h is 0 from both sides there, a kink only where the ends' temperatures
//! differ, as through the plain tube. It is no event: faces the wave has not reached yet sit at
//! ṁ = 0 within round-off, where an event function would fire at every step. The friction
//! law's blend has its slope jump at Re = 2300 and 4000, points of the state itself,
//! |ṁ| = Re·π·d·μ/4: each is an event both ways (g = |ṁ| − ṁ_Re), restarting the integrator
//! only.

use serde::{Deserialize, Serialize};

use crate::ad::Scalar;
use crate::components::element::{Build, Element, Eval, EventAt, Slots, Variable};
use crate::components::keys::{Component, Kind, Link};
use crate::components::orifice::Poppet;
use crate::components::restrictor::mean_density_kg_per_m3;
use crate::components::tube::{RE_LAMINAR, RE_TURBULENT, SWITCHES, TubeAt};
use crate::param::{Param, ParamValue};
use crate::units::{DynamicViscosity, Length, MassRate, Unit, from_si};

crate::declare_kind! {
    /// `[[inertial_tube]]`: a tube whose gas has inertia (state: its mass flow).
    kind InertialTubeSpec = "inertial_tube", Link, gas;
    name: Name;
    from: Node;
    to: Node;
    /// m.
    length: Param, length, Required, Positive;
    /// Inner diameter, m.
    diameter: Param, length, Required, Positive;
    /// Wall roughness ε, m (the tube's default).
    roughness: Param, length, Number(0.0015e-3), NonNegative;
    /// Dynamic viscosity μ, Pa·s (the tube's default).
    viscosity: Param, viscosity, Number(1.82e-5), Positive;
    /// Initial mass flow from `from` to `to`, kg/s.
    initial_mass_flow: Number, mass_rate, Number(0.0), Any;
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InertialTube {
    pub name: String,
    pub from: usize,
    pub to: usize,
    pub length_m: Param<Length>,
    pub diameter_m: Param<Length>,
    pub roughness_m: Param<Length>,
    pub viscosity_pa_s: Param<DynamicViscosity>,
    pub initial_mass_flow: MassRate,
}

impl InertialTube {
    /// The friction law's coefficients with each parameter's value given by `param`.
    #[inline]
    pub fn at_with<T: Scalar>(&self, param: impl Fn(&ParamValue) -> T) -> TubeAt<T> {
        TubeAt {
            length_m: param(&self.length_m),
            diameter_m: param(&self.diameter_m),
            roughness_m: param(&self.roughness_m),
            viscosity_pa_s: param(&self.viscosity_pa_s),
        }
    }

    /// dṁ/dt (kg/s²) at flow `mdot`, pressure difference `dp` = p_from − p_to and mean
    /// density `rho`.
    #[inline]
    pub fn rate<T: Scalar>(tube: &TubeAt<T>, mdot: T, dp: T, rho: T) -> T {
        let friction = if mdot.re() == 0.0 {
            // The laminar slope from both sides (|ṁ| would have no derivative at 0).
            let (_, r_lam) = tube.pressure_drop_pa(T::zero(), rho);
            r_lam * mdot
        } else {
            crate::ad::copysign(tube.pressure_drop_pa(mdot.abs(), rho).0, mdot)
        };
        let d = tube.diameter_m;
        let area = d * d * (std::f64::consts::PI / 4.0);
        area / tube.length_m * (dp - friction)
    }
}

impl Build for InertialTubeSpec {
    type Component = InertialTube;
    fn build(&self, node: &dyn Fn(&str) -> usize) -> InertialTube {
        InertialTube {
            name: self.name.clone(),
            from: node(&self.from),
            to: node(&self.to),
            length_m: self.length.to_param(),
            diameter_m: self.diameter.to_param(),
            roughness_m: self.roughness.to_param(),
            viscosity_pa_s: self.viscosity.to_param(),
            initial_mass_flow: from_si(self.initial_mass_flow),
        }
    }
}

impl Component for InertialTube {
    fn kind(&self) -> &'static Kind {
        &KIND
    }
    fn name(&self) -> &str {
        &self.name
    }
    crate::run_params!(
        "length" => length_m,
        "diameter" => diameter_m,
        "roughness" => roughness_m,
        "viscosity" => viscosity_pa_s,
    );
}

impl Link for InertialTube {
    fn ends(&self) -> (usize, usize) {
        (self.from, self.to)
    }
    fn reads_upstream_temperature(&self) -> bool {
        true
    }
    fn flow_is_state(&self) -> bool {
        true
    }
}

impl Element for InertialTube {
    const KIND: &'static Kind = &KIND;
    const STATES: usize = 1;
    /// The state is the link's flow: its `<name>.mdot` output is that state's variable.
    const STATE_VARIABLES: &'static [Variable] = &[Variable {
        suffix: "mdot",
        unit: Unit::mass_rate,
        description: "mass flow through {} (from → to)",
    }];
    /// The friction law's switches ([`SWITCHES`]): 2j where Re rises through switch j, 2j + 1
    /// where it falls through it.
    const EVENTS: usize = 2 * SWITCHES.len();
    const SWITCHES: bool = true;
    type Cache = ();

    fn nodes(&self) -> impl Iterator<Item = usize> {
        [self.from, self.to].into_iter()
    }

    fn has_events(&self) -> bool {
        true
    }

    /// Kinks of a continuous law: no state changes there.
    fn event_only_restarts(&self, _e: usize) -> bool {
        true
    }

    /// g = |ṁ| − ṁ_j, ṁ_j = Re_j·π·d·μ/4.
    fn event_value_at(&self, e: usize, at: &EventAt<'_>) -> Option<f64> {
        let re = if e / 2 == 0 { RE_LAMINAR } else { RE_TURBULENT };
        let (d, mu) = ((at.pv)(&self.diameter_m), (at.pv)(&self.viscosity_pa_s));
        let mdot_j = re * std::f64::consts::PI * d * mu / 4.0;
        Some(Poppet::pair(e, at.s[0].abs() - mdot_j))
    }

    fn event_gradient_at(&self, e: usize, at: &EventAt<'_>, w: &[f64]) -> f64 {
        let sign = if at.s[0] >= 0.0 { 1.0 } else { -1.0 };
        Poppet::pair(e, sign * w[0])
    }

    fn event_description(&self, e: usize) -> String {
        format!(
            "inertial tube `{}`: Re {} through its {} point",
            self.name,
            Poppet::way(e),
            SWITCHES.get(e / 2).unwrap_or(&"?")
        )
    }

    fn as_link(&self) -> Option<&dyn Link> {
        Some(self)
    }

    #[inline(always)]
    fn terms<T: Scalar>(items: &[Self], _: &(), e: &Eval<'_, T>, dy: &mut [T], at: Slots<'_, T>) {
        for (k, (x, out)) in items.iter().zip(at.flows.iter_mut()).enumerate() {
            let s = at.first_state + k;
            let mdot = e.y[s];
            let (nf, nt) = (e.nodes[x.from], e.nodes[x.to]);
            let rho = mean_density_kg_per_m3(e.gas, nf, nt);
            let pv = |p: &ParamValue| e.pv(p);
            let tube = x.at_with(pv);
            dy[s] = InertialTube::rate(&tube, mdot, nf.pressure_pa - nt.pressure_pa, rho);
            e.transfer(x.from, x.to, mdot, dy);
            *out = mdot;
        }
    }

    fn initial_state(&self, out: &mut [f64]) {
        out[0] = self.initial_mass_flow.value;
    }

    /// Its start value, or air at 1 bar moving through its bore at 10 m/s.
    fn nominals(&self, out: &mut [f64], _volume0: &dyn Fn(usize) -> Option<f64>) {
        let d = self
            .diameter_m
            .all_values()
            .iter()
            .fold(0.0_f64, |a, &b| a.max(b.abs()));
        let area = std::f64::consts::PI / 4.0 * d * d;
        out[0] = self.initial_mass_flow.value.abs().max(1.2 * 10.0 * area);
    }
}

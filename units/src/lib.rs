//! Plenum's physical quantities with their units in the type (`uom`, SI, `f64` storage), and
//! the FMI unit of a variable derived from its quantity type ([`Unit`]). Plenum re-exports this
//! crate as `plenum::units`, where the boundary between typed quantities and the raw scalars of
//! the right-hand side is described.
//!
//! A crate of its own so that the compile-fail test (`tests/units_compile.rs`, `tests/ui/`:
//! `let l: Length = length / time;` does not compile, `let v: Velocity = length / time;` does)
//! builds uom alone in trybuild's separate target directory, in seconds.

pub use uom;

pub mod parse;
pub mod text;

use std::fmt;
use std::marker::PhantomData;

use uom::Conversion;
use uom::si::Dimension;
use uom::typenum::{Integer, N1, N2, P1, P2, P4, Z0};

pub use uom::fmt::DisplayStyle::Abbreviation;
pub use uom::si::f64::{
    Area, DynamicViscosity, Energy, Force, HeatTransfer, Length, Mass, MassDensity, MassRate,
    Power, Pressure, Ratio, SpecificHeatCapacity, SurfaceTension, ThermodynamicTemperature, Time,
    Velocity, Volume, VolumeRate,
};
/// The SI units Plenum uses (each with factor 1 to the SI base units).
pub mod si {
    pub use uom::si::area::square_meter;
    pub use uom::si::dynamic_viscosity::pascal_second;
    pub use uom::si::energy::joule;
    pub use uom::si::force::newton;
    pub use uom::si::heat_transfer::watt_per_square_meter_kelvin;
    pub use uom::si::length::meter;
    pub use uom::si::mass::kilogram;
    pub use uom::si::mass_density::kilogram_per_cubic_meter;
    pub use uom::si::mass_rate::kilogram_per_second;
    pub use uom::si::power::watt;
    pub use uom::si::pressure::pascal;
    pub use uom::si::ratio::ratio;
    pub use uom::si::specific_heat_capacity::joule_per_kilogram_kelvin;
    pub use uom::si::surface_tension::newton_per_meter;
    pub use uom::si::thermodynamic_temperature::kelvin;
    pub use uom::si::time::second;
    pub use uom::si::velocity::meter_per_second;
    pub use uom::si::volume::cubic_meter;
    pub use uom::si::volume_rate::cubic_meter_per_second;
}

/// A quantity of the SI system with f64 storage, by its dimension.
pub type Si<D> = uom::si::Quantity<D, uom::si::SI<f64>, f64>;
/// ISQ dimension in uom's order (length, mass, time, current, temperature, amount, luminosity).
type Isq<L, M, T> = uom::si::ISQ<L, M, T, Z0, Z0, Z0, Z0>;

/// Valve coefficient K of ṁ = K·Δp, kg/(s·Pa) (dimension L·T).
pub type FlowCoefficient = Si<Isq<P1, Z0, P1>>;
/// ISO 6358 sonic conductance C, m³/(s·Pa) (dimension L⁴·M⁻¹·T).
pub type SonicConductance = Si<Isq<P4, N1, P1>>;
/// Wall expansion coefficient K of v = K·Δp, m/(s·Pa) (dimension L²·M⁻¹·T).
pub type ExpansionCoefficient = Si<Isq<P2, N1, P1>>;
/// Linear damping c of F = c·v, N·s/m (dimension M·T⁻¹, that of a mass rate).
pub type Damping = Si<Isq<Z0, P1, N1>>;
/// Spring stiffness k of F = k·x, N/m (dimension M·T⁻², that of surface tension).
pub type Stiffness = Si<Isq<Z0, P1, N2>>;

/// A display unit of an SI unit, as FMI 2.0 declares it (§2.2.2, `DisplayUnit`):
/// `value_display = factor·value + offset`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DisplayUnit {
    /// The SI unit's FMI symbol (`Pa`).
    pub unit: &'static str,
    pub name: &'static str,
    pub factor: f64,
    pub offset: f64,
}

impl DisplayUnit {
    /// The displayed value of an SI value.
    pub fn display(&self, value_si: f64) -> f64 {
        self.factor * value_si + self.offset
    }
}

/// Bar for Pa (absolute).
pub const BAR: DisplayUnit = DisplayUnit {
    unit: "Pa",
    name: "bar",
    factor: 1e-5,
    offset: 0.0,
};
/// Degrees Celsius for K.
pub const DEG_C: DisplayUnit = DisplayUnit {
    unit: "K",
    name: "degC",
    factor: 1.0,
    offset: -273.15,
};
/// Normal litres per minute for kg/s: the standard (ANR) volume flow of a mass flow,
/// Q = ṁ/ρ_ANR (ISO 8778, ISO 6358-1), as the model file reads `"100 Nl/min"`.
pub const NL_PER_MIN: DisplayUnit = DisplayUnit {
    unit: "kg/s",
    name: "Nl/min",
    factor: 60_000.0 / parse::ANR_DENSITY_KG_PER_M3,
    offset: 0.0,
};

/// The display units Plenum declares in its FMUs: bar for Pa (absolute), degC for K. A mass
/// flow's Nl/min is not among them: FMI gives a variable one display unit, and kg/s is also
/// the unit of a liquid link's flow, which has no standard volume.
pub const DISPLAY_UNITS: &[DisplayUnit] = &[BAR, DEG_C];

/// The display units the command line offers (`--units`): those of the FMUs and Nl/min.
pub const CLI_DISPLAY_UNITS: &[DisplayUnit] = &[BAR, DEG_C, NL_PER_MIN];

/// The display unit of an SI unit symbol, if Plenum declares one.
pub fn display_unit(unit_symbol: &str) -> Option<&'static DisplayUnit> {
    DISPLAY_UNITS.iter().find(|d| d.unit == unit_symbol)
}

/// A quantity from its value in SI base units (no conversion: the stored value is the argument).
#[inline(always)]
pub fn from_si<D>(value_si: f64) -> Si<D>
where
    D: Dimension + ?Sized,
{
    Si::<D> {
        dimension: PhantomData,
        units: PhantomData,
        value: value_si,
    }
}

/// Exponents of the SI base units of a dimension (FMI 2.0 `BaseUnit` attributes, less `rad`,
/// which the SI counts as 1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SiExponents {
    pub kg: i32,
    pub m: i32,
    pub s: i32,
    pub a: i32,
    pub k: i32,
    pub mol: i32,
    pub cd: i32,
}

impl SiExponents {
    /// The exponents of uom dimension `D`, read from its typenum integers.
    pub fn of<D: Dimension + ?Sized>() -> Self {
        SiExponents {
            kg: D::M::to_i32(),
            m: D::L::to_i32(),
            s: D::T::to_i32(),
            a: D::I::to_i32(),
            k: D::Th::to_i32(),
            mol: D::N::to_i32(),
            cd: D::J::to_i32(),
        }
    }

    /// `self + factor·other`, exponent by exponent (the dimension of a product of powers).
    pub fn add_scaled(self, other: Self, factor: i32) -> Self {
        SiExponents {
            kg: self.kg + factor * other.kg,
            m: self.m + factor * other.m,
            s: self.s + factor * other.s,
            a: self.a + factor * other.a,
            k: self.k + factor * other.k,
            mol: self.mol + factor * other.mol,
            cd: self.cd + factor * other.cd,
        }
    }

    /// Nonzero exponents as (FMI attribute, value), in the FMI 2.0 schema's order.
    pub fn attributes(&self) -> Vec<(&'static str, i32)> {
        [
            ("kg", self.kg),
            ("m", self.m),
            ("s", self.s),
            ("A", self.a),
            ("K", self.k),
            ("mol", self.mol),
            ("cd", self.cd),
        ]
        .into_iter()
        .filter(|(_, e)| *e != 0)
        .collect()
    }
}

/// The unit of a variable as FMI writes it: a symbol in Modelica/FMI notation (`Pa`, `m3`,
/// `kg/s`, `W/(m2.K)`, `1`) and the SI exponents of its quantity type.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Unit {
    pub symbol: String,
    pub si: SiExponents,
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.symbol)
    }
}

impl PartialEq<&str> for Unit {
    fn eq(&self, other: &&str) -> bool {
        self.symbol == *other
    }
}

/// A uom abbreviation in Modelica/FMI notation: superscript digits become digits, the middle
/// dot becomes `.`, spaces go; the empty abbreviation (ratio) is `1`.
pub fn fmi_symbol(abbreviation: &str) -> String {
    let mut out = String::with_capacity(abbreviation.len());
    for ch in abbreviation.chars() {
        match ch {
            ' ' => {}
            '·' => out.push('.'),
            '⁻' => out.push('-'),
            '⁰' => out.push('0'),
            '¹' => out.push('1'),
            '²' => out.push('2'),
            '³' => out.push('3'),
            '⁴' => out.push('4'),
            c => out.push(c),
        }
    }
    if out.is_empty() { "1".into() } else { out }
}

impl Unit {
    /// The unit `N` of a quantity, named by its uom abbreviation, with the exponents of the
    /// quantity's dimension: `Unit::of(Pressure::format_args(pascal, Abbreviation))`. The
    /// quantity module's `format_args` only accepts units of that quantity, so the symbol and the
    /// exponents come from the same type.
    pub fn of<D, N>(_: uom::si::fmt::Arguments<D, N>) -> Unit
    where
        D: Dimension + ?Sized,
        N: uom::si::Unit + Conversion<f64, T = f64>,
    {
        // Only coherent SI units: the variable's value is the quantity's `.value`.
        debug_assert_eq!(N::coefficient(), 1.0, "{}", N::abbreviation());
        Unit {
            symbol: fmi_symbol(N::abbreviation()),
            si: SiExponents::of::<D>(),
        }
    }

    /// A coherent SI unit of a quantity that uom has no named unit for: the symbol is written
    /// here, the exponents come from the type (fmu-build checks that the symbol parses to them).
    pub fn derived<D: Dimension + ?Sized>(_: PhantomData<Si<D>>, symbol: &str) -> Unit {
        Unit {
            symbol: symbol.into(),
            si: SiExponents::of::<D>(),
        }
    }

    pub fn dimensionless() -> Unit {
        Unit::of(Ratio::format_args(si::ratio, Abbreviation))
    }
    pub fn time() -> Unit {
        Unit::of(Time::format_args(si::second, Abbreviation))
    }
    pub fn length() -> Unit {
        Unit::of(Length::format_args(si::meter, Abbreviation))
    }
    pub fn area() -> Unit {
        Unit::of(Area::format_args(si::square_meter, Abbreviation))
    }
    pub fn volume() -> Unit {
        Unit::of(Volume::format_args(si::cubic_meter, Abbreviation))
    }
    pub fn mass() -> Unit {
        Unit::of(Mass::format_args(si::kilogram, Abbreviation))
    }
    pub fn pressure() -> Unit {
        Unit::of(Pressure::format_args(si::pascal, Abbreviation))
    }
    pub fn temperature() -> Unit {
        Unit::of(ThermodynamicTemperature::format_args(
            si::kelvin,
            Abbreviation,
        ))
    }
    pub fn energy() -> Unit {
        Unit::of(Energy::format_args(si::joule, Abbreviation))
    }
    pub fn power() -> Unit {
        Unit::of(Power::format_args(si::watt, Abbreviation))
    }
    pub fn velocity() -> Unit {
        Unit::of(Velocity::format_args(si::meter_per_second, Abbreviation))
    }
    pub fn mass_rate() -> Unit {
        Unit::of(MassRate::format_args(si::kilogram_per_second, Abbreviation))
    }
    pub fn volume_rate() -> Unit {
        Unit::of(VolumeRate::format_args(
            si::cubic_meter_per_second,
            Abbreviation,
        ))
    }
    pub fn density() -> Unit {
        Unit::of(MassDensity::format_args(
            si::kilogram_per_cubic_meter,
            Abbreviation,
        ))
    }
    pub fn viscosity() -> Unit {
        Unit::of(DynamicViscosity::format_args(
            si::pascal_second,
            Abbreviation,
        ))
    }
    pub fn stiffness() -> Unit {
        Unit::of(SurfaceTension::format_args(
            si::newton_per_meter,
            Abbreviation,
        ))
    }
    pub fn heat_transfer_coefficient() -> Unit {
        Unit::of(HeatTransfer::format_args(
            si::watt_per_square_meter_kelvin,
            Abbreviation,
        ))
    }
    pub fn flow_coefficient() -> Unit {
        Unit::derived(PhantomData::<FlowCoefficient>, "kg/(s.Pa)")
    }
    pub fn sonic_conductance() -> Unit {
        Unit::derived(PhantomData::<SonicConductance>, "m3/(s.Pa)")
    }
    pub fn expansion_coefficient() -> Unit {
        Unit::derived(PhantomData::<ExpansionCoefficient>, "m/(s.Pa)")
    }
    pub fn damping() -> Unit {
        Unit::derived(PhantomData::<Damping>, "N.s/m")
    }
    pub fn specific_heat() -> Unit {
        Unit::of(SpecificHeatCapacity::format_args(
            si::joule_per_kilogram_kelvin,
            Abbreviation,
        ))
    }

    /// What a quantity of this unit's dimension is called, and a value of it as a user would
    /// write it with a unit (for messages: "`pressure` is a pressure, e.g. \"6 bar\"").
    pub fn quantity_name(&self) -> (&'static str, &'static str) {
        let table: [(Unit, &str, &str); 20] = [
            (Unit::dimensionless(), "dimensionless number", "0.5"),
            (Unit::time(), "time", "10 ms"),
            (Unit::length(), "length", "600 mm"),
            (Unit::area(), "area", "10 mm^2"),
            (Unit::volume(), "volume", "2 L"),
            (Unit::mass(), "mass", "50 g"),
            (Unit::pressure(), "pressure", "6 bar"),
            (Unit::temperature(), "temperature", "20 degC"),
            (Unit::energy(), "energy", "1 kJ"),
            (Unit::velocity(), "velocity", "2 m/s"),
            (Unit::mass_rate(), "mass flow rate", "3 g/s"),
            (Unit::volume_rate(), "volume flow rate", "1 L/s"),
            (Unit::density(), "density", "1000 kg/m^3"),
            (Unit::viscosity(), "dynamic viscosity", "1.8e-5 Pa*s"),
            (Unit::stiffness(), "stiffness", "5 N/mm"),
            (
                Unit::heat_transfer_coefficient(),
                "heat transfer coefficient",
                "10 W/(m^2*K)",
            ),
            (
                Unit::flow_coefficient(),
                "flow coefficient",
                "1e-8 kg/(s*Pa)",
            ),
            (
                Unit::sonic_conductance(),
                "sonic conductance",
                "0.5 dm^3/(s*bar)",
            ),
            (
                Unit::expansion_coefficient(),
                "expansion coefficient",
                "1e-9 m/(s*Pa)",
            ),
            (Unit::damping(), "damping coefficient", "20 N*s/m"),
        ];
        if self.si == Unit::specific_heat().si {
            return ("specific heat capacity", "1005 J/(kg*K)");
        }
        table
            .into_iter()
            .find(|(u, _, _)| u.si == self.si)
            .map_or(("quantity", ""), |(_, n, e)| (n, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each unit against exponents written out from the SI definitions (not from uom).
    #[test]
    fn units_have_the_si_exponents_of_their_definition() {
        let e = |kg, m, s, k| SiExponents {
            kg,
            m,
            s,
            k,
            ..SiExponents::default()
        };
        let cases = [
            (Unit::dimensionless(), "1", e(0, 0, 0, 0)),
            (Unit::time(), "s", e(0, 0, 1, 0)),
            (Unit::length(), "m", e(0, 1, 0, 0)),
            (Unit::area(), "m2", e(0, 2, 0, 0)),
            (Unit::volume(), "m3", e(0, 3, 0, 0)),
            (Unit::mass(), "kg", e(1, 0, 0, 0)),
            // Pa = N/m² = kg·m⁻¹·s⁻²
            (Unit::pressure(), "Pa", e(1, -1, -2, 0)),
            (Unit::temperature(), "K", e(0, 0, 0, 1)),
            // J = N·m = kg·m²·s⁻²
            (Unit::energy(), "J", e(1, 2, -2, 0)),
            (Unit::velocity(), "m/s", e(0, 1, -1, 0)),
            (Unit::mass_rate(), "kg/s", e(1, 0, -1, 0)),
            (Unit::volume_rate(), "m3/s", e(0, 3, -1, 0)),
            (Unit::density(), "kg/m3", e(1, -3, 0, 0)),
            (Unit::viscosity(), "Pa.s", e(1, -1, -1, 0)),
            (Unit::stiffness(), "N/m", e(1, 0, -2, 0)),
            // W/(m²·K) = kg·s⁻³·K⁻¹
            (
                Unit::heat_transfer_coefficient(),
                "W/(m2.K)",
                e(1, 0, -3, -1),
            ),
            // kg/(s·Pa) = kg·s⁻¹ / (kg·m⁻¹·s⁻²) = m·s
            (Unit::flow_coefficient(), "kg/(s.Pa)", e(0, 1, 1, 0)),
            (Unit::sonic_conductance(), "m3/(s.Pa)", e(-1, 4, 1, 0)),
            (Unit::expansion_coefficient(), "m/(s.Pa)", e(-1, 2, 1, 0)),
            (Unit::damping(), "N.s/m", e(1, 0, -1, 0)),
        ];
        for (unit, symbol, si) in cases {
            println!("{:<10} {:?}", unit.symbol, unit.si.attributes());
            assert_eq!(unit.symbol, symbol);
            assert_eq!(unit.si, si, "{symbol}");
        }
    }

    #[test]
    fn from_si_and_value_are_the_si_number() {
        let p: Pressure = from_si(2.5e5);
        assert_eq!(p.get::<uom::si::pressure::kilopascal>(), 250.0);
        let p2 = Pressure::new::<uom::si::pressure::bar>(2.5);
        println!("2.5 bar = {} Pa", p2.value);
        assert!((p2.value - p.value).abs() <= 1e-9 * p.value);
        let k: FlowCoefficient = from_si(3e-8);
        // kg/(s·Pa) × Pa = kg/s
        let mdot: MassRate = k * Pressure::new::<si::pascal>(1e5);
        assert!((mdot.get::<si::kilogram_per_second>() - 3e-3).abs() < 1e-18);
    }
}

//! The key table: every component kind declares each of its model-file keys once, in its own
//! file, with [`declare_kind!`] (keys that several kinds share, once, as a key group the kinds
//! name): the key's name, what it holds (a name, a node, a number, a number or a time table),
//! its physical quantity (a [`Unit`] built from the `uom` quantity type, `crate::units`), its
//! default and the rule its values obey. Like the variable table of the FMI Reference FMUs'
//! `config.h`, that one declaration is what everything else reads:
//!
//! - the model file's parser: the kind's serde struct (`TubeSpec`) is generated from it, with
//!   the declared defaults, and the decoder reports a missing required key from it
//!   (`crate::model`);
//! - validation: each key's rule on every number and every table row (`crate::model`), and on
//!   every value set during a run ([`crate::network::Network::set_scalar`]: fmi2SetReal of an
//!   input);
//! - which keys are FMU parameters (every number), which may be FMU inputs and change during a
//!   run (the ones that may be time tables), and their units (`crate::cosim`, the CLI's
//!   `describe`, the units of sensitivity outputs);
//! - the tables of docs/model-file.md (`tests/docs/model_file.rs` compares them key by key).
//!
//! The run-time side of a kind (its component struct) implements [`Component`]: its name and
//! the parameters that may change during a run, found by key.

use crate::param::{ParamSpec, ParamValue};
use crate::units::Unit;

/// What a key holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// The component's unique `name`.
    Name,
    /// The name of a node (a chamber or a reservoir) the component connects.
    Node,
    /// A plain number: an initial condition or what fixes stored mass or energy (geometry).
    Number,
    /// A number or a time table (`crate::param`).
    Param,
    /// A number, a time table or BlasterSim's cubic opening curve (a valve's `opening`).
    Opening,
    /// `true` or `false`.
    Flag,
    /// A catalogue curve: rows `[x, y]`, y of the key's quantity against its argument x, of the
    /// quantity the key declares with it ([`Key::argument`]: an orifice's flow against its
    /// pressure ratio, its poppet's opening against Δp). Fixed for the run: no FMU parameter,
    /// no `--set`.
    Curve,
}

/// A key's default: what an absent key means.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KeyDefault {
    /// The key must be given.
    Required,
    /// The key must be given in one of the kind's two forms (named here), and not in the other
    /// (an orifice's `area` or `sonic_conductance`); the kind's own check says which.
    RequiredIn(&'static str),
    /// The key may be absent, and then has no value (a piston without `x_exit`).
    None,
    /// This number when absent (filled in: the parsed component holds it).
    Number(f64),
    /// Absent, and then the component takes this number (not filled in, so that the key's
    /// absence stays visible: an orifice's `discharge_coefficient`, which its ISO 6358 form
    /// must not have).
    Implied(f64),
    /// This flag when absent.
    Flag(bool),
}

/// The rule every value of a key obeys: the number given, every value of its table, and every
/// value set during a run. Every number must also be finite.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rule {
    /// Any finite number.
    Any,
    /// v > 0.
    Positive,
    /// v ≥ 0.
    NonNegative,
    /// 0 ≤ v ≤ 1.
    Fraction,
    /// 0 < v ≤ 1.
    PositiveFraction,
    /// 0 ≤ v < the bound.
    Below(f64),
    /// v > 0 (an absolute pressure), except on a node that only liquid links touch, whose
    /// pressure may be gauge: any finite value there (a reservoir feeding inertance valves).
    AbsoluteUnlessLiquid,
    /// v > 0, an absolute pressure (a chamber's). [`Rule::Positive`] on a pressure is a
    /// difference (a relief valve's `full_flow_pressure`).
    Absolute,
    /// A node key that may name the same node as the key given (two exhausts into one
    /// silencer or the atmosphere); a component's other node keys name different nodes.
    MayShare(&'static str),
}

impl Rule {
    /// Whether `v` obeys the rule (a non-finite `v` never does; [`Rule::AbsoluteUnlessLiquid`]
    /// as on a gas node: its exception needs the network, `Network::rule_of`).
    pub fn holds(self, v: f64) -> bool {
        v.is_finite()
            && match self {
                Rule::Any => true,
                Rule::Positive | Rule::Absolute | Rule::AbsoluteUnlessLiquid => v > 0.0,
                Rule::NonNegative => v >= 0.0,
                Rule::Fraction => (0.0..=1.0).contains(&v),
                Rule::PositiveFraction => v > 0.0 && v <= 1.0,
                Rule::Below(b) => (0.0..b).contains(&v),
                // A node key's rule: no number obeys it.
                Rule::MayShare(_) => false,
            }
    }

    /// The rule in words for messages, `<key> must be ...` (`unit`: the key's).
    pub fn text(self, unit: &Unit) -> String {
        let u = message_unit(unit);
        match self {
            Rule::Any => "finite".to_string(),
            Rule::Positive => format!("greater than 0{u}"),
            Rule::Absolute => format!("greater than 0{u} (absolute)"),
            Rule::NonNegative => format!("0{u} or more"),
            Rule::Fraction => "between 0 and 1".to_string(),
            Rule::PositiveFraction => "greater than 0 and at most 1".to_string(),
            Rule::Below(b) => format!("at least 0 and below {b}"),
            Rule::AbsoluteUnlessLiquid => format!(
                "greater than 0{u} (absolute; only a reservoir that feeds nothing but inertance \
                 valves may have a gauge pressure)"
            ),
            Rule::MayShare(other) => format!("a node (it may be `{other}`'s)"),
        }
    }
}

/// A unit as error messages write it, with a leading space (`" m^3"`, `" kg/(s Pa)"`; `""` for
/// a dimensionless key): the FMI symbol with `^` before exponents and spaces for products.
pub fn message_unit(unit: &Unit) -> String {
    if unit.symbol == "1" {
        return String::new();
    }
    let mut out = String::from(" ");
    let mut prev_letter = false;
    for ch in unit.symbol.chars() {
        match ch {
            '.' => out.push(' '),
            d if d.is_ascii_digit() && prev_letter => {
                out.push('^');
                out.push(d);
            }
            c => out.push(c),
        }
        prev_letter = ch.is_ascii_alphabetic();
    }
    out
}

/// A unit as docs/model-file.md and `plenum describe` write it: the FMI symbol with
/// superscript exponents and a middle dot for products (`m³`, `kg/(s·Pa)`, `W/(m²·K)`; `1` for a
/// dimensionless key).
pub fn pretty_unit(unit: &Unit) -> String {
    let mut out = String::new();
    let mut prev_letter = false;
    for ch in unit.symbol.chars() {
        let sup = match ch {
            '2' => Some('²'),
            '3' => Some('³'),
            '4' => Some('⁴'),
            _ => None,
        };
        match (ch, sup) {
            ('.', _) => out.push('·'),
            (_, Some(s)) if prev_letter => out.push(s),
            (c, _) => out.push(c),
        }
        prev_letter = ch.is_ascii_alphabetic();
    }
    out
}

/// What a component kind is to the network, for the rules that join kinds (which nodes a link
/// may connect) and the documentation's sections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Holds gas (or, a reservoir, liquid) that links connect: chamber, reservoir.
    Node,
    /// Carries gas from one node to another.
    Link,
    /// Carries liquid between two reservoirs.
    LiquidLink,
    /// Moves the volumes of the two nodes it separates (piston, wall).
    Boundary,
}

/// One key of a component kind.
#[derive(Clone, Copy, Debug)]
pub struct Key {
    pub name: &'static str,
    pub form: Form,
    /// The key's physical quantity, as the unit of its values (SI). Dimensionless for names,
    /// nodes and flags.
    pub quantity: fn() -> Unit,
    pub default: KeyDefault,
    pub rule: Rule,
    /// A curve's argument (its rows' first cells), as the unit of its values: a ratio or a
    /// travel (dimensionless), a poppet's Δp (a pressure). `None` for every other form.
    pub argument: Option<fn() -> Unit>,
}

impl Key {
    pub fn unit(&self) -> Unit {
        (self.quantity)()
    }

    /// The unit of a curve's argument ([`Key::argument`]), `None` for other forms.
    pub fn argument_unit(&self) -> Option<Unit> {
        self.argument.map(|u| u())
    }

    /// A number (a constant, or a parameter that may be a table): an FMU parameter (or input)
    /// and `--set` with a number.
    pub fn is_numeric(&self) -> bool {
        matches!(self.form, Form::Number | Form::Param | Form::Opening)
    }

    /// May be a time table.
    pub fn may_be_table(&self) -> bool {
        matches!(self.form, Form::Param | Form::Opening)
    }

    /// May change during a run (an FMU input, fmi2SetReal between steps): exactly the keys that
    /// may vary in time, which set a flow or a boundary condition. A plain number fixes an
    /// initial condition or the geometry, and so the stored mass and energy: it may be set
    /// before a run only (`--set`, an FMU parameter before fmi2ExitInitializationMode).
    pub fn settable_during_run(&self) -> bool {
        self.may_be_table()
    }
}

/// A component kind: its model-file name (`[[tube]]`), its role and its keys.
#[derive(Debug)]
pub struct Kind {
    pub name: &'static str,
    pub role: Role,
    /// Holds or carries gas: a model with one needs a `[gas]` section.
    pub needs_gas: bool,
    pub keys: &'static [Key],
}

impl Kind {
    pub fn key(&self, name: &str) -> Option<&'static Key> {
        self.keys.iter().find(|k| k.name == name)
    }

    /// The number an absent key stands for (its [`KeyDefault::Number`] or
    /// [`KeyDefault::Implied`]), if it has one.
    pub fn implied(&self, key: &str) -> Option<f64> {
        match self.key(key)?.default {
            KeyDefault::Number(v) | KeyDefault::Implied(v) => Some(v),
            _ => None,
        }
    }

    /// The two keys that name the nodes it connects, in flow order (`from`, `to`), if any.
    pub fn ends(&self) -> Option<(&'static str, &'static str)> {
        let mut nodes = self.keys.iter().filter(|k| k.form == Form::Node);
        match (nodes.next(), nodes.next()) {
            (Some(a), Some(b)) => Some((a.name, b.name)),
            _ => None,
        }
    }
}

/// The value of a key of a parsed component.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value<'a> {
    Text(&'a str),
    Number(f64),
    Param(&'a ParamSpec),
    Flag(bool),
    /// A catalogue curve's rows `[x, y]` ([`Form::Curve`]).
    Curve(&'a [[f64; 2]]),
}

/// A field of a generated spec struct as a [`Value`] (`None`: absent).
pub trait AsValue {
    fn as_value(&self) -> Option<Value<'_>>;
}

impl AsValue for String {
    fn as_value(&self) -> Option<Value<'_>> {
        Some(Value::Text(self))
    }
}

impl AsValue for f64 {
    fn as_value(&self) -> Option<Value<'_>> {
        Some(Value::Number(*self))
    }
}

impl AsValue for bool {
    fn as_value(&self) -> Option<Value<'_>> {
        Some(Value::Flag(*self))
    }
}

impl AsValue for ParamSpec {
    fn as_value(&self) -> Option<Value<'_>> {
        Some(Value::Param(self))
    }
}

impl AsValue for Vec<[f64; 2]> {
    fn as_value(&self) -> Option<Value<'_>> {
        Some(Value::Curve(self))
    }
}

impl<T: AsValue> AsValue for Option<T> {
    fn as_value(&self) -> Option<Value<'_>> {
        self.as_ref().and_then(AsValue::as_value)
    }
}

/// For `#[serde(skip_serializing_if = "is_zero")]`: a number key not written back when 0.
pub fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// A problem among a component's own keys that no single key's rule catches (an orifice given
/// in both forms, a piston that starts past its exit): the key it concerns (`None`: the
/// component as a whole) and what is wrong.
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    pub key: Option<&'static str>,
    pub message: String,
}

/// A parsed component of a model file (a generated spec struct), as the generic code sees it.
pub trait Spec {
    fn kind(&self) -> &'static Kind;
    fn name(&self) -> &str;
    /// The value of key `key` (`None`: absent or not a key of this kind).
    fn value(&self, key: &str) -> Option<Value<'_>>;
    /// The component as the TOML table it serializes to (the keys a file would give, with the
    /// defaults filled in).
    fn to_table(&self) -> toml::Table;
    /// The kind's own cross-key rules (see [`Problem`]).
    fn problems(&self) -> Vec<Problem>;
}

/// A built component of a network, as the generic code sees it (at load time and for
/// fmi2SetReal; never in the right-hand side).
pub trait Component {
    fn kind(&self) -> &'static Kind;
    fn name(&self) -> &str;
    /// The parameter of key `key` that may change during a run (`None`: no such key, or one
    /// that cannot change during a run, or one of a form this component does not use).
    fn param(&self, key: &str) -> Option<&ParamValue>;
    fn param_mut(&mut self, key: &str) -> Option<&mut ParamValue>;
    /// What is wrong with `value` for its run-time parameter `key` beyond the key's own rule,
    /// against the component's other keys (a cushion needle wider than its piston), if
    /// anything: an FMU input set during a run is refused with it.
    fn value_problem(&self, _key: &str, _value: f64) -> Option<String> {
        None
    }
}

/// A component that carries a flow from one node to another (a `<name>.mdot` output): what the
/// network asks of it outside the right-hand side (its nodes, and what its flow reads directly,
/// for the FMU's ModelStructure and for the states that stay constant).
pub trait Link: Component {
    /// Its two nodes, (from, to): network node indices.
    fn ends(&self) -> (usize, usize);
    /// Its flow reads its nodes' pressures (a mass flow controller's does not).
    fn reads_pressures(&self) -> bool {
        true
    }
    /// Its flow law reads the upstream temperature (beyond the enthalpy it carries).
    fn reads_upstream_temperature(&self) -> bool;
    /// Its flow is a state of its own (an inertance valve's q, between reservoirs of liquid):
    /// no parameter sets it at an instant, and it moves no gas.
    fn flow_is_state(&self) -> bool {
        false
    }
}

/// [`Component::param`] and [`Component::param_mut`] from one list of `"key" => field`.
#[macro_export]
#[doc(hidden)]
macro_rules! run_params {
    ($($key:literal => $field:ident),* $(,)?) => {
        fn param(&self, key: &str) -> Option<&$crate::param::ParamValue> {
            match key {
                $($key => Some(&*self.$field),)*
                _ => None,
            }
        }
        fn param_mut(&mut self, key: &str) -> Option<&mut $crate::param::ParamValue> {
            match key {
                $($key => Some(&mut *self.$field),)*
                _ => None,
            }
        }
    };
}

/// The Rust type of a key's field in the spec struct, from its form and default.
#[macro_export]
#[doc(hidden)]
macro_rules! key_field_type {
    (Name) => { String };
    (Node None) => { Option<String> };
    (Node $($d:tt)*) => { String };
    (Flag $($d:tt)*) => { bool };
    (Number None) => { Option<f64> };
    (Number RequiredIn $($d:tt)*) => { Option<f64> };
    (Number $($d:tt)*) => { f64 };
    (Param None) => { Option<$crate::param::ParamSpec> };
    (Param RequiredIn $($d:tt)*) => { Option<$crate::param::ParamSpec> };
    (Param Implied $($d:tt)*) => { Option<$crate::param::ParamSpec> };
    (Param $($d:tt)*) => { $crate::param::ParamSpec };
    (Opening $($d:tt)*) => { $crate::param::ParamSpec };
    (Curve None) => { Option<Vec<[f64; 2]>> };
}

/// The value a spec struct's field starts from before deserializing: the declared default, or
/// a placeholder for a required key (the decoder reports a required key that is absent, so a
/// placeholder never reaches a model).
#[macro_export]
#[doc(hidden)]
macro_rules! key_field_default {
    (Name) => {
        String::new()
    };
    (Node None) => {
        None
    };
    (Node $($d:tt)*) => {
        String::new()
    };
    (Flag Flag($v:expr)) => {
        $v
    };
    (Number None) => {
        None
    };
    (Number Required) => {
        f64::NAN
    };
    (Number RequiredIn($f:expr)) => {
        None
    };
    (Number Number($v:expr)) => {
        $v
    };
    (Param None) => {
        None
    };
    (Param RequiredIn($f:expr)) => {
        None
    };
    (Param Implied($v:expr)) => {
        None
    };
    (Param Required) => {
        $crate::param::ParamSpec::Const(f64::NAN)
    };
    (Param Number($v:expr)) => {
        $crate::param::ParamSpec::Const($v)
    };
    (Opening Number($v:expr)) => {
        $crate::param::ParamSpec::Const($v)
    };
    (Curve None) => {
        None
    };
}

/// A key's [`KeyDefault`] (names and nodes are required).
#[macro_export]
#[doc(hidden)]
macro_rules! key_default {
    () => {
        $crate::components::keys::KeyDefault::Required
    };
    ($d:ident) => {
        $crate::components::keys::KeyDefault::$d
    };
    ($d:ident($v:expr)) => {
        $crate::components::keys::KeyDefault::$d($v)
    };
}

/// A key's quantity (names, nodes and flags: dimensionless).
#[macro_export]
#[doc(hidden)]
macro_rules! key_quantity {
    () => {
        $crate::units::Unit::dimensionless
    };
    ($q:ident) => {
        $crate::units::Unit::$q
    };
}

/// A curve key's argument unit, `Curve(pressure)`: every curve declares it, and no other form
/// has one, so that a curve's first cells cannot take a unit by default.
#[macro_export]
#[doc(hidden)]
macro_rules! key_argument {
    (Curve($a:ident)) => {
        Some($crate::units::Unit::$a)
    };
    (Curve) => {
        compile_error!("a curve key declares its argument's unit: `Curve(dimensionless)`")
    };
    ($f:ident($a:ident)) => {
        compile_error!("only a curve key has an argument unit")
    };
    ($f:ident) => {
        None
    };
}

/// A key's [`Rule`] (names, nodes and flags: any).
#[macro_export]
#[doc(hidden)]
macro_rules! key_rule {
    () => {
        $crate::components::keys::Rule::Any
    };
    ($r:ident) => {
        $crate::components::keys::Rule::$r
    };
    ($r:ident($v:expr)) => {
        $crate::components::keys::Rule::$r($v)
    };
}

/// Declares a component kind once: its `KIND` (the key table) and its spec struct (what the
/// model file's `[[kind]]` tables deserialize into, one field per key, with the declared
/// defaults), which implements [`Spec`].
///
/// ```text
/// declare_kind! {
///     /// FONSim's CircularTube.
///     kind TubeSpec = "tube", Link, gas;
///     name: Name;
///     from: Node;
///     to: Node;
///     /// m.
///     length: Param, length, Required, Positive;
///     roughness: Param, length, Number(1.5e-6), NonNegative;
///     one_way: Flag, dimensionless, Flag(false);
/// }
/// ```
///
/// Each key: `name: Form` (a curve with its argument's quantity, `Curve(pressure)`), then
/// (numbers, flags and curves) its quantity (a [`Unit`] constructor:
/// `length`, `pressure`, ...), its [`KeyDefault`] and (numbers) its [`Rule`]. Attributes before
/// a key (documentation, serde's) go to its field. `gas` (or `no_gas`) says whether the kind
/// holds or carries gas; `check = path` names a function `fn(&Spec) -> Vec<Problem>` with the
/// kind's cross-key rules. The key group that several kinds share, declared once as a macro that
/// appends its keys (`crate::rating_curve_keys`), ends the list as
/// `..rating_curve_keys { attributes }`, the attributes going to its first key.
#[macro_export]
#[doc(hidden)]
macro_rules! declare_kind {
    (
        $(#[$meta:meta])*
        kind $Spec:ident = $kind:literal, $role:ident, $gas:ident $(, check = $check:path)?;
        $(
            $(#[$attr:meta])*
            $key:ident : $form:ident $(($argument:ident))?
                $(, $quantity:ident, $default:ident $(($dv:expr))? $(, $rule:ident $(($rv:expr))?)?)?
            ;
        )*
        ..rating_curve_keys { $($group_attr:tt)* }
    ) => {
        $crate::rating_curve_keys! {
            [$($group_attr)*]
            $(#[$meta])*
            kind $Spec = $kind, $role, $gas $(, check = $check)?;
            $(
                $(#[$attr])*
                $key : $form $(($argument))?
                    $(, $quantity, $default $(($dv))? $(, $rule $(($rv))?)?)?
                ;
            )*
        }
    };
    (
        $(#[$meta:meta])*
        kind $Spec:ident = $kind:literal, $role:ident, $gas:ident $(, check = $check:path)?;
        $(
            $(#[$attr:meta])*
            $key:ident : $form:ident $(($argument:ident))?
                $(, $quantity:ident, $default:ident $(($dv:expr))? $(, $rule:ident $(($rv:expr))?)?)?
            ;
        )*
    ) => {
        /// The key table of this kind (see `crate::components::keys`).
        pub const KIND: $crate::components::keys::Kind = $crate::components::keys::Kind {
            name: $kind,
            role: $crate::components::keys::Role::$role,
            needs_gas: $crate::declare_kind!(@gas $gas),
            keys: &[$(
                $crate::components::keys::Key {
                    name: stringify!($key),
                    form: $crate::components::keys::Form::$form,
                    quantity: $crate::key_quantity!($($quantity)?),
                    default: $crate::key_default!($($default $(($dv))?)?),
                    rule: $crate::key_rule!($($($rule $(($rv))?)?)?),
                    argument: $crate::key_argument!($form $(($argument))?),
                },
            )*],
        };

        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(deny_unknown_fields, default)]
        pub struct $Spec {
            $(
                $(#[$attr])*
                pub $key: $crate::key_field_type!($form $($default $(($dv))?)?),
            )*
        }

        impl ::core::default::Default for $Spec {
            fn default() -> Self {
                $Spec {
                    $($key: $crate::key_field_default!($form $($default $(($dv))?)?),)*
                }
            }
        }

        impl $crate::components::keys::Spec for $Spec {
            fn kind(&self) -> &'static $crate::components::keys::Kind {
                &KIND
            }
            fn name(&self) -> &str {
                &self.name
            }
            fn value(&self, key: &str) -> Option<$crate::components::keys::Value<'_>> {
                $(
                    if key == stringify!($key) {
                        return $crate::components::keys::AsValue::as_value(&self.$key);
                    }
                )*
                None
            }
            fn to_table(&self) -> toml::Table {
                toml::Table::try_from(self).unwrap_or_default()
            }
            #[allow(unreachable_code)]
            fn problems(&self) -> Vec<$crate::components::keys::Problem> {
                $(return $check(self);)?
                Vec::new()
            }
        }
    };
    (@gas gas) => { true };
    (@gas no_gas) => { false };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_units_are_the_fmi_symbols_in_words() {
        for (unit, text) in [
            (Unit::volume(), " m^3"),
            (Unit::flow_coefficient(), " kg/(s Pa)"),
            (Unit::heat_transfer_coefficient(), " W/(m^2 K)"),
            (Unit::sonic_conductance(), " m^3/(s Pa)"),
            (Unit::damping(), " N s/m"),
            (Unit::viscosity(), " Pa s"),
            (Unit::density(), " kg/m^3"),
            (Unit::dimensionless(), ""),
        ] {
            println!("{} -> {text:?}", unit.symbol);
            assert_eq!(message_unit(&unit), text);
        }
    }

    #[test]
    fn pretty_units_are_the_fmi_symbols_typeset() {
        for (unit, text) in [
            (Unit::volume(), "m³"),
            (Unit::flow_coefficient(), "kg/(s·Pa)"),
            (Unit::heat_transfer_coefficient(), "W/(m²·K)"),
            (Unit::sonic_conductance(), "m³/(s·Pa)"),
            (Unit::damping(), "N·s/m"),
            (Unit::viscosity(), "Pa·s"),
            (Unit::volume_rate(), "m³/s"),
            (Unit::dimensionless(), "1"),
        ] {
            println!("{} -> {text}", unit.symbol);
            assert_eq!(pretty_unit(&unit), text);
        }
    }

    #[test]
    fn rules_hold_on_their_ranges_only() {
        let cases = [
            (
                Rule::Positive,
                [(0.0, false), (1e-300, true), (-1.0, false)],
            ),
            (
                Rule::NonNegative,
                [(0.0, true), (-1e-300, false), (5.0, true)],
            ),
            (
                Rule::Fraction,
                [(0.0, true), (1.0, true), (1.0 + 1e-15, false)],
            ),
            (
                Rule::PositiveFraction,
                [(0.0, false), (1.0, true), (0.5, true)],
            ),
            (
                Rule::Below(0.999),
                [(0.0, true), (0.999, false), (-0.1, false)],
            ),
            (Rule::Any, [(-1e300, true), (0.0, true), (f64::NAN, false)]),
        ];
        for (rule, values) in cases {
            for (v, ok) in values {
                println!("{rule:?} {v}: {}", rule.holds(v));
                assert_eq!(rule.holds(v), ok, "{rule:?} {v}");
            }
            assert!(!rule.holds(f64::INFINITY));
        }
    }
}

//! Parts: what a model file may write as one table (`[[hose]]`, `[[cylinder]]`) and the
//! reader expands, right after decoding and before validation, into components of the
//! existing kinds (`crate::components`): chambers, tubes, pistons, heat exchanges. The
//! network, the integrators and the FMI layers see only those components; a part is a
//! shorthand of the model file.
//!
//! A part declares its keys with [`crate::declare_kind!`] as a kind does (so units, defaults,
//! rules, unknown-key suggestions and the docs test come from the same table), and implements
//! [`Part`]: the names it generates and the components it expands into. Its registration is
//! one line in [`crate::with_parts!`].

pub mod cylinder;
pub mod hose;

use super::spec::ModelFile;
use crate::components::keys::{Kind, Spec};

/// The registry of parts, one line each: `part => Spec`, where `part` is the `[[part]]` name
/// and the module `crate::model::parts::part`. Calls `$then! { args... part => Spec, ... }`.
#[macro_export]
#[doc(hidden)]
macro_rules! with_parts {
    ($then:ident $($args:tt)*) => {
        $then! {
            $($args)*
            hose => HoseSpec,
            cylinder => CylinderSpec,
        }
    };
}

macro_rules! parts_table {
    ($($part:ident => $Spec:ident),* $(,)?) => {
        /// Every part's key table, in the registry's order.
        pub const PARTS: &[&Kind] = &[$(&$part::KIND),*];
    };
}
with_parts!(parts_table);

/// The part named `name` (`"hose"`).
pub fn part(name: &str) -> Option<&'static Kind> {
    PARTS.iter().copied().find(|k| k.name == name)
}

/// The key table of a kind or a part named `name`: what the reader's generic passes (units,
/// missing keys) look up for a `[[name]]` list.
pub fn kind_or_part(name: &str) -> Option<&'static Kind> {
    crate::components::kind(name).or_else(|| part(name))
}

/// What a part is to the reader.
pub trait Part: Spec {
    /// Itself as a [`Spec`] (its keys, for the generic checks).
    fn as_spec(&self) -> &dyn Spec;
    /// The names of the components it expands into, with their kinds, in the order
    /// [`Part::expand`] adds them.
    fn generated(&self) -> Vec<(&'static str, String)>;
    /// The nodes it connects (key, node name): each must be a chamber or a reservoir of the
    /// file, or a chamber another part generates.
    fn nodes(&self) -> Vec<(&'static str, &str)>;
    /// Adds its components to `model` (its keys are valid: their rules and its own checks hold).
    fn expand(&self, model: &mut ModelFile);
}

/// What one part became: its kind and name, and the (kind, name) of each component it
/// expanded into.
#[derive(Clone, Debug, PartialEq)]
pub struct Expanded {
    pub part: &'static str,
    pub name: String,
    pub components: Vec<(&'static str, String)>,
}

/// Replaces every part of `model` by the components it expands into (appended to their kinds'
/// lists, part by part in the registry's order), recorded in `model.expanded`; `model` then
/// holds no part.
pub fn expand(model: &mut ModelFile) {
    macro_rules! expand_all {
        ($($part:ident => $Spec:ident),* $(,)?) => {
            $(
                for p in std::mem::take(&mut model.$part) {
                    p.expand(model);
                    model.expanded.push(Expanded {
                        part: p.kind().name,
                        name: p.name().to_string(),
                        components: p.generated(),
                    });
                }
            )*
        };
    }
    with_parts!(expand_all);
}

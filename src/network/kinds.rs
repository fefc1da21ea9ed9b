//! The network's components, one list per kind of the registry (`crate::with_kinds!`), their
//! places in the network's vectors, and the loops over the kinds that the rest of `network` is
//! written with (`each_kind!`, `each_kind_by_role!`): a kind registered is a kind assembled.

use serde::{Deserialize, Serialize};

use crate::components::element::{Build, Element};
use crate::components::keys::Role;

/// A kind of the registry: its place among the kinds and its list in [`Kinds`] (generated for
/// every kind).
pub trait Registered: Element {
    /// Its index in the registry's order.
    const INDEX: usize;
    fn list(k: &Kinds) -> &[Self];
    fn list_mut(k: &mut Kinds) -> &mut Vec<Self>;
}

/// A kind's cache in a network (generated for every kind).
pub(super) trait Cached: Registered {
    fn cache(c: &Caches) -> &Self::Cache;
    fn cache_mut(c: &mut Caches) -> &mut Self::Cache;
}

/// Whether a kind carries flows between nodes (role `Link` or `LiquidLink`).
pub(super) const fn is_link(role: Role) -> bool {
    matches!(role, Role::Link | Role::LiquidLink)
}

/// The bits (`1 << Registered::INDEX`) of the kinds of links (`links`) or of boundaries.
const fn kinds_where(links: bool) -> u32 {
    let mut bits = 0;
    let mut i = 0;
    while i < N_KINDS {
        let keep = if links {
            is_link(ROLES[i])
        } else {
            matches!(ROLES[i], Role::Boundary)
        };
        if keep {
            bits |= 1 << i;
        }
        i += 1;
    }
    bits
}

/// The kinds of links, as bits of their indices.
pub(super) const LINK_KINDS: u32 = kinds_where(true);
/// The kinds of boundaries, as bits of their indices.
pub(super) const BOUNDARY_KINDS: u32 = kinds_where(false);
const _: () = assert!(N_KINDS <= 32, "the kinds' bits are a u32");

macro_rules! kinds {
    ($d:tt $($kind:ident => $Spec:ident),* $(,)?) => {
        /// Every component of a network, one list per kind, in the registry's order (the
        /// fields are the model file's lists).
        #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
        pub struct Kinds {
            $(pub $kind: Vec<<crate::components::$kind::$Spec as Build>::Component>,)*
        }

        /// Each kind's cache ([`Element::Cache`]); not serialized.
        #[derive(Clone, Debug, Default)]
        pub(super) struct Caches {
            $($kind: <<crate::components::$kind::$Spec as Build>::Component as Element>::Cache,)*
        }

        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy)]
        enum Index {
            $($kind,)*
        }

        /// The number of kinds in the registry.
        pub const N_KINDS: usize = [$(Index::$kind),*].len();

        /// Each kind's role, by index.
        const ROLES: [Role; N_KINDS] = [$(
            <<crate::components::$kind::$Spec as Build>::Component as Element>::KIND.role
        ),*];

        $(
            impl Registered for <crate::components::$kind::$Spec as Build>::Component {
                const INDEX: usize = Index::$kind as usize;
                #[inline(always)]
                fn list(k: &Kinds) -> &[Self] {
                    &k.$kind
                }
                #[inline(always)]
                fn list_mut(k: &mut Kinds) -> &mut Vec<Self> {
                    &mut k.$kind
                }
            }

            impl Cached for <crate::components::$kind::$Spec as Build>::Component {
                #[inline(always)]
                fn cache(c: &Caches) -> &Self::Cache {
                    &c.$kind
                }
                #[inline(always)]
                fn cache_mut(c: &mut Caches) -> &mut Self::Cache {
                    &mut c.$kind
                }
            }
        )*

        /// `$body` once per kind, in the registry's order, with `$K` the kind's component type
        /// (`Tube`): a loop over the kinds, unrolled, each pass statically typed.
        macro_rules! each_kind {
            ($d K:ident => $d body:block) => {
                $({
                    #[allow(dead_code)]
                    type $d K = <crate::components::$kind::$Spec
                        as crate::components::element::Build>::Component;
                    $d body
                })*
            };
        }
        pub(super) use each_kind;

        /// [`each_kind!`] in the order of roles: nodes, links (`Link`, `LiquidLink`), then
        /// boundaries, each in the registry's order; the order of the right-hand side's terms,
        /// of the link flows and of the outputs.
        macro_rules! each_kind_by_role {
            ($d K:ident => $d body:block) => {
                $crate::network::kinds::each_kind!($d K => {
                    if const { matches!(<$d K as crate::components::element::Element>::KIND.role,
                        crate::components::keys::Role::Node) } $d body
                });
                $crate::network::kinds::each_kind!($d K => {
                    if const { $crate::network::kinds::is_link(
                        <$d K as crate::components::element::Element>::KIND.role) } $d body
                });
                $crate::network::kinds::each_kind!($d K => {
                    if const { matches!(<$d K as crate::components::element::Element>::KIND.role,
                        crate::components::keys::Role::Boundary) } $d body
                });
            };
        }
        pub(super) use each_kind_by_role;
    };
}
crate::with_kinds!(kinds $);

impl Kinds {
    /// The list of kind `K`.
    #[inline(always)]
    pub fn of<K: Registered>(&self) -> &[K] {
        K::list(self)
    }
}

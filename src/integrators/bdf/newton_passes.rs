//! Kernels of the Newton iteration's vector passes (`cvNewtonIteration`): the residual's
//! right-hand side and the update of the correction, over every state, over the live states
//! only, or fused with the direct solve's split. Each gives the bits of the pass over every
//! state.

use super::nordsieck::NORDSIECK_BLOCK;
use crate::integrators::linsolve::small::SMALL_MAX;
use crate::ode::BlockLayout;

/// The states the predictor and the corrector run over when the constant ones are skipped, as
/// pairs of adjacent states (each pair's two values are one SSE2 operation, as in the passes
/// over all states, which the compiler vectorizes two states at a time; a list of single
/// states would cost more than skipping the constant ones saves) and the states left over.
#[derive(Clone, Debug, Default)]
pub(super) struct Live {
    /// The first state of each pair (every pair's second below n).
    pub(super) pairs: Vec<usize>,
    pub(super) singles: Vec<usize>,
    /// The Newton iteration's passes (`newton_residual_live`, `newton_update_live`): the
    /// states 0..size·groups come in the system's blocks (`OdeSystem::BLOCKS`) whose first
    /// `live` states are live and the others constant (a network's chambers without a piston
    /// or a wall: mass, energy, fixed volume), swept block by block without an index or a
    /// bounds check per state; `rest` are the live states from size·groups on, increasing.
    /// groups = 0: the passes run over every state.
    pub(super) groups: usize,
    pub(super) rest: Vec<usize>,
}

impl Live {
    /// The runs of states not `constant`, cut into pairs and a single at an odd run's end;
    /// and the leading blocks of the system's layout `blocks` whose constant states are
    /// exactly its non-live ones (`groups`), with the live states after.
    pub(super) fn of(constant: &[bool], blocks: Option<BlockLayout>) -> Live {
        let mut live = Live::default();
        let mut i = 0;
        while i < constant.len() {
            if constant[i] {
                i += 1;
            } else if i + 1 < constant.len() && !constant[i + 1] {
                live.pairs.push(i);
                i += 2;
            } else {
                live.singles.push(i);
                i += 1;
            }
        }
        // Up to `SMALL_MAX` states the full passes (vectorized, one loop) cost less.
        let blocks = BlockLayout::checked(blocks);
        if let Some(b) = blocks
            && constant.len() > SMALL_MAX
        {
            live.groups = regular_groups(constant, b);
        }
        let start = blocks.map_or(0, |b| b.size * live.groups);
        live.rest = (start..constant.len()).filter(|&i| !constant[i]).collect();
        live
    }
}

/// How many blocks of the layout `b` from state 0 on have their first `b.live` states live
/// and the others constant (`constant[i]`).
fn regular_groups(constant: &[bool], b: BlockLayout) -> usize {
    constant
        .chunks_exact(b.size)
        .take_while(|g| g.iter().enumerate().all(|(r, &c)| c == (r >= b.live)))
        .count()
}

/// The layout the kernels sweep: the system's (`OdeSystem::BLOCKS`), or single states when it
/// has none (then there are no groups). A constant once the system's type is known.
#[inline(always)]
pub(super) const fn kernel_blocks(blocks: Option<BlockLayout>) -> BlockLayout {
    match BlockLayout::checked(blocks) {
        Some(b) => b,
        None => BlockLayout { size: 1, live: 1 },
    }
}

/// The Newton residual's right-hand side tv = γ·f − (z_1/ℓ_1 + acor) (cvNewtonIteration), for
/// the first n states. An index loop over slices cut to n: one trip count, where a zip of
/// four vectors computes it from four lengths.
#[inline(always)]
pub(super) fn newton_residual(
    tv: &mut [f64],
    z1: &[f64],
    acor: &[f64],
    f: &[f64],
    rl1: f64,
    gamma: f64,
    n: usize,
) {
    let (tv, z1, acor, f) = (&mut tv[..n], &z1[..n], &acor[..n], &f[..n]);
    for i in 0..n {
        let t = rl1 * z1[i] + acor[i];
        tv[i] = gamma * f[i] - t;
    }
}

/// One pass of the Newton update over the first n states: the drift scaling δ *= c (when
/// `scale`), acor += δ, y = z_0 + acor; returns Σ(δ·w)², `wrms`'s sum in its order. An index
/// loop over slices cut to n, as `newton_residual`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn newton_update(
    acor: &mut [f64],
    y: &mut [f64],
    tv: &mut [f64],
    z0: &[f64],
    w: &[f64],
    scale: bool,
    c: f64,
    n: usize,
) -> f64 {
    let (acor, y, tv, z0, w) = (&mut acor[..n], &mut y[..n], &mut tv[..n], &z0[..n], &w[..n]);
    let mut sum = 0.0;
    if scale && n > NORDSIECK_BLOCK {
        // Large systems: the scaling in the same sweep (one pass less over memory).
        for i in 0..n {
            tv[i] *= c;
            let d = tv[i] * w[i];
            sum += d * d;
            acor[i] += tv[i];
            y[i] = z0[i] + acor[i];
        }
        return sum;
    }
    // Small ones: the scaling a pass of its own (vectorized), the sweep without a branch.
    if scale {
        for v in tv.iter_mut() {
            *v *= c;
        }
    }
    for i in 0..n {
        let d = tv[i] * w[i];
        sum += d * d;
        acor[i] += tv[i];
        y[i] = z0[i] + acor[i];
    }
    sum
}

/// `newton_residual` over the `live` states only (`Live::groups` and `Live::rest`; the others
/// are constant, and their tv is never read: the direct solve leaves them out, and
/// `newton_update_live` skips them). Per state the same operations, so the same bits.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) fn newton_residual_live(
    tv: &mut [f64],
    z1: &[f64],
    acor: &[f64],
    f: &[f64],
    rl1: f64,
    gamma: f64,
    n: usize,
    live: &Live,
    blocks: BlockLayout,
) {
    let (tv, z1, acor, f) = (&mut tv[..n], &z1[..n], &acor[..n], &f[..n]);
    residual_groups(
        tv,
        blocks.size,
        z1,
        acor,
        f,
        rl1,
        gamma,
        live.groups,
        blocks,
    );
    residual_rest(tv, z1, acor, f, rl1, gamma, &live.rest);
}

/// The residual of the groups' live states (the first `live` of each block of `size`) into
/// `dst`, `stride` values a group: stride = size writes them in place in tv
/// (`newton_residual_live`), stride = live packs them into the coupled block's right-hand side
/// (`Peel::b`, the fused iteration). Inlined where `blocks` and `stride` are constants.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn residual_groups(
    dst: &mut [f64],
    stride: usize,
    z1: &[f64],
    acor: &[f64],
    f: &[f64],
    rl1: f64,
    gamma: f64,
    groups: usize,
    blocks: BlockLayout,
) {
    let BlockLayout { size, live } = blocks;
    let g = size * groups;
    for (((d, z1), a), f) in dst[..stride * groups]
        .chunks_exact_mut(stride)
        .zip(z1[..g].chunks_exact(size))
        .zip(acor[..g].chunks_exact(size))
        .zip(f[..g].chunks_exact(size))
    {
        for r in 0..live {
            let t = rl1 * z1[r] + a[r];
            d[r] = gamma * f[r] - t;
        }
    }
}

/// The residual of the live states after the groups (`Live::rest`), in tv.
#[inline(always)]
pub(super) fn residual_rest(
    tv: &mut [f64],
    z1: &[f64],
    acor: &[f64],
    f: &[f64],
    rl1: f64,
    gamma: f64,
    rest: &[usize],
) {
    for &i in rest {
        let t = rl1 * z1[i] + acor[i];
        tv[i] = gamma * f[i] - t;
    }
}

/// `newton_update` over the `live` states only, in increasing order. A skipped (constant)
/// state's δ is ±0 (f_i ≡ 0, and its z_1 and acor are +0), so the full pass adds +0 to the
/// sum and to acor and y = z_0 + acor = z_0 there (as `newton` set y first, acor = 0): the
/// same bits.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn newton_update_live(
    acor: &mut [f64],
    y: &mut [f64],
    tv: &mut [f64],
    z0: &[f64],
    w: &[f64],
    scale: bool,
    c: f64,
    n: usize,
    live: &Live,
    blocks: BlockLayout,
) -> f64 {
    let (acor, y, tv, z0, w) = (&mut acor[..n], &mut y[..n], &mut tv[..n], &z0[..n], &w[..n]);
    let groups = live.groups;
    let sum = update_groups(acor, y, tv, blocks.size, z0, w, scale, c, groups, blocks);
    update_rest(acor, y, tv, z0, w, scale, c, &live.rest, sum)
}

/// The update of the groups' live states, their δ read from `d` (`stride` values a group, as
/// `residual_groups` wrote them; scaled there): the drift scaling, the weighted sum of squares
/// (returned, from 0) and acor += δ, y = z_0 + acor.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn update_groups(
    acor: &mut [f64],
    y: &mut [f64],
    d: &mut [f64],
    stride: usize,
    z0: &[f64],
    w: &[f64],
    scale: bool,
    c: f64,
    groups: usize,
    blocks: BlockLayout,
) -> f64 {
    let BlockLayout { size, live } = blocks;
    let g = size * groups;
    let mut sum = 0.0;
    for ((((a, y), d), z0), w) in acor[..g]
        .chunks_exact_mut(size)
        .zip(y[..g].chunks_exact_mut(size))
        .zip(d[..stride * groups].chunks_exact_mut(stride))
        .zip(z0[..g].chunks_exact(size))
        .zip(w[..g].chunks_exact(size))
    {
        for r in 0..live {
            if scale {
                d[r] *= c;
            }
            let e = d[r] * w[r];
            sum += e * e;
            a[r] += d[r];
            y[r] = z0[r] + a[r];
        }
    }
    sum
}

/// `update_groups` for the live states after the groups (`Live::rest`), their δ in tv, the
/// sum of squares continued from `sum`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn update_rest(
    acor: &mut [f64],
    y: &mut [f64],
    tv: &mut [f64],
    z0: &[f64],
    w: &[f64],
    scale: bool,
    c: f64,
    rest: &[usize],
    mut sum: f64,
) -> f64 {
    for &i in rest {
        if scale {
            tv[i] *= c;
        }
        let e = tv[i] * w[i];
        sum += e * e;
        acor[i] += tv[i];
        y[i] = z0[i] + acor[i];
    }
    sum
}

/// `Step::newton_passes`' variants: over every state, over the live ones (`Live::groups`), or
/// fused with the direct solve's split (`Workspace::fused`: the groups' residual and δ in
/// `Peel::b`, the blocks' live values a group).
pub(super) const FULL: u8 = 0;
pub(super) const LIVE: u8 = 1;
pub(super) const FUSED: u8 = 2;

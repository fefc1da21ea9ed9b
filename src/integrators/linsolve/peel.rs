//! The split of M = I − γJ by its pattern: the states solved outside the LU before and after
//! it, and the coupled block the LU factors.

use crate::ode::{BlockLayout, OdeSystem};
use crate::sparsity::Pattern;

/// The direct solvers' split of M = I − γJ by its pattern (`Peel::of`): the "first" states,
/// whose row of M has no entry off the diagonal (x_i = b_i/M_ii before anything else; their
/// columns then move to the right-hand side of the others), and, of the others, the "last"
/// states, whose column has none (x_j from row j after the others). The LU runs over the
/// remaining, coupled states only. Ordered first, coupled, last, M is block lower triangular,
/// [D_F 0 0; M_CF M_CC 0; M_LF M_LC D_L] (a last state's row cannot hold another last state:
/// that one's column would not be empty), so the split is exact. On the 20-tank chain the 20
/// fixed volumes (dV/dt ≡ 0) and the 2 accumulators leave the band, 62 → 40 states, 5/5 → 3/3.
/// The system's constant states with an empty row (`OdeSystem::constant_states`: those fixed
/// volumes) are first states whose solution is their b unchanged (M_ii = 1) and always 0 (f_i
/// ≡ 0 and their Nordsieck columns stay 0, so nothing moves): they are left out altogether
/// (`constant`), which keeps the same bits and saves a division and a test each per solve.
/// Built once per pattern in `prepare`; nothing here is serialized.
#[derive(Default)]
pub(crate) struct Peel {
    /// The coupled states, increasing or in the band's order (`reorder`); the LU's state k is
    /// `core[k]`.
    pub(crate) core: Vec<usize>,
    /// M's pattern over `core`, renumbered 0..core.len(), and per entry its position in J's
    /// values (M's pattern).
    pub(crate) pattern: Pattern,
    pub(crate) src: Vec<usize>,
    /// J's values over `pattern`, gathered at each factorization; the right-hand side over
    /// `core`.
    pub(crate) jac: Vec<f64>,
    pub(crate) b: Vec<f64>,
    /// The first states, and the off-diagonal entries of their columns (rows of the others).
    pub(crate) first: Vec<Peeled>,
    pub(crate) first_col: Vec<PeeledEntry>,
    /// The last states, and the entries of their rows in coupled columns (the first columns
    /// reach them with the others').
    pub(crate) last: Vec<Peeled>,
    pub(crate) last_row: Vec<PeeledEntry>,
    /// The constant states left out (increasing).
    pub(crate) constant: Vec<usize>,
    /// `core` is exactly the live states of the first `groups` groups of the regular layout
    /// (`OdeSystem::BLOCKS`: a chain of chambers without pistons or walls, in the states' own
    /// order): the gather and scatter then move each block's live values at once, without an
    /// index or a bounds check per value. 0: through `core`.
    pub(crate) groups: usize,
    /// The coupled states are in the band's order (`reorder`), not increasing.
    pub(crate) reordered: bool,
}

/// A state solved outside the LU: its index, its diagonal's position in J's values, M_ii as
/// factored, and the end of its entries in `first_col` or `last_row`.
#[derive(Clone, Copy, Default)]
pub(crate) struct Peeled {
    pub(crate) state: usize,
    pub(crate) pos: usize,
    pub(crate) d: f64,
    pub(crate) end: usize,
}

/// An off-diagonal entry of a peeled state's column or row: the other state, the position in
/// J's values, M's value −γ·J as factored, and the other state's position in `Peel::core`
/// when it is coupled (a last state's row entry; else `usize::MAX`), for `after_fused`.
#[derive(Clone, Copy)]
pub(crate) struct PeeledEntry {
    pub(crate) state: usize,
    pub(crate) pos: usize,
    pub(crate) m: f64,
    pub(crate) core: usize,
}

impl Peel {
    /// The split of M's pattern `p` (diagonal included), the last states kept in the LU unless
    /// `last`; `None` when fewer than `min_split` states (at least 1) would be split off (the
    /// LU then runs over M). `constant[i]`: state i is constant (left out when its row is
    /// empty). `blocks`: the system's block layout, which the gathers follow when the coupled
    /// states are the live states of its leading blocks.
    pub(crate) fn of(
        p: &Pattern,
        last: bool,
        min_split: usize,
        constant: &[bool],
        blocks: Option<BlockLayout>,
    ) -> Option<Peel> {
        const COUPLED: usize = usize::MAX;
        const FIRST: usize = usize::MAX - 1;
        const LAST: usize = usize::MAX - 2;
        const CONSTANT: usize = usize::MAX - 3;
        let n = p.n;
        // Per state: its off-diagonal entries in its row, then its index among the coupled
        // states or its kind.
        let mut index = vec![0usize; n];
        let mut col_empty = vec![true; n];
        for (j, empty) in col_empty.iter_mut().enumerate() {
            for &i in p.column(j) {
                if i != j {
                    index[i] += 1;
                    *empty = false;
                }
            }
        }
        for (i, (k, e)) in index.iter_mut().zip(&col_empty).enumerate() {
            *k = match (*k, e) {
                (0, _) if constant.get(i) == Some(&true) => CONSTANT,
                (0, _) => FIRST,
                (_, true) if last => LAST,
                _ => COUPLED,
            };
        }
        if index.iter().filter(|&&k| k != COUPLED).count() < min_split.max(1) {
            return None;
        }
        let mut peel = Peel::default();
        for (i, k) in index.iter_mut().enumerate() {
            if *k == COUPLED {
                *k = peel.core.len();
                peel.core.push(i);
            }
        }
        let diag_pos = |j: usize| p.col_start[j] + p.column(j).partition_point(|&i| i < j);
        // The coupled block, column by column (rows stay ascending: the renumbering keeps the
        // order); the last states' row entries on the way, by column.
        let mut col_start = Vec::with_capacity(peel.core.len() + 1);
        let mut rows = Vec::new();
        let mut last_entries = Vec::new();
        col_start.push(0);
        for &j in &peel.core {
            for (k, &i) in p.column(j).iter().enumerate() {
                let pos = p.col_start[j] + k;
                // (A constant state's row is empty: it is in no column.)
                if index[i] < CONSTANT {
                    rows.push(index[i]);
                    peel.src.push(pos);
                } else if index[i] == LAST {
                    last_entries.push((i, j, pos));
                }
            }
            col_start.push(rows.len());
        }
        peel.pattern = Pattern {
            n: peel.core.len(),
            col_start,
            rows,
        };
        peel.jac = vec![0.0; peel.src.len()];
        peel.b = vec![0.0; peel.core.len()];
        peel.constant = (0..n).filter(|&j| index[j] == CONSTANT).collect();
        for j in (0..n).filter(|&j| index[j] == FIRST) {
            for (k, &i) in p.column(j).iter().enumerate() {
                if i != j {
                    let pos = p.col_start[j] + k;
                    peel.first_col.push(PeeledEntry {
                        state: i,
                        pos,
                        m: 0.0,
                        core: usize::MAX,
                    });
                }
            }
            let end = peel.first_col.len();
            peel.first.push(Peeled {
                state: j,
                pos: diag_pos(j),
                d: 0.0,
                end,
            });
        }
        // Rows: by last state (stable: by column within each).
        last_entries.sort_by_key(|e| e.0);
        let mut entries = last_entries.iter().peekable();
        for j in (0..n).filter(|&j| index[j] == LAST) {
            while let Some(&(_, c, pos)) = entries.next_if(|e| e.0 == j) {
                peel.last_row.push(PeeledEntry {
                    state: c,
                    pos,
                    m: 0.0,
                    core: usize::MAX,
                });
            }
            let end = peel.last_row.len();
            peel.last.push(Peeled {
                state: j,
                pos: diag_pos(j),
                d: 0.0,
                end,
            });
        }
        for e in &mut peel.last_row {
            if index[e.state] < CONSTANT {
                e.core = index[e.state];
            }
        }
        if let Some(BlockLayout { size, live }) = BlockLayout::checked(blocks) {
            let groups = peel.core.len() / live;
            let layout = (0..groups).flat_map(|k| (0..live).map(move |r| size * k + r));
            if peel.core.iter().copied().eq(layout) {
                peel.groups = groups;
            }
        }
        Some(peel)
    }

    /// Take the coupled states in the order `perm` (`perm[k]`: the coupled state at position
    /// k; `pos` its inverse), renumbering their pattern.
    pub(crate) fn reorder(&mut self, perm: &[usize], pos: &[usize]) {
        let old = std::mem::take(&mut self.pattern);
        let old_src = std::mem::take(&mut self.src);
        let mut col_start = Vec::with_capacity(perm.len() + 1);
        let mut rows = Vec::with_capacity(old.rows.len());
        col_start.push(0);
        let mut col = Vec::new();
        for &oj in perm {
            col.clear();
            let range = old.col_start[oj]..old.col_start[oj + 1];
            col.extend(
                old.rows[range.clone()]
                    .iter()
                    .map(|&i| pos[i])
                    .zip(&old_src[range]),
            );
            col.sort_unstable();
            for &(i, &src) in &col {
                rows.push(i);
                self.src.push(src);
            }
            col_start.push(rows.len());
        }
        self.core = perm.iter().map(|&k| self.core[k]).collect();
        self.reordered = true;
        // Another order than the states' own: the gathers go through `core` (and the fused
        // Newton iteration, which needs the groups, is not taken).
        self.groups = 0;
        for e in &mut self.last_row {
            if e.core != usize::MAX {
                e.core = pos[e.core];
            }
        }
        self.pattern = Pattern {
            n: perm.len(),
            col_start,
            rows,
        };
    }

    /// The peeled entries of M = I − γJ (`jac`: J over M's pattern) and, when `gather`, the
    /// coupled block's J gathered into `self.jac` (the band LU reads J through its `FillMap`
    /// instead). False when a peeled diagonal is zero or not finite (M singular).
    pub(crate) fn factor(&mut self, jac: &[f64], gamma: f64, gather: bool) -> bool {
        let mut ok = true;
        // (Plain loops, not chained iterators: they compile to less.)
        for s in &mut self.first {
            // 1 + (−γ·J_ii): the LU's own sum for a diagonal entry.
            s.d = -gamma * jac[s.pos] + 1.0;
            ok &= s.d != 0.0 && s.d.is_finite();
        }
        for s in &mut self.last {
            s.d = -gamma * jac[s.pos] + 1.0;
            ok &= s.d != 0.0 && s.d.is_finite();
        }
        for e in &mut self.first_col {
            e.m = -gamma * jac[e.pos];
        }
        for e in &mut self.last_row {
            e.m = -gamma * jac[e.pos];
        }
        if gather {
            for (v, &pos) in self.jac.iter_mut().zip(&self.src) {
                *v = jac[pos];
            }
        }
        ok
    }

    /// The first states of M x = b in place, their columns onto the others' right-hand sides,
    /// then the coupled block's right-hand side gathered into `self.b` (by the blocks of `S`,
    /// the system, when `groups` says so).
    #[inline]
    pub(crate) fn before<S: OdeSystem>(&mut self, b: &mut [f64]) {
        let mut start = 0;
        for s in &self.first {
            let x = b[s.state] / s.d;
            b[s.state] = x;
            // A fixed volume's correction is 0: nothing to move.
            if x != 0.0 {
                for e in &self.first_col[start..s.end] {
                    b[e.state] -= e.m * x;
                }
            }
            start = s.end;
        }
        if self.groups > 0
            && let Some(BlockLayout { size, live }) = BlockLayout::checked(S::BLOCKS)
        {
            for (c, g) in self.b.chunks_exact_mut(live).zip(b.chunks_exact(size)) {
                c.copy_from_slice(&g[..live]);
            }
            return;
        }
        for (c, &i) in self.b.iter_mut().zip(&self.core) {
            *c = b[i];
        }
    }

    /// `after` for the fused Newton iteration (`Workspace::fused`): the coupled block's
    /// solution stays in `self.b`, and the last states' rows read it there. The same
    /// operations in the same order as `after`, so the same bits.
    #[inline]
    pub(crate) fn after_fused(&self, b: &mut [f64]) {
        let mut start = 0;
        for s in &self.last {
            let mut r = b[s.state];
            for e in &self.last_row[start..s.end] {
                r -= e.m * self.b[e.core];
            }
            b[s.state] = r / s.d;
            start = s.end;
        }
    }

    /// The coupled block's solution from `self.b` into b (by the blocks of `S`, the system,
    /// when `groups` says so), then the last states from their rows.
    #[inline]
    pub(crate) fn after<S: OdeSystem>(&self, b: &mut [f64]) {
        if self.groups > 0
            && let Some(BlockLayout { size, live }) = BlockLayout::checked(S::BLOCKS)
        {
            for (c, g) in self.b.chunks_exact(live).zip(b.chunks_exact_mut(size)) {
                g[..live].copy_from_slice(c);
            }
        } else {
            for (&c, &i) in self.b.iter().zip(&self.core) {
                b[i] = c;
            }
        }
        let mut start = 0;
        for s in &self.last {
            let mut r = b[s.state];
            for e in &self.last_row[start..s.end] {
                r -= e.m * b[e.state];
            }
            b[s.state] = r / s.d;
            start = s.end;
        }
    }
}

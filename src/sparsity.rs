//! Jacobian sparsity patterns of an ODE system (`crate::ode::OdeSystem::sparsity`; the
//! network's own pattern is `crate::network::pattern`), the orderings that narrow their bands,
//! and the column grouping that lets a finite-difference Jacobian perturb many states at once.
//!
//! Columns whose nonzero rows do not intersect ("structurally orthogonal" columns) can be
//! perturbed together in one right-hand-side evaluation: Curtis, Powell & Reid, "On the
//! estimation of sparse Jacobian matrices", J. Inst. Math. Appl. 13 (1974). The grouping is the
//! greedy sequential colouring of the column-intersection graph (Coleman & Moré, SIAM J. Numer.
//! Anal. 20 (1983), "sequential" ordering): each column takes the smallest group none of whose
//! columns shares a row with it.

/// Up to this many states the analysis (the network's pattern, the column colouring) works on
/// one 64-bit row mask per column: no entry list to sort, no row-wise view to build; the same
/// pattern and the same groups as the general path (unit tests compare the two).
pub const MASK_MAX: usize = 64;

/// A structural nonzero pattern, column by column (compressed sparse columns, rows ascending).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pattern {
    pub n: usize,
    /// Rows of column j are `rows[col_start[j]..col_start[j + 1]]`.
    pub col_start: Vec<usize>,
    pub rows: Vec<usize>,
}

impl Pattern {
    /// From a dense boolean matrix `dep[i * n + j]` = "row i depends on column j".
    pub fn from_dense(n: usize, dep: &[bool]) -> Pattern {
        assert_eq!(dep.len(), n * n);
        let mut col_start = Vec::with_capacity(n + 1);
        let mut rows = Vec::new();
        col_start.push(0);
        for j in 0..n {
            for i in 0..n {
                if dep[i * n + j] {
                    rows.push(i);
                }
            }
            col_start.push(rows.len());
        }
        Pattern { n, col_start, rows }
    }

    /// From a list of (column, row) entries, in any order, repeats allowed; no n² storage
    /// (networks of 10⁵ states). A counting sort by column, then each column's few rows sorted
    /// and deduplicated in place: sorting the whole list was 3 % of a 20-tank chain's BDF solve.
    pub fn from_entries(n: usize, entries: Vec<(usize, usize)>) -> Pattern {
        let mut col_start = vec![0; n + 1];
        for &(j, _) in &entries {
            col_start[j + 1] += 1;
        }
        for j in 0..n {
            col_start[j + 1] += col_start[j];
        }
        let mut fill = col_start[..n].to_vec();
        let mut rows = vec![0; entries.len()];
        for &(j, i) in &entries {
            rows[fill[j]] = i;
            fill[j] += 1;
        }
        // Compact: column j's unique rows move down to `out`.
        let (mut out, mut lo) = (0, 0);
        for j in 0..n {
            let hi = col_start[j + 1];
            rows[lo..hi].sort_unstable();
            col_start[j] = out;
            for k in lo..hi {
                if k == lo || rows[k] != rows[k - 1] {
                    rows[out] = rows[k];
                    out += 1;
                }
            }
            lo = hi;
        }
        col_start[n] = out;
        rows.truncate(out);
        Pattern { n, col_start, rows }
    }

    /// From one bit mask per column (bit i of `masks[j]`: row i depends on column j), for
    /// n ≤ [`MASK_MAX`]: the rows come out ascending and unique by construction (no sort).
    pub fn from_masks(masks: &[u64]) -> Pattern {
        let n = masks.len();
        debug_assert!(n <= MASK_MAX);
        let nnz = masks.iter().map(|m| m.count_ones() as usize).sum();
        let mut col_start = Vec::with_capacity(n + 1);
        let mut rows = Vec::with_capacity(nnz);
        col_start.push(0);
        for &m in masks {
            let mut m = m;
            while m != 0 {
                rows.push(m.trailing_zeros() as usize);
                m &= m - 1;
            }
            col_start.push(rows.len());
        }
        Pattern { n, col_start, rows }
    }

    /// Column j's rows as a bit mask (n ≤ [`MASK_MAX`]).
    fn column_mask(&self, j: usize) -> u64 {
        self.column(j).iter().fold(0, |m, &i| m | 1 << i)
    }

    /// Every entry structurally nonzero.
    pub fn dense(n: usize) -> Pattern {
        Pattern::from_dense(n, &vec![true; n * n])
    }

    pub fn column(&self, j: usize) -> &[usize] {
        &self.rows[self.col_start[j]..self.col_start[j + 1]]
    }

    pub fn nonzeros(&self) -> usize {
        self.rows.len()
    }

    /// out += α·A·u for the matrix A with this pattern and the values `vals` (one per entry,
    /// in the pattern's order): the CSC product, by columns, skipping the columns where α·u_j
    /// is zero (the BDF's GMRES applies M = I − γJ through it, the Krylov tests their matrices).
    pub fn mul_add(&self, vals: &[f64], alpha: f64, u: &[f64], out: &mut [f64]) {
        debug_assert_eq!(vals.len(), self.nonzeros());
        debug_assert!(u.len() == self.n && out.len() == self.n);
        for (j, &uj) in u.iter().enumerate() {
            let c = alpha * uj;
            if c != 0.0 {
                let range = self.col_start[j]..self.col_start[j + 1];
                for (&i, a) in self.rows[range.clone()].iter().zip(&vals[range]) {
                    out[i] += c * a;
                }
            }
        }
    }

    pub fn contains(&self, i: usize, j: usize) -> bool {
        self.column(j).binary_search(&i).is_ok()
    }

    /// This pattern without the entries of the rows i with `drop[i]`.
    pub fn without_rows(&self, drop: &[bool]) -> Pattern {
        debug_assert_eq!(drop.len(), self.n);
        let mut col_start = Vec::with_capacity(self.n + 1);
        let mut rows = Vec::with_capacity(self.rows.len());
        col_start.push(0);
        for j in 0..self.n {
            rows.extend(self.column(j).iter().filter(|&&i| !drop[i]));
            col_start.push(rows.len());
        }
        Pattern {
            n: self.n,
            col_start,
            rows,
        }
    }

    /// This pattern with every diagonal entry added (the pattern of I − γJ), and for each of
    /// this pattern's entries its position in the new one.
    pub fn with_diagonal(&self) -> (Pattern, Vec<usize>) {
        let n = self.n;
        let mut col_start = Vec::with_capacity(n + 1);
        let mut rows = Vec::with_capacity(self.rows.len() + n);
        let mut pos = Vec::with_capacity(self.rows.len());
        col_start.push(0);
        for j in 0..n {
            let col = self.column(j);
            let split = col.partition_point(|&i| i < j);
            for &i in &col[..split] {
                pos.push(rows.len());
                rows.push(i);
            }
            if col.get(split) != Some(&j) {
                rows.push(j);
            }
            for &i in &col[split..] {
                pos.push(rows.len());
                rows.push(i);
            }
            col_start.push(rows.len());
        }
        (Pattern { n, col_start, rows }, pos)
    }
}

/// A bandwidth-reducing order of the states for a band factorization: the reverse
/// Cuthill–McKee order of the symmetrized pattern P + Pᵀ (Cuthill & McKee, "Reducing the
/// bandwidth of sparse symmetric matrices", Proc. 24th ACM Nat. Conf. (1969); reversed as George
/// & Liu, *Computer Solution of Large Sparse Positive Definite Systems*, 1981, §4.3). Each
/// connected component starts from a pseudo-peripheral state (George & Liu's iteration: restart
/// from a state of least degree in the last BFS level while the level count grows) and is
/// numbered breadth-first, the neighbours of a state in increasing degree. `perm[k]` is the
/// state at position k. The network's own numbering stays as it is (the saved state and the FMI
/// variables depend on it); only a linear solver uses this order.
pub fn reverse_cuthill_mckee(p: &Pattern) -> Vec<usize> {
    let n = p.n;
    // Symmetrized adjacency without the diagonal, in CSR form.
    let mut deg = vec![0usize; n];
    for j in 0..n {
        for &i in p.column(j) {
            if i != j {
                deg[i] += 1;
                deg[j] += 1;
            }
        }
    }
    let mut start = vec![0usize; n + 1];
    for i in 0..n {
        start[i + 1] = start[i] + deg[i];
    }
    let mut fill = start.clone();
    let mut adj = vec![0usize; start[n]];
    for j in 0..n {
        for &i in p.column(j) {
            if i != j {
                adj[fill[i]] = j;
                fill[i] += 1;
                adj[fill[j]] = i;
                fill[j] += 1;
            }
        }
    }
    // Duplicates (an entry and its transpose both present) removed, neighbours by degree.
    let mut degree = vec![0usize; n];
    for i in 0..n {
        let list = &mut adj[start[i]..start[i + 1]];
        list.sort_unstable();
        let mut w = 0;
        for r in 0..list.len() {
            if r == 0 || list[r] != list[r - 1] {
                list[w] = list[r];
                w += 1;
            }
        }
        degree[i] = w;
    }
    for i in 0..n {
        let list = &mut adj[start[i]..start[i] + degree[i]];
        list.sort_by_key(|&k| (degree[k], k));
    }
    let neighbours = |i: usize| &adj[start[i]..start[i] + degree[i]];
    let mut order = Vec::with_capacity(n);
    let mut placed = vec![false; n];
    // Scratch of the pseudo-peripheral search: the BFS levels of one component.
    let mut mark = vec![usize::MAX; n];
    let mut level = Vec::new();
    let mut stamp = 0;
    let mut bfs = |root: usize, level: &mut Vec<usize>, stamp: usize| -> (usize, usize) {
        // (depth, first index of the last level in `level`)
        level.clear();
        level.push(root);
        mark[root] = stamp;
        let (mut head, mut depth, mut last) = (0, 0, 0);
        while head < level.len() {
            let end = level.len();
            last = head;
            for k in head..end {
                for &j in neighbours(level[k]) {
                    if mark[j] != stamp {
                        mark[j] = stamp;
                        level.push(j);
                    }
                }
            }
            head = end;
            depth += 1;
        }
        (depth, last)
    };
    for seed in 0..n {
        if placed[seed] {
            continue;
        }
        // Pseudo-peripheral root of seed's component.
        let mut root = seed;
        let (mut depth, mut last) = bfs(root, &mut level, stamp);
        stamp += 1;
        for _ in 0..n {
            let cand = level[last..]
                .iter()
                .copied()
                .min_by_key(|&k| (degree[k], k))
                .unwrap_or(root);
            let (d, l) = bfs(cand, &mut level, stamp);
            stamp += 1;
            if d <= depth {
                break;
            }
            (root, depth, last) = (cand, d, l);
        }
        // Cuthill–McKee from the root.
        let first = order.len();
        order.push(root);
        placed[root] = true;
        let mut head = first;
        while head < order.len() {
            let i = order[head];
            head += 1;
            for &j in neighbours(i) {
                if !placed[j] {
                    placed[j] = true;
                    order.push(j);
                }
            }
        }
    }
    order.reverse();
    order
}

/// Lower and upper bandwidths (kl, ku) of a pattern with its rows and columns reordered:
/// entry (i, j) goes to (pos[i], pos[j]); the largest pos[i] − pos[j] and pos[j] − pos[i].
pub fn bandwidths_under(p: &Pattern, pos: &[usize]) -> (usize, usize) {
    debug_assert_eq!(pos.len(), p.n);
    let (mut kl, mut ku) = (0, 0);
    for j in 0..p.n {
        for &i in p.column(j) {
            kl = kl.max(pos[i].saturating_sub(pos[j]));
            ku = ku.max(pos[j].saturating_sub(pos[i]));
        }
    }
    (kl, ku)
}

/// Groups of structurally orthogonal columns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Coloring {
    /// Group of each column.
    pub color: Vec<usize>,
    /// Columns of group g are `columns[group_start[g]..group_start[g + 1]]`.
    pub group_start: Vec<usize>,
    pub columns: Vec<usize>,
}

impl Coloring {
    pub fn n_colors(&self) -> usize {
        self.group_start.len() - 1
    }

    pub fn group(&self, g: usize) -> &[usize] {
        &self.columns[self.group_start[g]..self.group_start[g + 1]]
    }
}

/// Greedy (Curtis–Powell–Reid) colouring: column j gets the smallest colour not used by an
/// earlier column that shares a row with it. Empty columns form no group of their own: they
/// join group 0 (perturbing them changes nothing and costs nothing).
pub fn color_columns(p: &Pattern) -> Coloring {
    let color = if p.n <= MASK_MAX {
        greedy_colors_masks(p)
    } else {
        greedy_colors(p)
    };
    groups_of(color)
}

/// The greedy colours on row masks (n ≤ [`MASK_MAX`]): column j conflicts with an earlier
/// column k exactly when their masks intersect, and takes the lowest colour not in the set of
/// its conflicts' colours (at most n ≤ 64 colours: one word). The same choice, column by
/// column, as [`greedy_colors`]; `usize::MAX` for empty columns.
pub(crate) fn greedy_colors_masks(p: &Pattern) -> Vec<usize> {
    let n = p.n;
    let mut masks = [0u64; MASK_MAX];
    let mut color = vec![usize::MAX; n];
    for j in 0..n {
        let mj = p.column_mask(j);
        masks[j] = mj;
        if mj == 0 {
            continue;
        }
        let mut used = 0u64;
        for k in 0..j {
            if masks[k] & mj != 0 && color[k] != usize::MAX {
                used |= 1 << color[k];
            }
        }
        color[j] = used.trailing_ones() as usize;
    }
    color
}

/// The greedy colours through the pattern's row-wise view (any n); `usize::MAX` for empty
/// columns.
pub(crate) fn greedy_colors(p: &Pattern) -> Vec<usize> {
    let n = p.n;
    // Columns of each row (the row-wise view of the pattern), compressed: row i's columns are
    // `row_cols[row_start[i]..row_start[i + 1]]`, ascending (one allocation, not one per row).
    let mut row_start = vec![0; n + 1];
    for &i in &p.rows {
        row_start[i + 1] += 1;
    }
    for i in 0..n {
        row_start[i + 1] += row_start[i];
    }
    let mut fill = row_start[..n].to_vec();
    let mut row_cols = vec![0; p.rows.len()];
    for j in 0..n {
        for &i in p.column(j) {
            row_cols[fill[i]] = j;
            fill[i] += 1;
        }
    }
    let mut color = vec![usize::MAX; n];
    let mut used = vec![usize::MAX; n + 1]; // used[c] == j: colour c is taken for column j
    for j in 0..n {
        if p.column(j).is_empty() {
            continue;
        }
        for &i in p.column(j) {
            for &k in &row_cols[row_start[i]..row_start[i + 1]] {
                if color[k] != usize::MAX {
                    used[color[k]] = j;
                }
            }
        }
        color[j] = (0..).find(|&c| used[c] != j).unwrap();
    }
    color
}

/// Groups from the columns' colours (`usize::MAX`: an empty column, which joins group 0).
fn groups_of(mut color: Vec<usize>) -> Coloring {
    let n = color.len();
    let n_colors = color
        .iter()
        .filter(|&&c| c != usize::MAX)
        .max()
        .map_or(1, |&c| c + 1);
    for c in color.iter_mut() {
        if *c == usize::MAX {
            *c = 0;
        }
    }
    let mut group_start = vec![0; n_colors + 1];
    for &c in &color {
        group_start[c + 1] += 1;
    }
    for g in 0..n_colors {
        group_start[g + 1] += group_start[g];
    }
    let mut columns = vec![0; n];
    // The next free place of each group: on the stack up to MASK_MAX states (at most as many
    // groups as states).
    let mut fill_small = [0usize; MASK_MAX];
    let mut fill_vec = Vec::new();
    let fill: &mut [usize] = if n_colors <= MASK_MAX {
        fill_small[..n_colors].copy_from_slice(&group_start[..n_colors]);
        &mut fill_small[..n_colors]
    } else {
        fill_vec.extend_from_slice(&group_start[..n_colors]);
        &mut fill_vec
    };
    for (j, &c) in color.iter().enumerate() {
        columns[fill[c]] = j;
        fill[c] += 1;
    }
    Coloring {
        color,
        group_start,
        columns,
    }
}

/// The pattern and column groups a Newton Jacobian is evaluated over.
///
/// States that no derivative depends on (empty columns; the network's mass and energy
/// accumulators) are *quadratures* of the others: y_q' = g(y). In M = I − γJ their columns hold
/// only the diagonal, so the other states' Newton iteration never reads their rows of J. Those
/// rows can be dense (an accumulator collects every piston and every reservoir link), and a dense
/// row forces every column in it into a group of its own: the number of right-hand sides per
/// Jacobian grows with the number of pistons. When leaving these rows out needs fewer groups,
/// they are left out: their rows of J are zero, so a Newton update sets y_q exactly to the value
/// the BDF formula gives with g at the current iterate of the other states (it converges one
/// iteration behind them, as they converge). This is how CVODES treats pure quadrature variables,
/// which it keeps out of the nonlinear system altogether (Serban & Hindmarsh, "CVODES: the
/// sensitivity-enabled ODE solver in SUNDIALS", ASME IDETC 2005; CVODES guide, "Pure quadrature
/// integration"). Otherwise (no quadrature, or no fewer groups) the pattern is kept whole, so
/// small networks integrate exactly as before. The choice depends on the pattern only.
pub fn newton_groups(p: Pattern) -> (Pattern, Coloring) {
    let full = color_columns(&p);
    // Up to MASK_MAX states on the stack (two allocations were a fifth of this function on
    // the small networks).
    let (mut quad_small, mut len_small) = ([false; MASK_MAX], [0usize; MASK_MAX]);
    let (mut quad_vec, mut len_vec) = (Vec::new(), Vec::new());
    let (quad, row_len): (&mut [bool], &mut [usize]) = if p.n <= MASK_MAX {
        (&mut quad_small[..p.n], &mut len_small[..p.n])
    } else {
        quad_vec.resize(p.n, false);
        len_vec.resize(p.n, 0);
        (&mut quad_vec, &mut len_vec)
    };
    for (j, q) in quad.iter_mut().enumerate() {
        *q = p.column(j).is_empty();
    }
    if !p.rows.iter().any(|&i| quad[i]) {
        return (p, full);
    }
    // Any colouring of the reduced pattern needs at least as many colours as its longest row
    // has entries (and at least 1): when the full colouring has no more, the reduced one
    // cannot have fewer, and is not computed (on the small networks, half of this function).
    for &i in &p.rows {
        row_len[i] += 1;
    }
    let longest = (0..p.n)
        .filter(|&i| !quad[i])
        .map(|i| row_len[i])
        .max()
        .unwrap_or(0);
    if full.n_colors() <= longest.max(1) {
        return (p, full);
    }
    let reduced = p.without_rows(quad);
    let colors = color_columns(&reduced);
    if colors.n_colors() < full.n_colors() {
        (reduced, colors)
    } else {
        (p, full)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_entries_equals_from_dense() {
        // A scattered 9×9 pattern given as entries in shuffled order with repeats.
        let n = 9;
        let mut dep = vec![false; n * n];
        let mut entries = Vec::new();
        for k in 0..40 {
            let (i, j) = ((k * 7 + 3) % n, (k * 5 + 1) % n);
            dep[i * n + j] = true;
            entries.push((j, i));
            entries.insert(0, (j, i));
        }
        let a = Pattern::from_entries(n, entries);
        let b = Pattern::from_dense(n, &dep);
        println!("{} entries from 80 given", a.nonzeros());
        assert_eq!(a, b);
    }

    #[test]
    fn with_diagonal_adds_the_missing_diagonal_and_maps_every_entry() {
        // A 4×4 pattern with diagonal entries at (0,0) and (2,2) only, plus off-diagonals.
        let n = 4;
        let mut dep = vec![false; n * n];
        for (i, j) in [(0, 0), (2, 2), (1, 0), (3, 1), (0, 2), (2, 3)] {
            dep[i * n + j] = true;
        }
        let p = Pattern::from_dense(n, &dep);
        let (m, pos) = p.with_diagonal();
        println!(
            "pattern {} entries, with the diagonal {}",
            p.nonzeros(),
            m.nonzeros()
        );
        assert_eq!(m.nonzeros(), p.nonzeros() + 2);
        for i in 0..n {
            for j in 0..n {
                assert_eq!(m.contains(i, j), dep[i * n + j] || i == j, "({i}, {j})");
            }
        }
        for j in 0..n {
            assert!(
                m.column(j).windows(2).all(|w| w[0] < w[1]),
                "rows ascending"
            );
            for k in p.col_start[j]..p.col_start[j + 1] {
                assert_eq!(m.rows[pos[k]], p.rows[k]);
                assert!((m.col_start[j]..m.col_start[j + 1]).contains(&pos[k]));
            }
        }
    }

    #[test]
    fn tridiagonal_needs_three_colors() {
        let n = 10;
        let mut dep = vec![false; n * n];
        for i in 0..n {
            for j in i.saturating_sub(1)..(i + 2).min(n) {
                dep[i * n + j] = true;
            }
        }
        let c = color_columns(&Pattern::from_dense(n, &dep));
        println!("tridiagonal {n}×{n}: {} colours", c.n_colors());
        assert_eq!(c.n_colors(), 3);
        for g in 0..c.n_colors() {
            // Columns of one group never share a row.
            let cols = c.group(g);
            for (a, &j) in cols.iter().enumerate() {
                for &k in &cols[a + 1..] {
                    assert!((j as isize - k as isize).abs() > 2);
                }
            }
        }
    }

    #[test]
    fn quadrature_rows_are_left_out_only_when_they_cost_groups() {
        // Tridiagonal 30 × 30 block plus two quadrature states (rows 30, 31) that read every
        // state of the block and that nothing reads: the arrowhead that needs one group per
        // column when the quadrature rows are coloured.
        let n = 32;
        let mut dep = vec![false; n * n];
        for i in 0..30usize {
            for j in i.saturating_sub(1)..(i + 2).min(30) {
                dep[i * n + j] = true;
            }
            dep[30 * n + i] = true;
            dep[31 * n + i] = true;
        }
        let p = Pattern::from_dense(n, &dep);
        let full = color_columns(&p).n_colors();
        let (q, c) = newton_groups(p.clone());
        println!(
            "arrowhead: {full} groups with the quadrature rows, {} without; {} of {} entries kept",
            c.n_colors(),
            q.nonzeros(),
            p.nonzeros()
        );
        assert_eq!(full, 30);
        assert_eq!(c.n_colors(), 3);
        assert_eq!(q.nonzeros(), p.nonzeros() - 60);
        for j in 0..n {
            for i in 0..n {
                assert_eq!(q.contains(i, j), dep[i * n + j] && i < 30, "({i}, {j})");
            }
        }
        // Same groups either way (a quadrature row no wider than a row of the block): whole.
        let mut dep = vec![false; 4 * 4];
        for (i, j) in [(0, 0), (0, 1), (1, 0), (1, 1), (2, 2), (3, 0), (3, 1)] {
            dep[i * 4 + j] = true;
        }
        let p = Pattern::from_dense(4, &dep);
        let (q, c) = newton_groups(p.clone());
        println!("small: {} groups, pattern kept whole", c.n_colors());
        assert_eq!(q, p);
        assert_eq!(c, color_columns(&p));
    }

    /// A path graph numbered in a scrambled order has a wide band; reverse Cuthill–McKee
    /// recovers bandwidth 1 (the path's optimum: every state has a neighbour). Two components
    /// (the path and a star whose hub has 4 leaves) and an isolated state are all placed once.
    #[test]
    fn reverse_cuthill_mckee_narrows_a_scrambled_path() {
        let path = 40;
        let n = path + 5 + 1;
        // Position k of the path is state label[k]: a multiplicative scramble (7 is coprime
        // to 40).
        let label: Vec<usize> = (0..path).map(|k| (k * 7 + 3) % path).collect();
        let mut entries: Vec<(usize, usize)> = (0..n).map(|i| (i, i)).collect();
        for k in 0..path - 1 {
            let (a, b) = (label[k], label[k + 1]);
            entries.push((a, b));
            entries.push((b, a));
        }
        // Star: hub `path`, leaves path+1..path+5, one-sided entries (rows of the leaves
        // read the hub only): the order works on the symmetrized pattern.
        for leaf in path + 1..path + 5 {
            entries.push((path, leaf));
        }
        let p = Pattern::from_entries(n, entries);
        let own = bandwidths_under(&p, &(0..n).collect::<Vec<_>>());
        let perm = reverse_cuthill_mckee(&p);
        let mut pos = vec![usize::MAX; n];
        for (k, &i) in perm.iter().enumerate() {
            assert_eq!(pos[i], usize::MAX, "state {i} placed twice");
            pos[i] = k;
        }
        assert_eq!(perm.len(), n, "every state placed");
        let rcm = bandwidths_under(&p, &pos);
        println!(
            "scrambled path + star + isolated state: bandwidths {own:?} in the own order, {rcm:?} in RCM order"
        );
        assert!(own.0 + own.1 > 20, "the scramble is wide: {own:?}");
        // The path gives 1 each way; the star's hub sits next to its leaves in BFS order, at
        // most 4 positions from the farthest.
        assert!(rcm.0 <= 4 && rcm.1 <= 4, "{rcm:?}");
        let path_band = (0..path - 1)
            .map(|k| pos[label[k]].abs_diff(pos[label[k + 1]]))
            .max()
            .unwrap();
        assert_eq!(path_band, 1);
    }

    /// The bit-mask analysis (n ≤ MASK_MAX) against the general one it stands in for: the same
    /// colours column by column and the same pattern from the same entries, on scattered
    /// random patterns of 1..=64 states (with empty columns and rows). (The network's own
    /// patterns: `network::pattern`'s tests.)
    #[test]
    fn mask_analysis_equals_the_general_path() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut max_colors = 0;
        for n in [1usize, 2, 5, 9, 17, 33, 62, 63, 64] {
            for density in [2u64, 8, 30] {
                let mut entries = Vec::new();
                let mut masks = vec![0u64; n];
                for j in 0..n {
                    // Every fifth column empty (a quadrature's).
                    if j % 5 == 4 {
                        continue;
                    }
                    for i in 0..n {
                        if next() % 100 < density {
                            entries.push((j, i));
                            entries.push((j, i));
                            masks[j] |= 1 << i;
                        }
                    }
                }
                let p = Pattern::from_entries(n, entries);
                assert_eq!(Pattern::from_masks(&masks), p, "n {n}");
                let (a, b) = (greedy_colors_masks(&p), greedy_colors(&p));
                assert_eq!(a, b, "n {n}, density {density} %");
                max_colors = max_colors.max(color_columns(&p).n_colors());
            }
        }
        println!("random patterns: up to {max_colors} colours, same on both paths");
    }

    #[test]
    fn dense_needs_n_colors() {
        let c = color_columns(&Pattern::dense(7));
        assert_eq!(c.n_colors(), 7);
    }
}

//! Validation of a deserialized model: every problem is collected, each located at the
//! offending key (or, for a key that is absent, at the table that should have it).
//!
//! Non-finite numbers are found once, in the spanned tree (TOML allows `nan` and `inf`); the
//! range checks below skip them so that a `nan` is reported once, as such.

use std::collections::HashMap;

use super::ModelError;
use super::locate::{Locator, Path, Seg, did_you_mean, key};
use super::spec::{ModelFile, ParamSpec};
use crate::gas::SPECIES;
use crate::integrators::{METHODS, Method};

/// Component kinds that hold gas (the nodes links may connect).
const NODE_KINDS: &[&str] = &["chamber", "reservoir"];

fn comp(kind: &str, i: usize, k: &str) -> Path {
    vec![key(kind), Seg::Index(i), key(k)]
}

fn sect(section: &str, k: &str) -> Path {
    vec![key(section), key(k)]
}

/// The last key of a path that names a parameter (not `table`).
fn name_of(path: &[Seg]) -> String {
    path.iter()
        .rev()
        .find_map(|s| match s {
            Seg::Key(k) if k != "table" => Some(k.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

struct Check<'l, 'a> {
    loc: &'l Locator<'a>,
    errors: Vec<ModelError>,
}

impl Check<'_, '_> {
    fn err(&mut self, path: &[Seg], message: String) {
        self.errors.push(self.loc.error(path, message));
    }

    /// `v` must satisfy `ok`; non-finite values are skipped (reported elsewhere).
    fn require(&mut self, path: &[Seg], v: f64, ok: bool, rule: &str) {
        if v.is_finite() && !ok {
            let name = name_of(path);
            self.err(path, format!("`{name}` must be {rule}, got {v}"));
        }
    }

    fn positive(&mut self, path: &[Seg], v: f64, unit: &str) {
        self.require(path, v, v > 0.0, &format!("greater than 0{unit}"));
    }

    fn non_negative(&mut self, path: &[Seg], v: f64, unit: &str) {
        self.require(path, v, v >= 0.0, &format!("0{unit} or more"));
    }

    fn opt_positive(&mut self, path: &[Seg], v: Option<f64>, unit: &str) {
        if let Some(v) = v {
            self.positive(path, v, unit);
        }
    }

    /// A parameter that may be a table: the table must not be empty and its times must
    /// increase strictly; every value must satisfy `ok` (described by `rule`).
    fn param(&mut self, path: &[Seg], p: &ParamSpec, ok: impl Fn(f64) -> bool, rule: &str) {
        let name = name_of(path);
        match p {
            ParamSpec::Const(v) => self.require(path, *v, ok(*v), rule),
            ParamSpec::Cubic(_) => self.err(
                path,
                format!(
                    "`{name}` cannot be a cubic opening curve: `{{ cubic = ... }}` is only for a \
                     valve's `opening`; give a number or a table"
                ),
            ),
            ParamSpec::Table(t) => {
                let mut table_path = path.to_vec();
                table_path.push(key("table"));
                if t.table.is_empty() {
                    self.err(
                        &table_path,
                        format!("`{name}` has an empty table: give at least one [time, value] row"),
                    );
                    return;
                }
                let row = |r: usize| {
                    let mut p = table_path.clone();
                    p.push(Seg::Index(r));
                    p
                };
                if let Some(r) = (1..t.table.len()).find(|&r| t.table[r][0] <= t.table[r - 1][0]) {
                    self.err(
                        &row(r),
                        format!(
                            "the table of `{name}` is not sorted by time: t = {} s comes after \
                             t = {} s (times must increase strictly)",
                            t.table[r][0],
                            t.table[r - 1][0]
                        ),
                    );
                }
                if let Some(r) =
                    (0..t.table.len()).find(|&r| t.table[r][1].is_finite() && !ok(t.table[r][1]))
                {
                    self.err(
                        &row(r),
                        format!(
                            "`{name}` must be {rule}, got {} at t = {} s",
                            t.table[r][1], t.table[r][0]
                        ),
                    );
                }
            }
        }
    }
}

/// Check a deserialized model; the errors are in no particular order.
pub(crate) fn validate(spec: &ModelFile, loc: &Locator<'_>) -> Vec<ModelError> {
    let mut c = Check {
        loc,
        errors: Vec::new(),
    };

    // Numbers that are not numbers.
    for (path, v) in loc.non_finite() {
        let what = if v.is_nan() { "nan" } else { "infinite" };
        c.err(
            &path,
            format!(
                "`{}` is {what}: every number must be finite",
                name_of(&path)
            ),
        );
    }

    model_name(&mut c, spec);
    let names = names(&mut c, spec);
    links(&mut c, spec, &names);
    gas(&mut c, spec);
    solver(&mut c, spec);
    checks(&mut c, spec);
    components(&mut c, spec);
    inputs(&mut c, spec, &names);
    if c.errors.is_empty() && !spec.sensitivities.parameters.is_empty() {
        // The names resolve as the run resolves them, on the built network.
        let net = super::build::build_network(spec);
        for (j, name) in spec.sensitivities.parameters.iter().enumerate() {
            if let Err(e) = net.sensitivity_parameter(name) {
                c.err(&[key("sensitivities"), key("parameters"), Seg::Index(j)], e);
            }
        }
    }
    c.errors
}

fn model_name(c: &mut Check, spec: &ModelFile) {
    let n = &spec.model.name;
    let ok = n
        .chars()
        .next()
        .is_some_and(|ch| ch.is_ascii_alphabetic() || ch == '_')
        && n.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_');
    if !ok {
        c.err(
            &sect("model", "name"),
            format!(
                "model name `{n}` must be an identifier: ASCII letters, digits and _, not \
                 starting with a digit (it becomes the FMU's modelIdentifier and file name)"
            ),
        );
    }
}

/// Every component as (kind, index, name), in the order of the model file's kinds.
fn all_components(spec: &ModelFile) -> Vec<(&'static str, usize, &str)> {
    let mut out = Vec::new();
    out.extend(
        spec.chamber
            .iter()
            .enumerate()
            .map(|(i, x)| ("chamber", i, x.name.as_str())),
    );
    out.extend(
        spec.reservoir
            .iter()
            .enumerate()
            .map(|(i, x)| ("reservoir", i, x.name.as_str())),
    );
    out.extend(
        spec.orifice
            .iter()
            .enumerate()
            .map(|(i, x)| ("orifice", i, x.name.as_str())),
    );
    out.extend(
        spec.valve
            .iter()
            .enumerate()
            .map(|(i, x)| ("valve", i, x.name.as_str())),
    );
    out.extend(
        spec.piston
            .iter()
            .enumerate()
            .map(|(i, x)| ("piston", i, x.name.as_str())),
    );
    out.extend(
        spec.wall
            .iter()
            .enumerate()
            .map(|(i, x)| ("wall", i, x.name.as_str())),
    );
    out.extend(
        spec.mass_flow
            .iter()
            .enumerate()
            .map(|(i, x)| ("mass_flow", i, x.name.as_str())),
    );
    out.extend(
        spec.restrictor
            .iter()
            .enumerate()
            .map(|(i, x)| ("restrictor", i, x.name.as_str())),
    );
    out.extend(
        spec.tube
            .iter()
            .enumerate()
            .map(|(i, x)| ("tube", i, x.name.as_str())),
    );
    out.extend(
        spec.inertance_valve
            .iter()
            .enumerate()
            .map(|(i, x)| ("inertance_valve", i, x.name.as_str())),
    );
    out
}

/// Names: valid, and unique across all kinds. Returns name → (kind, index) of the first one.
fn names<'s>(c: &mut Check, spec: &'s ModelFile) -> HashMap<&'s str, (&'static str, usize)> {
    let mut comps = all_components(spec);
    // The one that comes second in the file is the duplicate.
    comps.sort_by_key(|(kind, i, _)| c.loc.line_of(&comp(kind, *i, "name")).unwrap_or(usize::MAX));
    let mut seen: HashMap<&str, (&'static str, usize)> = HashMap::new();
    for (kind, i, name) in comps {
        let path = comp(kind, i, "name");
        if name.is_empty() {
            c.err(&path, format!("a {kind} needs a non-empty `name`"));
            continue;
        }
        if name
            .chars()
            .any(|ch| ch == '.' || ch.is_whitespace() || ch.is_control())
        {
            c.err(
                &path,
                format!(
                    "name `{name}` must not contain dots, spaces or control characters (it is \
                     the first part of variable names such as `{name}.p`)"
                ),
            );
        }
        match seen.get(name) {
            Some(&(k0, i0)) => {
                let where_ = match c.loc.line_of(&comp(k0, i0, "name")) {
                    Some(line) => format!("the {k0} on line {line}"),
                    None => format!("the {k0} set by --set"),
                };
                c.err(
                    &path,
                    format!(
                        "duplicate name `{name}`: {where_} already has it (all components share \
                         one set of names)"
                    ),
                );
            }
            None => {
                seen.insert(name, (kind, i));
            }
        }
    }
    seen
}

/// Links name existing, distinct nodes.
fn links(c: &mut Check, spec: &ModelFile, names: &HashMap<&str, (&'static str, usize)>) {
    // (kind, index, [(key, node name); 2])
    type Link<'s> = (&'static str, usize, [(&'static str, &'s str); 2]);
    let mut pairs: Vec<Link> = Vec::new();
    for (i, o) in spec.orifice.iter().enumerate() {
        pairs.push(("orifice", i, [("from", &o.from), ("to", &o.to)]));
    }
    for (i, v) in spec.valve.iter().enumerate() {
        pairs.push(("valve", i, [("from", &v.from), ("to", &v.to)]));
    }
    for (i, p) in spec.piston.iter().enumerate() {
        pairs.push(("piston", i, [("behind", &p.behind), ("ahead", &p.ahead)]));
    }
    for (i, w) in spec.wall.iter().enumerate() {
        pairs.push(("wall", i, [("left", &w.left), ("right", &w.right)]));
    }
    for (i, x) in spec.mass_flow.iter().enumerate() {
        pairs.push(("mass_flow", i, [("from", &x.from), ("to", &x.to)]));
    }
    for (i, x) in spec.restrictor.iter().enumerate() {
        pairs.push(("restrictor", i, [("from", &x.from), ("to", &x.to)]));
    }
    for (i, x) in spec.tube.iter().enumerate() {
        pairs.push(("tube", i, [("from", &x.from), ("to", &x.to)]));
    }
    for (i, x) in spec.inertance_valve.iter().enumerate() {
        pairs.push(("inertance_valve", i, [("from", &x.from), ("to", &x.to)]));
    }
    let mut nodes: Vec<&str> = names
        .iter()
        .filter(|(_, (k, _))| NODE_KINDS.contains(k))
        .map(|(n, _)| *n)
        .collect();
    nodes.sort_unstable();
    for (kind, i, ends) in pairs {
        let mut ok = true;
        for (k, target) in ends {
            let path = comp(kind, i, k);
            match names.get(target) {
                None => {
                    ok = false;
                    c.err(
                        &path,
                        format!(
                            "`{k}` names `{target}`, but there is no chamber or reservoir of \
                             that name (nodes: {}){}",
                            if nodes.is_empty() {
                                "none".to_string()
                            } else {
                                nodes.join(", ")
                            },
                            did_you_mean(target, nodes.iter().copied())
                        ),
                    );
                }
                Some((tk, _)) if !NODE_KINDS.contains(tk) => {
                    ok = false;
                    c.err(
                        &path,
                        format!(
                            "`{k}` names the {tk} `{target}`, which is not a node: a {kind} \
                             connects chambers and reservoirs"
                        ),
                    );
                }
                Some((tk, _)) if kind == "inertance_valve" && *tk != "reservoir" => {
                    ok = false;
                    c.err(
                        &path,
                        format!(
                            "`{k}` names the {tk} `{target}`: an inertance_valve carries liquid \
                             between two reservoirs (prescribed pressures), so both ends must \
                             be reservoirs"
                        ),
                    );
                }
                Some(_) => {}
            }
        }
        let [(k1, a), (k2, b)] = ends;
        if ok && a == b {
            c.err(
                &comp(kind, i, k2),
                format!(
                    "`{k2}` is `{b}`, the same node as `{k1}`: a {kind} must connect two \
                     different nodes"
                ),
            );
        }
    }
}

fn gas(c: &mut Check, spec: &ModelFile) {
    let Some(g) = &spec.gas else {
        // Gas components need a gas.
        let first = spec
            .chamber
            .first()
            .map(|x| ("chamber", &x.name))
            .or_else(|| spec.orifice.first().map(|x| ("orifice", &x.name)))
            .or_else(|| spec.mass_flow.first().map(|x| ("mass_flow", &x.name)))
            .or_else(|| spec.restrictor.first().map(|x| ("restrictor", &x.name)))
            .or_else(|| spec.tube.first().map(|x| ("tube", &x.name)));
        if let Some((kind, name)) = first {
            c.err(
                &[key(kind), Seg::Index(0)],
                format!(
                    "the {kind} `{name}` holds or carries gas, but the file has no [gas] \
                     section: add one, e.g. [gas] species = \"air\""
                ),
            );
        }
        return;
    };
    let known: Vec<&str> = SPECIES.iter().map(|s| s.name).collect();
    match &g.species {
        Some(s) => {
            if !known.contains(&s.as_str()) {
                c.err(
                    &sect("gas", "species"),
                    format!(
                        "unknown gas species `{s}` (known: {}){}",
                        known.join(", "),
                        did_you_mean(s, known.iter().copied())
                    ),
                );
            }
            for (k, v) in [("R", g.r), ("cp", g.cp)] {
                if v.is_some() {
                    c.err(
                        &sect("gas", k),
                        format!(
                            "[gas] gives both `species` and `{k}`: give either a species or \
                             `R` and `cp`"
                        ),
                    );
                }
            }
        }
        None => match (g.r, g.cp) {
            (Some(r), Some(cp)) => {
                c.positive(&sect("gas", "R"), r, " J/(kg K)");
                c.positive(&sect("gas", "cp"), cp, " J/(kg K)");
                if r.is_finite() && cp.is_finite() && r > 0.0 && cp <= r {
                    c.err(
                        &sect("gas", "cp"),
                        format!(
                            "`cp` = {cp} must be greater than `R` = {r} J/(kg K) \
                             (cv = cp - R must be positive)"
                        ),
                    );
                }
            }
            (r, cp) => {
                let missing = match (r, cp) {
                    (Some(_), None) => "`cp` is missing",
                    (None, Some(_)) => "`R` is missing",
                    _ => "neither is given",
                };
                let path = match (r, cp) {
                    (Some(_), None) => sect("gas", "cp"),
                    (None, Some(_)) => sect("gas", "R"),
                    _ => vec![key("gas")],
                };
                c.err(
                    &path,
                    format!(
                        "[gas] needs `species` ({}) or both `R` and `cp`: {missing}",
                        known.join(", ")
                    ),
                );
            }
        },
    }
    c.opt_positive(&sect("gas", "p_critical"), g.p_critical, " Pa");
    c.opt_positive(&sect("gas", "T_critical"), g.t_critical, " K");
}

fn solver(c: &mut Check, spec: &ModelFile) {
    let s = &spec.solver;
    let known: Vec<&str> = METHODS.iter().map(|(n, _)| *n).collect();
    if !known.contains(&s.method.as_str()) {
        c.err(
            &sect("solver", "method"),
            format!(
                "unknown solver method `{}` (known: {}){}",
                s.method,
                known.join(", "),
                did_you_mean(&s.method, known.iter().copied())
            ),
        );
    } else if Method::needs_step(&s.method) && s.step.is_none() {
        c.err(
            &sect("solver", "step"),
            format!(
                "method `{}` takes fixed steps: set `step` (s) in [solver]",
                s.method
            ),
        );
    }
    if let Some(j) = &s.jacobian {
        if crate::model::build::jacobian_source(j).is_none() {
            c.err(
                &sect("solver", "jacobian"),
                format!("unknown jacobian `{j}` (known: exact, finite-difference)"),
            );
        }
    }
    if let Some(l) = &s.linear_solver {
        if crate::model::build::linear_solver(l).is_none() {
            c.err(
                &sect("solver", "linear_solver"),
                format!("unknown linear_solver `{l}` (known: auto, dense, band, sparse, krylov)"),
            );
        }
    }
    c.opt_positive(&sect("solver", "step"), s.step, " s");
    c.opt_positive(&sect("solver", "rtol"), s.rtol, "");
    c.opt_positive(&sect("solver", "atol"), s.atol, "");
    c.opt_positive(&sect("solver", "max_step"), s.max_step, " s");
    c.opt_positive(&sect("solver", "initial_step"), s.initial_step, " s");
    if s.max_steps == 0 {
        c.err(
            &sect("solver", "max_steps"),
            "`max_steps` must be at least 1".to_string(),
        );
    }
    if s.t_start.is_finite() && s.t_end.is_finite() && s.t_end <= s.t_start {
        c.err(
            &sect("solver", "t_end"),
            format!(
                "`t_end` = {} s must be after `t_start` = {} s",
                s.t_end, s.t_start
            ),
        );
    }
    c.opt_positive(&sect("solver", "output_interval"), s.output_interval, " s");
    if let Some(m) = s.max_time
        && m.is_finite()
        && s.t_start.is_finite()
        && m <= s.t_start
    {
        c.err(
            &sect("solver", "max_time"),
            format!(
                "`max_time` = {m} s must be after `t_start` = {} s",
                s.t_start
            ),
        );
    }
}

fn checks(c: &mut Check, spec: &ModelFile) {
    let k = &spec.checks;
    c.positive(&sect("checks", "mass_drift"), k.mass_drift, "");
    c.positive(&sect("checks", "energy_drift"), k.energy_drift, "");
    c.positive(&sect("checks", "piston_desync"), k.piston_desync, " m");
    c.positive(
        &sect("checks", "mass_gradient_drift"),
        k.mass_gradient_drift,
        "",
    );
    c.positive(
        &sect("checks", "energy_gradient_drift"),
        k.energy_gradient_drift,
        "",
    );
}

fn components(c: &mut Check, spec: &ModelFile) {
    let positive = |v: f64| v > 0.0;
    // Sets and maps by name, so that validation stays linear in the number of components.
    let node_names: std::collections::HashSet<&str> = spec
        .chamber
        .iter()
        .map(|x| x.name.as_str())
        .chain(spec.reservoir.iter().map(|x| x.name.as_str()))
        .collect();
    // A piston with a broken link may be the one meant to enlarge a chamber: then a chamber's
    // missing volume would only follow from that error.
    let broken_piston = spec
        .piston
        .iter()
        .any(|p| !node_names.contains(p.behind.as_str()) || !node_names.contains(p.ahead.as_str()));
    // Pistons move the chamber's walls: behind adds area·x0, ahead takes it away. Per chamber
    // name: (moved volume, touched, all finite), summed in piston order.
    let mut by_chamber: HashMap<&str, (f64, bool, bool)> = HashMap::new();
    for p in &spec.piston {
        let finite = p.area.is_finite() && p.x0.is_finite();
        // behind == ahead: the signs cancel (+1 − 1 = 0) and the chamber is touched once.
        let ends: &[(&str, f64)] = if p.behind == p.ahead {
            &[(p.behind.as_str(), 0.0)]
        } else {
            &[(p.behind.as_str(), 1.0), (p.ahead.as_str(), -1.0)]
        };
        for &(name, sign) in ends {
            let e = by_chamber.entry(name).or_insert((0.0, false, true));
            e.0 += sign * p.area * p.x0;
            e.1 = true;
            e.2 &= finite;
        }
    }
    for (i, x) in spec.chamber.iter().enumerate() {
        let vpath = comp("chamber", i, "volume");
        let (moved, touched, finite) = by_chamber
            .get(x.name.as_str())
            .copied()
            .unwrap_or((0.0, false, true));
        if x.volume.is_finite() && finite {
            if x.volume < 0.0 {
                c.err(
                    &vpath,
                    format!("`volume` must be 0 m^3 or more, got {}", x.volume),
                );
            } else if !touched && x.volume <= 0.0 && !broken_piston {
                c.err(
                    &vpath,
                    format!(
                        "`volume` must be greater than 0 m^3, got {} (a dead volume of 0 is \
                         only valid with a piston `behind` this chamber)",
                        x.volume
                    ),
                );
            } else if touched && x.volume + moved <= 0.0 {
                c.err(
                    &vpath,
                    format!(
                        "the initial volume of chamber `{}`, volume + sum of area*x0 of \
                         pistons behind it - sum of area*x0 of pistons ahead of it = {} m^3, \
                         must be greater than 0",
                        x.name,
                        x.volume + moved
                    ),
                );
            }
        }
        c.positive(
            &comp("chamber", i, "pressure"),
            x.pressure,
            " Pa (absolute)",
        );
        c.positive(&comp("chamber", i, "temperature"), x.temperature, " K");
    }
    for (i, x) in spec.reservoir.iter().enumerate() {
        if liquid_only(spec, &x.name) {
            // Liquid pressures may be gauge: any finite value.
            c.param(&comp("reservoir", i, "pressure"), &x.pressure, |_| true, "");
        } else {
            c.param(
                &comp("reservoir", i, "pressure"),
                &x.pressure,
                positive,
                "greater than 0 Pa (absolute; only a reservoir that feeds nothing but \
                 inertance valves may have a gauge pressure)",
            );
        }
        c.param(
            &comp("reservoir", i, "temperature"),
            &x.temperature,
            positive,
            "greater than 0 K",
        );
    }
    for (i, x) in spec.orifice.iter().enumerate() {
        orifice(c, spec, i, x);
    }
    for (i, x) in spec.valve.iter().enumerate() {
        c.param(
            &comp("valve", i, "coefficient"),
            &x.coefficient,
            |v| v >= 0.0,
            "0 kg/(s Pa) or more",
        );
        let path = comp("valve", i, "opening");
        match &x.opening {
            ParamSpec::Cubic(cu) => {
                let mut p = path.clone();
                p.push(key("cubic"));
                let mut d = p.clone();
                d.push(key("duration"));
                c.positive(&d, cu.cubic.duration, " s");
            }
            other => c.param(
                &path,
                other,
                |v| (0.0..=1.0).contains(&v),
                "between 0 and 1",
            ),
        }
    }
    for (i, x) in spec.piston.iter().enumerate() {
        c.positive(&comp("piston", i, "area"), x.area, " m^2");
        c.positive(&comp("piston", i, "mass"), x.mass, " kg");
        for (k, v, unit) in [
            ("friction_static", &x.friction_static, " Pa"),
            ("friction_dynamic", &x.friction_dynamic, " Pa"),
            ("damping", &x.damping, " N s/m"),
        ] {
            c.param(
                &comp("piston", i, k),
                v,
                |v| v >= 0.0,
                &format!("0{unit} or more"),
            );
        }
        c.non_negative(
            &comp("piston", i, "spring_stiffness"),
            x.spring_stiffness,
            " N/m",
        );
        let e = x.restitution;
        c.require(
            &comp("piston", i, "restitution"),
            e,
            (0.0..=1.0).contains(&e),
            "between 0 and 1",
        );
        if let (Some(lo), Some(hi)) = (x.x_min, x.x_max)
            && lo.is_finite()
            && hi.is_finite()
            && lo >= hi
        {
            c.err(
                &comp("piston", i, "x_max"),
                format!("`x_max` = {hi} m must be greater than `x_min` = {lo} m"),
            );
        }
        if x.x0.is_finite() {
            if let Some(lo) = x.x_min.filter(|v| v.is_finite() && x.x0 < *v) {
                c.err(
                    &comp("piston", i, "x0"),
                    format!("`x0` = {} m is below the end stop `x_min` = {lo} m", x.x0),
                );
            }
            if let Some(hi) = x.x_max.filter(|v| v.is_finite() && x.x0 > *v) {
                c.err(
                    &comp("piston", i, "x0"),
                    format!("`x0` = {} m is past the end stop `x_max` = {hi} m", x.x0),
                );
            }
        }
        if let Some(exit) = x.x_exit
            && exit.is_finite()
            && x.x0.is_finite()
            && x.x0 >= exit
        {
            c.err(
                &comp("piston", i, "x0"),
                format!(
                    "`x0` = {} m is at or past `x_exit` = {exit} m: the piston would start \
                     outside",
                    x.x0
                ),
            );
        }
    }
    for (i, x) in spec.wall.iter().enumerate() {
        c.param(
            &comp("wall", i, "area"),
            &x.area,
            positive,
            "greater than 0 m^2",
        );
        c.param(
            &comp("wall", i, "heat_transfer_coefficient"),
            &x.heat_transfer_coefficient,
            |v| v >= 0.0,
            "0 W/(m^2 K) or more",
        );
        c.param(
            &comp("wall", i, "expansion_coefficient"),
            &x.expansion_coefficient,
            |v| v >= 0.0,
            "0 m/(s Pa) or more",
        );
        c.param(&comp("wall", i, "velocity"), &x.velocity, |_| true, "");
    }
    for (i, x) in spec.mass_flow.iter().enumerate() {
        c.param(
            &comp("mass_flow", i, "rate"),
            &x.rate,
            |v| v >= 0.0,
            "0 kg/s or more (a mass flow controller pushes from `from` to `to`)",
        );
    }
    for (i, x) in spec.restrictor.iter().enumerate() {
        c.param(
            &comp("restrictor", i, "diameter"),
            &x.diameter,
            positive,
            "greater than 0 m",
        );
        c.param(
            &comp("restrictor", i, "k"),
            &x.k,
            positive,
            "greater than 0",
        );
    }
    for (i, x) in spec.tube.iter().enumerate() {
        for (k, v, rule) in [
            ("length", &x.length, "greater than 0 m"),
            ("diameter", &x.diameter, "greater than 0 m"),
            ("viscosity", &x.viscosity, "greater than 0 Pa s"),
        ] {
            c.param(&comp("tube", i, k), v, positive, rule);
        }
        c.param(
            &comp("tube", i, "roughness"),
            &x.roughness,
            |v| v >= 0.0,
            "0 m or more",
        );
    }
    for (i, x) in spec.inertance_valve.iter().enumerate() {
        c.positive(&comp("inertance_valve", i, "density"), x.density, " kg/m^3");
        for (k, v) in [
            ("area_open", &x.area_open),
            ("area_leak", &x.area_leak),
            ("area_from", &x.area_from),
            ("area_to", &x.area_to),
        ] {
            c.param(
                &comp("inertance_valve", i, k),
                v,
                positive,
                "greater than 0 m^2",
            );
        }
        c.param(
            &comp("inertance_valve", i, "length"),
            &x.length,
            |v| v >= 0.0,
            "0 m or more",
        );
    }
}

/// A reservoir that only inertance valves touch holds liquid: its pressure may be gauge.
fn liquid_only(spec: &ModelFile, name: &str) -> bool {
    let liquid = spec
        .inertance_valve
        .iter()
        .any(|x| x.from == name || x.to == name);
    let gas = spec.orifice.iter().any(|x| x.from == name || x.to == name)
        || spec.valve.iter().any(|x| x.from == name || x.to == name)
        || spec
            .mass_flow
            .iter()
            .any(|x| x.from == name || x.to == name)
        || spec
            .restrictor
            .iter()
            .any(|x| x.from == name || x.to == name)
        || spec.tube.iter().any(|x| x.from == name || x.to == name)
        || spec
            .piston
            .iter()
            .any(|x| x.behind == name || x.ahead == name)
        || spec.wall.iter().any(|x| x.left == name || x.right == name);
    liquid && !gas
}

/// An orifice has one of two forms: `area` (and `discharge_coefficient`), or ISO 6358's
/// `sonic_conductance` and `critical_pressure_ratio`.
fn orifice(c: &mut Check, _spec: &ModelFile, i: usize, x: &super::spec::OrificeSpec) {
    let path = |k: &str| comp("orifice", i, k);
    match (&x.area, &x.sonic_conductance) {
        (Some(a), None) => {
            c.param(&path("area"), a, |v| v > 0.0, "greater than 0 m^2");
            if let Some(cd) = &x.discharge_coefficient {
                c.param(
                    &path("discharge_coefficient"),
                    cd,
                    |v| v > 0.0 && v <= 1.0,
                    "greater than 0 and at most 1",
                );
            }
            if x.critical_pressure_ratio.is_some() {
                c.err(
                    &path("critical_pressure_ratio"),
                    "`critical_pressure_ratio` belongs to the ISO 6358 form, which is given by \
                     `sonic_conductance` instead of `area`"
                        .to_string(),
                );
            }
        }
        (None, Some(cs)) => {
            c.param(
                &path("sonic_conductance"),
                cs,
                |v| v > 0.0,
                "greater than 0 m^3/(s Pa)",
            );
            match &x.critical_pressure_ratio {
                Some(b) => c.param(
                    &path("critical_pressure_ratio"),
                    b,
                    |v| (0.0..crate::components::orifice::ISO_LAMINAR_RATIO).contains(&v),
                    "at least 0 and below 0.999 (the laminar ratio)",
                ),
                None => c.err(
                    &[key("orifice"), Seg::Index(i)],
                    "an ISO 6358 orifice (with `sonic_conductance`) needs \
                     `critical_pressure_ratio` too"
                        .to_string(),
                ),
            }
            if x.discharge_coefficient.is_some() {
                c.err(
                    &path("discharge_coefficient"),
                    "`discharge_coefficient` belongs to the `area` form; the ISO 6358 form \
                     (`sonic_conductance`) has none"
                        .to_string(),
                );
            }
        }
        (Some(_), Some(_)) => c.err(
            &path("sonic_conductance"),
            "give either `area` (isentropic orifice) or `sonic_conductance` (ISO 6358), not both"
                .to_string(),
        ),
        (None, None) => c.err(
            &[key("orifice"), Seg::Index(i)],
            "missing required key `area` in orifice (or, for the ISO 6358 form, \
             `sonic_conductance` and `critical_pressure_ratio`)"
                .to_string(),
        ),
    }
}

/// The numeric keys of a component (as the FMU's parameters see them) and all of its keys.
fn component_keys(spec: &ModelFile, kind: &str, i: usize) -> Option<toml::Table> {
    let value = match kind {
        "chamber" => toml::Value::try_from(spec.chamber.get(i)?),
        "reservoir" => toml::Value::try_from(spec.reservoir.get(i)?),
        "orifice" => toml::Value::try_from(spec.orifice.get(i)?),
        "valve" => toml::Value::try_from(spec.valve.get(i)?),
        "piston" => toml::Value::try_from(spec.piston.get(i)?),
        "wall" => toml::Value::try_from(spec.wall.get(i)?),
        "mass_flow" => toml::Value::try_from(spec.mass_flow.get(i)?),
        "restrictor" => toml::Value::try_from(spec.restrictor.get(i)?),
        "tube" => toml::Value::try_from(spec.tube.get(i)?),
        "inertance_valve" => toml::Value::try_from(spec.inertance_valve.get(i)?),
        _ => return None,
    };
    match value {
        Ok(toml::Value::Table(t)) => Some(t),
        _ => None,
    }
}

fn inputs(c: &mut Check, spec: &ModelFile, names: &HashMap<&str, (&'static str, usize)>) {
    let mut seen: Vec<&str> = Vec::new();
    let mut all: Vec<&str> = names.keys().copied().collect();
    all.sort_unstable();
    for (j, input) in spec.inputs.names.iter().enumerate() {
        let path = vec![key("inputs"), key("names"), Seg::Index(j)];
        if seen.contains(&input.as_str()) {
            c.err(&path, format!("input `{input}` is listed twice"));
            continue;
        }
        seen.push(input);
        let Some((name, k)) = input.split_once('.') else {
            c.err(
                &path,
                format!("input `{input}` must be `<component>.<key>`, e.g. `atm.pressure`"),
            );
            continue;
        };
        let Some(&(kind, i)) = names.get(name) else {
            c.err(
                &path,
                format!(
                    "input `{input}`: there is no component named `{name}`{}",
                    did_you_mean(name, all.iter().copied())
                ),
            );
            continue;
        };
        let Some(keys) = component_keys(spec, kind, i) else {
            continue;
        };
        let numeric: Vec<&str> = keys
            .iter()
            .filter(|(_, v)| matches!(v, toml::Value::Float(_) | toml::Value::Integer(_)))
            .map(|(k, _)| k.as_str())
            .collect();
        match keys.get(k) {
            Some(toml::Value::Float(_) | toml::Value::Integer(_)) => {}
            Some(toml::Value::Table(_)) => c.err(
                &path,
                format!(
                    "input `{input}`: `{k}` of {kind} `{name}` is a table over time; an input \
                     must be a constant number that the master sets"
                ),
            ),
            Some(_) => c.err(
                &path,
                format!(
                    "input `{input}`: `{k}` of {kind} `{name}` is not a number (numeric keys: \
                     {})",
                    numeric.join(", ")
                ),
            ),
            None => c.err(
                &path,
                format!(
                    "input `{input}`: {kind} `{name}` has no numeric key `{k}` (numeric keys: \
                     {}){}",
                    numeric.join(", "),
                    did_you_mean(k, numeric.iter().copied())
                ),
            ),
        }
    }
}

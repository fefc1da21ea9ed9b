//! Validation of a deserialized model: every problem is collected, each located at the
//! offending key (or, for a key that is absent, at the table that should have it).
//!
//! Non-finite numbers are found once, in the spanned tree (TOML allows `nan` and `inf`); the
//! range checks below skip them so that a `nan` is reported once, as such.

use std::collections::{HashMap, HashSet};

use super::ModelError;
use super::locate::{BadFloat, Locator, Path, Seg, did_you_mean, key};
use super::spec::{ModelFile, ParamSpec};
use crate::components::keys::{Form, Role, Rule, Value};
use crate::gas::SPECIES;
use crate::integrators::{METHODS, Method};
use crate::units::text::{is_invisible, number};

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

/// A number of the file in words, for messages about it: `pressure`, the time in row 2 of
/// the table of `opening`, `t_open` of the cubic opening of `opening`.
fn number_at(path: &[Seg]) -> String {
    match path {
        [.., Seg::Key(k), Seg::Key(t), Seg::Index(r), Seg::Index(c)] if t == "table" => {
            let cell = if *c == 0 { "time" } else { "value" };
            format!("the {cell} in row {r} of the table of `{k}`")
        }
        [.., Seg::Key(k), Seg::Key(cu), Seg::Key(t)] if cu == "cubic" => {
            format!("`{t}` of the cubic opening of `{k}`")
        }
        _ => format!("`{}`", name_of(path)),
    }
}

struct Check<'l, 'a> {
    loc: &'l Locator<'a>,
    errors: Vec<ModelError>,
    /// Numbers written too small for an f64 (reported as such; their rules not checked).
    underflow: Vec<Path>,
}

impl Check<'_, '_> {
    fn err(&mut self, path: &[Seg], message: String) {
        self.errors.push(self.loc.error(path, message));
    }

    /// `v` must satisfy `ok`; non-finite values are skipped (reported elsewhere).
    fn require(&mut self, path: &[Seg], v: f64, ok: bool, rule: &str) {
        self.require_with(path, v, ok, || rule.to_string());
    }

    /// Whether the number at `path` (or at a row or cell below it) was written too small for
    /// an f64: its 0 was reported as an underflow.
    fn underflowed(&self, path: &[Seg]) -> bool {
        self.underflow.iter().any(|u| u.starts_with(path))
    }

    /// [`Self::require`] with the rule's words made only for a message.
    fn require_with(&mut self, path: &[Seg], v: f64, ok: bool, rule: impl FnOnce() -> String) {
        if v.is_finite() && !ok && !self.underflowed(path) {
            let name = name_of(path);
            self.err(
                path,
                format!("`{name}` must be {}, got {}", rule(), number(v)),
            );
        }
    }

    fn positive(&mut self, path: &[Seg], v: f64, unit: &str) {
        self.require(path, v, v > 0.0, &format!("greater than 0{unit}"));
    }

    fn opt_positive(&mut self, path: &[Seg], v: Option<f64>, unit: &str) {
        if let Some(v) = v {
            self.positive(path, v, unit);
        }
    }

    /// A parameter that may be a table: the table must not be empty and its times must
    /// increase strictly; every value must satisfy `ok` (described by `rule`).
    fn param(
        &mut self,
        path: &[Seg],
        p: &ParamSpec,
        ok: impl Fn(f64) -> bool,
        rule: impl FnOnce() -> String,
    ) {
        let name = || name_of(path);
        match p {
            ParamSpec::Const(v) => self.require_with(path, *v, ok(*v), rule),
            ParamSpec::Cubic(_) => self.err(
                path,
                format!(
                    "`{}` cannot be a cubic opening curve: `{{ cubic = ... }}` is only for a \
                     valve's `opening`; give a number or a table",
                    name()
                ),
            ),
            ParamSpec::Table(t) => {
                let mut table_path = path.to_vec();
                table_path.push(key("table"));
                if t.table.is_empty() {
                    self.err(
                        &table_path,
                        format!(
                            "`{}` has an empty table: give at least one [time, value] row",
                            name()
                        ),
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
                            "the table of `{}` is not sorted by time: t = {} s comes after \
                             t = {} s (times must increase strictly)",
                            name(),
                            number(t.table[r][0]),
                            number(t.table[r - 1][0])
                        ),
                    );
                }
                if let Some(r) = (0..t.table.len()).find(|&r| {
                    t.table[r][1].is_finite() && !ok(t.table[r][1]) && !self.underflowed(&row(r))
                }) {
                    self.err(
                        &row(r),
                        format!(
                            "`{}` must be {}, got {} at t = {} s",
                            name(),
                            rule(),
                            number(t.table[r][1]),
                            number(t.table[r][0])
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
        underflow: Vec::new(),
    };

    // Numbers that are not numbers, and numbers too small to be one (their 0 breaks no rule
    // the user meant: their rules are not checked again).
    for (path, bad) in loc.bad_floats() {
        let what = number_at(&path);
        match bad {
            BadFloat::NotFinite(v) => {
                let how = if v.is_nan() { "nan" } else { "infinite" };
                c.err(
                    &path,
                    format!("{what} is {how}: every number must be finite"),
                );
            }
            BadFloat::Underflow(text) => {
                c.err(
                    &path,
                    format!(
                        "{what} = {text} underflows: it is below the smallest number a double \
                         holds ({}), so it would be 0; write 0 or a larger number",
                        number(f64::from_bits(1))
                    ),
                );
                c.underflow.push(path);
            }
        }
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

/// Every component as (kind, index, name), in the registry's order of kinds.
fn all_components(spec: &ModelFile) -> Vec<(&'static str, usize, &str)> {
    spec.components()
        .into_iter()
        .map(|(i, x)| (x.kind().name, i, x.name()))
        .collect()
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
            .any(|ch| ch == '.' || ch.is_whitespace() || is_invisible(ch))
        {
            c.err(
                &path,
                format!(
                    "name `{name}` must not contain dots, spaces, control or invisible \
                     characters (it is the first part of variable names such as `{name}.p`)"
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

/// Links and boundaries (every kind with two node keys, `Kind::ends`) name existing, distinct
/// nodes; a liquid link joins reservoirs only.
fn links(c: &mut Check, spec: &ModelFile, names: &HashMap<&str, (&'static str, usize)>) {
    let is_node = |kind: &str| crate::components::kind(kind).is_some_and(|k| k.role == Role::Node);
    let mut nodes: Vec<&str> = names
        .iter()
        .filter(|(_, (k, _))| is_node(k))
        .map(|(n, _)| *n)
        .collect();
    nodes.sort_unstable();
    for (i, x) in spec.components() {
        let kind = x.kind();
        if !kind.keys.iter().any(|k| k.form == Form::Node) {
            continue;
        }
        // Every node key given (a third, optional one: a relieving regulator's `exhaust`).
        let ends: Vec<(&str, &str)> = kind
            .keys
            .iter()
            .filter(|k| k.form == Form::Node)
            .filter_map(|k| match x.value(k.name) {
                Some(Value::Text(t)) => Some((k.name, t)),
                _ => None,
            })
            .collect();
        let mut ok = true;
        for &(k, target) in &ends {
            let path = comp(kind.name, i, k);
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
                Some((tk, _)) if !is_node(tk) => {
                    ok = false;
                    c.err(
                        &path,
                        format!(
                            "`{k}` names the {tk} `{target}`, which is not a node: a {} \
                             connects chambers and reservoirs",
                            kind.name
                        ),
                    );
                }
                // The nodes that hold no gas of their own are the reservoirs.
                Some((tk, _))
                    if kind.role == Role::LiquidLink
                        && crate::components::kind(tk).is_some_and(|t| t.needs_gas) =>
                {
                    ok = false;
                    c.err(
                        &path,
                        format!(
                            "`{k}` names the {tk} `{target}`: an {} carries liquid \
                             between two reservoirs (prescribed pressures), so both ends must \
                             be reservoirs",
                            kind.name
                        ),
                    );
                }
                Some(_) => {}
            }
        }
        let may_share = |k1: &str, k2: &str| {
            [(k1, k2), (k2, k1)].iter().any(|&(a, b)| {
                kind.key(a)
                    .is_some_and(|k| matches!(k.rule, Rule::MayShare(o) if o == b))
            })
        };
        for (j, &(k2, b)) in ends.iter().enumerate() {
            if let Some(&(k1, _)) = ends[..j]
                .iter()
                .find(|&&(k1, a)| a == b && !may_share(k1, k2))
                && ok
            {
                c.err(
                    &comp(kind.name, i, k2),
                    format!(
                        "`{k2}` is `{b}`, the same node as `{k1}`: a {} must connect {} \
                         different nodes",
                        kind.name,
                        match ends.len() {
                            2 => "two".to_string(),
                            n => n.to_string(),
                        }
                    ),
                );
            }
        }
    }
}

fn gas(c: &mut Check, spec: &ModelFile) {
    let Some(g) = &spec.gas else {
        // Gas components need a gas: the first of the first kind that does.
        let first = spec
            .components()
            .into_iter()
            .find(|(i, x)| *i == 0 && x.kind().needs_gas)
            .map(|(_, x)| (x.kind().name, x.name().to_string()));
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
                            "`cp` = {} must be greater than `R` = {} J/(kg K) \
                             (cv = cp - R must be positive)",
                            number(cp),
                            number(r)
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
    if s.t_start.is_finite() && s.t_end.is_finite() && s.t_end <= s.t_start {
        c.err(
            &sect("solver", "t_end"),
            format!(
                "`t_end` = {} s must be after `t_start` = {} s",
                number(s.t_end),
                number(s.t_start)
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
                "`max_time` = {} s must be after `t_start` = {} s",
                number(m),
                number(s.t_start)
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

/// Every key's own rule, as its kind declares it (`crate::components::keys`): on a number, on
/// every row of a table; a cubic curve only where the key may be one. Then each kind's own
/// cross-key rules, and the chambers' initial volumes.
fn components(c: &mut Check, spec: &ModelFile) {
    let liquid = liquid_nodes(spec);
    for (i, x) in spec.components() {
        key_rules(c, i, x, &liquid);
    }
    initial_volumes(c, spec);
}

/// Component (or part) `x`, the `i`-th of its list: every key's own rule, then its own
/// cross-key rules.
fn key_rules(
    c: &mut Check,
    i: usize,
    x: &dyn crate::components::keys::Spec,
    liquid: &HashSet<&str>,
) {
    {
        let kind = x.kind();
        for k in kind.keys {
            let Some(value) = x.value(k.name) else {
                continue;
            };
            let path = comp(kind.name, i, k.name);
            // A node of liquid may hold a gauge pressure (as `Network::rule_of` during a run).
            let rule = match k.rule {
                Rule::AbsoluteUnlessLiquid if liquid.contains(x.name()) => Rule::Any,
                r => r,
            };
            let text = || rule.text(&k.unit());
            match value {
                Value::Number(v) => c.require_with(&path, v, rule.holds(v), text),
                Value::Param(ParamSpec::Cubic(cu)) if k.form == Form::Opening => {
                    let mut d = path.clone();
                    d.extend([key("cubic"), key("duration")]);
                    c.positive(&d, cu.cubic.duration, " s");
                }
                Value::Param(p) => c.param(&path, p, |v| rule.holds(v), text),
                Value::Curve(rows) => {
                    // Each flow obeys the key's rule; the shape of the curve (order, ends) is
                    // the kind's own check, which names the row.
                    for (r, row) in rows.iter().enumerate() {
                        let mut d = path.clone();
                        d.extend([Seg::Index(r), Seg::Index(1)]);
                        c.require_with(&d, row[1], rule.holds(row[1]), text);
                        d.pop();
                        d.push(Seg::Index(0));
                        c.require_with(&d, row[0], row[0].is_finite(), || "finite".to_string());
                    }
                }
                Value::Text(_) | Value::Flag(_) => {}
            }
        }
        for problem in x.problems() {
            let path = match problem.key {
                Some(k) => comp(kind.name, i, k),
                None => vec![key(kind.name), Seg::Index(i)],
            };
            c.err(&path, problem.message);
        }
    }
}

/// The parts of a model (`super::parts`), before they are expanded: their keys' rules and own
/// checks, their nodes (a chamber or reservoir of the file, or one a part generates), and the
/// names they generate (new to the model, and not generated twice). Empty: they may be expanded.
pub(crate) fn parts(spec: &ModelFile, loc: &Locator<'_>) -> Vec<ModelError> {
    let mut c = Check {
        loc,
        errors: Vec::new(),
        underflow: Vec::new(),
    };
    let parts = spec.parts();
    let liquid = HashSet::new();
    for (i, x) in &parts {
        key_rules(&mut c, *i, x.as_spec(), &liquid);
    }
    if !c.errors.is_empty() {
        // The names a part generates follow from keys that are wrong.
        return c.errors;
    }
    let mut taken: HashMap<&str, String> = all_components(spec)
        .into_iter()
        .map(|(kind, _, name)| (name, format!("a {kind}")))
        .collect();
    let mut nodes: Vec<String> = spec
        .chamber
        .iter()
        .map(|x| x.name.clone())
        .chain(spec.reservoir.iter().map(|x| x.name.clone()))
        .collect();
    let generated: Vec<Vec<(&str, String)>> = parts.iter().map(|(_, x)| x.generated()).collect();
    for ((i, x), names) in parts.iter().zip(&generated) {
        let part = x.kind().name;
        if let Some(owner) = taken.get(x.name()) {
            c.err(
                &comp(part, *i, "name"),
                format!(
                    "duplicate name `{}`: {owner} already has it (all components and parts share \
                     one set of names)",
                    x.name()
                ),
            );
        }
        for (kind, name) in names {
            // A component that takes the part's own name (a cylinder's piston): said above.
            if let Some(owner) = taken.get(name.as_str()).filter(|_| name != x.name()) {
                c.err(
                    &comp(part, *i, "name"),
                    format!(
                        "{part} `{}` generates the {kind} `{name}`, a name {owner} already has",
                        x.name()
                    ),
                );
            }
            if *kind == "chamber" {
                nodes.push(name.clone());
            }
        }
        for (_, name) in names {
            taken.insert(name, format!("{part} `{}`", x.name()));
        }
        taken.insert(x.name(), format!("a {part}"));
    }
    nodes.sort_unstable();
    for ((i, x), own) in parts.iter().zip(&generated) {
        for (k, node) in x.nodes() {
            if own.iter().any(|(_, n)| n == node) {
                c.err(
                    &comp(x.kind().name, *i, k),
                    format!(
                        "`{k}` = `{node}` is a component this {} generates itself",
                        x.kind().name
                    ),
                );
            } else if nodes.binary_search_by(|n| n.as_str().cmp(node)).is_err() {
                c.err(
                    &comp(x.kind().name, *i, k),
                    format!(
                        "`{k}` = `{node}` is not a chamber or reservoir (nor a chamber a part \
                         generates){}",
                        did_you_mean(node, nodes.iter().map(String::as_str))
                    ),
                );
            }
        }
    }
    c.errors
}

/// Chambers' dead volumes with the pistons that move them: 0 only with a piston `behind`, and a
/// positive initial volume.
fn initial_volumes(c: &mut Check, spec: &ModelFile) {
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
        // The node ahead moves by the annulus: the bore less a rod through it.
        let annulus = p.area - p.rod_area;
        let ends: &[(&str, f64)] = if p.behind == p.ahead {
            &[(p.behind.as_str(), p.area - annulus)]
        } else {
            &[(p.behind.as_str(), p.area), (p.ahead.as_str(), -annulus)]
        };
        for &(name, area) in ends {
            let e = by_chamber.entry(name).or_insert((0.0, false, true));
            e.0 += area * p.x0;
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
        // A negative volume breaks the key's own rule (`keys`).
        if x.volume.is_finite() && finite && x.volume >= 0.0 {
            if !touched && x.volume <= 0.0 && !broken_piston {
                c.err(
                    &vpath,
                    format!(
                        "`volume` must be greater than 0 m^3, got {} (a dead volume of 0 is \
                         only valid with a piston `behind` this chamber)",
                        number(x.volume)
                    ),
                );
            } else if touched && x.volume + moved <= 0.0 {
                c.err(
                    &vpath,
                    format!(
                        "the initial volume of chamber `{}`, volume + sum of area*x0 of \
                         pistons behind it - sum of (area - rod_area)*x0 of pistons ahead of it = {} m^3, \
                         must be greater than 0",
                        x.name,
                        number(x.volume + moved)
                    ),
                );
            }
        }
    }
}

/// The nodes that only liquid links touch (reservoirs of liquid: links may not reach a
/// chamber), whose pressure may be gauge. One pass over the components.
pub(super) fn liquid_nodes(spec: &ModelFile) -> HashSet<&str> {
    let (mut liquid, mut gas) = (HashSet::new(), HashSet::new());
    for (_, x) in spec.components() {
        let kind = x.kind();
        if kind.ends().is_none() {
            continue;
        }
        for k in kind.keys.iter().filter(|k| k.form == Form::Node) {
            if let Some(Value::Text(node)) = x.value(k.name) {
                if kind.role == Role::LiquidLink {
                    liquid.insert(node);
                } else {
                    gas.insert(node);
                }
            }
        }
    }
    liquid.retain(|n| !gas.contains(n));
    liquid
}

/// The numeric keys of a component (as the FMU's parameters see them) and all of its keys.
fn component_keys(spec: &ModelFile, kind: &str, i: usize) -> Option<toml::Table> {
    spec.components()
        .into_iter()
        .find(|(j, x)| *j == i && x.kind().name == kind)
        .map(|(_, x)| x.to_table())
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
        let declared = crate::components::kind(kind).and_then(|d| d.key(k));
        match keys.get(k) {
            // A key that fixes an initial state or the geometry (`keys::Key::settable_during_run`):
            // every set during a run would be refused, so the model is.
            Some(toml::Value::Float(_) | toml::Value::Integer(_))
                if declared.is_some_and(|d| !d.settable_during_run()) =>
            {
                let can: Vec<&str> = crate::components::kind(kind)
                    .map(|d| d.keys.iter())
                    .into_iter()
                    .flatten()
                    .filter(|d| d.settable_during_run())
                    .map(|d| d.name)
                    .collect();
                c.err(
                    &path,
                    format!(
                        "input `{input}`: `{k}` of {kind} `{name}` cannot change during a run \
                         (it fixes an initial state or the geometry, and so the stored mass and \
                         energy); {}",
                        if can.is_empty() {
                            format!("no key of a {kind} can")
                        } else {
                            format!("keys of a {kind} that can: {}", can.join(", "))
                        }
                    ),
                )
            }
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

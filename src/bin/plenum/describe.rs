//! `plenum describe`: the network of a model file as text or as a Graphviz graph.
//!
//! Reads only the parsed [`ModelFile`]; every component is serialized back to TOML values so a
//! key added to the model file shows up here without a change, with the unit its kind declares
//! (`plenum::components::keys`).

use std::fmt::Write;

use plenum::components::keys::{Form, Role, pretty_unit};
use plenum::model::ModelFile;

/// The unit of a key of a component kind as its kind declares it, written as
/// docs/model-file.md writes it ("" for none and for a dimensionless key).
fn unit(kind: &str, key: &str) -> String {
    plenum::components::kind(kind)
        .and_then(|k| k.key(key))
        .map(|k| k.unit())
        .filter(|u| u.symbol != "1")
        .map_or_else(String::new, |u| pretty_unit(&u))
}

/// The keys of a kind that name nodes (its ports), in the order the kind declares them (for
/// a two-port kind, the flow direction: from → to, behind → ahead, left → right).
fn port_keys(kind: &str) -> Vec<&'static str> {
    plenum::components::kind(kind).map_or_else(Vec::new, |k| {
        k.keys
            .iter()
            .filter(|key| key.form == Form::Node)
            .map(|key| key.name)
            .collect()
    })
}

/// The ports a component gives, as (key, node), in the kind's order.
fn ports<'a>(kind: &str, t: &'a toml::Table) -> Vec<(&'static str, &'a str)> {
    port_keys(kind)
        .into_iter()
        .filter_map(|k| Some((k, t.get(k)?.as_str()?)))
        .collect()
}

/// Every component as (kind, its TOML table): nodes, then links, then pistons and walls, in
/// the registry's order within each.
fn components(spec: &ModelFile) -> Vec<(&'static str, toml::Table)> {
    let rank = |role: Role| match role {
        Role::Node => 0,
        Role::Link | Role::LiquidLink => 1,
        Role::Boundary => 2,
    };
    let mut out: Vec<(Role, &'static str, toml::Table)> = spec
        .components()
        .into_iter()
        .map(|(_, c)| (c.kind().role, c.kind().name, c.to_table()))
        .collect();
    out.sort_by_key(|(role, _, _)| rank(*role));
    out.into_iter().map(|(_, k, t)| (k, t)).collect()
}

fn is_node(kind: &str) -> bool {
    plenum::components::kind(kind).is_some_and(|k| k.role == Role::Node)
}

fn str_of<'a>(t: &'a toml::Table, key: &str) -> &'a str {
    t.get(key).and_then(|v| v.as_str()).unwrap_or("?")
}

/// A parameter value as a reader wants it: a number, or what a table or curve does.
fn value_text(v: &toml::Value) -> String {
    match v {
        toml::Value::Float(x) => format!("{x:?}"),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Boolean(b) => b.to_string(),
        toml::Value::String(s) => format!("\"{s}\""),
        toml::Value::Table(t) => {
            if let Some(rows) = t.get("table").and_then(|r| r.as_array()) {
                let pairs: Vec<(f64, f64)> = rows
                    .iter()
                    .filter_map(|r| {
                        let r = r.as_array()?;
                        Some((num(r.first()?)?, num(r.get(1)?)?))
                    })
                    .collect();
                let interp = t
                    .get("interpolation")
                    .and_then(|i| i.as_str())
                    .unwrap_or("linear");
                match (pairs.first(), pairs.last()) {
                    (Some(a), Some(b)) => format!(
                        "table of {} rows ({interp}): {:?} at {:?} s … {:?} at {:?} s",
                        pairs.len(),
                        a.1,
                        a.0,
                        b.1,
                        b.0
                    ),
                    _ => "empty table".to_string(),
                }
            } else if let Some(c) = t.get("cubic").and_then(|c| c.as_table()) {
                format!(
                    "cubic opening from {} s over {} s",
                    c.get("t_open").map(value_text).unwrap_or_default(),
                    c.get("duration").map(value_text).unwrap_or_default()
                )
            } else {
                v.to_string()
            }
        }
        other => other.to_string(),
    }
}

fn num(v: &toml::Value) -> Option<f64> {
    v.as_float().or_else(|| v.as_integer().map(|i| i as f64))
}

/// The text listing: model, gas, solver, then every component with its parameters and units.
pub fn text(spec: &ModelFile) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "model {}", spec.model.name);
    if !spec.model.description.is_empty() {
        let _ = writeln!(s, "  {}", spec.model.description);
    }
    match &spec.gas {
        Some(g) => {
            let mut parts = Vec::new();
            if let Some(sp) = &g.species {
                parts.push(format!("species {sp}"));
            }
            if let Some(r) = g.r {
                parts.push(format!("R = {r:?} J/(kg·K)"));
            }
            if let Some(cp) = g.cp {
                parts.push(format!("cp = {cp:?} J/(kg·K)"));
            }
            if let Some(p) = g.p_critical {
                parts.push(format!("p_critical = {p:?} Pa"));
            }
            if let Some(t) = g.t_critical {
                parts.push(format!("T_critical = {t:?} K"));
            }
            if g.isothermal {
                parts.push("isothermal chambers".to_string());
            }
            let _ = writeln!(s, "gas: {}", parts.join(", "));
        }
        None => {
            let _ = writeln!(s, "gas: none (liquid-only network)");
        }
    }
    let sv = &spec.solver;
    let mut solver = vec![
        format!("method {}", sv.method),
        format!("t = {:?} … {:?} s", sv.t_start, sv.t_end),
    ];
    for (key, v) in [
        ("step", sv.step),
        ("rtol", sv.rtol),
        ("atol", sv.atol),
        ("max_step", sv.max_step),
        ("initial_step", sv.initial_step),
        ("output_interval", sv.output_interval),
        ("max_time", sv.max_time),
    ] {
        if let Some(v) = v {
            let u = if matches!(key, "rtol" | "atol") {
                ""
            } else {
                " s"
            };
            solver.push(format!("{key} = {v:?}{u}"));
        }
    }
    if sv.stop_on_exit == Some(false) {
        solver.push("stop_on_exit = false".to_string());
    }
    let _ = writeln!(s, "solver: {}", solver.join(", "));
    if !spec.inputs.names.is_empty() {
        let _ = writeln!(s, "inputs: {}", spec.inputs.names.join(", "));
    }

    if !spec.expanded.is_empty() {
        let _ = writeln!(s, "\nparts, expanded when read ({}):", spec.expanded.len());
        for e in &spec.expanded {
            let list: Vec<String> = e
                .components
                .iter()
                .map(|(kind, name)| format!("{kind} {name}"))
                .collect();
            let _ = writeln!(s, "  {} {} → {}", e.part, e.name, list.join(", "));
        }
    }

    let comps = components(spec);
    for (title, pick) in [("nodes", true), ("links, pistons and walls", false)] {
        let chosen: Vec<_> = comps.iter().filter(|(k, _)| is_node(k) == pick).collect();
        let _ = writeln!(s, "\n{title} ({}):", chosen.len());
        for (kind, t) in chosen {
            let name = str_of(t, "name");
            let given = ports(kind, t);
            match given.as_slice() {
                [] => {
                    let _ = writeln!(s, "  {kind} {name}");
                }
                [(ka, a), (kb, b)] => {
                    let _ = writeln!(s, "  {kind} {name}: {a} → {b} ({ka} → {kb})");
                }
                many => {
                    let list: Vec<String> =
                        many.iter().map(|(k, n)| format!("{k} = {n}")).collect();
                    let _ = writeln!(s, "  {kind} {name}: {}", list.join(", "));
                }
            }
            for (key, v) in t {
                if key == "name" || given.iter().any(|(k, _)| k == key) {
                    continue;
                }
                let u = match (unit(kind, key).as_str(), v) {
                    ("", _) => String::new(),
                    (u, toml::Value::Float(_) | toml::Value::Integer(_)) => format!(" {u}"),
                    (u, _) => format!(" (values in {u})"),
                };
                let _ = writeln!(s, "    {key} = {}{u}", value_text(v));
            }
        }
    }
    s
}

/// Escape a name for a quoted dot string: names come from the model file.
fn escaped(name: &str) -> String {
    name.replace('\\', "\\\\").replace('"', "\\\"")
}

fn quoted(name: &str) -> String {
    format!("\"{}\"", escaped(name))
}

/// The network as a Graphviz digraph: one node per chamber and reservoir, one edge per two-port
/// component (from → to, behind → ahead, left → right); a component with one port or more than
/// two is a point joined to each, the edge labelled with the port's key.
pub fn dot(spec: &ModelFile) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "digraph {} {{", quoted(&spec.model.name));
    let _ = writeln!(s, "  rankdir=LR;");
    let comps = components(spec);
    for (kind, t) in comps.iter().filter(|(k, _)| is_node(k)) {
        let name = str_of(t, "name");
        let shape = if *kind == "chamber" { "ellipse" } else { "box" };
        let _ = writeln!(
            s,
            "  {} [shape={shape}, label=\"{}\\n({kind})\"];",
            quoted(name),
            escaped(name)
        );
    }
    for (kind, t) in comps.iter().filter(|(k, _)| !is_node(k)) {
        let style = match *kind {
            "piston" | "wall" => "dashed",
            _ => "solid",
        };
        let label = format!("{} ({kind})", str_of(t, "name"));
        match ports(kind, t).as_slice() {
            [(_, a), (_, b)] => {
                let _ = writeln!(
                    s,
                    "  {} -> {} [label={}, style={style}];",
                    quoted(a),
                    quoted(b),
                    quoted(&label)
                );
            }
            // One port or more than two: the component is a point joined to each port,
            // the edge labelled with the port's key.
            many => {
                let me = quoted(&format!("{} ({kind})", str_of(t, "name")));
                let _ = writeln!(s, "  {me} [shape=point, xlabel={}];", quoted(&label));
                for (key, node) in many {
                    let _ = writeln!(
                        s,
                        "  {me} -> {} [label={}, style={style}, dir=none];",
                        quoted(node),
                        quoted(key)
                    );
                }
            }
        }
    }
    let _ = writeln!(s, "}}");
    s
}

//! `plenum describe`: the Graphviz output of every shipped model has one node per chamber and
//! reservoir and one edge per link, piston and wall, each edge between declared nodes; the text
//! listing names every component with its units.

use crate::common;

use std::collections::BTreeSet;

use common::{output_ok, plenum_command};

fn repo(rel: &str) -> String {
    format!("{}/{rel}", env!("CARGO_MANIFEST_DIR"))
}

fn describe(model: &str, dot: bool) -> String {
    describe_with(model, dot, &[])
}

fn describe_with(model: &str, dot: bool, set: &[&str]) -> String {
    let mut cmd = plenum_command();
    cmd.args(["describe", model]);
    for s in set {
        cmd.args(["--set", s]);
    }
    if dot {
        cmd.arg("--dot");
    }
    String::from_utf8(output_ok(&mut cmd).stdout).unwrap()
}

/// The shipped models and the two test fixtures that, together, have every component kind.
fn models() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(repo("models"))
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .filter(|p| p.ends_with(".toml"))
        .collect();
    v.sort();
    v.push(repo("tests/fixtures/models/all_kinds.toml"));
    v.push(repo("tests/fixtures/models/other_kinds.toml"));
    v
}

/// A quoted dot identifier at the start of `s`, unescaped, and the rest of `s`.
fn quoted(s: &str) -> (String, &str) {
    let s = s.trim_start();
    assert!(s.starts_with('"'), "expected a quoted id: {s}");
    let mut out = String::new();
    let mut chars = s[1..].char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => out.push(chars.next().unwrap().1),
            '"' => return (out, &s[i + 2..]),
            c => out.push(c),
        }
    }
    panic!("unterminated id: {s}");
}

#[test]
fn dot_has_a_node_per_chamber_and_reservoir_and_an_edge_per_connection() {
    for model in models() {
        let spec = plenum::model::load_path(std::path::Path::new(&model), &[])
            .unwrap()
            .spec;
        let dot = describe(&model, true);
        let lines: Vec<&str> = dot.lines().map(str::trim).collect();
        assert!(lines[0].starts_with("digraph ") && lines[0].ends_with('{'));
        assert_eq!(*lines.last().unwrap(), "}");
        let mut nodes = BTreeSet::new();
        let mut edges = Vec::new();
        for line in &lines[1..lines.len() - 1] {
            if !line.starts_with('"') {
                continue; // graph attributes
            }
            assert!(line.ends_with("];"), "statement: {line}");
            let (a, rest) = quoted(line);
            if let Some(rest) = rest.trim_start().strip_prefix("->") {
                let (b, _) = quoted(rest);
                edges.push((a, b));
            } else {
                assert!(nodes.insert(a), "node declared twice: {line}");
            }
        }
        let expected_nodes: BTreeSet<String> = spec
            .chamber
            .iter()
            .map(|c| c.name.clone())
            .chain(spec.reservoir.iter().map(|r| r.name.clone()))
            .collect();
        let n_links = spec.orifice.len()
            + spec.valve.len()
            + spec.mass_flow.len()
            + spec.restrictor.len()
            + spec.tube.len()
            + spec.inertance_valve.len();
        let n_edges = n_links + spec.piston.len() + spec.wall.len();
        println!(
            "{model}: {} nodes (chambers + reservoirs {}), {} edges (links {n_links} + pistons {} + walls {})",
            nodes.len(),
            expected_nodes.len(),
            edges.len(),
            spec.piston.len(),
            spec.wall.len()
        );
        assert_eq!(nodes, expected_nodes);
        assert_eq!(edges.len(), n_edges);
        for (a, b) in &edges {
            assert!(nodes.contains(a) && nodes.contains(b), "{a} -> {b}");
        }
        // Every orifice, valve, piston... is an edge between its own two nodes.
        for o in &spec.orifice {
            assert!(edges.contains(&(o.from.clone(), o.to.clone())));
        }
        for p in &spec.piston {
            assert!(edges.contains(&(p.behind.clone(), p.ahead.clone())));
        }
        for t in &spec.tube {
            assert!(edges.contains(&(t.from.clone(), t.to.clone())));
        }
        for w in &spec.wall {
            assert!(edges.contains(&(w.left.clone(), w.right.clone())));
        }
    }
}

#[test]
fn text_lists_every_component_with_units() {
    let model = repo("tests/fixtures/models/all_kinds.toml");
    let text = describe(&model, false);
    println!("{text}");
    for needle in [
        "model all_kinds",
        "chamber tank",
        "volume = 0.001 m³",
        "pressure = 500000.0 Pa",
        "reservoir supply",
        "pressure = table of 2 rows (step): 200000.0 at 0.0 s … 300000.0 at 0.005 s (values in Pa)",
        "orifice nozzle: tank → barrel (from → to)",
        "area = 1e-5 m²",
        "valve feed: supply → tank",
        "coefficient = 1e-8 kg/(s·Pa)",
        "piston slug: barrel → atm (behind → ahead)",
        "mass = 0.002 kg",
        "friction_static = 3000.0 Pa",
        "wall membrane: tank → atm (left → right)",
        "heat_transfer_coefficient = 10.0 W/(m²·K)",
        "inputs: atm.pressure",
    ] {
        assert!(text.contains(needle), "missing `{needle}`");
    }
}

#[test]
fn text_lists_the_other_kinds_with_units_and_defaults() {
    let text = describe(&repo("tests/fixtures/models/other_kinds.toml"), false);
    println!("{text}");
    for needle in [
        "mass_flow pump: supply → a (from → to)",
        "rate = 0.0001 kg/s",
        "restrictor choke: a → b",
        "diameter = 0.002 m",
        "tube hose: b → supply",
        // Defaults the file leaves out are shown (FONSim's roughness and air viscosity).
        "roughness = 1.5e-6 m",
        "viscosity = 1.82e-5 Pa·s",
        "inertance_valve heart_valve: proximal → distal",
        "density = 1050.0 kg/m³",
        "area_leak = 1e-8 m²",
        "q0 = 0.0 m³/s",
    ] {
        assert!(text.contains(needle), "missing `{needle}`");
    }
}

/// The unit `describe` prints for each parameter is the one docs/model-file.md gives.
#[test]
fn describe_units_are_the_documented_units() {
    let doc = std::fs::read_to_string(repo("docs/model-file.md")).unwrap();
    let doc_unit = |kind: &str, key: &str| -> String {
        let start = doc.find(&format!("`[[{kind}]]`")).unwrap();
        let row = doc[start..]
            .lines()
            .find(|l| l.starts_with(&format!("| `{key}` |")))
            .unwrap_or_else(|| panic!("no row for {kind}.{key}"));
        let unit = row.split('|').map(str::trim).nth(3).unwrap().to_string();
        if unit == "1" || unit == "—" {
            String::new()
        } else {
            unit
        }
    };
    let mut compared = 0;
    for model in ["all_kinds", "other_kinds"] {
        let text = describe(&repo(&format!("tests/fixtures/models/{model}.toml")), false);
        let mut kind = String::new();
        for line in text.lines() {
            if let Some(header) = line.strip_prefix("  ").filter(|l| !l.starts_with(' ')) {
                kind = header.split_whitespace().next().unwrap().to_string();
                continue;
            }
            let Some((key, value)) = line.strip_prefix("    ").and_then(|l| l.split_once(" = "))
            else {
                continue;
            };
            let printed = if let Some(i) = value.find("(values in ") {
                value[i + 11..value.len() - 1].to_string()
            } else if value.starts_with("table") || value.starts_with("cubic") {
                String::new()
            } else {
                value.split_once(' ').map_or("", |(_, u)| u).to_string()
            };
            if value.starts_with('"') || value == "true" || value == "false" {
                continue;
            }
            let documented = doc_unit(&kind, key);
            println!("{kind}.{key}: describe `{printed}`, doc `{documented}`");
            assert_eq!(printed, documented, "{kind}.{key}");
            compared += 1;
        }
    }
    println!("{compared} units compared");
    assert!(compared > 40);
}

#[test]
fn describe_shows_overridden_values() {
    let model = repo("models/projectile.toml");
    let before = describe(&model, false);
    let after = describe_with(&model, false, &["barrel.pressure=8e5"]);
    assert!(before.contains("pressure = 701325.0 Pa"));
    assert!(after.contains("pressure = 800000.0 Pa") && !after.contains("701325"));
}

/// Every port of every component is shown, whatever the kind's number of ports: the ports are
/// read from the fixture's TOML itself (a key whose value names a chamber or reservoir), not
/// from the kinds' declarations describe uses.
#[test]
fn every_port_of_every_kind_is_shown() {
    let model = repo("tests/fixtures/models/every_kind.toml");
    let file: toml::Table = toml::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    let entries = |kind: &str| -> Vec<toml::Table> {
        file.get(kind)
            .and_then(|v| v.as_array())
            .map(|a| a.iter().filter_map(|t| t.as_table().cloned()).collect())
            .unwrap_or_default()
    };
    let nodes: BTreeSet<String> = ["chamber", "reservoir"]
        .iter()
        .flat_map(|k| entries(k))
        .filter_map(|t| Some(t.get("name")?.as_str()?.to_string()))
        .collect();
    let text = describe(&model, false);
    let dot = describe(&model, true);
    let mut checked = 0;
    let mut by_count = [0; 3];
    for (kind, v) in &file {
        if matches!(kind.as_str(), "chamber" | "reservoir") || v.as_array().is_none() {
            continue;
        }
        for t in entries(kind) {
            let name = t["name"].as_str().unwrap();
            let ports: Vec<(&String, &str)> = t
                .iter()
                .filter(|(k, _)| *k != "name")
                .filter_map(|(k, v)| Some((k, v.as_str()?)))
                .filter(|(_, n)| nodes.contains(*n))
                .collect();
            let head = format!("  {kind} {name}");
            let line = text
                .lines()
                .find(|l| l.starts_with(&format!("{head}:")) || *l == head)
                .unwrap_or_else(|| panic!("no line for {kind} {name}:\n{text}"));
            println!("{line}  ({} ports in the file)", ports.len());
            for (key, node) in &ports {
                assert!(
                    line.contains(*node),
                    "{kind} {name}: {key} = {node} not in `{line}`"
                );
                // Two ports are one edge, in the kind's flow order (the file's key order is
                // not kept by the parser, so either direction is accepted here).
                let edges = if ports.len() == 2 {
                    let (a, b) = (ports[0].1, ports[1].1);
                    vec![format!("\"{a}\" -> \"{b}\""), format!("\"{b}\" -> \"{a}\"")]
                } else {
                    vec![format!(
                        "\"{name} ({kind})\" -> \"{node}\" [label=\"{key}\""
                    )]
                };
                assert!(
                    edges.iter().any(|e| dot.contains(e)),
                    "{kind} {name}: none of {edges:?} in\n{dot}"
                );
                checked += 1;
            }
            assert!(!ports.is_empty(), "{kind} {name} has no port");
            by_count[ports.len().min(3) - 1] += 1;
        }
    }
    println!("{checked} ports shown; components with 1 / 2 / 3+ ports: {by_count:?}");
    // The fixture must keep exercising each way of drawing a component.
    assert!(by_count.iter().all(|&n| n > 0), "{by_count:?}");
}

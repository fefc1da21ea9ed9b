//! docs/model-file.md cannot rot: every key the parser accepts, in every section and component
//! kind, is listed in that section of the document. The accepted keys are not copied here: they
//! come from the parser itself, whose "unknown field" error lists every field it expects. Every
//! default the parser fills in equals the page's `default` column. Every component key's row
//! states what its kind declares (`plenum::components::keys`): its type (a table or not), unit,
//! default and rule, and no row names a key the kind does not declare.

use plenum::components::keys::{Form, KeyDefault, Role, Rule, pretty_unit};
use plenum::model::ModelFile;

const DOC: &str = include_str!("../../docs/model-file.md");

/// The keys `toml` + serde accept at the table opened by `header` (`""` for the root).
fn accepted_keys(header: &str) -> Vec<String> {
    let text = format!("{header}\nzz_not_a_key = 1\n");
    let err = toml::from_str::<ModelFile>(&text)
        .expect_err("an unknown key must be refused")
        .to_string();
    let expected = err
        .split_once("expected")
        .unwrap_or_else(|| panic!("no list of expected keys in: {err}"))
        .1;
    expected
        .split('`')
        .skip(1)
        .step_by(2)
        .map(String::from)
        .collect()
}

/// The text of the doc's section whose heading names `title`, up to the next heading.
fn section(title: &str) -> &'static str {
    let start = DOC
        .lines()
        .scan(0usize, |offset, line| {
            let here = *offset;
            *offset += line.len() + 1;
            Some((here, line))
        })
        .find(|(_, line)| line.starts_with('#') && line.contains(title))
        .unwrap_or_else(|| panic!("no heading with {title} in docs/model-file.md"))
        .0;
    let body = &DOC[start..];
    let first_line = body.find('\n').unwrap() + 1;
    let end = body[first_line..]
        .find("\n#")
        .map_or(body.len(), |e| first_line + e);
    &body[..end]
}

#[test]
fn every_accepted_key_is_documented_in_its_section() {
    let top = accepted_keys("");
    println!("top level: {top:?}");
    assert!(top.contains(&"chamber".to_string()) && top.contains(&"solver".to_string()));
    let links_intro = section("## Links");
    let mut checked = 0;
    for name in &top {
        let is_section = plenum::model::SECTIONS.contains(&name.as_str());
        let (header, title) = if is_section {
            (format!("[{name}]"), format!("`[{name}]`"))
        } else {
            (format!("[[{name}]]"), format!("`[[{name}]]`"))
        };
        let keys = accepted_keys(&header);
        let text = section(&title);
        println!("{header}: {} keys {keys:?}", keys.len());
        assert!(!keys.is_empty());
        for key in &keys {
            let quoted = format!("`{key}`");
            let link_key = ["name", "from", "to"].contains(&key.as_str());
            assert!(
                text.contains(&quoted) || (link_key && links_intro.contains(&quoted)),
                "docs/model-file.md, section {title}, does not document the key {quoted}"
            );
            checked += 1;
        }
    }
    // Parameter tables and the valve's cubic curve sit behind an untagged enum, whose errors
    // do not list fields; their keys are the ones of TableSpec and CubicSpec.
    for key in ["table", "interpolation", "cubic", "t_open", "duration"] {
        assert!(DOC.contains(&format!("{key} =")) || DOC.contains(&format!("`{key}`")));
    }
    println!("{checked} keys documented");
    assert!(checked > 60);
}

/// The default a section's table gives for `key` (the `default` column, backticks removed).
fn documented_default(title: &str, key: &str) -> Option<String> {
    let row = section(title)
        .lines()
        .find(|l| l.starts_with(&format!("| `{key}` |")))?;
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    // | key | type | unit | default | meaning |
    Some(cells.get(4)?.trim_matches('`').to_string())
}

/// The sections with no keys, and one component of every kind of the registry with its required
/// keys alone (from its declaration), for the parser to fill in the rest. Not validated: any
/// name, node and number will do.
fn minimal_model() -> String {
    let mut s =
        String::from("[model]\nname = \"m\"\n[gas]\n[solver]\nt_end = 1.0\n[checks]\n[inputs]\n");
    for kind in plenum::components::KINDS
        .iter()
        .chain(plenum::model::parts::PARTS)
    {
        s += &format!("[[{}]]\n", kind.name);
        for key in kind
            .keys
            .iter()
            .filter(|k| k.default == KeyDefault::Required)
        {
            let value = match key.form {
                Form::Name => format!("\"{}\"", kind.name),
                Form::Node => "\"c\"".to_string(),
                Form::Flag => "false".to_string(),
                Form::Curve => "[[0.0, 1.0], [1.0, 0.0]]".to_string(),
                Form::Number | Form::Param | Form::Opening => "1.0".to_string(),
            };
            s += &format!("{} = {value}\n", key.name);
        }
    }
    s
}

/// Every default the parser fills in is the one docs/model-file.md states: a model with only
/// the required keys is parsed and serialized back, and each key that appears without having
/// been written is compared with the `default` column of its section.
#[test]
fn every_default_the_parser_fills_in_is_the_documented_one() {
    let minimal = minimal_model();
    let written: toml::Table = toml::from_str(&minimal).unwrap();
    let spec: ModelFile = toml::from_str(&minimal).unwrap();
    let filled = toml::Table::try_from(&spec).unwrap();
    let mut compared = 0;
    for (name, value) in &filled {
        let (title, tables): (String, Vec<(&toml::Table, &toml::Table)>) = match value {
            toml::Value::Table(t) => (
                format!("`[{name}]`"),
                vec![(t, written[name].as_table().unwrap())],
            ),
            toml::Value::Array(a) => (
                format!("`[[{name}]]`"),
                a.iter()
                    .zip(written[name].as_array().unwrap())
                    .map(|(f, w)| (f.as_table().unwrap(), w.as_table().unwrap()))
                    .collect(),
            ),
            _ => continue,
        };
        for (filled_t, written_t) in tables {
            for (key, v) in filled_t {
                if written_t.contains_key(key) {
                    continue;
                }
                let doc = documented_default(&title, key)
                    .unwrap_or_else(|| panic!("{title} `{key}` has no row in the doc"));
                let doc_value: toml::Value = toml::from_str::<toml::Table>(&format!("v = {doc}"))
                    .unwrap_or_else(|_| panic!("{title} `{key}`: default `{doc}` is not a value"))
                    ["v"]
                    .clone();
                let same = match (v, &doc_value) {
                    (toml::Value::Float(a), toml::Value::Float(b)) => a == b,
                    (a, b) => a == b,
                };
                println!("{title} {key}: parser {v}, doc {doc}");
                assert!(
                    same,
                    "{title} `{key}`: the parser fills in {v}, the doc says {doc}"
                );
                compared += 1;
            }
        }
    }
    println!("{compared} defaults compared");
    assert!(compared >= 20);
}

/// The cells of the row of `key` in the table of the section titled `title`: key, type, unit,
/// default, meaning.
fn row(title: &str, key: &str) -> Option<Vec<String>> {
    let line = section(title)
        .lines()
        .find(|l| l.starts_with(&format!("| `{key}` |")))?;
    Some(
        line.split('|')
            .map(|c| c.trim().to_string())
            .filter(|c| !c.is_empty())
            .collect(),
    )
}

/// Every key of every component kind against the declaration: the doc's `type` column says
/// whether it may be a table, its `unit` column is the declared unit, its `default` column the
/// declared default, its `meaning` states the declared rule; and every row of a kind's table is
/// a declared key.
#[test]
fn every_component_key_row_states_its_declaration() {
    let mut checked = 0;
    // Parts (`plenum::model::parts`) declare their keys as kinds do.
    for kind in plenum::components::KINDS
        .iter()
        .chain(plenum::model::parts::PARTS)
    {
        let title = format!("`[[{}]]`", kind.name);
        for key in kind.keys {
            let cells = match row(&title, key.name) {
                Some(c) => c,
                // Links share `name`, `from` and `to`, described once above their tables.
                None if kind.role != Role::Boundary
                    && kind.role != Role::Node
                    && matches!(key.form, Form::Name | Form::Node) =>
                {
                    assert!(section("## Links").contains(&format!("`{}`", key.name)));
                    continue;
                }
                None => panic!("{title}: no row for `{}`", key.name),
            };
            let (ty, unit, default, meaning) = (&cells[1], &cells[2], &cells[3], &cells[4]);
            let want_type = match key.form {
                Form::Name | Form::Node => "string",
                Form::Number => "number",
                Form::Param => "param",
                Form::Opening => "param or cubic",
                Form::Flag => "bool",
                Form::Curve => "table",
            };
            let want_unit = match key.form {
                Form::Name | Form::Node | Form::Flag => "—".to_string(),
                _ => pretty_unit(&key.unit()),
            };
            let default_ok = match key.default {
                KeyDefault::Required => default == "—",
                KeyDefault::RequiredIn(form) => *default == format!("— ({form})"),
                KeyDefault::None => default == "none",
                KeyDefault::Flag(b) => *default == format!("`{b}`"),
                KeyDefault::Number(v) | KeyDefault::Implied(v) => default
                    .trim_matches('`')
                    .parse::<f64>()
                    .is_ok_and(|d| d == v),
            };
            let rule_words: &[String] = &match key.rule {
                Rule::Any => vec![],
                Rule::Positive | Rule::Absolute | Rule::AbsoluteUnlessLiquid => {
                    vec!["> 0".to_string()]
                }
                Rule::NonNegative => vec!["≥ 0".to_string()],
                Rule::Fraction => vec!["0 … 1".to_string()],
                Rule::PositiveFraction => vec!["0 <".to_string(), "≤ 1".to_string()],
                Rule::Below(b) => vec![format!("< {b}")],
                Rule::MayShare(other) => vec![format!("`{other}`'s node")],
            };
            println!(
                "{title} `{}`: {ty} | {unit} | {default} | rule {:?}",
                key.name, key.rule
            );
            assert_eq!(ty, want_type, "{title} `{}`: type", key.name);
            assert_eq!(*unit, want_unit, "{title} `{}`: unit", key.name);
            assert!(
                default_ok,
                "{title} `{}`: the doc's default {default}, the declaration {:?}",
                key.name, key.default
            );
            for w in rule_words {
                assert!(
                    meaning.contains(w.as_str()),
                    "{title} `{}`: the meaning `{meaning}` does not state the rule ({w})",
                    key.name
                );
            }
            checked += 1;
        }
        for line in section(&title).lines().filter(|l| l.starts_with("| `")) {
            let documented = line.split('`').nth(1).unwrap_or_default();
            assert!(
                kind.key(documented).is_some(),
                "{title} documents `{documented}`, which the kind does not declare"
            );
        }
    }
    println!("{checked} component keys match their declarations");
    assert!(checked > 50);
}

/// The unit symbols and prefixes the parser accepts are those the page lists.
#[test]
fn every_unit_symbol_is_documented() {
    let text = section("## Values with units");
    let symbols = plenum::units::parse::SYMBOLS.iter().map(|s| s.symbol);
    let prefixes = plenum::units::parse::PREFIXES
        .iter()
        .map(|p| p.0)
        .filter(|p| *p != "μ");
    let mut n = 0;
    for s in symbols {
        n += 1;
        assert!(
            text.contains(&format!("`{s}`"))
                || text.contains(&format!(" {s} "))
                || text.contains(&format!(" {s}`"))
                || text.contains(&format!("`{s} ")),
            "unit `{s}` is not in docs/model-file.md"
        );
    }
    // The prefixes, in the parser's order (the Greek mu, a second spelling of µ, aside).
    let listed = format!("`{}`", prefixes.collect::<Vec<_>>().join(" "));
    assert!(text.contains(&listed), "docs/model-file.md lacks {listed}");
    println!("{n} unit symbols and their prefixes documented");
}

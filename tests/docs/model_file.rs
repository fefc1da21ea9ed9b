//! docs/model-file.md cannot rot: every key the parser accepts, in every section and component
//! kind, is listed in that section of the document. The accepted keys are not copied here: they
//! come from the parser itself, whose "unknown field" error lists every field it expects. Every
//! default the parser fills in equals the page's `default` column.

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

/// Every default the parser fills in is the one docs/model-file.md states: a model with only
/// the required keys is parsed and serialized back, and each key that appears without having
/// been written is compared with the `default` column of its section.
#[test]
fn every_default_the_parser_fills_in_is_the_documented_one() {
    let minimal = r#"
[model]
name = "m"
[gas]
[solver]
t_end = 1.0
[checks]
[inputs]
[[chamber]]
name = "c"
volume = 1.0
pressure = 1.0
temperature = 1.0
[[reservoir]]
name = "r"
pressure = 1.0
temperature = 1.0
[[orifice]]
name = "o"
from = "c"
to = "r"
[[valve]]
name = "v"
from = "c"
to = "r"
coefficient = 1.0
[[piston]]
name = "p"
behind = "c"
ahead = "r"
area = 1.0
mass = 1.0
x0 = 0.0
[[wall]]
name = "w"
left = "c"
right = "r"
area = 1.0
[[mass_flow]]
name = "f"
from = "c"
to = "r"
rate = 1.0
[[restrictor]]
name = "x"
from = "c"
to = "r"
diameter = 1.0
k = 1.0
[[tube]]
name = "t"
from = "c"
to = "r"
length = 1.0
diameter = 1.0
[[inertance_valve]]
name = "i"
from = "r"
to = "r"
density = 1.0
area_open = 1.0
area_leak = 1.0
area_from = 1.0
area_to = 1.0
length = 1.0
"#;
    let written: toml::Table = toml::from_str(minimal).unwrap();
    let spec: ModelFile = toml::from_str(minimal).unwrap();
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

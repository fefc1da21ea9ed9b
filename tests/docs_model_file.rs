//! docs/model-file.md cannot rot: every key the parser accepts, in every section and component
//! kind, is listed in that section of the document. The accepted keys are not copied here: they
//! come from the parser itself, whose "unknown field" error lists every field it expects.

use plenum::model::ModelFile;

const DOC: &str = include_str!("../docs/model-file.md");

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
        let is_section = ["model", "gas", "solver", "checks", "inputs"].contains(&name.as_str());
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

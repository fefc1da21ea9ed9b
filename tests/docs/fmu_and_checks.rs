//! docs/fmu.md states every `<CoSimulation>` and `<ModelExchange>` capability flag with the value
//! the generated modelDescription.xml files carry (`modelDescription/`, kept fresh by fmu-build's
//! tests), and docs/checks.md has a row for every run-time check code the library knows.

const DOC: &str = include_str!("../../docs/fmu.md");
const CHECKS_DOC: &str = include_str!("../../docs/checks.md");

#[test]
fn every_check_code_has_a_row() {
    let mut codes = Vec::new();
    for code in 0..=u8::MAX {
        let meaning = plenum::checks::describe(code);
        if meaning == "unknown check" {
            continue;
        }
        let row = format!("\n| {code} | ");
        println!("code {code}: {meaning}");
        assert!(
            CHECKS_DOC.contains(&row),
            "docs/checks.md has no row for code {code}"
        );
        codes.push(code);
    }
    assert_eq!(codes, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
}

#[test]
fn every_capability_flag_is_documented_with_its_value() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/modelDescription");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "xml"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    let mut compared = 0;
    for path in &files {
        let xml = std::fs::read_to_string(path).unwrap();
        for element in ["<CoSimulation ", "<ModelExchange "] {
            let start = xml
                .find(element)
                .expect("a CoSimulation and a ModelExchange element");
            let tag = &xml[start..start + xml[start..].find('>').unwrap()];
            for attr in tag.split_whitespace().skip(1) {
                let Some((name, value)) = attr.trim_end_matches('/').split_once('=') else {
                    continue;
                };
                let value = value.trim_matches('"');
                if name == "modelIdentifier" {
                    continue;
                }
                let row = format!("| `{name}` | {value} |");
                println!(
                    "{} {element}: {name} = {value}",
                    path.file_name().unwrap().display()
                );
                assert!(DOC.contains(&row), "docs/fmu.md lacks the row `{row}`");
                compared += 1;
            }
        }
    }
    println!("{compared} flags compared in {} descriptions", files.len());
    assert!(compared >= (9 + 7) * files.len());
}

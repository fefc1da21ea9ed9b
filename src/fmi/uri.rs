//! `fmuResourceLocation` (an RFC 3986 / RFC 8089 `file` URI) to a directory path.

use std::path::PathBuf;

/// The directory that a resource location names. Accepted: `file:///abs/path`,
/// `file://localhost/abs/path`, `file:/abs/path` (scheme case-insensitive), percent-encoding
/// decoded, with or without a trailing slash; a query or fragment is dropped. A plain absolute
/// path is accepted too (some masters pass one).
pub fn resource_dir(location: &str) -> Result<PathBuf, String> {
    if location.is_empty() {
        return Err("the resource location is empty".into());
    }
    let path_part = if location.len() >= 5 && location[..5].eq_ignore_ascii_case("file:") {
        let rest = &location[5..];
        let rest = rest.split(['?', '#']).next().unwrap_or("");
        if let Some(after) = rest.strip_prefix("//") {
            // authority: empty or localhost
            let (host, path) = match after.find('/') {
                Some(i) => (&after[..i], &after[i..]),
                None => (after, ""),
            };
            if !(host.is_empty() || host.eq_ignore_ascii_case("localhost")) {
                return Err(format!(
                    "the resource location `{location}` names the remote host `{host}`; only \
                     local files can be read"
                ));
            }
            path
        } else {
            rest
        }
    } else if location.starts_with('/') {
        location
    } else {
        return Err(format!(
            "the resource location `{location}` is not a file URI (file:///path/to/resources)"
        ));
    };
    if !path_part.starts_with('/') {
        return Err(format!(
            "the resource location `{location}` has no absolute path"
        ));
    }
    let bytes =
        percent_decode(path_part).map_err(|e| format!("the resource location `{location}` {e}"))?;
    bytes_to_path(bytes).map_err(|e| format!("the resource location `{location}` {e}"))
}

fn percent_decode(s: &str) -> Result<Vec<u8>, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = |c: u8| (c as char).to_digit(16);
            match (
                b.get(i + 1).copied().and_then(hex),
                b.get(i + 2).copied().and_then(hex),
            ) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                }
                _ => {
                    return Err(format!(
                        "has a bad percent escape at byte {i} (expected %XX with hex digits)"
                    ));
                }
            }
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Ok(out)
}

#[cfg(unix)]
fn bytes_to_path(bytes: Vec<u8>) -> Result<PathBuf, String> {
    use std::os::unix::ffi::OsStringExt;
    if bytes.contains(&0) {
        return Err("decodes to a path with a NUL byte".into());
    }
    Ok(PathBuf::from(std::ffi::OsString::from_vec(bytes)))
}

#[cfg(not(unix))]
fn bytes_to_path(bytes: Vec<u8>) -> Result<PathBuf, String> {
    let s = String::from_utf8(bytes).map_err(|_| "decodes to a path that is not UTF-8")?;
    // file:///C:/dir → C:/dir
    let s = match s.as_bytes() {
        [b'/', d, b':', ..] if d.is_ascii_alphabetic() => s[1..].to_string(),
        _ => s,
    };
    Ok(PathBuf::from(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_in_their_usual_forms() {
        let p = |s: &str| resource_dir(s).map(|p| p.display().to_string());
        for (uri, want) in [
            ("file:///tmp/x/resources", "/tmp/x/resources"),
            ("file:///tmp/x/resources/", "/tmp/x/resources/"),
            ("file:/tmp/x/resources", "/tmp/x/resources"),
            ("file://localhost/tmp/x/resources", "/tmp/x/resources"),
            ("FILE://LOCALHOST/tmp/x", "/tmp/x"),
            ("file:///tmp/a%20b/r%C3%A9sources", "/tmp/a b/résources"),
            ("file:///tmp/100%25/x", "/tmp/100%/x"),
            ("file:///tmp/x?query#frag", "/tmp/x"),
            ("/tmp/plain", "/tmp/plain"),
        ] {
            assert_eq!(p(uri).as_deref(), Ok(want), "{uri}");
        }
        for bad in [
            "",
            "http://example.org/x",
            "file://otherhost/tmp",
            "file:///tmp/%zz",
            "file:///tmp/%2",
            "file:relative/path",
            "relative/path",
            "file:///tmp/%00x",
        ] {
            let e = resource_dir(bad);
            println!("{bad:?} → {e:?}");
            assert!(e.is_err(), "{bad}");
        }
    }
}

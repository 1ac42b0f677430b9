//! Paths in the configuration are resolved against the file's own directory
//! and read lexically, so `..` in a path is judged by where it points and not
//! by the text that names it.

use std::path::{Component, Path, PathBuf};

/// `path` made absolute against `base`, with `.` and `..` resolved lexically.
pub fn resolve(base: &Path, path: &Path) -> PathBuf {
    let joined = base.join(path);
    lexical(&joined).unwrap_or(joined)
}

/// `path` with `.` and `..` resolved lexically; `None` where `..` would climb
/// above the root.
pub fn lexical(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                if !out.pop() || out.as_os_str().is_empty() {
                    return None;
                }
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_dot_is_resolved_by_where_it_points() {
        assert_eq!(
            lexical(Path::new("/a/b/../c/./d")),
            Some(PathBuf::from("/a/c/d"))
        );
        assert_eq!(lexical(Path::new("/..")), None);
        assert_eq!(
            resolve(Path::new("/etc/collegium"), Path::new("../x")),
            PathBuf::from("/etc/x")
        );
        assert_eq!(
            resolve(Path::new("/etc"), Path::new("/abs")),
            PathBuf::from("/abs")
        );
    }
}

//! Each agent's home has a size cap (§6.1; issue 16 item 3). Project quotas
//! are not used (not every filesystem has them, and the worker could not set
//! one without CAP_SYS_ADMIN), so the worker measures the home after each
//! command: `collegium-shell-launch measure-home`, exec'd like a launch,
//! takes the agent's user (the worker holds no CAP_DAC_READ_SEARCH, and a
//! home is 0700) and walks the home without following a link, adding up
//! what each file holds on disk. While the home is over its cap, commands
//! run shrink-only (`RLIMIT_FSIZE` 0: no file can grow) and their results
//! lead with the home's size, the cap and how much to remove, so the agent
//! can delete what it chooses under a person's approval rather than being
//! stranded (`docs/spec-findings.md`).
//!
//! The walk is bounded: at most [`MAX_ENTRIES`] entries, [`MAX_DEPTH`]
//! nested directories and a time the worker gives it. A walk cut short by
//! what the home holds (too many entries, too deep, a directory the agent
//! made unreadable to itself, or the whole time) counts as over the cap and
//! says why: a home that cannot be measured is not taken to be small.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustix::fs::{AtFlags, CWD, Dir, FileType, Mode, OFlags};
use serde::{Deserialize, Serialize};
use tokio::io::AsyncWriteExt;

/// The most entries a walk counts.
pub const MAX_ENTRIES: u64 = 1_000_000;
/// The deepest a walk descends; each level holds a descriptor open.
pub const MAX_DEPTH: usize = 512;
/// The longest a measure takes.
pub const MEASURE_TIME: Duration = Duration::from_secs(10);

/// What `measure-home` is asked, on its stdin.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MeasureRequest {
    pub uid: u32,
    pub gid: u32,
    pub groups: Vec<u32>,
    pub home: PathBuf,
    pub time_ms: u64,
}

/// Why a walk stopped before the end of the home.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Cut {
    /// It counted [`MAX_ENTRIES`].
    Entries,
    /// Its time ran out.
    Time,
    /// Directories nest deeper than [`MAX_DEPTH`].
    Depth,
    /// Directories the agent's own user cannot read.
    Unreadable(u64),
}

/// A home's disk use, as one walk found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Measure {
    /// Bytes on disk (`st_blocks`), each inode counted once.
    pub bytes: u64,
    /// Files, directories and links counted, the home among them.
    pub entries: u64,
    pub cut: Option<Cut>,
}

impl Measure {
    /// Whether commands run shrink-only under `cap` bytes.
    pub fn over(&self, cap: u64) -> bool {
        self.cut.is_some() || self.bytes > cap
    }
}

#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    #[error("the measure could not be started: {0}")]
    Spawn(std::io::Error),
    #[error("the measure did not finish in time")]
    Stalled,
    #[error("{0}")]
    Failed(String),
}

/// Measures `request.home` as its agent, through `launcher measure-home`.
pub async fn measure(launcher: &Path, request: &MeasureRequest) -> Result<Measure, MeasureError> {
    let mut child = tokio::process::Command::new(launcher)
        .arg("measure-home")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(MeasureError::Spawn)?;
    if let Some(mut stdin) = child.stdin.take() {
        let text = serde_json::to_vec(request).unwrap_or_default();
        // A measure that died early closes its stdin; its exit says why.
        let _ = stdin.write_all(&text).await;
    }
    // The walk keeps its own time; this is for a measure that hangs anyway.
    let allowed = Duration::from_millis(request.time_ms) + Duration::from_secs(2);
    let output = tokio::time::timeout(allowed, child.wait_with_output())
        .await
        .map_err(|_| MeasureError::Stalled)?
        .map_err(|e| MeasureError::Failed(e.to_string()))?;
    if !output.status.success() {
        return Err(MeasureError::Failed(
            String::from_utf8_lossy(&output.stderr).trim().to_string(),
        ));
    }
    serde_json::from_slice(&output.stdout)
        .map_err(|e| MeasureError::Failed(format!("the measure's answer: {e}")))
}

/// `collegium-shell-launch measure-home`: takes the agent's user, walks
/// its home, prints the [`Measure`] as JSON.
pub fn measure_main() -> std::process::ExitCode {
    match measure_as_agent() {
        Ok(measure) => {
            println!("{}", serde_json::to_string(&measure).unwrap_or_default());
            std::process::ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("{error}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn measure_as_agent() -> Result<Measure, String> {
    let request: MeasureRequest = crate::launch::read_request()?;
    crate::launch::become_user(request.uid, request.gid, &request.groups)?;
    nix::sys::prctl::set_no_new_privs().map_err(|e| format!("no-new-privileges: {e}"))?;
    // One descriptor per level of the walk.
    if let Ok((_, hard)) =
        nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
    {
        let _ =
            nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE, hard, hard);
    }
    walk(
        &request.home,
        Instant::now() + Duration::from_millis(request.time_ms),
    )
}

/// Adds up what `home` holds on disk: every entry `lstat`ed through its
/// directory's descriptor (never a path, never following a link, so no
/// path is too long and no link leads out), each inode once, nothing on
/// another filesystem.
pub fn walk(home: &Path, until: Instant) -> Result<Measure, String> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let root = rustix::fs::openat(CWD, home, flags, Mode::empty())
        .map_err(|e| format!("opening {}: {e}", home.display()))?;
    let top = rustix::fs::fstat(&root).map_err(|e| format!("{}: {e}", home.display()))?;
    let mut measure = Measure {
        bytes: on_disk(&top),
        entries: 1,
        cut: None,
    };
    let mut linked = HashSet::new();
    let mut unreadable = 0u64;
    let mut deep = false;
    let mut stack = vec![Dir::new(root).map_err(|e| format!("{}: {e}", home.display()))?];
    loop {
        let depth = stack.len();
        let Some(dir) = stack.last_mut() else { break };
        let entry = match dir.read() {
            None => {
                stack.pop();
                continue;
            }
            Some(Err(_)) => {
                unreadable += 1;
                stack.pop();
                continue;
            }
            Some(Ok(entry)) => entry,
        };
        let name = entry.file_name();
        if name.to_bytes() == b"." || name.to_bytes() == b".." {
            continue;
        }
        measure.entries += 1;
        if measure.entries > MAX_ENTRIES {
            measure.cut = Some(Cut::Entries);
            return Ok(measure);
        }
        if measure.entries.is_multiple_of(256) && Instant::now() >= until {
            measure.cut = Some(Cut::Time);
            return Ok(measure);
        }
        let Ok(fd) = dir.fd() else {
            unreadable += 1;
            continue;
        };
        let stat = match rustix::fs::statat(fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => stat,
            // Removed while the walk went by.
            Err(rustix::io::Errno::NOENT) => continue,
            Err(_) => {
                unreadable += 1;
                continue;
            }
        };
        // Another filesystem mounted in the home is not the home's disk.
        if stat.st_dev != top.st_dev {
            continue;
        }
        let directory = FileType::from_raw_mode(stat.st_mode) == FileType::Directory;
        if !directory && stat.st_nlink > 1 && !linked.insert(stat.st_ino) {
            continue;
        }
        measure.bytes = measure.bytes.saturating_add(on_disk(&stat));
        if !directory {
            continue;
        }
        if depth >= MAX_DEPTH {
            deep = true;
            continue;
        }
        let child = rustix::fs::openat(fd, name, flags, Mode::empty())
            .ok()
            .and_then(|child| Dir::new(child).ok());
        match child {
            Some(child) => stack.push(child),
            None => unreadable += 1,
        }
    }
    measure.cut = if unreadable > 0 {
        Some(Cut::Unreadable(unreadable))
    } else if deep {
        Some(Cut::Depth)
    } else {
        None
    };
    Ok(measure)
}

/// What a file holds on disk: its 512-byte blocks, holes not counted.
fn on_disk(stat: &rustix::fs::Stat) -> u64 {
    u64::try_from(stat.st_blocks)
        .unwrap_or(0)
        .saturating_mul(512)
}

/// The last measure of each agent's home; `None` until one is taken, or
/// when the last was cut short by time alone and must be taken again.
/// Each agent's lock is held while its home is measured, so a command
/// never starts on a measure still being taken.
#[derive(Default)]
pub struct Homes(std::sync::Mutex<BTreeMap<String, Arc<tokio::sync::Mutex<Option<Measure>>>>>);

impl Homes {
    pub fn slot(&self, agent: &str) -> Arc<tokio::sync::Mutex<Option<Measure>>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(agent.to_string())
            .or_default()
            .clone()
    }
}

/// Whether a measure taken in `allowed` may stand as the home's: a walk cut
/// by a time shorter than [`MEASURE_TIME`] (the call had little left) says
/// nothing of the home unless it already found it over the cap.
pub fn stands(measure: &Measure, allowed: Duration, cap: u64) -> bool {
    measure.cut != Some(Cut::Time) || allowed >= MEASURE_TIME || measure.bytes > cap
}

const MIB: f64 = 1024.0 * 1024.0;

fn mib(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / MIB)
}

/// What to remove to come under `cap`: in KiB under a MiB, else in MiB,
/// rounded up either way, so removing it is always enough.
fn to_remove(bytes: u64, cap: u64) -> String {
    let over = bytes.saturating_sub(cap);
    if over < 1024 * 1024 {
        format!("{} KiB", over.div_ceil(1024))
    } else {
        format!("{:.1} MiB", (over as f64 / MIB * 10.0).ceil() / 10.0)
    }
}

/// The line a result leads with while the home is over its cap: its size,
/// the cap, how much to remove, and that commands run shrink-only.
/// `ran_shrink_only` says the command itself ran so.
pub fn over_text(home: &Path, measure: &Measure, cap: u64, ran_shrink_only: bool) -> String {
    let size = match measure.cut {
        None => format!("holds {} MiB", mib(measure.bytes)),
        Some(cut) => format!(
            "holds at least {} MiB, and could not be measured whole: {}",
            mib(measure.bytes),
            match cut {
                Cut::Entries => format!("it holds more than {MAX_ENTRIES} files and directories"),
                Cut::Time => format!("measuring it took longer than {} s", MEASURE_TIME.as_secs()),
                Cut::Depth => format!("its directories nest deeper than {MAX_DEPTH} levels"),
                Cut::Unreadable(n) => format!(
                    "{n} of its directories cannot be read by your own user (make them readable with chmod u+rwx)"
                ),
            }
        ),
    };
    let remove = if measure.bytes > cap {
        format!("Remove at least {}", to_remove(measure.bytes, cap))
    } else {
        "Remove or fix what stops the measure".to_string()
    };
    let this = if ran_shrink_only {
        ", as this one did"
    } else {
        ""
    };
    format!(
        "[home over its cap: your home, {}, {size}; its cap is {} MiB (home_cap_mib). {remove}. Until it is under the cap every command runs shrink-only{this}: no file can grow, but files can be removed or truncated]\n",
        home.display(),
        mib(cap),
    )
}

/// The line a shrink-only command's result leads with when it brought the
/// home back under its cap.
pub fn under_again_text(home: &Path, measure: &Measure, cap: u64) -> String {
    format!(
        "[home under its cap again: this command ran shrink-only; your home, {}, now holds {} MiB, under its cap of {} MiB (home_cap_mib), so later commands run normally]\n",
        home.display(),
        mib(measure.bytes),
        mib(cap),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s6_1_a_walk_counts_blocks_once_per_inode_and_never_follows_a_link() {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = dir.path();
        std::fs::write(home.join("a"), vec![1u8; 64 * 1024]).expect("write");
        std::fs::hard_link(home.join("a"), home.join("a-again")).expect("link");
        std::fs::create_dir_all(home.join("d/e")).expect("mkdir");
        std::fs::write(home.join("d/e/b"), vec![2u8; 64 * 1024]).expect("write");
        // A link out of the home: its target is not the home's.
        std::os::unix::fs::symlink("/usr", home.join("usr")).expect("symlink");
        let measure = walk(home, Instant::now() + MEASURE_TIME).expect("walked");
        assert_eq!(measure.cut, None);
        assert_eq!(measure.entries, 7, "home, a, a-again, d, e, b, usr");
        assert!(
            (128 * 1024..1024 * 1024).contains(&measure.bytes),
            "two 64 KiB files and their directories: {}",
            measure.bytes
        );
    }

    #[test]
    fn s6_1_a_walk_out_of_time_says_so() {
        let dir = tempfile::tempdir().expect("tempdir");
        for i in 0..600 {
            std::fs::write(dir.path().join(i.to_string()), "x").expect("write");
        }
        let measure = walk(dir.path(), Instant::now()).expect("walked");
        assert_eq!(measure.cut, Some(Cut::Time));
        assert!(measure.over(u64::MAX), "an unmeasured home is not small");
        assert!(!stands(&measure, Duration::from_secs(1), u64::MAX));
        assert!(stands(&measure, MEASURE_TIME, u64::MAX));
    }

    #[test]
    fn s6_1_the_over_text_gives_the_size_the_cap_and_what_to_remove() {
        let measure = Measure {
            bytes: 3 * 1024 * 1024 + 1,
            entries: 4,
            cut: None,
        };
        let text = over_text(Path::new("/h/mira"), &measure, 1024 * 1024, true);
        assert_eq!(
            text,
            "[home over its cap: your home, /h/mira, holds 3.0 MiB; its cap is 1.0 MiB (home_cap_mib). Remove at least 2.1 MiB. Until it is under the cap every command runs shrink-only, as this one did: no file can grow, but files can be removed or truncated]\n"
        );
        let barely = Measure {
            bytes: 1024 * 1024 + 4096,
            ..measure
        };
        assert!(
            over_text(Path::new("/h"), &barely, 1024 * 1024, false)
                .contains("Remove at least 4 KiB."),
            "a small excess is named in KiB"
        );
        let unreadable = Measure {
            cut: Some(Cut::Unreadable(2)),
            bytes: 10,
            ..measure
        };
        let text = over_text(Path::new("/h/mira"), &unreadable, 1024 * 1024, false);
        assert!(
            text.contains("2 of its directories cannot be read by your own user"),
            "{text}"
        );
    }
}

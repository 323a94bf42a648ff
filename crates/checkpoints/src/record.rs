//! What a checkpoint records: per path, the state before and after a call.

use serde::{Deserialize, Serialize};

/// A path's state at one moment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum State {
    /// Nothing there.
    Absent,
    /// A regular file whose content is in the store.
    File {
        /// Hex SHA-256 of the content: the blob's name in the store.
        sha256: String,
        /// Length in bytes.
        size: u64,
        /// Permission bits (`mode & 0o7777`), restored with the content.
        mode: u32,
    },
    /// A regular file whose content was not kept (over the per-file cap,
    /// the store full, unreadable): undo cannot bring it back.
    Unstored {
        /// Length in bytes when recorded.
        size: u64,
        /// Permission bits (`mode & 0o7777`).
        mode: u32,
        /// Why the content was not kept, for the listing.
        why: String,
    },
    /// A symbolic link; its target's bytes are the stored content
    /// `sha256` (restored as a link, exactly, never followed).
    Symlink {
        /// Hex SHA-256 of the link's target bytes.
        sha256: String,
        /// Length of the target in bytes.
        size: u64,
    },
    /// A directory (recreated with its mode; removed when a call made it
    /// and it is empty again).
    Dir {
        /// Permission bits (`mode & 0o7777`).
        mode: u32,
    },
    /// Something else (a fifo, a socket, a device, a name not reachable):
    /// undo cannot bring it back.
    Other {
        /// What it is, or why it could not be reached, for the listing.
        what: String,
    },
}

impl State {
    /// The stored blob this state names.
    pub fn blob(&self) -> Option<&str> {
        match self {
            State::File { sha256, .. } | State::Symlink { sha256, .. } => Some(sha256),
            _ => None,
        }
    }

    /// Whether two states show the same content and mode (an unstored file
    /// equals nothing: its content cannot be compared).
    pub fn same(&self, other: &State) -> bool {
        match (self, other) {
            (State::Unstored { .. }, _) | (_, State::Unstored { .. }) => false,
            _ => self == other,
        }
    }

    /// A word for the state, for listings.
    pub fn describe(&self) -> String {
        match self {
            State::Absent => "absent".into(),
            State::File { sha256, size, mode } => {
                format!(
                    "{size} bytes, mode {mode:o}, sha256 {}",
                    &sha256[..12.min(sha256.len())]
                )
            }
            State::Unstored { size, why, .. } => format!("{size} bytes, content not kept ({why})"),
            State::Symlink { sha256, .. } => {
                format!(
                    "a symlink (target sha256 {})",
                    &sha256[..12.min(sha256.len())]
                )
            }
            State::Dir { mode } => format!("a directory, mode {mode:o}"),
            State::Other { what } => what.clone(),
        }
    }
}

/// One path a checkpoint changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Relative to the workspace root, `/`-separated.
    pub path: String,
    /// The state before the call; what undo restores.
    pub before: State,
    /// None while the checkpoint is open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<State>,
}

impl Entry {
    /// created / deleted / modified, from the two states.
    pub fn change(&self) -> &'static str {
        match (&self.before, &self.after) {
            (_, None) => "pending",
            (State::Absent, Some(_)) => "created",
            (_, Some(State::Absent)) => "deleted",
            _ => "modified",
        }
    }
}

/// What a checkpoint watched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// The files a change tool planned to write or delete.
    Files,
    /// The whole (non-ignored) tree, around a process.
    Tree,
}

/// One checkpoint: a call and the paths it changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// Unique in the workspace's store and ascending in time; shown as
    /// `cp-<id>` ([`Checkpoint::name`]).
    pub id: u64,
    /// The id of the call it was taken around.
    pub call_id: String,
    /// The tool of that call.
    pub tool: String,
    /// The session the call ran in (listings and undo cover the
    /// checkpoints of every session in the workspace).
    pub session: String,
    /// Seconds since the epoch when the call started.
    pub time: u64,
    /// Planned files only, or the whole tree.
    pub scope: Scope,
    /// Still waiting for its after-state (a running call or background job).
    #[serde(default)]
    pub open: bool,
    /// A background job or terminal: its after-state is taken when the next
    /// checkpoint starts (or `checkpoints`/`undo` runs); while its process
    /// group runs that records its changes so far and it stays open.
    #[serde(default)]
    pub background: bool,
    /// The process group of a background job: while it has members the
    /// checkpoint stays open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pgid: Option<i32>,
    /// Why this checkpoint does not hold everything (empty: complete).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partial: Vec<String>,
    /// Every path it saw change, one entry each.
    pub entries: Vec<Entry>,
}

impl Checkpoint {
    /// The name shown and accepted by `undo --to`: `cp-<id>`.
    pub fn name(&self) -> String {
        format!("cp-{}", self.id)
    }
}

/// Parse a checkpoint id as given (`cp-12`, `12`): digits only, so an id
/// can never be a path (`../..`).
pub fn parse_id(s: &str) -> Option<u64> {
    let d = s.trim();
    let d = d.strip_prefix("cp-").unwrap_or(d);
    if d.is_empty() || d.len() > 19 || !d.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    d.parse().ok()
}

/// `YYYY-MM-DD HH:MM:SSZ` for seconds since the epoch (UTC).
pub fn format_time(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ids_are_digits_only() {
        assert_eq!(parse_id("cp-12"), Some(12));
        assert_eq!(parse_id("7"), Some(7));
        for bad in [
            "../..", "cp-../1", "1/2", "", "cp-", "-1", "1e3", "cp-1 2", "０",
        ] {
            assert_eq!(parse_id(bad), None, "{bad}");
        }
    }

    #[test]
    fn times_are_utc_dates() {
        assert_eq!(format_time(0), "1970-01-01 00:00:00Z");
        assert_eq!(format_time(1_798_000_000), "2026-12-23 04:26:40Z");
        assert_eq!(format_time(951_782_400), "2000-02-29 00:00:00Z");
    }

    proptest! {
        #[test]
        fn a_parsed_id_never_holds_a_path_separator(s in ".{0,24}") {
            if let Some(id) = parse_id(&s) {
                let shown = format!("{id}");
                prop_assert!(shown.bytes().all(|b| b.is_ascii_digit()));
            }
        }
    }
}

//! The transcript archive: every finished hand as JSON lines under
//! `DATA_DIR/rooms/<room>/transcripts/<hand_number>-<hand_id>.jsonl`
//! (a header line, then one signed `event` per line), ready for
//! `claw-player audit`. A deferred `audit-reveal` waits in
//! `DATA_DIR/rooms/<room>/pending/<hand_number>-<hand_id>.json` (one event
//! line) from hand end until it is published; then it is appended to its
//! hand's file and the pending file is removed. Nothing reads the pending
//! store but [`Archive::publish`], so no fetch serves a reveal early, and a
//! restart finds what is still owed ([`Archive::pending`]).

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use claw_protocol::messages::HandRecord;
use claw_protocol::transcript::{EventEnvelope, Transcript};
use claw_protocol::HandId;

/// Why archiving failed (logged; the hand itself is not affected).
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    /// The file system refused.
    #[error("archive i/o: {0}")]
    Io(#[from] std::io::Error),
    /// The transcript could not be encoded.
    #[error("archive encoding: {0}")]
    Encode(String),
    /// A stored file does not parse.
    #[error("archive file {path}: {reason}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// No pending reveal is stored for the hand.
    #[error("no pending reveal for hand {0}")]
    NoPending(HandId),
    /// The hand's transcript is not on file.
    #[error("no archived transcript for hand {0}")]
    NoHand(HandId),
}

/// One room's transcript directory and pending-reveal store.
#[derive(Debug, Clone)]
pub struct Archive {
    room: String,
    dir: PathBuf,
    pending: PathBuf,
}

/// How a hand is named: its id or its number in the room.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandKey {
    /// The hand id (32 hex digits).
    Id(HandId),
    /// Hands dealt in the room before it.
    Number(u64),
}

impl std::str::FromStr for HandKey {
    type Err = String;

    /// 32 hex digits are a hand id; anything else must be a decimal number.
    fn from_str(s: &str) -> Result<HandKey, String> {
        if s.len() == 32 {
            s.parse().map(HandKey::Id).map_err(|_| format!("{s:?} is not a hand id"))
        } else {
            s.parse()
                .map(HandKey::Number)
                .map_err(|_| format!("{s:?} is neither a hand id nor a hand number"))
        }
    }
}

impl Archive {
    /// A read-only view of `room`'s archive under `data_dir` (no I/O): for
    /// readers beside the room, which must not touch its writes in progress.
    pub fn reader(data_dir: &Path, room: &str) -> Archive {
        let room_dir = data_dir.join("rooms").join(room);
        Archive {
            room: room.to_owned(),
            dir: room_dir.join("transcripts"),
            pending: room_dir.join("pending"),
        }
    }

    /// The archive of `room` under `data_dir` (created if missing), opened
    /// by its one writer, the room: finishes or clears what a crash
    /// interrupted.
    pub fn open(data_dir: &Path, room: &str) -> Result<Archive, ArchiveError> {
        let a = Archive::reader(data_dir, room);
        fs::create_dir_all(&a.dir)?;
        fs::create_dir_all(&a.pending)?;
        a.finish_interrupted_writes()?;
        // A crash in the middle of an atomic write leaves its temp file:
        // never renamed, so never part of the archive.
        for d in [&a.dir, &a.pending] {
            for e in fs::read_dir(d)?.flatten() {
                if e.path().extension().is_some_and(|x| x == "tmp") {
                    fs::remove_file(e.path())?;
                }
            }
        }
        Ok(a)
    }

    /// A hand whose pending reveal is stored but whose transcript is not in
    /// place was interrupted between the two steps of [`Archive::write`] (or
    /// of [`Archive::stage`]): its transcript's temp file was complete and
    /// synced before the reveal was stored, so it is renamed into place. A
    /// staged hand (filed at its end, a crash before its archiving) is
    /// renamed into place too: the chip recovery, which runs first, has set
    /// aside as voided every such hand it refunded ([`Archive::void_filed`]),
    /// so the ones left were paid. A pending reveal with no transcript at
    /// all cannot be published; it is moved to `pending/orphaned/` (kept,
    /// logged) so it does not block the others.
    fn finish_interrupted_writes(&self) -> Result<(), ArchiveError> {
        for p in self.staged_files() {
            let Some((n, id)) = parse_name(&p, "jsonl.staged") else { continue };
            fs::rename(&p, self.path(n, &id))?;
            tracing::warn!(room = %self.room, hand = %id, hand_number = n, "finished archiving a hand a crash interrupted");
        }
        for (n, id) in self.pending() {
            let path = self.path(n, &id);
            if path.exists() {
                continue;
            }
            let tmp = tmp_path(&path);
            if tmp.exists() {
                fs::rename(&tmp, &path)?;
                tracing::warn!(room = %self.room, hand = %id, hand_number = n, "finished archiving a hand a crash interrupted");
            } else {
                let orphaned = self.pending.join("orphaned");
                fs::create_dir_all(&orphaned)?;
                let from = self.pending_path(n, &id);
                let to = orphaned.join(from.file_name().unwrap_or_default());
                fs::rename(&from, &to)?;
                tracing::error!(room = %self.room, hand = %id, hand_number = n, kept = %to.display(), "a pending reveal has no archived transcript");
            }
        }
        Ok(())
    }

    fn staged_files(&self) -> Vec<PathBuf> {
        fs::read_dir(&self.dir)
            .map(|d| {
                d.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "staged"))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The directory holding the files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of one hand.
    pub fn path(&self, hand_number: u64, hand_id: &HandId) -> PathBuf {
        self.dir.join(format!("{hand_number:08}-{hand_id}.jsonl"))
    }

    /// A staged hand's file: `<hand_number>-<hand_id>.jsonl.staged`.
    fn staged_path(&self, hand_number: u64, hand_id: &HandId) -> PathBuf {
        self.dir.join(format!("{hand_number:08}-{hand_id}.jsonl.staged"))
    }

    /// Writes a hand's transcript and its withheld `audit-reveal`, if any,
    /// as pending, so that a crash at any point leaves neither or both: the
    /// transcript goes to a synced temp file, the reveal is stored
    /// (atomically), then the transcript is renamed into place; [`Archive::open`]
    /// finishes a write interrupted between the last two steps. A hand
    /// staged before ([`Archive::stage`]) is renamed into place; a hand on
    /// file already is left as it is.
    pub fn write(
        &self,
        hand_number: u64,
        t: &Transcript,
        pending_reveal: Option<&EventEnvelope>,
    ) -> Result<PathBuf, ArchiveError> {
        let path = self.path(hand_number, &t.hand_id);
        let staged = self.staged_path(hand_number, &t.hand_id);
        if staged.exists() {
            fs::rename(&staged, &path)?;
            return Ok(path);
        }
        let text = t.to_jsonl().map_err(|e| ArchiveError::Encode(e.to_string()))?;
        // On file already; a published reveal may follow the transcript.
        if fs::read(&path).is_ok_and(|on_file| on_file.starts_with(text.as_bytes())) {
            return Ok(path);
        }
        self.write_to(&path, hand_number, t, &text, pending_reveal)?;
        Ok(path)
    }

    /// Files a finished hand before its end is sent and before its chips
    /// are settled: its transcript (synced) as `<hand>.jsonl.staged`, next
    /// to the archive but not in it (no reader lists it), its withheld
    /// reveal in the pending store, in the same crash-safe order as
    /// [`Archive::write`]. [`Archive::write`] moves it into the archive once
    /// the hand is settled; after a crash, the next start does
    /// ([`Archive::open`]) unless the chip recovery refunded the hand, which
    /// then sets it aside as voided ([`Archive::void_filed`]).
    pub fn stage(
        &self,
        hand_number: u64,
        t: &Transcript,
        pending_reveal: Option<&EventEnvelope>,
    ) -> Result<PathBuf, ArchiveError> {
        let text = t.to_jsonl().map_err(|e| ArchiveError::Encode(e.to_string()))?;
        let staged = self.staged_path(hand_number, &t.hand_id);
        self.write_to(&staged, hand_number, t, &text, pending_reveal)?;
        Ok(staged)
    }

    fn write_to(
        &self,
        path: &Path,
        hand_number: u64,
        t: &Transcript,
        text: &str,
        pending_reveal: Option<&EventEnvelope>,
    ) -> Result<(), ArchiveError> {
        let tmp = tmp_path(&self.path(hand_number, &t.hand_id));
        write_synced(&tmp, text)?;
        if let Some(env) = pending_reveal {
            let line = env.encode().map_err(|e| ArchiveError::Encode(e.to_string()))?;
            write_atomic(&self.pending_path(hand_number, &t.hand_id), &format!("{line}\n"))?;
        }
        fs::rename(&tmp, path)?;
        Ok(())
    }

    fn pending_path(&self, hand_number: u64, hand_id: &HandId) -> PathBuf {
        self.pending.join(format!("{hand_number:08}-{hand_id}.json"))
    }

    /// The reveals still owed, `(hand_number, hand_id)` in hand order.
    pub fn pending(&self) -> Vec<(u64, HandId)> {
        let mut v: Vec<(u64, HandId)> = fs::read_dir(&self.pending)
            .map(|d| d.flatten().filter_map(|e| parse_name(&e.path(), "json")).collect())
            .unwrap_or_default();
        v.sort();
        v
    }

    /// Publishes a pending reveal: appends it to the hand's file unless the
    /// file already ends with it (a publish interrupted after the append),
    /// syncs, then removes the pending file. Returns the event.
    pub fn publish(&self, hand_number: u64, hand_id: &HandId) -> Result<EventEnvelope, ArchiveError> {
        let pending = self.pending_path(hand_number, hand_id);
        let text = match fs::read_to_string(&pending) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ArchiveError::NoPending(*hand_id))
            }
            Err(e) => return Err(e.into()),
        };
        let corrupt = |reason: String| ArchiveError::Corrupt { path: pending.clone(), reason };
        let env: EventEnvelope = serde_json::from_str(text.trim()).map_err(|e| corrupt(e.to_string()))?;
        if env.hand_id != *hand_id {
            return Err(corrupt(format!("holds an event of hand {}", env.hand_id)));
        }
        let path = self.path(hand_number, hand_id);
        let t = match self.read_file(&path) {
            Err(ArchiveError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ArchiveError::NoHand(*hand_id))
            }
            r => r?,
        };
        if t.events.last() != Some(&env) {
            let line = env.encode().map_err(|e| ArchiveError::Encode(e.to_string()))?;
            let mut f = OpenOptions::new().append(true).open(&path)?;
            writeln!(f, "{line}")?;
            f.sync_all()?;
        }
        fs::remove_file(&pending)?;
        Ok(env)
    }

    /// An archived hand's record: its transcript with its `audit-reveal`
    /// once published, never a pending one (those are in the pending store).
    pub fn record(&self, key: HandKey) -> Result<Option<HandRecord>, ArchiveError> {
        Ok(self.record_archived(key)?.map(|(r, _)| r))
    }

    /// [`Archive::record`] and when its file was last written.
    pub fn record_archived(&self, key: HandKey) -> Result<Option<(HandRecord, SystemTime)>, ArchiveError> {
        let found =
            self.files().into_iter().filter_map(|p| parse_name(&p, "jsonl")).find(|(n, h)| match key {
                HandKey::Id(id) => *h == id,
                HandKey::Number(k) => *n == k,
            });
        let Some((n, h)) = found else { return Ok(None) };
        let path = self.path(n, &h);
        let t = self.read_file(&path)?;
        let at = fs::metadata(&path)?.modified()?;
        Ok(Some((HandRecord::new(self.room.clone(), n, &t), at)))
    }

    fn read_file(&self, path: &Path) -> Result<Transcript, ArchiveError> {
        let text = fs::read_to_string(path)?;
        Transcript::from_jsonl(&text)
            .map_err(|e| ArchiveError::Corrupt { path: path.to_owned(), reason: e.to_string() })
    }

    /// Keeps a voided hand's transcript under
    /// `voided/<hand_number>-<hand_id>.jsonl` (`voided/<hand_id>.jsonl` when
    /// it has no `hand-prepare` to number it). A hand filed at its end and
    /// voided after (its chips did not add up) leaves the archive: its file
    /// and its pending reveal are removed once the voided copy is synced.
    pub fn write_voided(&self, t: &Transcript) -> Result<PathBuf, ArchiveError> {
        let text = t.to_jsonl().map_err(|e| ArchiveError::Encode(e.to_string()))?;
        let dir = self.dir.join("voided");
        fs::create_dir_all(&dir)?;
        let number = hand_number_of(t);
        let path = match number {
            Some(n) => dir.join(format!("{n:08}-{}.jsonl", t.hand_id)),
            None => dir.join(format!("{}.jsonl", t.hand_id)),
        };
        write_atomic(&path, &text)?;
        if let Some(n) = number {
            remove_if_present(&self.path(n, &t.hand_id))?;
            remove_if_present(&self.staged_path(n, &t.hand_id))?;
            remove_if_present(&self.pending_path(n, &t.hand_id))?;
        }
        Ok(path)
    }

    /// Sets aside the file of a hand that a crash interrupted after it was
    /// filed ([`Archive::stage`]) and before its chips were settled, and
    /// that the restart then refunded: nobody saw it end (its end is sent
    /// only once it is filed and settled), so it moves to `voided/`, with
    /// its pending reveal appended (nothing is at stake any more). Returns
    /// the voided file, or `None` when the hand is not on file.
    pub fn void_filed(&self, hand_id: &HandId) -> Result<Option<PathBuf>, ArchiveError> {
        self.finish_interrupted_writes()?;
        let found =
            self.files().into_iter().filter_map(|p| parse_name(&p, "jsonl")).find(|(_, h)| h == hand_id);
        let Some((n, _)) = found else { return Ok(None) };
        let mut t = self.read_file(&self.path(n, hand_id))?;
        let pending = self.pending_path(n, hand_id);
        match fs::read_to_string(&pending) {
            Ok(text) => {
                let env: EventEnvelope = serde_json::from_str(text.trim())
                    .map_err(|e| ArchiveError::Corrupt { path: pending.clone(), reason: e.to_string() })?;
                if t.events.last() != Some(&env) {
                    t.events.push(env);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e.into()),
        }
        self.write_voided(&t).map(Some)
    }

    /// The number after the highest hand number this room has used (0 for
    /// an empty archive): archived hands, voided hands and the number a
    /// hand interrupted by a crash had reserved ([`Archive::reserve`]), so
    /// that hand numbers and file names never repeat across restarts.
    pub fn next_hand_number(&self) -> u64 {
        let voided = self.dir.join("voided");
        let numbered = |dir: &Path| -> Vec<u64> {
            fs::read_dir(dir)
                .map(|d| {
                    d.flatten()
                        .filter_map(|e| {
                            let p = e.path();
                            let name = p.file_name()?.to_str()?.strip_suffix(".jsonl")?.to_owned();
                            name.split_once('-')?.0.parse::<u64>().ok()
                        })
                        .collect()
                })
                .unwrap_or_default()
        };
        let reserved = fs::read_to_string(self.reserved_path())
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .unwrap_or(0);
        numbered(&self.dir)
            .into_iter()
            .chain(numbered(&voided))
            .map(|n| n.saturating_add(1))
            .chain([reserved])
            .max()
            .unwrap_or(0)
    }

    fn reserved_path(&self) -> PathBuf {
        self.dir.parent().unwrap_or(&self.dir).join("next-hand-number")
    }

    /// Records (synced) that hand numbers below `next` are used, for a hand
    /// a crash interrupted before anything of it was filed: the next start
    /// numbers its hands from there ([`Archive::next_hand_number`]).
    pub fn reserve(&self, next: u64) -> Result<(), ArchiveError> {
        if self.next_hand_number() >= next {
            return Ok(());
        }
        if let Some(parent) = self.reserved_path().parent() {
            fs::create_dir_all(parent)?;
        }
        write_atomic(&self.reserved_path(), &format!("{next}\n"))?;
        Ok(())
    }

    /// Every archived transcript file, in hand order.
    pub fn files(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = fs::read_dir(&self.dir)
            .map(|d| {
                d.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    }
}

/// Writes `text` to `path` through a synced temp file and a rename, so a
/// crash leaves the old file or the new one, never half of one.
/// The ids of the rooms with an archive under `data_dir` (a
/// `rooms/<id>/transcripts` folder, `<id>` a valid room id).
pub fn archived_rooms(data_dir: &Path) -> Vec<String> {
    let Ok(dir) = fs::read_dir(data_dir.join("rooms")) else { return Vec::new() };
    dir.flatten()
        .filter(|e| e.path().join("transcripts").is_dir())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|id| claw_engine::room::config::valid_room_id(id))
        .collect()
}

pub(crate) fn write_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    let tmp = tmp_path(path);
    write_synced(&tmp, text)?;
    fs::rename(&tmp, path)
}

fn remove_if_present(path: &Path) -> std::io::Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// The hand number its `hand-prepare` (the first event) carries.
fn hand_number_of(t: &Transcript) -> Option<u64> {
    match t.events.first()?.decode_body().ok()? {
        claw_protocol::messages::EventBody::HandPrepare(p) => Some(p.hand_number),
        _ => None,
    }
}

/// Whether an I/O error says the process (or the system) is out of file
/// descriptors: a condition that passes, worth waiting for.
pub fn out_of_descriptors(e: &std::io::Error) -> bool {
    #[cfg(unix)]
    {
        use rustix::io::Errno;
        Errno::from_io_error(e).is_some_and(|n| n == Errno::MFILE || n == Errno::NFILE)
    }
    #[cfg(not(unix))]
    {
        let _ = e;
        false
    }
}

/// `path` with `.tmp` appended: where an atomic write stages its content.
fn tmp_path(path: &Path) -> PathBuf {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    PathBuf::from(tmp)
}

fn write_synced(path: &Path, text: &str) -> std::io::Result<()> {
    let mut f = fs::File::create(path)?;
    f.write_all(text.as_bytes())?;
    f.sync_all()
}

impl ArchiveError {
    /// Out of file descriptors: the write can be retried when they return.
    pub fn out_of_descriptors(&self) -> bool {
        matches!(self, ArchiveError::Io(e) if out_of_descriptors(e))
    }
}

/// `<hand_number>-<hand_id>.<ext>` → its number and hand id.
fn parse_name(path: &Path, ext: &str) -> Option<(u64, HandId)> {
    let name = path.file_name()?.to_str()?.strip_suffix(ext)?.strip_suffix('.')?;
    let (n, id) = name.split_once('-')?;
    Some((n.parse().ok()?, id.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_files_a_crash_left_are_removed_at_open() {
        let dir = tempfile::tempdir().unwrap();
        let a = Archive::open(dir.path(), "r").unwrap();
        let tmp = a.pending.join("00000001-aa.json.tmp");
        fs::write(&tmp, "{\"half").unwrap();
        fs::write(a.dir().join("00000001-aa.jsonl.tmp"), "").unwrap();
        let a = Archive::open(dir.path(), "r").unwrap();
        assert!(!tmp.exists());
        assert_eq!(fs::read_dir(a.dir()).unwrap().count(), 0);
        assert!(a.pending().is_empty());
    }

    const HAND: &str = "0123456789abcdef0123456789abcdef";

    /// A crash after the reveal was stored but before the transcript was
    /// renamed into place: open finishes the write, the reveal stays owed.
    #[test]
    fn a_write_interrupted_before_the_transcript_rename_is_finished_at_open() {
        let dir = tempfile::tempdir().unwrap();
        let a = Archive::open(dir.path(), "r").unwrap();
        let id: HandId = HAND.parse().unwrap();
        fs::write(a.pending_path(4, &id), "{}\n").unwrap();
        fs::write(tmp_path(&a.path(4, &id)), "transcript\n").unwrap();
        let a = Archive::open(dir.path(), "r").unwrap();
        assert_eq!(fs::read_to_string(a.path(4, &id)).unwrap(), "transcript\n");
        assert!(!tmp_path(&a.path(4, &id)).exists());
        assert_eq!(a.pending(), vec![(4, id)]);
    }

    /// A pending reveal whose transcript is gone cannot be published: it is
    /// kept aside and no longer listed as owed, so it blocks nothing.
    #[test]
    fn a_pending_reveal_without_its_transcript_is_set_aside() {
        let dir = tempfile::tempdir().unwrap();
        let a = Archive::open(dir.path(), "r").unwrap();
        let id: HandId = HAND.parse().unwrap();
        fs::write(a.pending_path(2, &id), "{}\n").unwrap();
        let a = Archive::open(dir.path(), "r").unwrap();
        assert!(a.pending().is_empty());
        let kept = a.pending.join("orphaned").join(format!("00000002-{HAND}.json"));
        assert_eq!(fs::read_to_string(kept).unwrap(), "{}\n");
    }

    /// A reader beside the room leaves its writes in progress alone.
    #[test]
    fn a_reader_does_not_touch_a_write_in_progress() {
        let dir = tempfile::tempdir().unwrap();
        let a = Archive::open(dir.path(), "r").unwrap();
        let id: HandId = HAND.parse().unwrap();
        let tmp = tmp_path(&a.path(1, &id));
        fs::write(&tmp, "half").unwrap();
        let r = Archive::reader(dir.path(), "r");
        assert!(r.record(HandKey::Number(1)).unwrap().is_none());
        assert!(r.files().is_empty());
        assert!(tmp.exists());
    }

    /// A signed one-event transcript: hand `id`'s `hand-prepare`, number `n`.
    fn prepared(id: HandId, n: u64) -> Transcript {
        use claw_protocol::messages::{EntropyMode, EventBody, HandPrepare};
        let dealer = claw_protocol::Identity::from_seed([9; 32]);
        let mut b = claw_protocol::transcript::TranscriptBuilder::with_header(id, dealer.id(), "r");
        let body = EventBody::HandPrepare(HandPrepare {
            hand_number: n,
            seed_commitment: claw_protocol::sha256(&[b"seed"]),
            entropy: EntropyMode::Dealer,
            players: Vec::new(),
            seed_timeout_ms: 0,
        });
        b.append(&dealer, &body).unwrap();
        b.into_transcript()
    }

    /// Issue #28: the room stages a hand before its end is sent (durable,
    /// listed nowhere) and moves it into the archive once it is settled; a
    /// write of a hand on file already changes nothing.
    #[test]
    fn a_staged_hand_enters_the_archive_when_written() {
        let dir = tempfile::tempdir().unwrap();
        let a = Archive::open(dir.path(), "r").unwrap();
        let id: HandId = HAND.parse().unwrap();
        let t = prepared(id, 3);
        let staged = a.stage(3, &t, None).unwrap();
        assert!(staged.exists() && a.files().is_empty(), "staged, not archived");
        assert!(a.record(HandKey::Id(id)).unwrap().is_none(), "not served");
        let path = a.write(3, &t, None).unwrap();
        assert!(!staged.exists());
        assert_eq!(a.files(), vec![path.clone()]);
        let at = fs::metadata(&path).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(a.write(3, &t, None).unwrap(), path);
        assert_eq!(fs::metadata(&path).unwrap().modified().unwrap(), at, "not rewritten");
    }

    /// Issue #28: a hand staged (its end then sent) whose archiving a crash
    /// cut off is archived at the next start; its reveal stays owed.
    #[test]
    fn a_staged_hand_is_archived_at_the_next_start() {
        let dir = tempfile::tempdir().unwrap();
        let a = Archive::open(dir.path(), "r").unwrap();
        let id: HandId = HAND.parse().unwrap();
        let t = prepared(id, 3);
        let mut reveal = t.events[0].clone();
        reveal.seq = 1;
        a.stage(3, &t, Some(&reveal)).unwrap();
        let a = Archive::open(dir.path(), "r").unwrap();
        assert_eq!(a.files(), vec![a.path(3, &id)]);
        assert_eq!(a.pending(), vec![(3, id)]);
        assert_eq!(a.next_hand_number(), 4);
    }

    /// Issue #28: a staged hand the restart refunded (a crash came before
    /// its settlement) is set aside as voided with its pending reveal, and
    /// its number stays used; a hand voided in play keeps its number too.
    #[test]
    fn a_filed_hand_refunded_after_a_crash_is_voided_and_keeps_its_number() {
        let dir = tempfile::tempdir().unwrap();
        let a = Archive::open(dir.path(), "r").unwrap();
        let id: HandId = HAND.parse().unwrap();
        let t = prepared(id, 5);
        let mut reveal = t.events[0].clone();
        reveal.seq = 1;
        a.stage(5, &t, Some(&reveal)).unwrap();
        assert_eq!(a.pending(), vec![(5, id)]);
        let voided = a.void_filed(&id).unwrap().expect("on file");
        assert_eq!(voided, a.dir().join("voided").join(format!("00000005-{HAND}.jsonl")));
        assert!(a.files().is_empty() && a.pending().is_empty() && a.staged_files().is_empty());
        let kept = Transcript::from_jsonl(&fs::read_to_string(&voided).unwrap()).unwrap();
        assert_eq!(kept.events.last(), Some(&reveal), "the reveal goes with it");
        assert_eq!(a.next_hand_number(), 6, "the voided hand's number is used");
        assert_eq!(a.void_filed(&id).unwrap(), None, "once");
        let other: HandId = "f".repeat(32).parse().unwrap();
        a.stage(9, &prepared(other, 9), None).unwrap();
        a.write_voided(&prepared(other, 9)).unwrap();
        assert!(a.staged_files().is_empty(), "voided in play: the staged copy goes");
        assert_eq!(Archive::open(dir.path(), "r").unwrap().next_hand_number(), 10);
    }

    /// Issue #28: a number reserved by a hand a crash interrupted before
    /// anything of it was filed is not dealt again.
    #[test]
    fn a_reserved_number_is_not_dealt_again() {
        let dir = tempfile::tempdir().unwrap();
        let a = Archive::open(dir.path(), "r").unwrap();
        fs::write(a.dir().join(format!("00000002-{HAND}.jsonl")), "").unwrap();
        a.reserve(12).unwrap();
        assert_eq!(a.next_hand_number(), 12);
        a.reserve(4).unwrap();
        assert_eq!(Archive::open(dir.path(), "r").unwrap().next_hand_number(), 12, "never lowered");
    }

    #[test]
    fn next_hand_number_follows_the_highest_file() {
        let dir = tempfile::tempdir().unwrap();
        let a = Archive::open(dir.path(), "r").unwrap();
        assert_eq!(a.next_hand_number(), 0);
        for name in ["00000000-aa.jsonl", "00000007-bb.jsonl", "00000003-cc.jsonl", "junk.jsonl", "9-x.txt"] {
            fs::write(a.dir().join(name), "").unwrap();
        }
        assert_eq!(a.next_hand_number(), 8);
    }
}

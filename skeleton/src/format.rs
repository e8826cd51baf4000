//! The skeleton file: `SGSKEL1\n`, then a gzip stream of one record (varints and
//! length-prefixed bytes). Reading never trusts a length: every count and size is
//! checked against the bytes left, the decompressed size is capped, and a file that
//! does not decode whole is an error naming why, never a panic or a guess.

use std::io::{Read, Write};
use std::path::PathBuf;

use syncguard_trace::merge::{KeptLine, RankFileParts, RankFileRead};

use crate::{Skeleton, SkeletonBody, TraceSkeleton};

const MAGIC: &[u8] = b"SGSKEL1\n";
const RESERVE_MAGIC: &[u8] = b"SGRESV1\n";
/// The most a skeleton may decompress to (a skeleton of a 20M-call trace is far below).
const MAX_DECOMPRESSED: u64 = 8 << 30;

/// Why a skeleton file could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError(pub String);

impl std::fmt::Display for FormatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FormatError {}

fn bad(what: impl Into<String>) -> FormatError {
    FormatError(what.into())
}

struct Writer(Vec<u8>);

impl Writer {
    fn uint(&mut self, mut value: u64) {
        loop {
            let byte = (value & 0x7f) as u8;
            value >>= 7;
            if value == 0 {
                self.0.push(byte);
                return;
            }
            self.0.push(byte | 0x80);
        }
    }
    fn int(&mut self, value: i64) {
        self.uint(((value << 1) ^ (value >> 63)) as u64);
    }
    fn bytes(&mut self, bytes: &[u8]) {
        self.uint(bytes.len() as u64);
        self.0.extend_from_slice(bytes);
    }
    fn str(&mut self, text: &str) {
        self.bytes(text.as_bytes());
    }
    fn opt_bytes(&mut self, bytes: Option<&[u8]>) {
        match bytes {
            None => self.uint(0),
            Some(bytes) => {
                self.uint(1);
                self.bytes(bytes);
            }
        }
    }
    /// Line starts as the lengths between them.
    fn layout(&mut self, line_starts: &[usize], len: usize, newline_at_end: bool) {
        self.uint(len as u64);
        self.uint(u64::from(newline_at_end));
        self.uint(line_starts.len() as u64);
        let mut previous = 0;
        for &start in line_starts {
            self.uint((start - previous) as u64);
            previous = start;
        }
    }
}

struct Reader<'b> {
    bytes: &'b [u8],
    at: usize,
}

impl<'b> Reader<'b> {
    fn left(&self) -> usize {
        self.bytes.len() - self.at
    }
    fn uint(&mut self) -> Result<u64, FormatError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *self.bytes.get(self.at).ok_or_else(|| bad("the skeleton ends early"))?;
            self.at += 1;
            value |= u64::from(byte & 0x7f).checked_shl(shift).unwrap_or(0);
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(bad("a number is too long"))
    }
    fn int(&mut self) -> Result<i64, FormatError> {
        let value = self.uint()?;
        Ok(((value >> 1) as i64) ^ -((value & 1) as i64))
    }
    fn usize(&mut self) -> Result<usize, FormatError> {
        usize::try_from(self.uint()?).map_err(|_| bad("a size is too large"))
    }
    /// A count of items each at least one byte long.
    fn count(&mut self) -> Result<usize, FormatError> {
        let count = self.usize()?;
        if count > self.left() {
            return Err(bad("a count is larger than the skeleton"));
        }
        Ok(count)
    }
    fn bytes(&mut self) -> Result<&'b [u8], FormatError> {
        let len = self.usize()?;
        if len > self.left() {
            return Err(bad("a length is larger than the skeleton"));
        }
        let bytes = &self.bytes[self.at..self.at + len];
        self.at += len;
        Ok(bytes)
    }
    fn string(&mut self) -> Result<String, FormatError> {
        String::from_utf8(self.bytes()?.to_vec()).map_err(|_| bad("a name is not UTF-8"))
    }
    fn opt_bytes(&mut self) -> Result<Option<Vec<u8>>, FormatError> {
        match self.uint()? {
            0 => Ok(None),
            1 => Ok(Some(self.bytes()?.to_vec())),
            _ => Err(bad("a flag is neither 0 nor 1")),
        }
    }
    fn flag(&mut self) -> Result<bool, FormatError> {
        match self.uint()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(bad("a flag is neither 0 nor 1")),
        }
    }
    /// Line starts (strictly increasing from 0, each below `len`), the length and
    /// whether the last line ends with a newline.
    fn layout(&mut self) -> Result<(Vec<usize>, usize, bool), FormatError> {
        let len = self.usize()?;
        let newline_at_end = self.flag()?;
        let lines = self.count()?;
        let mut line_starts = Vec::with_capacity(lines);
        let mut at = 0usize;
        for index in 0..lines {
            let step = self.usize()?;
            if (index == 0) != (step == 0) {
                return Err(bad("the line layout is not increasing from 0"));
            }
            at = at.checked_add(step).ok_or_else(|| bad("a line start overflows"))?;
            if at > len || (index > 0 && at == len) {
                return Err(bad("a line starts past the file's end"));
            }
            line_starts.push(at);
        }
        if line_starts.is_empty() {
            return Err(bad("the line layout is empty"));
        }
        Ok((line_starts, len, newline_at_end))
    }
}

/// Where line `line`'s text ends (before its newline) in a file of this layout.
pub(crate) fn content_end(line_starts: &[usize], len: usize, newline_at_end: bool, line: usize) -> usize {
    match line_starts.get(line + 1) {
        Some(&next) => next - 1,
        None => len - usize::from(newline_at_end && len > 0),
    }
}

/// Whether kept line `text` fits line `line` of the layout exactly.
fn fits(line_starts: &[usize], len: usize, newline_at_end: bool, line: usize, text: &[u8]) -> bool {
    line < line_starts.len()
        && content_end(line_starts, len, newline_at_end, line).checked_sub(line_starts[line]) == Some(text.len())
        && !text.contains(&b'\n')
}

impl Skeleton {
    /// The file's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer(Vec::new());
        w.uint(self.dropped as u64);
        w.uint(self.calls as u64);
        match &self.body {
            SkeletonBody::Rank {
                run,
                order,
                merged_on_disk,
                file,
            } => {
                w.uint(0);
                w.str(run);
                w.uint(*order as u64);
                match merged_on_disk {
                    None => w.uint(0),
                    Some((display, path)) => {
                        w.uint(1);
                        w.str(display);
                        w.str(&path.to_string_lossy());
                    }
                }
                match file {
                    RankFileRead::Unreadable { display, path, error } => {
                        w.uint(0);
                        w.str(display);
                        w.str(&path.to_string_lossy());
                        w.str(error);
                    }
                    RankFileRead::Read(parts) => {
                        w.uint(1);
                        w.str(&parts.display);
                        w.str(&parts.path.to_string_lossy());
                        w.bytes(&parts.header);
                        w.opt_bytes(parts.closing.as_deref());
                        w.uint(parts.calls as u64);
                        w.layout(&parts.line_starts, parts.len, parts.newline_at_end);
                        w.uint(parts.lines.len() as u64);
                        let (mut position, mut key) = (0u64, 0u64);
                        for line in &parts.lines {
                            w.uint(u64::from(line.position) - position);
                            // Keys mostly grow: a wrapped difference, as a signed number.
                            w.int(line.key.wrapping_sub(key) as i64);
                            w.bytes(&line.text);
                            position = u64::from(line.position);
                            key = line.key;
                        }
                    }
                }
            }
            SkeletonBody::Trace(trace) => {
                w.uint(1);
                w.uint(trace.order as u64);
                w.str(&trace.display);
                w.str(&trace.path.to_string_lossy());
                w.layout(&trace.line_starts, trace.len, trace.newline_at_end);
                w.uint(trace.kept.len() as u64);
                let mut previous = 0;
                for (line, text) in &trace.kept {
                    w.uint((line - previous) as u64);
                    w.bytes(text);
                    previous = *line;
                }
            }
        }
        compress(MAGIC, &w.0)
    }

    /// The bytes of its reserve file: the lines it left out (empty when none were).
    pub fn encode_reserve(&self) -> Vec<u8> {
        let mut w = Writer(Vec::new());
        w.uint(self.reserve.len() as u64);
        let (mut position, mut key) = (0u64, 0u64);
        for line in &self.reserve {
            w.uint(u64::from(line.position) - position);
            w.int(line.key.wrapping_sub(key) as i64);
            w.bytes(&line.text);
            position = u64::from(line.position);
            key = line.key;
        }
        compress(RESERVE_MAGIC, &w.0)
    }

    /// Read the reserve file `bytes` of this skeleton: the lines it left out, each
    /// checked against the file's layout.
    pub fn decode_reserve(&self, bytes: &[u8]) -> Result<Vec<KeptLine>, FormatError> {
        let raw = decompress(RESERVE_MAGIC, bytes, "reserve")?;
        let mut r = Reader { bytes: &raw, at: 0 };
        let count = r.count()?;
        if count != self.dropped {
            return Err(bad(format!(
                "it holds {count} lines, but the skeleton left out {}",
                self.dropped
            )));
        }
        let (line_starts, len, newline_at_end, offset) = match &self.body {
            SkeletonBody::Rank {
                file: RankFileRead::Read(parts),
                ..
            } => (&parts.line_starts, parts.len, parts.newline_at_end, 1),
            SkeletonBody::Trace(trace) => (&trace.line_starts, trace.len, trace.newline_at_end, 0),
            SkeletonBody::Rank { .. } => return Err(bad("an unreadable rank file has no lines")),
        };
        let mut lines = Vec::with_capacity(count);
        let (mut position, mut key) = (0u64, 0u64);
        for index in 0..count {
            let step = r.uint()?;
            if index > 0 && step == 0 {
                return Err(bad("reserved lines are not in file order"));
            }
            position = position
                .checked_add(step)
                .ok_or_else(|| bad("a line number overflows"))?;
            key = key.wrapping_add(r.int()? as u64);
            let text = r.bytes()?.to_vec();
            let position = u32::try_from(position).map_err(|_| bad("a line number overflows"))?;
            if !fits(line_starts, len, newline_at_end, position as usize + offset, &text) {
                return Err(bad(format!(
                    "reserved line {} does not fit the file's layout",
                    position as usize + offset + 1
                )));
            }
            lines.push(KeptLine { position, key, text });
        }
        if r.left() != 0 {
            return Err(bad("bytes follow the reserve's end"));
        }
        Ok(lines)
    }

    /// Read a skeleton file's bytes.
    pub fn decode(bytes: &[u8]) -> Result<Skeleton, FormatError> {
        let raw = decompress(MAGIC, bytes, "skeleton")?;
        let mut r = Reader { bytes: &raw, at: 0 };
        let dropped = r.usize()?;
        let calls = r.usize()?;
        let body = match r.uint()? {
            0 => {
                let run = r.string()?;
                let order = r.usize()?;
                let merged_on_disk = match r.uint()? {
                    0 => None,
                    1 => Some((r.string()?, PathBuf::from(r.string()?))),
                    _ => return Err(bad("a flag is neither 0 nor 1")),
                };
                let file = match r.uint()? {
                    0 => RankFileRead::Unreadable {
                        display: r.string()?,
                        path: PathBuf::from(r.string()?),
                        error: r.string()?,
                    },
                    1 => RankFileRead::Read(read_parts(&mut r)?),
                    _ => return Err(bad("unknown kind of rank file")),
                };
                SkeletonBody::Rank {
                    run,
                    order,
                    merged_on_disk,
                    file,
                }
            }
            1 => {
                let order = r.usize()?;
                let display = r.string()?;
                let path = PathBuf::from(r.string()?);
                let (line_starts, len, newline_at_end) = r.layout()?;
                let count = r.count()?;
                let mut kept = Vec::with_capacity(count);
                let mut line = 0usize;
                for index in 0..count {
                    let step = r.usize()?;
                    if index > 0 && step == 0 {
                        return Err(bad("kept lines are not in file order"));
                    }
                    line = line.checked_add(step).ok_or_else(|| bad("a line number overflows"))?;
                    let text = r.bytes()?.to_vec();
                    if !fits(&line_starts, len, newline_at_end, line, &text) {
                        return Err(bad(format!("kept line {} does not fit the file's layout", line + 1)));
                    }
                    kept.push((line, text));
                }
                SkeletonBody::Trace(TraceSkeleton {
                    order,
                    display,
                    path,
                    line_starts,
                    len,
                    newline_at_end,
                    kept,
                })
            }
            _ => return Err(bad("unknown kind of skeleton")),
        };
        if r.left() != 0 {
            return Err(bad("bytes follow the skeleton's end"));
        }
        Ok(Skeleton {
            body,
            dropped,
            calls,
            reserve: Vec::new(),
        })
    }
}

/// The records of a skeleton file, decompressed (for the tests that damage them).
#[doc(hidden)]
pub fn raw_body(bytes: &[u8]) -> Result<Vec<u8>, FormatError> {
    decompress(MAGIC, bytes, "skeleton")
}

/// A skeleton file holding `raw` as its records (for the tests that damage them).
#[doc(hidden)]
pub fn with_raw_body(raw: &[u8]) -> Vec<u8> {
    compress(MAGIC, raw)
}

fn compress(magic: &[u8], body: &[u8]) -> Vec<u8> {
    let mut out = magic.to_vec();
    let mut encoder = flate2::write::GzEncoder::new(&mut out, flate2::Compression::new(6));
    encoder.write_all(body).expect("writing to memory");
    encoder.finish().expect("writing to memory");
    out
}

fn decompress(magic: &[u8], bytes: &[u8], what: &str) -> Result<Vec<u8>, FormatError> {
    let body = bytes.strip_prefix(magic).ok_or_else(|| {
        bad(format!(
            "not a syncguard {what} (it does not start with `{}`)",
            String::from_utf8_lossy(&magic[..magic.len() - 1])
        ))
    })?;
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(body)
        .take(MAX_DECOMPRESSED + 1)
        .read_to_end(&mut raw)
        .map_err(|err| bad(format!("the compressed body is damaged: {err}")))?;
    if raw.len() as u64 > MAX_DECOMPRESSED {
        return Err(bad(format!("the body is larger than any {what}")));
    }
    Ok(raw)
}

fn read_parts(r: &mut Reader) -> Result<RankFileParts, FormatError> {
    let display = r.string()?;
    let path = PathBuf::from(r.string()?);
    let header = r.bytes()?.to_vec();
    let closing = r.opt_bytes()?;
    let calls = r.usize()?;
    let (line_starts, len, newline_at_end) = r.layout()?;
    let count = r.count()?;
    if count > calls {
        return Err(bad("more lines kept than the file has"));
    }
    // The header, the calls and the closing line are the file's lines.
    if line_starts.len() != calls + 1 + usize::from(closing.is_some()) {
        return Err(bad("the line layout does not hold the file's lines"));
    }
    if !fits(&line_starts, len, newline_at_end, 0, &header)
        || closing
            .as_deref()
            .is_some_and(|closing| !fits(&line_starts, len, newline_at_end, calls + 1, closing))
    {
        return Err(bad("the header or closing line does not fit the file's layout"));
    }
    let mut lines = Vec::with_capacity(count);
    let (mut position, mut key) = (0u64, 0u64);
    for index in 0..count {
        let step = r.uint()?;
        if index > 0 && step == 0 {
            return Err(bad("kept lines are not in file order"));
        }
        position = position
            .checked_add(step)
            .ok_or_else(|| bad("a line number overflows"))?;
        key = key.wrapping_add(r.int()? as u64);
        let text = r.bytes()?.to_vec();
        let position = u32::try_from(position)
            .ok()
            .filter(|&p| (p as usize) < calls)
            .ok_or_else(|| bad("a kept line is past the file's calls"))?;
        if !fits(&line_starts, len, newline_at_end, position as usize + 1, &text) {
            return Err(bad(format!(
                "kept line {} does not fit the file's layout",
                position + 2
            )));
        }
        lines.push(KeptLine { position, key, text });
    }
    Ok(RankFileParts {
        display,
        path,
        header,
        closing,
        calls,
        lines,
        line_starts,
        len,
        newline_at_end,
    })
}

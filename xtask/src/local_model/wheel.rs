//! One member out of a wheel: a wheel is a zip archive, and this reads just enough of the
//! format to find a member through the central directory and inflate it.
//!
//! Stored and deflated members are supported; ZIP64 and encryption, which no wheel here
//! uses, are refused.

use std::fs;
use std::io::{self, Write};
use std::path::Path;

use anyhow::{Context, Result, bail, ensure};
use flate2::read::DeflateDecoder;

const END_OF_CENTRAL_DIRECTORY: u32 = 0x0605_4b50;
const CENTRAL_DIRECTORY_ENTRY: u32 = 0x0201_4b50;
const LOCAL_FILE_HEADER: u32 = 0x0403_4b50;

/// Writes the one member of the wheel at `path` whose name `is_wanted` accepts to `out`;
/// returns the member's name and its size.
pub(super) fn copy_member(
    path: &Path,
    is_wanted: impl Fn(&str) -> bool,
    out: &mut impl Write,
) -> Result<(String, u64)> {
    let archive = fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let context = || format!("reading the wheel {}", path.display());
    let member = find_member(&archive, is_wanted).with_context(context)?;
    let written = member.copy_to(&archive, out).with_context(context)?;
    Ok((member.name, written))
}

/// A member as the central directory describes it.
#[derive(Debug)]
struct Member {
    name: String,
    method: u16,
    compressed_size: u64,
    size: u64,
    local_header: usize,
}

fn find_member(archive: &[u8], is_wanted: impl Fn(&str) -> bool) -> Result<Member> {
    let end = end_of_central_directory(archive)?;
    let entries = u16_at(archive, end + 10)?;
    let mut offset = usize::try_from(u32_at(archive, end + 16)?)?;
    let mut found = Vec::new();
    for _ in 0..entries {
        ensure!(
            u32_at(archive, offset)? == CENTRAL_DIRECTORY_ENTRY,
            "a central directory entry is damaged"
        );
        let name_length = usize::from(u16_at(archive, offset + 28)?);
        let name_bytes = archive
            .get(offset + 46..offset + 46 + name_length)
            .context("a member name runs past the end")?;
        let name = String::from_utf8_lossy(name_bytes).into_owned();
        if is_wanted(&name) {
            found.push(Member {
                name,
                method: u16_at(archive, offset + 10)?,
                compressed_size: u64::from(u32_at(archive, offset + 20)?),
                size: u64::from(u32_at(archive, offset + 24)?),
                local_header: usize::try_from(u32_at(archive, offset + 42)?)?,
            });
        }
        let extra_length = usize::from(u16_at(archive, offset + 30)?);
        let comment_length = usize::from(u16_at(archive, offset + 32)?);
        offset += 46 + name_length + extra_length + comment_length;
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => bail!("no member of the expected name"),
        _ => {
            let names: Vec<&str> = found.iter().map(|member| member.name.as_str()).collect();
            bail!("several members match: {}", names.join(", "))
        }
    }
}

impl Member {
    fn copy_to(&self, archive: &[u8], out: &mut impl Write) -> Result<u64> {
        ensure!(
            self.size != u64::from(u32::MAX) && self.compressed_size != u64::from(u32::MAX),
            "{} is a ZIP64 member, which is not supported",
            self.name
        );
        let header = self.local_header;
        ensure!(
            u32_at(archive, header)? == LOCAL_FILE_HEADER,
            "the local header of {} is damaged",
            self.name
        );
        let flags = u16_at(archive, header + 6)?;
        ensure!(flags & 1 == 0, "{} is encrypted", self.name);
        // The local header repeats the name and has its own extra field.
        let start = header
            + 30
            + usize::from(u16_at(archive, header + 26)?)
            + usize::from(u16_at(archive, header + 28)?);
        let data = archive
            .get(start..start + usize::try_from(self.compressed_size)?)
            .with_context(|| format!("{} runs past the end of the archive", self.name))?;
        let written = match self.method {
            0 => {
                out.write_all(data)?;
                data.len() as u64
            }
            8 => io::copy(&mut DeflateDecoder::new(data), out)?,
            other => bail!(
                "{} uses compression method {other}, not stored or deflated",
                self.name
            ),
        };
        ensure!(
            written == self.size,
            "{} inflated to {written} bytes instead of {}",
            self.name,
            self.size
        );
        Ok(written)
    }
}

/// The offset of the end-of-central-directory record: the last one in the archive, which
/// ends with a comment of at most 64 KiB.
fn end_of_central_directory(archive: &[u8]) -> Result<usize> {
    let last_start = archive
        .len()
        .checked_sub(22)
        .context("too short to be a zip archive")?;
    let first_start = last_start.saturating_sub(usize::from(u16::MAX));
    (first_start..=last_start)
        .rev()
        .find(|&offset| u32_at(archive, offset).ok() == Some(END_OF_CENTRAL_DIRECTORY))
        .context("no end of central directory: not a zip archive")
}

fn u16_at(bytes: &[u8], offset: usize) -> Result<u16> {
    let field = bytes
        .get(offset..offset + 2)
        .context("a field runs past the end")?;
    Ok(u16::from_le_bytes([field[0], field[1]]))
}

fn u32_at(bytes: &[u8], offset: usize) -> Result<u32> {
    let field = bytes
        .get(offset..offset + 4)
        .context("a field runs past the end")?;
    Ok(u32::from_le_bytes([field[0], field[1], field[2], field[3]]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::Compression;
    use flate2::write::DeflateEncoder;

    /// A minimal zip writer: stored or deflated members, central directory, end record.
    fn zip(members: &[(&str, &[u8], bool)]) -> Vec<u8> {
        let mut archive = Vec::new();
        let mut directory = Vec::new();
        for (name, content, deflate) in members {
            let data = if *deflate {
                let mut encoder = DeflateEncoder::new(Vec::new(), Compression::default());
                encoder.write_all(content).unwrap();
                encoder.finish().unwrap()
            } else {
                content.to_vec()
            };
            let method: u16 = if *deflate { 8 } else { 0 };
            let offset = archive.len() as u32;
            let mut local = Vec::new();
            local.extend(LOCAL_FILE_HEADER.to_le_bytes());
            local.extend([20, 0, 0, 0]); // version, flags
            local.extend(method.to_le_bytes());
            local.extend([0; 8]); // time, date, crc (not checked)
            local.extend((data.len() as u32).to_le_bytes());
            local.extend((content.len() as u32).to_le_bytes());
            local.extend((name.len() as u16).to_le_bytes());
            local.extend(3u16.to_le_bytes()); // an extra field, to be skipped
            local.extend(name.as_bytes());
            local.extend(b"xyz");
            archive.extend(local);
            archive.extend(&data);

            directory.extend(CENTRAL_DIRECTORY_ENTRY.to_le_bytes());
            directory.extend([20, 0, 20, 0, 0, 0]); // versions, flags
            directory.extend(method.to_le_bytes());
            directory.extend([0; 8]);
            directory.extend((data.len() as u32).to_le_bytes());
            directory.extend((content.len() as u32).to_le_bytes());
            directory.extend((name.len() as u16).to_le_bytes());
            directory.extend([0; 12]); // extra, comment, disk, attributes
            directory.extend(offset.to_le_bytes());
            directory.extend(name.as_bytes());
        }
        let directory_offset = archive.len() as u32;
        let directory_size = directory.len() as u32;
        archive.extend(directory);
        archive.extend(END_OF_CENTRAL_DIRECTORY.to_le_bytes());
        archive.extend([0; 4]);
        archive.extend((members.len() as u16).to_le_bytes());
        archive.extend((members.len() as u16).to_le_bytes());
        archive.extend(directory_size.to_le_bytes());
        archive.extend(directory_offset.to_le_bytes());
        archive.extend(0u16.to_le_bytes());
        archive
    }

    fn copy(archive: &[u8], wanted: &str) -> Result<Vec<u8>> {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("w.whl");
        fs::write(&path, archive).unwrap();
        let mut out = Vec::new();
        copy_member(&path, |name| name.ends_with(wanted), &mut out)?;
        Ok(out)
    }

    #[test]
    fn stored_and_deflated_members_are_copied_out() {
        let part: Vec<u8> = (0..10_000u32)
            .flat_map(|n| (n % 251).to_le_bytes())
            .collect();
        let archive = zip(&[
            ("pkg/__init__.py", b"", false),
            ("pkg/data/part01.bin", &part, true),
            ("pkg/data/notes.txt", b"plain", false),
        ]);
        assert_eq!(copy(&archive, "data/part01.bin").unwrap(), part);
        assert_eq!(copy(&archive, "notes.txt").unwrap(), b"plain");
    }

    #[test]
    fn a_missing_or_ambiguous_member_is_an_error() {
        let archive = zip(&[
            ("a/data/part1.bin", b"1", false),
            ("b/data/part1.bin", b"2", false),
        ]);
        let missing = copy(&archive, "part2.bin").unwrap_err();
        assert!(
            format!("{missing:#}").contains("no member of the expected name"),
            "{missing:#}"
        );
        let ambiguous = copy(&archive, "part1.bin").unwrap_err();
        assert!(
            format!("{ambiguous:#}")
                .contains("several members match: a/data/part1.bin, b/data/part1.bin"),
            "{ambiguous:#}"
        );
    }

    #[test]
    fn damaged_archives_are_errors_not_panics() {
        let archive = zip(&[("p/data/part01.bin", b"content", true)]);
        assert!(copy(b"short", "x").is_err());
        assert!(copy(&archive[..archive.len() - 1], "part01.bin").is_err());
        for cut in [10, 30, 40] {
            let mut damaged = archive.clone();
            damaged.drain(..cut);
            assert!(copy(&damaged, "part01.bin").is_err(), "cut {cut}");
        }
    }
}

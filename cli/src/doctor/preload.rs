//! The doctor's LD_PRELOAD library: the shared object built from `preload/probtest_preload.c`
//! and embedded in `cargo-probtest`, written out on first use, and whether a test binary can be
//! run under it.
//!
//! Under the library, a test process's entropy (`getrandom`, `getentropy`,
//! `syscall(SYS_getrandom)`: std's `HashMap` keys, the getrandom crate behind `rand`) and its
//! wall clock (`clock_gettime` of the realtime clocks, `gettimeofday`, `time`: std's
//! `SystemTime::now()`) follow [`ENV_SEED`], [`ENV_TIME`] and [`ENV_TIME_FROZEN`]; unset, each
//! call goes through to libc. A malformed value is named in one line on the process's stderr and
//! leaves its axis real.

use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// A decimal `u64`: every draw of OS entropy comes from one deterministic stream seeded with it,
/// process-wide, advancing with each call.
pub const ENV_SEED: &str = "PROBTEST_DOCTOR_SEED";

/// Unix seconds, decimal, optionally with a fraction (`1893455999.5`): the wall clock reads this
/// at the process's first read, then advances with the monotonic clock.
pub const ENV_TIME: &str = "PROBTEST_DOCTOR_TIME";

/// `1`: the wall clock stays at [`ENV_TIME`] instead of advancing.
pub const ENV_TIME_FROZEN: &str = "PROBTEST_DOCTOR_TIME_FROZEN";

/// `hash`: the seed pins std's hash keys only (the draws made with `GRND_INSECURE`), from the
/// same stream as without it; other draws are real.
pub const ENV_SEED_SCOPE: &str = "PROBTEST_DOCTOR_SEED_SCOPE";

/// Milliseconds: every read of the wall clock or a monotonic clock returns at least this much
/// more than the read before it.
pub const ENV_TICK_MS: &str = "PROBTEST_DOCTOR_TICK_MS";

/// `block`: `connect` and `sendto` to an address outside loopback fail with `ENETUNREACH`.
pub const ENV_NET: &str = "PROBTEST_DOCTOR_NET";

/// A file the library appends what it did to, a line each: `entropy hash` and `entropy other`
/// at the first draw of each kind, `blocked <address>` per refused connection.
pub const ENV_LOG: &str = "PROBTEST_DOCTOR_LOG";

#[cfg(probtest_preload)]
const LIBRARY: Option<&[u8]> = Some(include_bytes!(concat!(
    env!("OUT_DIR"),
    "/probtest_preload.so"
)));

#[cfg(not(probtest_preload))]
const LIBRARY: Option<&[u8]> = None;

const ABSENT: &str =
    "this cargo-probtest has no preload library: it is built only for Linux with glibc";

/// The library as a file under `<target_dir>/probtest/doctor/`, written there on first use.
///
/// Its name holds a hash of its bytes, so a newer `cargo-probtest` never loads an older build's
/// file, and concurrent doctors sharing a target directory agree on one path. A file already
/// there with the right size is reused; otherwise the bytes go to a temporary file renamed into
/// place, so that no process ever preloads a half-written library.
pub fn library(target_dir: &Path) -> io::Result<PathBuf> {
    let bytes = LIBRARY.ok_or_else(|| io::Error::new(io::ErrorKind::Unsupported, ABSENT))?;
    let dir = target_dir.join("probtest").join("doctor");
    let name = format!("probtest-preload-{:016x}.so", fnv1a(bytes));
    let path = dir.join(&name);
    if fs::metadata(&path).is_ok_and(|meta| meta.is_file() && meta.len() == bytes.len() as u64) {
        return Ok(path);
    }
    fs::create_dir_all(&dir).map_err(|error| in_file(&dir, error))?;
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos());
    let temp = dir.join(format!(".{name}.{}-{nanos}.tmp", std::process::id()));
    let written = File::create_new(&temp)
        .and_then(|mut file| file.write_all(bytes))
        .and_then(|()| fs::rename(&temp, &path));
    if let Err(error) = written {
        let _ = fs::remove_file(&temp);
        return Err(in_file(&path, error));
    }
    Ok(path)
}

/// Whether preloading the library can reach `binary`'s libc; the error says why not, in one
/// line.
///
/// The binary must be an ELF file with a program interpreter (dynamically linked: the loader
/// that honors LD_PRELOAD runs only then), not linked against musl (the library is built for
/// glibc), and of the library's own class, byte order and machine (the loader skips a library of
/// another architecture with only a warning, which would leave the axes silently real).
pub fn applies_to(binary: &Path) -> Result<(), String> {
    let library = LIBRARY.ok_or(ABSENT)?;
    let mut file =
        File::open(binary).map_err(|error| format!("cannot read the binary: {error}"))?;
    let elf = Elf::read(&mut |offset, len| read_at(&mut file, offset, len))?;
    let interpreter = elf.interpreter.as_deref().ok_or(
        "statically linked (no program interpreter): LD_PRELOAD cannot interpose its libc",
    )?;
    if interpreter.contains("ld-musl") {
        return Err(format!(
            "linked against musl ({interpreter}): the preload library is built for glibc"
        ));
    }
    let ours = Elf::read(&mut |offset, len| {
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(library.len());
        Ok(library[start..library.len().min(start.saturating_add(len))].to_vec())
    })
    .map_err(|reason| format!("the embedded preload library is unreadable: {reason}"))?;
    if (elf.class, elf.little_endian, elf.machine) != (ours.class, ours.little_endian, ours.machine)
    {
        return Err(format!(
            "built for {}, the preload library for {}: the loader would skip it",
            elf.describe(),
            ours.describe()
        ));
    }
    Ok(())
}

/// What `applies_to` needs of an ELF file's header and program headers.
#[derive(Debug)]
struct Elf {
    /// 32 or 64.
    class: u8,
    little_endian: bool,
    machine: u16,
    /// The path in `PT_INTERP`, when there is one.
    interpreter: Option<String>,
}

const PT_INTERP: u32 = 3;

impl Elf {
    /// Parses the headers through `read_at(offset, len)`, which may return fewer bytes at the end
    /// of the file; only the parts needed are read, since test binaries can be hundreds of
    /// megabytes of debug info.
    fn read(read_at: &mut dyn FnMut(u64, usize) -> io::Result<Vec<u8>>) -> Result<Elf, String> {
        let unreadable = |error: io::Error| format!("cannot read the binary: {error}");
        let header = read_at(0, 64).map_err(unreadable)?;
        if header.len() < 16 || header[..4] != *b"\x7fELF" {
            return Err(
                "not an ELF file: LD_PRELOAD applies only to Linux's ELF executables".to_string(),
            );
        }
        let class = match header[4] {
            1 => 32,
            2 => 64,
            other => return Err(format!("an ELF file of unknown class {other}")),
        };
        let little_endian = match header[5] {
            1 => true,
            2 => false,
            other => return Err(format!("an ELF file of unknown byte order {other}")),
        };
        let field = Fields {
            bytes: &header,
            little_endian,
        };
        let truncated = || "a truncated ELF header".to_string();
        // e_phoff, e_phentsize and e_phnum sit after the word-sized entry point.
        let (phoff, phentsize, phnum) = if class == 64 {
            (field.u64(32), field.u16(54), field.u16(56))
        } else {
            (field.u32(28).map(u64::from), field.u16(42), field.u16(44))
        };
        let machine = field.u16(18).ok_or_else(truncated)?;
        let (phoff, phentsize, phnum) = (
            phoff.ok_or_else(truncated)?,
            usize::from(phentsize.ok_or_else(truncated)?),
            usize::from(phnum.ok_or_else(truncated)?),
        );
        // 0xffff means the real count is elsewhere (section 0), which linkers emit only for
        // files no test binary resembles.
        if phnum == 0xffff || phentsize < if class == 64 { 56 } else { 32 } {
            return Err("an ELF file with program headers this check cannot read".to_string());
        }
        let table = read_at(phoff, phentsize * phnum).map_err(unreadable)?;
        if table.len() < phentsize * phnum {
            return Err("a truncated ELF file (its program headers are cut off)".to_string());
        }
        let mut interpreter = None;
        for entry in table.chunks_exact(phentsize) {
            let field = Fields {
                bytes: entry,
                little_endian,
            };
            if field.u32(0) != Some(PT_INTERP) {
                continue;
            }
            let (offset, size) = if class == 64 {
                (field.u64(8), field.u64(32))
            } else {
                (field.u32(4).map(u64::from), field.u32(16).map(u64::from))
            };
            let (Some(offset), Some(size)) = (offset, size) else {
                continue;
            };
            // An interpreter path is short; the cap keeps a corrupt size from costing a huge
            // read.
            let path = read_at(offset, size.min(4096) as usize).map_err(unreadable)?;
            let path = path.split(|&byte| byte == 0).next().unwrap_or_default();
            interpreter = Some(String::from_utf8_lossy(path).into_owned());
        }
        Ok(Elf {
            class,
            little_endian,
            machine,
            interpreter,
        })
    }

    /// The class, byte order and machine, as a person names them: `64-bit x86-64`.
    fn describe(&self) -> String {
        let machine = match self.machine {
            3 => "x86".to_string(),
            8 => "MIPS".to_string(),
            20 => "PowerPC".to_string(),
            21 => "PowerPC64".to_string(),
            22 => "s390x".to_string(),
            40 => "ARM".to_string(),
            62 => "x86-64".to_string(),
            183 => "AArch64".to_string(),
            243 => "RISC-V".to_string(),
            258 => "LoongArch".to_string(),
            other => format!("machine {other}"),
        };
        let order = if self.little_endian {
            "little-endian"
        } else {
            "big-endian"
        };
        format!("{}-bit {order} {machine}", self.class)
    }
}

/// Fixed-width integers of an ELF structure, in its byte order; `None` past its end.
struct Fields<'a> {
    bytes: &'a [u8],
    little_endian: bool,
}

impl Fields<'_> {
    fn array<const N: usize>(&self, at: usize) -> Option<[u8; N]> {
        self.bytes.get(at..at + N)?.try_into().ok()
    }

    fn u16(&self, at: usize) -> Option<u16> {
        let bytes = self.array(at)?;
        Some(if self.little_endian {
            u16::from_le_bytes(bytes)
        } else {
            u16::from_be_bytes(bytes)
        })
    }

    fn u32(&self, at: usize) -> Option<u32> {
        let bytes = self.array(at)?;
        Some(if self.little_endian {
            u32::from_le_bytes(bytes)
        } else {
            u32::from_be_bytes(bytes)
        })
    }

    fn u64(&self, at: usize) -> Option<u64> {
        let bytes = self.array(at)?;
        Some(if self.little_endian {
            u64::from_le_bytes(bytes)
        } else {
            u64::from_be_bytes(bytes)
        })
    }
}

/// Up to `len` bytes at `offset`: fewer at the end of the file.
fn read_at(file: &mut File, offset: u64, len: usize) -> io::Result<Vec<u8>> {
    file.seek(SeekFrom::Start(offset))?;
    let mut bytes = Vec::with_capacity(len);
    file.take(len as u64).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// FNV-1a, 64 bits: stable across Rust releases, unlike std's hasher, so a file name written by
/// one build of `cargo-probtest` means the same bytes to every other.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn in_file(path: &Path, error: io::Error) -> io::Error {
    io::Error::new(error.kind(), format!("{}: {error}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory for one test, removed when dropped.
    #[cfg(probtest_preload)]
    struct TempDir(PathBuf);

    #[cfg(probtest_preload)]
    impl TempDir {
        fn new(name: &str) -> TempDir {
            let dir = std::env::temp_dir().join(format!(
                "cargo-probtest-preload-{}-{name}",
                std::process::id()
            ));
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(&dir).expect("temp dir");
            TempDir(dir)
        }
    }

    #[cfg(probtest_preload)]
    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    /// A 64-bit little-endian ELF header and one program header of type `segment`, for `machine`.
    #[cfg(probtest_preload)]
    fn elf(machine: u16, segment: u32) -> Vec<u8> {
        let mut bytes = vec![0u8; 64 + 56];
        bytes[..8].copy_from_slice(b"\x7fELF\x02\x01\x01\x00");
        bytes[16..18].copy_from_slice(&2u16.to_le_bytes());
        bytes[18..20].copy_from_slice(&machine.to_le_bytes());
        bytes[32..40].copy_from_slice(&64u64.to_le_bytes());
        bytes[54..56].copy_from_slice(&56u16.to_le_bytes());
        bytes[56..58].copy_from_slice(&1u16.to_le_bytes());
        bytes[64..68].copy_from_slice(&segment.to_le_bytes());
        bytes
    }

    #[cfg(probtest_preload)]
    fn library_machine() -> u16 {
        u16::from_le_bytes([LIBRARY.unwrap()[18], LIBRARY.unwrap()[19]])
    }

    #[cfg(probtest_preload)]
    #[test]
    fn the_running_test_binary_is_dynamic_and_accepted() {
        let exe = std::env::current_exe().unwrap();
        assert_eq!(applies_to(&exe), Ok(()));
    }

    #[cfg(probtest_preload)]
    #[test]
    fn a_file_that_is_not_elf_is_refused_with_the_reason() {
        let dir = TempDir::new("not-elf");
        let script = dir.0.join("script.sh");
        fs::write(&script, "#!/bin/sh\necho hi\n").unwrap();
        let error = applies_to(&script).unwrap_err();
        assert!(error.starts_with("not an ELF file"), "{error}");
        assert!(!error.contains('\n'), "{error}");

        let empty = dir.0.join("empty");
        fs::write(&empty, "").unwrap();
        assert!(applies_to(&empty)
            .unwrap_err()
            .starts_with("not an ELF file"));

        let missing = applies_to(&dir.0.join("missing")).unwrap_err();
        assert!(missing.starts_with("cannot read the binary: "), "{missing}");
    }

    #[cfg(probtest_preload)]
    #[test]
    fn an_elf_without_an_interpreter_is_statically_linked() {
        let dir = TempDir::new("static");
        let path = dir.0.join("static");
        fs::write(&path, elf(library_machine(), 1)).unwrap();
        assert_eq!(
            applies_to(&path),
            Err(
                "statically linked (no program interpreter): LD_PRELOAD cannot interpose its libc"
                    .to_string()
            )
        );
    }

    #[cfg(probtest_preload)]
    #[test]
    fn a_truncated_or_foreign_elf_is_refused() {
        let dir = TempDir::new("foreign");
        let path = dir.0.join("binary");

        let whole = elf(library_machine(), PT_INTERP);
        fs::write(&path, &whole[..40]).unwrap();
        assert_eq!(applies_to(&path), Err("a truncated ELF header".to_string()));
        fs::write(&path, &whole[..80]).unwrap();
        assert!(applies_to(&path)
            .unwrap_err()
            .contains("program headers are cut off"));

        // An empty interpreter is still one: the machine decides.
        let other = if library_machine() == 183 { 62 } else { 183 };
        fs::write(&path, elf(other, PT_INTERP)).unwrap();
        let error = applies_to(&path).unwrap_err();
        assert!(
            error.starts_with("built for 64-bit little-endian ")
                && error.ends_with(": the loader would skip it"),
            "{error}"
        );

        let mut musl = elf(library_machine(), PT_INTERP);
        let interpreter = b"/lib/ld-musl-x86_64.so.1\0";
        let at = musl.len() as u64;
        musl[64 + 8..64 + 16].copy_from_slice(&at.to_le_bytes());
        musl[64 + 32..64 + 40].copy_from_slice(&(interpreter.len() as u64).to_le_bytes());
        musl.extend_from_slice(interpreter);
        fs::write(&path, musl).unwrap();
        assert_eq!(
            applies_to(&path),
            Err(
                "linked against musl (/lib/ld-musl-x86_64.so.1): the preload library is built \
                 for glibc"
                    .to_string()
            )
        );
    }

    #[cfg(probtest_preload)]
    #[test]
    fn the_library_is_written_once_and_reused() {
        use std::os::unix::fs::MetadataExt;

        let dir = TempDir::new("library");
        let path = library(&dir.0).unwrap();
        let doctor = dir.0.join("probtest").join("doctor");
        assert_eq!(path.parent(), Some(doctor.as_path()));
        let name = path.file_name().unwrap().to_str().unwrap();
        let hash = name
            .strip_prefix("probtest-preload-")
            .and_then(|rest| rest.strip_suffix(".so"))
            .unwrap();
        assert!(
            hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()),
            "{name}"
        );
        assert_eq!(fs::read(&path).unwrap(), LIBRARY.unwrap());

        let inode = fs::metadata(&path).unwrap().ino();
        assert_eq!(library(&dir.0).unwrap(), path);
        assert_eq!(fs::metadata(&path).unwrap().ino(), inode, "rewritten");

        // A file cut short (a disk that filled up) is replaced.
        fs::write(&path, b"short").unwrap();
        assert_eq!(library(&dir.0).unwrap(), path);
        assert_eq!(fs::read(&path).unwrap(), LIBRARY.unwrap());

        let names: Vec<_> = fs::read_dir(&doctor)
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(names, [path.file_name().unwrap()], "temporary files left");
    }

    #[cfg(not(probtest_preload))]
    #[test]
    fn without_the_library_nothing_applies() {
        let exe = std::env::current_exe().unwrap();
        assert_eq!(applies_to(&exe), Err(ABSENT.to_string()));
        let error = library(&std::env::temp_dir()).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::Unsupported);
    }

    #[test]
    fn fnv1a_matches_its_published_vectors() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }
}

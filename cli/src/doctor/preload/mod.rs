//! The doctor's LD_PRELOAD library: the shared object the runtime builds from its
//! `preload/probtest_preload.c` and embeds, written out on first use, and whether a test binary can be
//! run under it.
//!
//! Under the library, a test process's entropy (`getrandom`, `getentropy`,
//! `syscall(SYS_getrandom)`: std's `HashMap` keys, the getrandom crate behind `rand`) and its
//! wall clock (`clock_gettime` of the realtime clocks, `gettimeofday`, `time`: std's
//! `SystemTime::now()`) follow [`ENV_SEED`], [`ENV_TIME`] and [`ENV_TIME_FROZEN`]; unset, each
//! call goes through to libc. A malformed value is named in one line on the process's stderr and
//! leaves its axis real.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use object::elf::{self, FileHeader32, FileHeader64, Machine, PT_INTERP};
use object::read::elf::{FileHeader, ProgramHeader};
use object::read::ReadCache;
use object::{Endianness, FileKind, ReadRef};

pub use probtest_settings::repro::variables::*;

/// The library's bytes, embedded in the runtime that builds it (with its `preload` feature).
const LIBRARY: Option<&[u8]> = probtest::__cli::preload::LIBRARY;

const ABSENT: &str =
    "this cargo-probtest has no preload library: it is built only for Linux with glibc";

/// The library as a file under `<target_dir>/probtest/doctor/`, written there on first use (see
/// the runtime's `library_in`).
pub fn library(target_dir: &Path) -> io::Result<PathBuf> {
    if LIBRARY.is_none() {
        return Err(io::Error::new(io::ErrorKind::Unsupported, ABSENT));
    }
    probtest::__cli::preload::library_in(&target_dir.join("probtest").join("doctor"))
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
    let file = File::open(binary).map_err(|error| format!("cannot read the binary: {error}"))?;
    // The cache reads only the parts asked for: test binaries can be hundreds of megabytes of
    // debug info, and only the headers matter here.
    let elf = Elf::read(&ReadCache::new(file))?;
    let ours = Elf::read(library)
        .map_err(|reason| format!("the embedded preload library is unreadable: {reason}"))?;
    if (elf.class, elf.little_endian, elf.machine) != (ours.class, ours.little_endian, ours.machine)
    {
        return Err(format!(
            "built for {}, the preload library for {}: the loader would skip it",
            elf.describe(),
            ours.describe()
        ));
    }
    let interpreter = elf.interpreter.as_deref().ok_or(
        "statically linked (no program interpreter): LD_PRELOAD cannot interpose its libc",
    )?;
    if interpreter.contains("ld-musl") {
        return Err(format!(
            "linked against musl ({interpreter}): the preload library is built for glibc"
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
    machine: Machine,
    /// The path in `PT_INTERP`, when there is one.
    interpreter: Option<String>,
}

/// The longest interpreter path read: a corrupt size must not cost a huge read.
const LONGEST_INTERPRETER: u64 = 4096;

impl Elf {
    /// The headers of the ELF file `data`, or why they cannot be read, in one line.
    fn read<'data, R: ReadRef<'data>>(data: R) -> Result<Elf, String> {
        if data.read_bytes_at(0, 4).ok() != Some(b"\x7fELF".as_slice()) {
            return Err(
                "not an ELF file: LD_PRELOAD applies only to Linux's ELF executables".to_string(),
            );
        }
        match FileKind::parse(data) {
            Ok(FileKind::Elf32) => Elf::read_class::<FileHeader32<Endianness>, R>(data, 32),
            Ok(FileKind::Elf64) => Elf::read_class::<FileHeader64<Endianness>, R>(data, 64),
            _ if data.len().is_ok_and(|len| len < 16) => Err("a truncated ELF header".into()),
            _ => Err("an ELF file of unknown class".into()),
        }
    }

    fn read_class<'data, Header, R>(data: R, class: u8) -> Result<Elf, String>
    where
        Header: FileHeader<Endian = Endianness>,
        R: ReadRef<'data>,
    {
        let header = Header::parse(data).map_err(|_| {
            if data
                .len()
                .is_ok_and(|len| len < std::mem::size_of::<Header>() as u64)
            {
                "a truncated ELF header".to_string()
            } else {
                "an ELF header of unknown byte order or version".to_string()
            }
        })?;
        let endian = header
            .endian()
            .map_err(|_| "an ELF header of unknown byte order".to_string())?;
        if usize::from(header.e_phentsize(endian)) != std::mem::size_of::<Header::ProgramHeader>()
            && header.e_phoff(endian).into() != 0
        {
            return Err("an ELF file with program headers this check cannot read".to_string());
        }
        let segments = header
            .program_headers(endian, data)
            .map_err(|_| "a truncated ELF file (its program headers are cut off)".to_string())?;
        let mut interpreter = None;
        for segment in segments {
            if segment.p_type(endian) != PT_INTERP {
                continue;
            }
            let (offset, size) = segment.file_range(endian);
            let path = data
                .read_bytes_at(offset, size.min(LONGEST_INTERPRETER))
                .map_err(|()| "a truncated ELF file (its interpreter is cut off)".to_string())?;
            // The path ends at its NUL; an empty or unterminated one is still an interpreter.
            let path = path.split(|&byte| byte == 0).next().unwrap_or_default();
            interpreter = Some(String::from_utf8_lossy(path).into_owned());
        }
        Ok(Elf {
            class,
            little_endian: header.is_little_endian(),
            machine: header.e_machine(endian),
            interpreter,
        })
    }

    /// The class, byte order and machine, as a person names them: `64-bit x86-64`.
    fn describe(&self) -> String {
        let machine = match self.machine {
            elf::EM_386 => "x86".to_string(),
            elf::EM_MIPS => "MIPS".to_string(),
            elf::EM_PPC => "PowerPC".to_string(),
            elf::EM_PPC64 => "PowerPC64".to_string(),
            elf::EM_S390 => "s390x".to_string(),
            elf::EM_ARM => "ARM".to_string(),
            elf::EM_X86_64 => "x86-64".to_string(),
            elf::EM_AARCH64 => "AArch64".to_string(),
            elf::EM_RISCV => "RISC-V".to_string(),
            elf::EM_LOONGARCH => "LoongArch".to_string(),
            other => format!("machine {}", other.0),
        };
        let order = if self.little_endian {
            "little-endian"
        } else {
            "big-endian"
        };
        format!("{}-bit {order} {machine}", self.class)
    }
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod probe_tests;

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod write_probe_tests;

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    /// A fresh directory for one test, removed when dropped.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    struct TempDir(PathBuf);

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
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

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    /// A 64-bit little-endian ELF header and one program header of type `segment`, for `machine`.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
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

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn library_machine() -> u16 {
        u16::from_le_bytes([LIBRARY.unwrap()[18], LIBRARY.unwrap()[19]])
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn headers_are_read_from_bytes_at_any_alignment() {
        let library = LIBRARY.unwrap();
        let mut shifted = vec![0u8; library.len() + 8];
        for offset in 0..8 {
            shifted[offset..offset + library.len()].copy_from_slice(library);
            let elf = Elf::read(&shifted[offset..offset + library.len()]).expect("readable");
            assert_eq!(elf.machine.0, library_machine(), "at offset {offset}");
        }
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn the_running_test_binary_is_dynamic_and_accepted() {
        let exe = std::env::current_exe().unwrap();
        assert_eq!(applies_to(&exe), Ok(()));
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
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

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
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

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn a_truncated_or_foreign_elf_is_refused() {
        let dir = TempDir::new("foreign");
        let path = dir.0.join("binary");

        let whole = elf(library_machine(), PT_INTERP.0);
        fs::write(&path, &whole[..40]).unwrap();
        assert_eq!(applies_to(&path), Err("a truncated ELF header".to_string()));
        fs::write(&path, &whole[..80]).unwrap();
        assert!(applies_to(&path)
            .unwrap_err()
            .contains("program headers are cut off"));

        // An empty interpreter is still one: the machine decides.
        let other = if library_machine() == 183 { 62 } else { 183 };
        fs::write(&path, elf(other, PT_INTERP.0)).unwrap();
        let error = applies_to(&path).unwrap_err();
        assert!(
            error.starts_with("built for 64-bit little-endian ")
                && error.ends_with(": the loader would skip it"),
            "{error}"
        );

        let mut musl = elf(library_machine(), PT_INTERP.0);
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

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
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

    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    #[test]
    fn without_the_library_nothing_applies() {
        let exe = std::env::current_exe().unwrap();
        assert_eq!(applies_to(&exe), Err(ABSENT.to_string()));
        let error = library(&std::env::temp_dir()).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::Unsupported);
    }
}

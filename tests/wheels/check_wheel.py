"""Checks a wheel of ./run.sh wheels (or of ./run.sh test's wheel steps) as a user gets it:

    python tests/wheels/check_wheel.py WHEEL x86_64|aarch64|win_amd64

- its platform tag is manylinux_2_28 or older for that processor (win_amd64: win_amd64), and
  py3-none (any CPython);
- it carries the package, the manifest, the library for that processor, and nothing outside
  opbridge/ and its dist-info (no header, no CMake package);
- Linux: the library needs no versioned glibc symbol newer than 2.28, and no shared library but
  glibc's; Windows: the DLL is for x86-64 (AMD64), imports only KERNEL32 and the C runtime (msvcrt),
  exports only RegisterCustomOps and OpbridgeLibraryInfo, and carries no link time (the same bytes
  from the same commit);
- the metadata has the package's version, the license (the text, in dist-info/licenses) and the
  README as the description;
- no file holds a path of the build machine (the repository's folder).

Prints what it checked, then "N passed, M failed"; exits 1 if any failed. Needs pyelftools
(auditwheel's dependency, in .venv)."""

from __future__ import annotations

import io
import re
import struct
import sys
import zipfile
from pathlib import Path

from elftools.elf.elffile import ELFFile
from elftools.elf.gnuversions import GNUVerNeedSection

REPO = Path(__file__).resolve().parents[2]
MACHINES = {"x86_64": "EM_X86_64", "aarch64": "EM_AARCH64"}
# What glibc's shared libraries are called: the only ones the library may need.
GLIBC_LIBRARIES = re.compile(r"^(libc|libm|libdl|libpthread|librt)\.so\.\d+$|^ld-linux-(x86-64|aarch64)\.so\.\d+$")


def glibc_needs(library: bytes) -> tuple[list[str], list[tuple[int, int]]]:
    """The library's NEEDED entries and the GLIBC_x.y versions its symbols ask for."""
    elf = ELFFile(io.BytesIO(library))
    needed = [tag.needed for tag in elf.get_section_by_name(".dynamic").iter_tags() if tag.entry.d_tag == "DT_NEEDED"]
    versions = []
    for section in elf.iter_sections():
        if isinstance(section, GNUVerNeedSection):
            for _, auxiliaries in section.iter_versions():
                for aux in auxiliaries:
                    if match := re.fullmatch(r"GLIBC_(\d+)\.(\d+)(?:\.\d+)?", aux.name):
                        versions.append((int(match.group(1)), int(match.group(2))))
    return needed, versions


def pe_facts(dll: bytes) -> dict:
    """What a PE file (a Windows DLL) says of itself: its machine, link time, imported DLLs and
    exported names (the PE/COFF format's headers, import and export directories)."""
    def u16(at):
        return struct.unpack_from("<H", dll, at)[0]

    def u32(at):
        return struct.unpack_from("<I", dll, at)[0]

    pe = u32(0x3C)
    if dll[:2] != b"MZ" or dll[pe:pe + 4] != b"PE\0\0":
        raise ValueError("not a PE file")
    coff, optional = pe + 4, pe + 24
    sections = [struct.unpack_from("<8sIIII", dll, optional + u16(coff + 16) + 40 * k) for k in range(u16(coff + 2))]

    def offset(rva):
        for _, size, address, raw_size, raw in sections:
            if address <= rva < address + max(size, raw_size):
                return raw + rva - address
        raise ValueError(f"RVA {rva:#x} is in no section")

    def name_at(rva):
        start = offset(rva)
        return dll[start:dll.index(b"\0", start)].decode()

    directories = optional + 112  # PE32+ (64-bit): the data directories after the fixed fields
    export_rva, import_rva = u32(directories), u32(directories + 8)
    exports = []
    if export_rva:
        table = offset(export_rva)
        names = offset(u32(table + 32))
        exports = [name_at(u32(names + 4 * k)) for k in range(u32(table + 24))]
    imports = []
    descriptor = offset(import_rva) if import_rva else None
    while descriptor is not None and u32(descriptor + 12):
        imports.append(name_at(u32(descriptor + 12)))
        descriptor += 20
    return {"machine": u16(coff), "pe32_plus": u16(optional) == 0x20B, "time": u32(coff + 4), "imports": imports,
            "exports": exports}


def check_elf_library(check, library: bytes, processor: str) -> None:
    elf = ELFFile(io.BytesIO(library))
    check(f"the library is built for {processor}", elf["e_machine"] == MACHINES[processor], elf["e_machine"])
    needed, versions = glibc_needs(library)
    check("the library needs glibc's libraries only", needed and all(GLIBC_LIBRARIES.match(n) for n in needed),
          str(needed))
    newest = max(versions) if versions else (0, 0)
    check("the library's symbols need glibc 2.28 or older", newest <= (2, 28), f"GLIBC_{newest[0]}.{newest[1]}")


def check_dll(check, dll: bytes) -> None:
    facts = pe_facts(dll)
    check("the DLL is built for x86-64 (AMD64, PE32+)", facts["machine"] == 0x8664 and facts["pe32_plus"],
          hex(facts["machine"]))
    check("the DLL imports KERNEL32 and the C runtime only",
          {name.lower() for name in facts["imports"]} == {"kernel32.dll", "msvcrt.dll"}, str(facts["imports"]))
    check("the DLL exports RegisterCustomOps and OpbridgeLibraryInfo only",
          sorted(facts["exports"]) == ["OpbridgeLibraryInfo", "RegisterCustomOps"], str(facts["exports"]))
    check("the DLL carries no link time (reproducible)", facts["time"] == 0, str(facts["time"]))


def main(wheel_path: str, processor: str) -> int:
    version = re.search(r'^version = "([^"]+)"', (REPO / "pyproject.toml").read_text(), re.M).group(1)
    wheel = Path(wheel_path)
    checks: list[tuple[str, bool, str]] = []

    def check(what: str, ok: bool, detail: str = "") -> None:
        checks.append((what, bool(ok), detail))

    windows = processor == "win_amd64"
    if windows:
        platform_tag = "win_amd64"
        check("named opbridge-<version>-py3-none-win_amd64.whl", wheel.name == f"opbridge-{version}-py3-none-win_amd64.whl",
              wheel.name)
    else:
        platform_tag = rf"manylinux_2_\d+_{processor}"
        match = re.fullmatch(rf"opbridge-{re.escape(version)}-py3-none-manylinux_2_(\d+)_{processor}\.whl", wheel.name)
        check("named opbridge-<version>-py3-none-manylinux_2_<n>_<processor>.whl with n <= 28",
              match and int(match.group(1)) <= 28, wheel.name)
    library_name = "opbridge/lib/" + ("opbridge_ort.dll" if windows else "libopbridge_ort.so")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        dist_info = f"opbridge-{version}.dist-info/"
        check("only the package and its dist-info", all(n.startswith(("opbridge/", dist_info)) for n in names),
              str([n for n in names if not n.startswith(("opbridge/", dist_info))]))
        for required in ("opbridge/__init__.py", "opbridge/ops.toml", library_name):
            check(f"carries {required}", required in names)
        libraries = [n for n in names if n.startswith("opbridge/lib/") and not n.endswith("/")]  # not the folder's entry
        check("the one library in opbridge/lib", libraries == [library_name], str(libraries))
        library = archive.read(library_name)
        if windows:
            check_dll(check, library)
        else:
            check_elf_library(check, library, processor)
        metadata = archive.read(dist_info + "METADATA").decode()
        check(f"the metadata's version is {version}", f"\nVersion: {version}\n" in metadata)
        check("the metadata names the license", "\nLicense: Apache-2.0\n" in metadata)
        check("the README is the description", "# opbridge" in metadata and "## Installing" in metadata)
        licenses = [n for n in names if n.startswith(dist_info + "licenses/")]
        check("the license text is in dist-info/licenses",
              any(b"Apache License" in archive.read(n) and b"Version 2.0" in archive.read(n) for n in licenses),
              str(licenses))
        with_paths = [n for n in names if str(REPO).encode() in archive.read(n)]
        check(f"no file holds the build folder's path ({REPO})", not with_paths, str(with_paths))
        check(f"the wheel says Tag: py3-none-{'win_amd64' if windows else 'manylinux_2_<n>_<processor>'}",
              re.search(rf"^Tag: py3-none-{platform_tag}$", archive.read(dist_info + "WHEEL").decode(), re.M))
    for what, ok, detail in checks:
        print(f"{'ok    ' if ok else 'FAILED'} {what}" + (f": {detail}" if detail and not ok else
                                                        f" ({detail})" if detail else ""))
    failed = sum(not ok for _, ok, _ in checks)
    print(f"{len(checks) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))

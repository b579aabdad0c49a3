/**
 * Go's os.FileMode.String() from a Unix st_mode, as Nomad's AllocFileInfo.FileMode shows it: the
 * type and special bits as letters in Go's order (`dalTLDpSugct?`, each only when set; "-" when
 * none), then `rwxrwxrwx`. A directory is "drwxr-xr-x", a sticky one "dtrwxrwxrwx", a symlink
 * "Lrwxrwxrwx", a character device "Dcrw-rw-rw-" (Go sets both Device and CharDevice).
 */
const S_IFMT = 0o170000;
const TYPES: Record<number, string> = {
  0o040000: "d",
  0o120000: "L",
  0o060000: "D",
  0o010000: "p",
  0o140000: "S",
  0o020000: "Dc",
};

export function goFileMode(mode: number): string {
  const type = TYPES[mode & S_IFMT] ?? "";
  const regular = (mode & S_IFMT) === 0o100000;
  // Go's order: d a l T L D p S u g c t ?; "c" (char device) sits after u and g.
  const device = type === "Dc" ? "D" : type;
  let letters = device;
  if (mode & 0o4000) letters += "u";
  if (mode & 0o2000) letters += "g";
  if (type === "Dc") letters += "c";
  if (mode & 0o1000) letters += "t";
  if (!regular && type === "" && (mode & S_IFMT) !== 0) letters += "?";
  if (letters === "") letters = "-";
  const rwx = "rwxrwxrwx";
  let perms = "";
  for (let i = 0; i < 9; i++) perms += mode & (1 << (8 - i)) ? rwx[i] : "-";
  return letters + perms;
}

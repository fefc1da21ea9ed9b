/* Test-only stand-in for Windows' bcryptprimitives.dll under Wine 8, which lacks it: Rust's
 * standard library imports ProcessPrng from it (every Windows 10 has it). Forwards to
 * RtlGenRandom (advapi32's SystemFunction036). Built by scripts/wine-run.sh into
 * target/wine/dlls/ and found through WINEPATH; never packed into an FMU. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
  while (length > 0) {
    ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
    if (!SystemFunction036(data, chunk)) return FALSE;
    data += chunk;
    length -= chunk;
  }
  return TRUE;
}

// tessel-warmup as a library: a host application makes its own warmup
// binary, which knows the application's kernels, in a few lines.
//
//   // my_warmup.cc, linked with tessel::warmup and the code that registers
//   // the application's kernels (TESSEL_REGISTER_KERNEL, tessel/registry.h)
//   #include <tessel/warmup.h>
//   int main(int argc, char** argv) { return tessel::WarmupMain(argc, argv); }
//
//   $ my_warmup --manifest kernels.json --arch sm_90a,sm_80 --jobs 8
//
// Flags, manifest format and exit codes: docs/warmup.md, or --help.
#ifndef TESSEL_WARMUP_H_
#define TESSEL_WARMUP_H_

namespace tessel {

// Parses the command line, builds the manifest's kernels from
// KernelRegistry::Global(), compiles them into the disk cache and prints a
// summary. Returns the process exit code: 0 all in the cache, 1 some kernel
// failed (or, with --dry-run, is missing), 2 a usage or manifest error.
int WarmupMain(int argc, char** argv);

// `tessel-cache` (stats, list, verify, prune, clear, export, import) as a
// library, for the same reason. Same exit code convention.
int CacheToolMain(int argc, char** argv);

}  // namespace tessel

#endif  // TESSEL_WARMUP_H_

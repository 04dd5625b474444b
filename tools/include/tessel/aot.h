// tessel-aot as a library: an application makes its own tessel-aot, which
// knows the application's kernels, as it does its own warmup binary.
//
//   // my_aot.cc, linked with tessel::aot and the code that registers the
//   // application's kernels (TESSEL_REGISTER_KERNEL, tessel/registry.h)
//   #include <tessel/aot.h>
//   int main(int argc, char** argv) { return tessel::AotMain(argc, argv); }
//
//   $ my_aot --manifest kernels.json --arch sm_90a,sm_80 --out-dir gen
//   (writes gen/tessel_kernels.h and gen/tessel_kernels.cc)
//
// Flags and the generated code: docs/aot.md, or --help.
#ifndef TESSEL_AOT_H_
#define TESSEL_AOT_H_

namespace tessel {

// Parses the command line, builds the manifest's kernels from
// KernelRegistry::Global(), compiles each for each arch as compile() does,
// and writes the launch functions' header and source. Returns the process
// exit code: 0 written, 1 a kernel failed to compile, 2 a usage or
// manifest error.
int AotMain(int argc, char** argv);

}  // namespace tessel

#endif  // TESSEL_AOT_H_

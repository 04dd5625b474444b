// This project's tessel-aot: tessel's tool, linked with the registration
// of the quickstart's kernel (gemm_kernel.cc).
#include <tessel/aot.h>

int main(int argc, char** argv) { return tessel::AotMain(argc, argv); }

// tessel-aot: the ahead-of-time tool with tessel's own registered kernels.
#include "tessel/aot.h"

int main(int argc, char** argv) { return tessel::AotMain(argc, argv); }

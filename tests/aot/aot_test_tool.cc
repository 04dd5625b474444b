// tests/aot's tessel-aot: the quickstart_aot kernel and the seed kernels.
#include "tessel/aot.h"

int main(int argc, char** argv) { return tessel::AotMain(argc, argv); }
